//! Translated blocks live in a few large memory mappings (`jit::code_memory`): thousands of translations, each
//! finalized on its own as the JIT does, must not each add mappings to the process. With Cranelift's default
//! provider every block added two, and after about 32,000 blocks (rocPRIM's block-sort test, in one process)
//! Linux's limit of 65,530 mappings made the next translation fail. Its own test binary, so that no other test
//! maps memory meanwhile.

use emu_core::memory::DeviceMemory;
use emu_core::wave::WaveState;
use isa_amdgpu::{decode, Target};

/// The mappings of this process.
fn mappings() -> usize {
    std::fs::read_to_string("/proc/self/maps")
        .expect("/proc/self/maps (Linux)")
        .lines()
        .count()
}

#[test]
fn thousands_of_translated_blocks_run_correctly_within_a_few_memory_mappings() {
    let jit = jit::Jit::new().expect("a JIT for this host");
    let mem = DeviceMemory::new(1 << 16).unwrap();
    let mut lds = vec![0u8; 64];
    // v_add_u32_e32 v0, v1, v2 (llvm-mc-19 -mcpu=gfx90a: 01 05 00 68)
    let inst = decode(&[0x01, 0x05, 0x00, 0x68], 0x1000, Target::Gfx90a).unwrap();
    let blocks = 3000u32;
    let mut before = 0;
    for n in 0..blocks {
        let mut wave = WaveState::new(0x1000, 4, 0);
        wave.set_exec(u64::MAX);
        for lane in 0..64u32 {
            wave.vgprs[1][lane as usize] = n.wrapping_mul(0x9e37_79b9).wrapping_add(lane);
            wave.vgprs[2][lane as usize] = lane.wrapping_mul(lane) ^ n;
        }
        // every call translates the block anew and finalizes it on its own
        let exit = jit
            .run_block_once(vec![inst], 0x1000, &mut wave, &mem, &mut lds)
            .unwrap();
        assert_eq!(
            exit,
            jit::BlockExit::Continue {
                next_pc: 0x1004,
                executed: 1
            },
            "block {n}"
        );
        for lane in 0..64usize {
            assert_eq!(
                wave.vgprs[0][lane],
                wave.vgprs[1][lane].wrapping_add(wave.vgprs[2][lane]),
                "block {n}, lane {lane}"
            );
        }
        if n == 0 {
            // the first translation reserves the code memory
            before = mappings();
        }
    }
    let grown = mappings().saturating_sub(before);
    assert!(grown < 32, "{blocks} translations added {grown} memory mappings");
}
