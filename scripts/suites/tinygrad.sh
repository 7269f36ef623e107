#!/usr/bin/env bash
# Runs test files of tinygrad's own test suite (tinygrad/tinygrad, test/) with pytest, against the tinygrad
# package installed from PyPI, under `wavejit exec --driver kfd` on an emulated MI300X. See --help.
set -euo pipefail

SUITE=tinygrad
TAG=v0.14.0
UPSTREAM=https://github.com/tinygrad/tinygrad.git
DEFAULT_BUILD=/tmp/wavejit-suites/tinygrad
# A pytest process runs a whole test file (a new one carries on after a crash or a test that hangs).
DEFAULT_BATCH=100000
# Test files that run on the default device and need neither torch nor hardware other than one GPU, in run
# order. test_ops.py, test_tensor.py, test_dtype.py, test_nn.py, test_randomness.py and others compare with torch,
# which is not installed: PyPI's Linux wheel brings several GB of CUDA libraries.
FILES="test/test_tiny.py
test/device/test_hcq.py
test/device/test_amd_llvm.py
test/backend/test_jit.py
test/backend/test_graph.py
test/backend/test_uops.py
test/backend/test_custom_kernel.py
test/backend/test_const_folding.py
test/backend/test_setitem.py
test/backend/test_symbolic_ops.py
test/backend/test_symbolic_jit.py
test/backend/test_subbuffer.py
test/backend/test_transcendental.py
test/backend/test_tensor_variable.py
test/backend/test_linearizer.py
test/backend/test_softmax_fusion.py
test/backend/test_zero_copy.py
test/backend/test_to_numpy.py
test/backend/test_dtype_alu.py
test/unit/test_assign.py
test/unit/test_indexing.py
test/unit/test_jit.py
test/unit/test_jit_footguns.py
test/unit/test_gradient.py
test/unit/test_conv.py
test/unit/test_linalg.py
test/unit/test_function.py
test/unit/test_invalid_tensor.py
test/unit/test_dtype_weak.py
test/unit/test_tensor_data.py
test/unit/test_hcq_graph.py
test/unit/test_getitem_ops.py"
PYTHON=""
DEV=KFD+AMD:LLVM
AQL=1

suite_usage() {
    cat <<EOF
Usage: scripts/suites/tinygrad.sh [--src DIR] [options]

Runs test files of tinygrad's test suite (test/ of tinygrad/tinygrad at tag $TAG, the version of the tinygrad
package from PyPI that the tests run against) under \`wavejit exec --driver kfd --device mi300x\`, tinygrad's
own KFD runtime driving the emulated kernel driver. The checkout's test/, extra/, examples/, conftest.py and
pyproject.toml are copied to BUILD/tree, without its tinygrad/ package, so the tests import the installed
tinygrad of --python, as the other suites' tests link Debian's ROCm libraries. Without git access a checkout can
be made from any clone holding the tag:
  git clone --no-checkout CLONE /tmp/tinygrad && git -C /tmp/tinygrad checkout $TAG
The Python needs tinygrad==${TAG#v}, numpy, pytest and hypothesis from PyPI:
  python3 -m venv /tmp/tinygrad-venv && /tmp/tinygrad-venv/bin/pip install tinygrad==${TAG#v} numpy pytest hypothesis
and tinygrad's CPU device (which the tests use beside the GPU) needs a clang: CC is clang-19 if there is one
(Debian's clang-19), else clang.
Each test file's test cases are listed with \`pytest --collect-only\` and run in one pytest process (--batch N:
N test cases a process at most), with a plugin of this script's that prints where each test case starts and
ends as googletest does. Passed, failed and skipped are pytest's (an expected failure counts as skipped, an
unexpected pass as passed); a file that fails to be collected counts as one failed test case, "(collection)".
Options of this suite:
  --python PATH     the Python with tinygrad, numpy, pytest and hypothesis (default: target/venv/bin/python of
                    this checkout, which scripts/setup.sh makes without hypothesis)
  --dev DEV         tinygrad's DEV (default: $DEV: tinygrad's AMD device on the KFD interface, its LLVM
                    compiler); --dev CPU runs the same tests on tinygrad's CPU device, a reference for which
                    failures are tinygrad's own
  --aql 0|1         AMD_AQL: tinygrad's AQL queues (1, the default) or its PM4 compute queue (0)
Tests run with DEV, AMD_AQL, HCQDEV_WAIT_TIMEOUT_MS=600000 (tinygrad waits 30 s for the GPU by default) and
CC in the environment. Test cases are named CLASS::TEST, their programs are the test files.
Example:
  scripts/suites/tinygrad.sh --src /tmp/tinygrad --python /tmp/tinygrad-venv/bin/python --aql 0 \\
      --results docs/results/tinygrad-kfd-pm4.json

EOF
}

suite_option() {
    case "$1" in
    --python) PYTHON=${2:?--python needs a path}; SHIFT=2 ;;
    --dev) DEV=${2:?--dev needs a device}; SHIFT=2 ;;
    --aql)
        AQL=${2:?--aql needs 0 or 1}
        [[ "$AQL" =~ ^[01]$ ]] || die "--aql must be 0 or 1, not '$AQL'"
        SHIFT=2
        ;;
    *) return 1 ;;
    esac
}

suite_build() {
    need_src
    [ -d "$SRC/test" ] && [ -f "$SRC/conftest.py" ] || die "--src $SRC has no test/ and conftest.py (want tinygrad/tinygrad at $TAG)"
    [ "$DRIVER" = kfd ] || die "--driver $DRIVER: tinygrad drives the GPU through the kernel driver, --driver kfd"
    echo "$FILES" >"$BUILD/programs"
    rm -rf "$BUILD/tree"
    mkdir -p "$BUILD/tree"
    local f
    for f in test extra examples conftest.py pyproject.toml; do
        [ ! -e "$SRC/$f" ] || cp -r "$SRC/$f" "$BUILD/tree/"
    done
    local version
    version=$(cd "$BUILD/tree" && "$PYTHON" -c 'import os, tinygrad, importlib.metadata as m
assert not os.path.abspath(tinygrad.__file__).startswith(os.getcwd()), tinygrad.__file__
print(m.version("tinygrad"))') || die "$PYTHON does not import an installed tinygrad"
    [ "v$version" = "$TAG" ] || echo "warning: $PYTHON has tinygrad $version, the tests are of $TAG" >&2
}

suite_binaries() {
    local f
    while read -r f; do
        [ -f "$BUILD/tree/$f" ] && printf '%s\t%s\t%s\n' "$f" "$f" "$BUILD/tree"
    done <<<"$FILES"
    return 0
}

# Prints CLASS::TEST per test case, or "(collection)" when pytest cannot collect the file.
suite_list() {
    local out rc=0
    out=$("${EXEC[@]}" "$PYTHON" -m pytest --collect-only -q -p no:cacheprovider "$1" 2>&1) || rc=$?
    if [ "$rc" = 0 ]; then
        grep -F "$1::" <<<"$out" | sed "s|^$1::||"
    elif [ "$rc" = 5 ]; then
        return 0
    else
        echo "(collection)"
    fi
}

suite_cmd() {
    local path=$1 name ids=()
    shift
    for name in "$@"; do
        if [ "$name" = "(collection)" ]; then ids+=("$path"); else ids+=("$path::$name"); fi
    done
    CMD=("$PYTHON" -m pytest -q -p no:cacheprovider -p wavejit_gtest_lines --tb=short "${ids[@]}")
}

suite_outcomes() {
    gtest_outcomes "$@"
}

suite_started() {
    gtest_started "$1"
}

# The pytest plugin: "[ RUN      ] CLASS::TEST" as a test case starts, its failure's report, then
# "[       OK ] CLASS::TEST (N ms)", "[  SKIPPED ] ..." or "[  FAILED  ] ..." as it ends.
write_plugin() {
    mkdir -p "$BUILD/plugin"
    cat >"$BUILD/plugin/wavejit_gtest_lines.py" <<'EOF'
import time

_config, _start, _status, _text = None, {}, {}, {}


def pytest_configure(config):
    global _config
    _config = config


def _line(s):
    # On a line of its own, whatever pytest printed last (its progress dots end no line).
    _config.pluginmanager.get_plugin("terminalreporter")._tw.write(f"\n{s}\n", flush=True)


def _name(nodeid):
    return nodeid.split("::", 1)[1] if "::" in nodeid else nodeid


def pytest_runtest_logstart(nodeid, location):
    _start[nodeid], _status[nodeid], _text[nodeid] = time.time(), "passed", []
    _line(f"[ RUN      ] {_name(nodeid)}")


def pytest_runtest_logreport(report):
    if report.failed:
        _status[report.nodeid] = "failed"
        _text[report.nodeid].append(f"({report.when}) {report.longreprtext}")
    elif report.skipped and _status.get(report.nodeid) == "passed":
        _status[report.nodeid] = "skipped"
        reason = getattr(report, "wasxfail", None)
        if reason is None and isinstance(report.longrepr, tuple):
            reason = report.longrepr[2]
        _text[report.nodeid].append(f"skipped: {reason}")


def pytest_runtest_logfinish(nodeid, location):
    ms = round((time.time() - _start[nodeid]) * 1000)
    status = _status[nodeid]
    if status != "passed":
        for text in _text[nodeid]:
            for line in text.splitlines()[-60:]:
                _line(line)
    mark = {"passed": "[       OK ]", "skipped": "[  SKIPPED ]", "failed": "[  FAILED  ]"}[status]
    _line(f"{mark} {_name(nodeid)} ({ms} ms)")
EOF
}

# shellcheck source=scripts/suites/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DRIVER=kfd
DEVICE=mi300x
parse_args "$@"
PYTHON=${PYTHON:-$REPO/target/venv/bin/python}
[ -x "$PYTHON" ] || die "--python $PYTHON is not an executable"
CC=$(command -v clang-19 || echo clang)
export PYTHON DEV CC AMD_AQL=$AQL HCQDEV_WAIT_TIMEOUT_MS=600000 PYTHONUNBUFFERED=1
export PYTHONPATH=$BUILD/plugin${PYTHONPATH:+:$PYTHONPATH}
write_plugin
suite_main "$@"
# The results say which tinygrad ran the tests (env) and the checkout the tests are from (source: git describe).
python3 - "$RESULTS" "$DEV" "$AQL" "$PYTHON" \
    "$({ [ -n "$SRC" ] && git -C "$SRC" describe --tags --always 2>/dev/null; } || echo unknown)" <<'EOF'
import json, subprocess, sys
path, dev, aql, python, source = sys.argv[1:]
d = json.load(open(path))
version = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('tinygrad'))"],
                         capture_output=True, text=True).stdout.strip()
amd = "AMD" in dev
d["env"] = {"DEV": dev} | ({"AMD_AQL": aql} if amd else {}) | {"tinygrad": version}
d["route"] = f"`DEV={dev}`" + (f" `AMD_AQL={aql}`" if amd else "")
d["source"] = source
json.dump(d, open(path, "w"), indent=1)
EOF
