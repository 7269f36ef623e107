#[test]
fn a_guest_64_bit_read_sees_another_threads_64_bit_write_whole() {
    // a writer stores values whose halves are equal, a reader on another thread checks every value it sees,
    // through the checked path and through a window (a copy in two halves, or byte by byte, would be seen
    // torn)
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let at = mem.allocate(64, AllocKind::Buffer, "flag").unwrap() + 8;
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..2_000_000u64 {
                let x = (i & 0xffff_ffff) * 0x1_0000_0001;
                mem.write_guest(at, &x.to_le_bytes()).unwrap();
            }
            done.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        let w = mem.window(at, 8, Access::Read).unwrap();
        let mut torn = 0;
        while !done.load(std::sync::atomic::Ordering::Relaxed) {
            let (mut a, mut b) = ([0u8; 8], [0u8; 8]);
            mem.read_guest(at, &mut a).unwrap();
            assert!(w.read(at, &mut b));
            for v in [a, b].map(u64::from_le_bytes) {
                torn += usize::from(v >> 32 != v & 0xffff_ffff);
            }
        }
        assert_eq!(torn, 0, "torn 64-bit reads");
    });
}

#[test]
fn guest_writes_into_code_fault_and_loading_code_does_not() {
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let code = mem.allocate(256, AllocKind::Code, "kernel.co").unwrap();
    mem.load_code_bytes(code, &[1, 2, 3, 4]).unwrap();
    let mut b = [0u8; 4];
    mem.read(code, &mut b).unwrap();
    assert_eq!(b, [1, 2, 3, 4]);
    let e = mem.write(code + 8, &[0; 4]).unwrap_err().to_string();
    assert!(
        e.contains("kernels may not write code memory") && e.contains("kernel.co"),
        "{e}"
    );
    assert!(mem.atomic_u32(code, |x| x + 1).is_err());
    assert!(mem.window(code, 16, Access::Write).is_none() && mem.window(code, 16, Access::Read).is_some());
}

use super::*;

fn resident_bytes() -> u64 {
    let s = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = s.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

#[test]
fn a_192_gib_device_costs_only_what_is_touched() {
    let before = resident_bytes();
    let mem = DeviceMemory::new(192 << 30).unwrap();
    let a = mem.allocate(100 << 30, AllocKind::Buffer, "huge").unwrap();
    mem.write_u32(a + (99 << 30), 0xdead_beef).unwrap();
    assert_eq!(mem.read_u32(a + (99 << 30)).unwrap(), 0xdead_beef);
    assert_eq!(
        mem.read_u32(a + (50 << 30)).unwrap(),
        0,
        "untouched memory reads as zero"
    );
    let grew = resident_bytes().saturating_sub(before);
    assert!(grew < 64 << 20, "resident set grew by {grew} bytes");
    assert_eq!(mem.used(), 100 << 30);
}

#[test]
fn overruns_name_the_allocation_and_the_distance() {
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let a = mem.allocate(4096, AllocKind::Buffer, "out").unwrap();
    let e = mem.read_u32(a + 4096 + 12).unwrap_err();
    assert_eq!(
        e.location,
        format!("12 bytes past the end of the 4096-byte allocation at {a:#x} (out)")
    );
    let e = mem.write(a + 4094, &[0; 4]).unwrap_err();
    assert_eq!(e.access, Access::Write);
    assert!(
        e.location
            .starts_with("runs 2 bytes past the end of the 4096-byte allocation"),
        "{}",
        e.location
    );
    let b = mem.allocate(100, AllocKind::Kernarg, "kernarg").unwrap();
    // between two allocations: both, the nearer first
    let e = mem.read_u32(b - 8).unwrap_err();
    assert_eq!(
        e.location,
        format!(
            "8 bytes before the 100-byte kernarg segment at {b:#x} (kernarg) and {} bytes past the end of the \
             4096-byte allocation at {a:#x} (out)",
            b - 8 - (a + 4096)
        )
    );
    let e = mem.read_u32(0x1000).unwrap_err();
    assert_eq!(e.location, "outside device memory");
    assert!(e.to_string().starts_with("read of 4 bytes at 0x1000"), "{e}");
}

#[test]
fn a_fault_between_allocations_names_the_nearest_one_on_each_side_with_distances_freed_ones_included() {
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let a = mem.allocate(400, AllocKind::Buffer, "a").unwrap();
    let k = mem.allocate(64, AllocKind::Kernarg, "args").unwrap();
    let e = mem.read_u32(a + 400 + 12).unwrap_err();
    assert_eq!(
        e.location,
        format!(
            "12 bytes past the end of the 400-byte allocation at {a:#x} (a) and {} bytes before the 64-byte \
             kernarg segment at {k:#x} (args)",
            k - (a + 412)
        )
    );
    let e = mem.read_u32(k - 3000).unwrap_err();
    assert_eq!(
        e.location,
        format!(
            "3000 bytes before the 64-byte kernarg segment at {k:#x} (args) and {} bytes past the end of the \
             400-byte allocation at {a:#x} (a)",
            k - 3000 - (a + 400)
        )
    );
    // a freed neighbour is still named, as freed; one byte short of the next allocation is "1 byte"
    mem.free(a).unwrap();
    let e = mem.read(k - 1, &mut [0u8]).unwrap_err();
    assert_eq!(
        e.location,
        format!(
            "1 byte before the 64-byte kernarg segment at {k:#x} (args) and {} bytes past the end of the \
             400-byte allocation at {a:#x} (a) (freed)",
            k - 1 - (a + 400)
        )
    );
    // nothing above: one side only
    let e = mem.read_u32(k + 64).unwrap_err();
    assert_eq!(
        e.location,
        format!("just past the end of the 64-byte kernarg segment at {k:#x} (args)")
    );
}

#[test]
fn under_memcheck_every_allocation_sits_between_redzones_as_large_as_it_is_from_1_mib_to_1_gib() {
    let mem = DeviceMemory::new(64 << 30).unwrap();
    mem.set_memcheck(true);
    let a = mem.allocate(400, AllocKind::Buffer, "a").unwrap();
    let b = mem.allocate(3 << 20, AllocKind::Buffer, "b").unwrap();
    let c = mem.allocate(8, AllocKind::Kernarg, "c").unwrap();
    let d = mem.allocate(2 << 30, AllocKind::Buffer, "d").unwrap();
    // the gap between two allocations is the larger of their redzones; the first has one below it too
    assert_eq!(a - mem.base(), 1 << 20, "below the first");
    assert_eq!(
        b - (a + 4096),
        3 << 20,
        "after a 400-byte allocation, before a 3 MiB one"
    );
    assert_eq!(c - (b + (3 << 20)), 3 << 20, "after a 3 MiB allocation");
    assert_eq!(d - (c + 4096), 1 << 30, "before a 2 GiB allocation: the cap");
    // every byte outside the allocations faults, for kernels too
    for (at, len) in [
        (a + 400, 4),
        (a + 4096, 4),
        (b - 4, 4),
        (b + (3 << 20), 1),
        (d - 1, 1),
        (c + 8, 8),
    ] {
        assert!(
            mem.read_guest(at, &mut vec![0u8; len]).is_err(),
            "{:#x}",
            at - mem.base()
        );
    }
    // outside memcheck the gap is the guard page
    let plain = DeviceMemory::new(64 << 30).unwrap();
    let a = plain.allocate(400, AllocKind::Buffer, "a").unwrap();
    let b = plain.allocate(3 << 20, AllocKind::Buffer, "b").unwrap();
    assert_eq!((a - plain.base(), b - a), (0, 2 * PAGE));
}

#[test]
fn redzones_shrink_to_the_guard_page_once_their_address_space_is_spent_and_the_capacity_still_fits() {
    // 64 MiB in single pages: 16,384 allocations, each with 1 MiB redzones would need 16 GiB of address space
    let mem = DeviceMemory::new(64 << 20).unwrap();
    mem.set_memcheck(true);
    let pages: Vec<u64> = (0..16384)
        .map(|i| {
            mem.allocate(PAGE, AllocKind::Buffer, "page")
                .unwrap_or_else(|e| panic!("allocation {i}: {e}"))
        })
        .collect();
    assert_eq!(mem.used(), 64 << 20);
    assert_eq!(pages[1] - pages[0], PAGE + (1 << 20), "the first get whole redzones");
    assert_eq!(pages[16383] - pages[16382], 2 * PAGE, "the last the guard page");
    assert!(pages.windows(2).all(|w| w[1] - w[0] >= 2 * PAGE));
    assert!(mem.read_guest(pages[16383] + PAGE, &mut [0u8; 4]).is_err());
}

#[test]
fn guest_accesses_run_into_the_rest_of_their_allocations_last_page_unless_memcheck_is_on() {
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let a = mem.allocate(8, AllocKind::Buffer, "tmp").unwrap();
    assert!(mem.write_u32(a + 8, 1).is_err(), "the host's accesses are exact");
    assert_eq!(mem.write_guest(a + 8, &7u32.to_le_bytes()).unwrap(), Within::Pages);
    assert_eq!(mem.write_guest(a + 6, &[1, 2, 3, 4]).unwrap(), Within::Pages);
    let mut b = [0u8; 4];
    assert_eq!(mem.read_guest(a + 8, &mut b).unwrap(), Within::Pages);
    assert_eq!(u32::from_le_bytes(b), 0x0403, "the bytes past the end are kept");
    assert_eq!(mem.read_guest(a + 4092, &mut b).unwrap(), Within::Pages);
    let e = mem.read_guest(a + 4094, &mut b).unwrap_err();
    assert!(
        e.location.contains("past the end of the 8-byte allocation"),
        "past the page: {}",
        e.location
    );
    assert_eq!(mem.read_guest(a, &mut b).unwrap(), Within::Allocation);
    mem.set_memcheck(true);
    assert!(mem.memcheck());
    assert_eq!(
        mem.read_guest(a + 8, &mut b).unwrap_err().location,
        format!("just past the end of the 8-byte allocation at {a:#x} (tmp)")
    );
    assert!(mem
        .write_guest(a + 6, &[0; 4])
        .unwrap_err()
        .location
        .starts_with("runs 2 bytes past the end of the 8-byte allocation"));
    assert_eq!(mem.read_guest(a, &mut b).unwrap(), Within::Allocation);
}

#[test]
fn use_after_free_is_reported_as_such_and_addresses_are_not_reused() {
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let a = mem.allocate(8192, AllocKind::Buffer, "tmp").unwrap();
    mem.write_u32(a, 7).unwrap();
    mem.free(a).unwrap();
    let e = mem.read_u32(a + 16).unwrap_err();
    assert_eq!(
        e.location,
        format!("inside the 8192-byte allocation at {a:#x} (tmp) freed earlier")
    );
    let b = mem.allocate(8192, AllocKind::Buffer, "next").unwrap();
    assert_ne!(a, b);
    assert_eq!(mem.read_u32(b).unwrap(), 0);
    assert_eq!(mem.free(a), Err(AllocError::NotAllocated { address: a }));
    assert_eq!(mem.used(), 8192);
}

#[test]
fn a_threads_last_checked_allocation_never_answers_for_another_memory_kind_or_generation() {
    let (one, two) = (DeviceMemory::new(1 << 20).unwrap(), DeviceMemory::new(1 << 20).unwrap());
    let a = one.allocate(8192, AllocKind::Buffer, "a").unwrap();
    let b = two.allocate(4096, AllocKind::Buffer, "b").unwrap();
    one.write_u32(a, 1).unwrap();
    // the same offset in the other memory lies past the end of its (smaller) allocation there
    assert_eq!(b - two.base(), a - one.base());
    assert!(two.read_u32(b + 4100).unwrap_err().location.contains("past the end"));
    // code was read last: writing it still faults
    let c = one.allocate(4096, AllocKind::Code, "code").unwrap();
    one.read_u32(c).unwrap();
    assert!(one
        .write_u32(c, 0)
        .unwrap_err()
        .location
        .contains("may not write code memory"));
    // an allocation elsewhere does not make the last hit wrong, only stale
    one.read_u32(a).unwrap();
    one.allocate(4096, AllocKind::Buffer, "b").unwrap();
    assert_eq!(one.read_u32(a).unwrap(), 1);
    assert!(one.read_u32(a + 8192).is_err());
}

#[test]
fn kernels_write_the_data_ranges_of_code_and_nothing_else_of_it() {
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let c = mem.allocate(8192, AllocKind::Code, "co").unwrap();
    mem.set_code_writable(c, &[(4096, 100)]).unwrap();
    mem.write_u32(c + 4096, 5).unwrap();
    mem.write_u32(c + 4096 + 96, 6).unwrap();
    assert!(mem
        .write_u32(c + 4096 + 98, 7)
        .unwrap_err()
        .location
        .contains("may not write code memory"));
    assert!(mem
        .write_u32(c, 7)
        .unwrap_err()
        .location
        .contains("may not write code memory"));
    assert_eq!(mem.read_u32(c + 4096).unwrap(), 5);
    let b = mem.allocate(4096, AllocKind::Buffer, "b").unwrap();
    assert!(mem.set_code_writable(b, &[(0, 4)]).is_err());
}

#[test]
fn pinned_host_memory_is_reached_through_its_own_device_range() {
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let mut host = vec![0u32; 256];
    let h = host.as_mut_ptr() as u64;
    let d = mem.alias_host(h, 1024, "pinned").unwrap();
    assert_ne!(d, h);
    mem.write_u32(d + 8, 0xabcd).unwrap();
    assert_eq!(mem.atomic_u32(d + 12, |x| x + 5).unwrap(), (0, Within::Allocation));
    assert!(
        mem.atomic_u32(d + 1024, |x| x).is_err(),
        "pinned host memory has no slack"
    );
    assert_eq!(mem.host_address(d + 8), h + 8);
    assert_eq!(mem.host_address(h), h);
    assert!(mem.read_u32(d + 1024).is_err());
    mem.free(d).unwrap();
    assert!(mem.read_u32(d + 8).unwrap_err().location.contains("freed earlier"));
    assert_eq!((host[2], host[3]), (0xabcd, 5));
}

#[test]
fn atomics_from_many_threads_lose_nothing_and_misalignment_faults() {
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let a = mem.allocate(64, AllocKind::Buffer, "counter").unwrap();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..10_000 {
                    mem.atomic_u32(a, |x| x + 1).unwrap();
                }
            });
        }
    });
    assert_eq!(mem.read_u32(a).unwrap(), 40_000);
    assert!(mem
        .atomic_u32(a + 2, |x| x)
        .unwrap_err()
        .location
        .contains("misaligned"));
    assert_eq!(mem.atomic_u32(a + 64, |x| x).unwrap(), (0, Within::Pages));
    assert!(mem
        .atomic_u32(a + 4096, |x| x)
        .unwrap_err()
        .location
        .contains("past the end"));
    mem.set_memcheck(true);
    assert!(mem
        .atomic_u32(a + 64, |x| x)
        .unwrap_err()
        .location
        .contains("past the end"));
}

#[test]
fn capacity_is_enforced_and_concurrent_writers_stay_inside_their_buffers() {
    let mem = DeviceMemory::new(1 << 20).unwrap();
    assert!(matches!(
        mem.allocate(2 << 20, AllocKind::Buffer, "big"),
        Err(AllocError::OutOfMemory { .. })
    ));
    let bufs: Vec<u64> = (0..4)
        .map(|i| mem.allocate(4096, AllocKind::Buffer, &format!("b{i}")).unwrap())
        .collect();
    std::thread::scope(|s| {
        for (i, &b) in bufs.iter().enumerate() {
            let mem = &mem;
            s.spawn(move || {
                for k in 0..1024u64 {
                    mem.write_u32(b + 4 * k, (i as u32) << 16 | k as u32).unwrap();
                }
            });
        }
    });
    for (i, &b) in bufs.iter().enumerate() {
        for k in [0u64, 511, 1023] {
            assert_eq!(mem.read_u32(b + 4 * k).unwrap(), (i as u32) << 16 | k as u32);
        }
    }
}

#[test]
fn slack_accesses_say_how_far_past_the_end_they_reach_and_faults_outside_the_pages_stay_as_they_were() {
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let a = mem.allocate(288, AllocKind::Buffer, "tiles").unwrap();
    // the bsrilu0 pattern: a full tile read whose last 8 bytes lie past the end
    assert_eq!(mem.read_guest(a + 280, &mut [0u8; 16]).unwrap(), Within::Pages);
    assert_eq!(
        mem.slack(Access::Read, a + 288, 8).to_string(),
        format!(
            "read of 8 bytes at {:#x}: 8 bytes past the end of the 288-byte allocation at {a:#x} (tiles)",
            a + 288
        )
    );
    assert_eq!(
        mem.slack(Access::Write, a + 286, 4).location,
        format!("2 bytes past the end of the 288-byte allocation at {a:#x} (tiles)")
    );
    assert_eq!(
        mem.slack(Access::Read, a + 300, 1).location,
        format!("13 bytes past the end of the 288-byte allocation at {a:#x} (tiles)")
    );
    // outside the pages: the host's report, word for word
    let e = mem.read_guest(a + 4094, &mut [0u8; 4]).unwrap_err();
    assert_eq!(e, mem.read(a + 4094, &mut [0u8; 4]).unwrap_err());
    assert_eq!(
        e.location,
        format!("3806 bytes past the end of the 288-byte allocation at {a:#x} (tiles)")
    );
}

#[test]
fn slack_is_for_buffers_kernargs_and_code_reads_of_live_allocations_only() {
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let k = mem.allocate(100, AllocKind::Kernarg, "kernarg").unwrap();
    assert_eq!(mem.read_guest(k + 96, &mut [0u8; 32]).unwrap(), Within::Pages);
    let c = mem.allocate(256, AllocKind::Code, "co").unwrap();
    assert_eq!(mem.read_guest(c + 256, &mut [0u8; 12]).unwrap(), Within::Pages);
    assert!(mem
        .write_guest(c + 256, &[0; 4])
        .unwrap_err()
        .location
        .starts_with("just past the end of the 256-byte code object"));
    let s = mem.allocate(64, AllocKind::Scratch, "scratch").unwrap();
    assert!(mem.read_guest(s + 64, &mut [0u8; 4]).is_err());
    let f = mem.allocate(100, AllocKind::Buffer, "freed").unwrap();
    mem.free(f).unwrap();
    assert!(mem.read_guest(f + 100, &mut [0u8; 4]).is_err());
    // a snapshot holds the slack too, so runs compared byte for byte compare it
    let b = mem.allocate(10, AllocKind::Buffer, "b").unwrap();
    mem.write_guest(b + 100, &[9]).unwrap();
    let snap = mem.snapshot_buffers().unwrap();
    let (_, bytes) = snap.iter().find(|(a, _)| *a == b).unwrap();
    assert_eq!((bytes.len(), bytes[100]), (4096, 9));
    mem.write_guest(b + 100, &[1]).unwrap();
    mem.restore_buffers(&snap).unwrap();
    let mut x = [0u8];
    mem.read_guest(b + 100, &mut x).unwrap();
    assert_eq!(x, [9]);
}

#[test]
fn mapped_host_ranges_reach_their_host_bytes_and_a_near_miss_names_them() {
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let mut bytes = vec![0u8; 8192];
    let host = bytes.as_mut_ptr() as u64;
    // a device address range whose bytes are elsewhere (an emulated driver's page-table mapping)
    let device = 0x7000_0000_0000u64;
    mem.map_host_at(device, 4096, host, "VRAM").unwrap();
    mem.map_host_at(device + 8192, 4096, host + 4096, "GTT memory").unwrap();
    mem.write_u32(device + 8, 0xfeed).unwrap();
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 0xfeed);
    assert_eq!(mem.direct_at(device + 8192 + 4).map(|d| d.2 as u64), Some(host + 4096));
    assert!(mem.map_host_at(device + 100, 10, host, "overlap").is_err());
    let f = mem.read_u32(device + 4096 + 16).unwrap_err();
    assert_eq!(
        f.location,
        format!(
            "outside device memory: 16 bytes past the end of the 4096-byte VRAM mapped at {device:#x} and 4080 bytes before the 4096-byte GTT memory mapped at {:#x}",
            device + 8192
        )
    );
    assert_eq!(mem.read_u32(0x1000).unwrap_err().location, "outside device memory");
    // an access that starts in a range and runs past its end
    assert_eq!(
        mem.read_u32(device + 4094).unwrap_err().location,
        format!("outside device memory: runs past the end of the 4096-byte VRAM mapped at {device:#x} and 4098 bytes before the 4096-byte GTT memory mapped at {:#x}", device + 8192)
    );
    assert!(!mem.fine_grained(device + 8192));
    mem.set_fine_grained(device + 8192).unwrap();
    assert!(mem.fine_grained(device + 8192 + 100) && !mem.fine_grained(device));
    mem.unmap_host(device).unwrap();
    assert!(mem.read_u32(device + 8).is_err());
}
