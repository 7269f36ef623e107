//! Tests of lane ranges, access classification, events and their serialization.

use std::borrow::Cow;

use isa_amdgpu::encoding::Field;
use isa_amdgpu::table::Unit;
use isa_amdgpu::{Inst, Opcode};

use super::access::{Accesses, Dir, LaneAccess, LaneRange, Space};
use super::event::{CachePolicy, Event, InstructionEvent, Issue, MemoryOp, Stalls};
use super::inst::WaitCounts;

#[test]
fn events_serialize_as_self_describing_json_and_read_back() {
    let acc = [LaneAccess {
        lane: 3,
        space: Space::Flat,
        dir: Dir::Atomic,
        bytes: 4,
        address: 0x1000,
    }];
    let ev = Event::Instruction(InstructionEvent {
        dispatch: 7,
        workgroup: [1, 2, 3],
        wave: 4,
        pc: 0x7000,
        opcode: Opcode::ALL
            .iter()
            .copied()
            .find(|o| o.mnemonic() == "flat_atomic_add")
            .unwrap(),
        unit: Unit::Flat,
        exec: u64::MAX,
        issue: Some(Issue {
            cycle: 99,
            stalls: Stalls {
                vmcnt: 5,
                ..Stalls::default()
            },
        }),
        memory: Some(MemoryOp {
            space: Space::Flat,
            dir: Dir::Atomic,
            bytes: 4,
            policy: CachePolicy {
                sc0: true,
                ..CachePolicy::default()
            },
        }),
        accesses: Accesses::Lanes(Cow::Borrowed(&acc)),
    });
    let json = serde_json::to_string(&ev).unwrap();
    assert!(json.contains(r#""event":"instruction""#), "{json}");
    assert!(
        json.contains(r#""opcode":"flat_atomic_add""#) && json.contains(r#""unit":"flat""#),
        "{json}"
    );
    assert!(
        json.contains(r#""space":"flat""#) && json.contains(r#""dir":"atomic""#),
        "{json}"
    );
    let back: Event<'static> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, ev.clone().into_owned());
    assert_eq!(back.dispatch(), 7);
}

#[test]
fn lanes_at_consecutive_elements_come_as_one_range_that_reads_as_them() {
    let lane = |l: u8, address: u64| LaneAccess {
        lane: l,
        space: Space::Global,
        dir: Dir::Read,
        bytes: 4,
        address,
    };
    let mut ranges = 0;
    for bytes in [1u32, 4, 12, 16] {
        for lanes in [u64::MAX, u64::MAX >> 1, 1 << 63, 1, 0b1011_0000, !(1u64 << 17)] {
            for base in [0x1000u64, 0, u64::MAX - 100] {
                for (space, dir) in [
                    (Space::Global, Dir::Read),
                    (Space::Global, Dir::Write),
                    (Space::Flat, Dir::Atomic),
                ] {
                    let r = LaneRange {
                        space,
                        dir,
                        bytes,
                        base,
                        lanes,
                    };
                    let records: Vec<LaneAccess> = r.iter().collect();
                    assert_eq!(records.len(), lanes.count_ones() as usize);
                    assert!(records
                        .iter()
                        .all(|a| a.address == base.wrapping_add(a.lane as u64 * bytes as u64)));
                    assert_eq!(LaneRange::of(&records), Some(r), "{r:?}");
                    let at = |l: usize| base.wrapping_add(l as u64 * bytes as u64);
                    let global = LaneRange {
                        space: Space::Global,
                        ..r
                    };
                    assert_eq!(
                        LaneRange::of_lanes(dir, bytes, lanes, at, |_| false),
                        Some(global),
                        "{r:?}"
                    );
                    assert_eq!(
                        LaneRange::of_lanes(dir, bytes, lanes, at, |a| a == r.address(63 - lanes.leading_zeros())),
                        None,
                        "a lane in private memory"
                    );
                    let moved = |l: usize| at(l) + (l == (lanes.trailing_zeros() as usize + 1) % 64) as u64;
                    assert_eq!(
                        LaneRange::of_lanes(
                            dir,
                            bytes,
                            lanes | 1 << ((lanes.trailing_zeros() + 1) % 64),
                            moved,
                            |_| false
                        ),
                        None,
                        "{r:?}: a lane off its element"
                    );
                    let a = Accesses::Range(r);
                    assert_eq!(a.to_vec(), records);
                    assert_eq!(
                        a,
                        Accesses::Lanes(Cow::Borrowed(&records)),
                        "equal to the records it stands for"
                    );
                    assert_eq!(Accesses::of(&records), a);
                    ranges += 1;
                }
            }
        }
    }
    assert_eq!(ranges, 4 * 6 * 3 * 3);
    // what is not one range stays as records
    for records in [
        vec![lane(0, 0x100), lane(1, 0x108)],
        vec![lane(1, 0x104), lane(0, 0x100)],
        vec![lane(0, 0x100), lane(0, 0x100)],
        vec![
            lane(0, 0x100),
            LaneAccess {
                dir: Dir::Write,
                ..lane(1, 0x104)
            },
        ],
        vec![
            lane(0, 0x100),
            LaneAccess {
                bytes: 8,
                ..lane(1, 0x104)
            },
        ],
        vec![LaneAccess {
            space: Space::Lds,
            ..lane(0, 0x100)
        }],
        vec![LaneAccess {
            space: Space::Scalar,
            ..lane(0, 0x100)
        }],
        vec![LaneAccess {
            space: Space::Scratch,
            ..lane(0, 0x100)
        }],
        vec![LaneAccess {
            bytes: 0,
            ..lane(0, 0x100)
        }],
        vec![],
    ] {
        assert_eq!(LaneRange::of(&records), None, "{records:?}");
        assert!(matches!(Accesses::of(&records), Accesses::Lanes(_)));
    }
}

#[test]
fn a_range_serializes_as_its_lanes() {
    let r = LaneRange {
        space: Space::Global,
        dir: Dir::Write,
        bytes: 8,
        base: 0x2000,
        lanes: 0b101,
    };
    let json = serde_json::to_string(&Accesses::Range(r)).unwrap();
    assert_eq!(
        json,
        r#"[{"lane":0,"space":"global","dir":"write","bytes":8,"address":8192},{"lane":2,"space":"global","dir":"write","bytes":8,"address":8208}]"#
    );
    let back: Accesses<'static> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, Accesses::Range(r));
}

#[test]
fn waitcnt_counts_follow_the_gfx9_field_layout() {
    let op = Opcode::ALL
        .iter()
        .copied()
        .find(|o| o.mnemonic() == "s_waitcnt")
        .unwrap();
    let row = isa_amdgpu::table::rows_of(op, isa_amdgpu::Target::Gfx90a)
        .next()
        .unwrap();
    // vmcnt(0x23) expcnt(5) lgkmcnt(9): bits 3:0 = 3, 15:14 = 2, 6:4 = 5, 11:8 = 9
    let simm = 0x3 | 5 << 4 | 9 << 8 | 2 << 14;
    let inst = Inst::build(row, isa_amdgpu::Target::Gfx90a)
        .unwrap()
        .set(Field::Simm16, simm)
        .unwrap()
        .encode()
        .unwrap();
    let inst = isa_amdgpu::decode(&inst, 0, isa_amdgpu::Target::Gfx90a).unwrap();
    assert_eq!(
        WaitCounts::of(&inst),
        WaitCounts {
            vmcnt: 0x23,
            expcnt: 5,
            lgkmcnt: 9
        }
    );
}
