// The sandbox wave of the tests that run single instructions of every kind (emu-core/tests/corpus.rs,
// jit/tests/coverage.rs): pseudo-random registers whose addresses mostly are not mapped, all lanes on, a
// 256-byte private segment per lane.

/// A wave with pseudo-random SGPRs (below 0x10000), VGPRs and AGPRs (below 0x1000), EXEC all ones.
fn sandbox_wave() -> emu_core::wave::WaveState {
    let mut w = emu_core::wave::WaveState::new(0x1000, 256, 256);
    let mut s = 0x9e37_79b9u32;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s
    };
    for r in w.sgprs.iter_mut().take(102) {
        *r = next() & 0xffff;
    }
    for v in w.vgprs.iter_mut().chain(w.agprs.iter_mut()) {
        for x in v.iter_mut() {
            *x = next() & 0xfff;
        }
    }
    w.set_exec(u64::MAX);
    w.scratch_lane_bytes = 256;
    w.scratch_base = 0x10_0000;
    w
}
