//! Tests of the interpreter's whole-wave operations.

use super::*;

#[test]
fn whole_wave_lane_ops_respect_exec_on_write() {
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let mut w = WaveState::new(0, 4, 0);
    w.set_exec(0x0000_0000_0000_00ff);
    let mut lds = [0u8; 0];
    let mut b = Interp {
        wave: &mut w,
        mem: &mem,
        lds: &mut lds,
        mnemonic: "test",
        accesses: None,
    };
    let a = [5; LANES];
    let c = b.v_splat(7);
    let r = b.v_op(VOp::AddU32, a, c);
    let m = b.exec();
    b.v_set(1, r, m);
    assert_eq!(w.vgprs[1][7], 12);
    assert_eq!(w.vgprs[1][8], 0, "lane 8 is not in EXEC");
}

#[test]
fn carries_chain_across_64_bit_adds() {
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let mut w = WaveState::new(0, 1, 0);
    let mut lds = [0u8; 0];
    let mut b = Interp {
        wave: &mut w,
        mem: &mem,
        lds: &mut lds,
        mnemonic: "test",
        accesses: None,
    };
    let (lo, carry) = b.v_add_carry([u32::MAX; LANES], [1; LANES], None);
    assert_eq!((lo[0], carry), (0, u64::MAX));
    let (hi, _) = b.v_add_carry([0; LANES], [0; LANES], Some(carry));
    assert_eq!(hi[63], 1);
}
