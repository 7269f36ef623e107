"""Field layouts of the gfx9 encodings (AMD Vega / CDNA ISA manuals), for the probe generators.

Each field: (name, dword, lo, width, probe value). The probe value is distinctive so that a printed operand can
be traced back to the field it came from.
"""

# (name, fixed bits in dword 0, mask of the fixed bits, opcode (lo, width), number of dwords, opcode range, fields)
ENCODINGS = {
    "SOP2": (0x80000000, 0xC0000000, (23, 7), 1, range(0x60), [
        ("sdst", 0, 16, 7, 16), ("ssrc1", 0, 8, 8, 12), ("ssrc0", 0, 0, 8, 8)]),
    "SOPK": (0xB0000000, 0xF0000000, (23, 5), 1, range(0x1D), [
        ("sdst", 0, 16, 7, 16), ("simm16", 0, 0, 16, 0x1234)]),
    "SOP1": (0xBE800000, 0xFF800000, (8, 8), 1, range(256), [
        ("sdst", 0, 16, 7, 16), ("ssrc0", 0, 0, 8, 8)]),
    "SOPC": (0xBF000000, 0xFF800000, (16, 7), 1, range(128), [
        ("ssrc1", 0, 8, 8, 12), ("ssrc0", 0, 0, 8, 8)]),
    "SOPP": (0xBF800000, 0xFF800000, (16, 7), 1, range(128), [
        ("simm16", 0, 0, 16, 3)]),
    "SMEM": (0xC0000000, 0xFC000000, (18, 8), 2, range(256), [
        ("imm", 0, 17, 1, 1), ("glc", 0, 16, 1, 1), ("soe", 0, 14, 1, 1), ("sdata", 0, 6, 7, 16),
        ("sbase", 0, 0, 6, 2), ("offset", 1, 0, 21, 0x10), ("soffset", 1, 25, 7, 20)]),
    "VOP2": (0x00000000, 0x80000000, (25, 6), 1, range(0x3E), [
        ("vdst", 0, 17, 8, 8), ("vsrc1", 0, 9, 8, 4), ("src0", 0, 0, 9, 258)]),
    "VOP1": (0x7E000000, 0xFE000000, (9, 8), 1, range(256), [
        ("vdst", 0, 17, 8, 8), ("src0", 0, 0, 9, 258)]),
    "VOPC": (0x7C000000, 0xFE000000, (17, 8), 1, range(256), [
        ("vsrc1", 0, 9, 8, 4), ("src0", 0, 0, 9, 258)]),
    "VOP3": (0xD0000000, 0xFC000000, (16, 10), 2, range(0x380), [
        ("vdst", 0, 0, 8, 8), ("sdst", 0, 8, 7, 20), ("src0", 1, 0, 9, 258), ("src1", 1, 9, 9, 260),
        ("src2", 1, 18, 9, 262)]),
    "VOP3P": (0xD3800000, 0xFF800000, (16, 7), 2, range(128), [
        ("vdst", 0, 0, 8, 8), ("src0", 1, 0, 9, 258), ("src1", 1, 9, 9, 260), ("src2", 1, 18, 9, 262),
        ("op_sel_hi", 1, 27, 2, 3), ("op_sel_hi2", 0, 14, 1, 1)]),
    "DS": (0xD8000000, 0xFC000000, (17, 8), 2, range(256), [
        ("offset0", 0, 0, 8, 0x10), ("offset1", 0, 8, 8, 0x20), ("gds", 0, 16, 1, 1), ("addr", 1, 0, 8, 2),
        ("data0", 1, 8, 8, 4), ("data1", 1, 16, 8, 6), ("vdst", 1, 24, 8, 8)]),
    "FLAT": (0xDC000000, 0xFC00C000, (18, 7), 2, range(128), [
        ("offset", 0, 0, 12, 0x10), ("addr", 1, 0, 8, 2), ("data", 1, 8, 8, 4), ("vdst", 1, 24, 8, 8)]),
    "GLOBAL": (0xDC008000, 0xFC00C000, (18, 7), 2, range(128), [
        ("offset", 0, 0, 13, 0x10), ("addr", 1, 0, 8, 2), ("data", 1, 8, 8, 4), ("vdst", 1, 24, 8, 8),
        ("saddr_off", 1, 16, 7, 0x7F)]),
    "SCRATCH": (0xDC004000, 0xFC00C000, (18, 7), 2, range(128), [
        ("offset", 0, 0, 13, 0x10), ("addr", 1, 0, 8, 2), ("data", 1, 8, 8, 4), ("vdst", 1, 24, 8, 8),
        ("saddr_off", 1, 16, 7, 0x7F)]),
    "MUBUF": (0xE0000000, 0xFC000000, (18, 7), 2, range(128), [
        ("offset", 0, 0, 12, 0x10), ("offen", 0, 12, 1, 1), ("vaddr", 1, 0, 8, 2), ("vdata", 1, 8, 8, 4),
        ("srsrc", 1, 16, 5, 2), ("soffset", 1, 24, 8, 20)]),
    "MTBUF": (0xE8000000, 0xFC000000, (15, 4), 2, range(16), [
        ("offset", 0, 0, 12, 0x10), ("offen", 0, 12, 1, 1), ("dfmt", 0, 19, 4, 14), ("vaddr", 1, 0, 8, 2),
        ("vdata", 1, 8, 8, 4), ("srsrc", 1, 16, 5, 2), ("soffset", 1, 24, 8, 20)]),
    "MIMG": (0xF0000000, 0xFC000000, (18, 7), 2, range(128), [
        ("dmask", 0, 8, 4, 0xF), ("vaddr", 1, 0, 8, 2), ("vdata", 1, 8, 8, 4), ("srsrc", 1, 16, 5, 2),
        ("ssamp", 1, 21, 5, 4)]),
}
