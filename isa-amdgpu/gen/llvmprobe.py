"""Ask LLVM's disassembler (llvm-mc --disassemble) what a batch of byte strings means.

Used only by the generators in this folder: LLVM is our oracle for encodings, and what it prints is recorded
as data (the instruction table, the test vectors). Nothing here runs at build or test time.
"""
import os
import re
import subprocess

# llvm-mc asserts on some encodings; without this every crash would run llvm-symbolizer (seconds each)
_ENV = dict(os.environ, LLVM_DISABLE_SYMBOLIZATION="1", LLVM_DISABLE_CRASH_REPORT="1")

# The LLVM that is the oracle for each target: gfx90a and gfx942 were probed with LLVM 19 and stay so (their
# rows do not change with a newer LLVM's printer); gfx950 needs LLVM 20 or later, and is probed with LLVM 22.
LLVM_VERSION = {"gfx90a": 19, "gfx942": 19, "gfx950": 22}


def llvm_mc(target):
    return "llvm-mc-%d" % LLVM_VERSION[target]
_ENC = re.compile(r"^\s*(.*?)\s*; encoding: \[([^\]]*)\]")


def _marker(i):
    # s_movk_i32 s100, imm16 (SOPK opcode 0): a unique, always valid 4-byte separator.
    w = 0xB0000000 | (100 << 16) | (i & 0xFFFF)
    return w.to_bytes(4, "little")


def disasm(target, probes, chunk=800):
    """probes: list of bytes. Returns a list of (text, length) or None (invalid) per probe.

    text is what LLVM prints; length is how many bytes LLVM consumed (it can be longer than the probe when the
    instruction wants a literal that the probe did not carry, in which case the result is (text, -1)).
    """
    out = []
    pos = 0
    while pos < len(probes):
        part, done = _disasm_chunk(target, probes[pos:pos + chunk], pos)
        out.extend(part[:done])
        pos += done
        if done < len(part):
            # LLVM crashed somewhere after probe pos (output after the crash point may be lost in its buffer):
            # ask about probe pos alone; if that crashes too, it is the culprit and counts as not decodable.
            single, d = _disasm_chunk(target, probes[pos:pos + 1], pos)
            out.append(single[0] if d == 1 else None)
            pos += 1
    return out


def _disasm_chunk(target, probes, base):
    # One probe per line, each followed by three marker lines (enough for the decoder to be back in step after
    # an invalid probe). LLVM's -show-encoding re-encodes, so alignment uses the markers' text and the line
    # numbers of "invalid instruction encoding" warnings, never the printed bytes.
    lines = []
    for k, p in enumerate(probes):
        lines.append(",".join("0x%02x" % b for b in p))
        for j in range(3):
            lines.append(",".join("0x%02x" % b for b in _marker(k * 3 + j)))
    r = subprocess.run([llvm_mc(target), "--disassemble", "-triple=amdgcn-amd-amdhsa", "-mcpu=" + target,
                        "-show-encoding"], input="\n".join(lines) + "\n", capture_output=True, text=True, env=_ENV)
    invalid_at = set()
    for m in re.finditer(r"<stdin>:(\d+):(\d+): warning: invalid instruction encoding", r.stderr):
        invalid_at.add((int(m.group(1)), int(m.group(2))))
    res = [None] * len(probes)
    pending = []   # decoded lines since the last marker
    last_marker = -1
    for line in r.stdout.splitlines():
        m = _ENC.match(line)
        if not m:
            continue
        text = m.group(1)
        enc_bytes = m.group(2)
        mm = _MARK.match(text)
        # a probe can itself print like a marker (s_movk_i32 s100, ...): markers only count in sequence
        if mm and not (last_marker < int(mm.group(1), 16) <= last_marker + 3):
            mm = None
        if mm:
            mid = int(mm.group(1), 16)
            k, j = divmod(mid, 3)
            if j == 0 and k < len(probes) and mid > last_marker:
                _settle(res, probes, k, pending, invalid_at, consumed_marker=False)
            elif j == 1 and k < len(probes) and mid > last_marker and last_marker < 3 * k:
                _settle(res, probes, k, pending, invalid_at, consumed_marker=True)
            last_marker = max(last_marker, mid)
            pending = []
        else:
            pending.append((text, enc_bytes))
    if r.returncode != 0:
        # llvm-mc died (an assertion in its printer): everything up to the last complete marker stands.
        # markers follow their probe, so the last marker seen closes probe last_marker // 3: the next one crashed
        done = last_marker // 3 + 1 if last_marker >= 0 else 0
        return res, done
    return res, len(probes)


_MARK = re.compile(r"^s_movk_i32 s100, 0x([0-9a-f]+)$")


def _settle(res, probes, k, pending, invalid_at, consumed_marker):
    line = 4 * k + 1
    if (line, 1) in invalid_at or len(pending) != 1:
        return
    text, enc_bytes = pending[0]
    res[k] = (text, -1 if consumed_marker else len(probes[k]), enc_bytes)
