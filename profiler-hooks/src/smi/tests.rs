use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::*;

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wavejit-smi-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn mi210() -> DeviceInfo<'static> {
    DeviceInfo {
        preset: "mi210",
        gfx: "gfx90a",
        name: "AMD Instinct MI210",
        compute_units: 104,
        vram_total: 64 << 30,
        engine_clock_mhz: 1700,
        memory_clock_mhz: 1600,
        pci_device_id: 0x740f,
    }
}

#[test]
fn a_published_record_reads_back_with_its_counters_and_goes_when_dropped() {
    let dir = temp_dir("roundtrip");
    let p = Publisher::create(
        &dir,
        "alloc_test",
        &[
            mi210(),
            DeviceInfo {
                preset: "mi300x",
                ..mi210()
            },
        ],
    )
    .unwrap();
    p.vram_allocated(0, 256 << 20);
    p.vram_allocated(0, 4096);
    p.vram_freed(0, 4096);
    p.vram_allocated(1, 1 << 20);
    p.queue_created(1);
    {
        let _d = p.dispatch(1);
        std::thread::sleep(Duration::from_millis(20));
        // a running dispatch counts while it runs
        let r = scan(&dir).unwrap();
        assert!(
            r[0].devices[1].busy_now && r[0].devices[1].busy_ns >= 20_000_000,
            "{r:?}"
        );
    }
    let r = scan(&dir).unwrap();
    assert_eq!(r.len(), 1);
    let r = &r[0];
    assert_eq!((r.pid, r.name.as_str()), (std::process::id(), "alloc_test"));
    assert_eq!(r.start_ticks, process_start_ticks(r.pid).unwrap());
    let (d0, d1) = (&r.devices[0], &r.devices[1]);
    assert_eq!(
        (
            d0.index,
            d0.preset.as_str(),
            d0.gfx.as_str(),
            d0.compute_units,
            d0.vram_total
        ),
        (0, "mi210", "gfx90a", 104, 64 << 30)
    );
    assert_eq!((d0.vram_used, d0.dispatches, d0.busy_ns), (256 << 20, 0, 0));
    assert_eq!(
        (d1.index, d1.preset.as_str(), d1.vram_used, d1.dispatches, d1.queues),
        (1, "mi300x", 1 << 20, 1, 1)
    );
    assert!(
        !d1.busy_now && d1.busy_ns >= 20_000_000 && d1.busy_ns < 2_000_000_000,
        "{d1:?}"
    );
    let path = p.path().to_path_buf();
    drop(p);
    assert!(!path.exists());
    assert!(scan(&dir).unwrap().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn overlapping_dispatches_count_their_busy_time_once() {
    let dir = temp_dir("overlap");
    let p = Publisher::create(&dir, "overlap", &[mi210()]).unwrap();
    let a = p.dispatch(0);
    std::thread::sleep(Duration::from_millis(30));
    let b = p.dispatch(0);
    std::thread::sleep(Duration::from_millis(30));
    drop(a);
    std::thread::sleep(Duration::from_millis(30));
    drop(b);
    std::thread::sleep(Duration::from_millis(30));
    let d = &scan(&dir).unwrap()[0].devices[0];
    assert_eq!(d.dispatches, 2);
    // 90 ms busy (not 120: the overlap counts once), and the idle 30 ms after not at all
    assert!(d.busy_ns >= 90_000_000 && d.busy_ns < 115_000_000, "{d:?}");
    drop(p);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn records_of_dead_or_reused_pids_and_half_made_records_are_deleted_by_readers() {
    let dir = temp_dir("stale");
    let p = Publisher::create(&dir, "live", &[mi210()]).unwrap();
    // a process that has ended: its pid (not reused this quickly) with our record's bytes
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let mut bytes = std::fs::read(p.path()).unwrap();
    bytes[layout::PID_AT..layout::PID_AT + 8].copy_from_slice(&(dead as u64).to_le_bytes());
    std::fs::write(dir.join(format!("{dead}.smi")), &bytes).unwrap();
    std::fs::write(dir.join(format!("{dead}.tmp")), b"half").unwrap();
    // our own pid with another start time: a reused pid
    let me = std::process::id();
    let mut reused = std::fs::read(p.path()).unwrap();
    reused[layout::START_TICKS_AT..layout::START_TICKS_AT + 8].copy_from_slice(&1u64.to_le_bytes());
    let live = std::fs::read(p.path()).unwrap();
    std::fs::write(p.path(), &reused).unwrap();
    assert!(
        scan(&dir).unwrap().is_empty(),
        "a record with another start time is not this process"
    );
    assert!(!p.path().exists());
    std::fs::write(p.path(), &live).unwrap();
    let found = scan(&dir).unwrap();
    assert_eq!(found.iter().map(|r| r.pid).collect::<Vec<_>>(), vec![me]);
    assert!(!dir.join(format!("{dead}.smi")).exists() && !dir.join(format!("{dead}.tmp")).exists());
    drop(p);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_directory_others_can_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("mode");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = Publisher::create(&dir, "x", &[mi210()]).err().expect("refused");
    assert!(matches!(e, SmiError::NotPrivate { .. }), "{e}");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    assert!(Publisher::create(&dir, "x", &[mi210()]).is_ok());
    let _ = std::fs::remove_dir_all(&dir);
}

fn record(pid: u32, started_ns: u64, devices: Vec<(u32, &str, u64, u64)>) -> ProcessRecord {
    ProcessRecord {
        pid,
        start_ticks: 7,
        started_ns,
        name: format!("p{pid}"),
        devices: devices
            .into_iter()
            .map(|(index, preset, vram_used, busy_ns)| DeviceRecord {
                index,
                preset: preset.into(),
                gfx: "gfx90a".into(),
                name: "n".into(),
                compute_units: 104,
                vram_total: 64 << 30,
                engine_clock_mhz: 1700,
                memory_clock_mhz: 1600,
                pci_device_id: emu_core::DevicePreset::by_name(preset).unwrap().pci_device_id,
                vram_used,
                dispatches: 1,
                busy_ns,
                busy_now: false,
                queues: 1,
            })
            .collect(),
        path: PathBuf::new(),
    }
}

#[test]
fn cards_are_index_and_preset_summed_over_processes_with_stable_numbers_and_identities() {
    let a = record(100, 1_000, vec![(0, "mi210", 100, 10), (1, "mi300x", 5, 0)]);
    let b = record(200, 2_000, vec![(0, "mi210", 50, 30), (0, "mi300x", 7, 0)]);
    let cards = cards(&[a, b], &[]);
    let ids: Vec<(usize, u32, &str)> = cards.iter().map(|c| (c.number, c.index, c.preset.as_str())).collect();
    assert_eq!(ids, vec![(0, 0, "mi210"), (32, 0, "mi300x"), (33, 1, "mi300x")]);
    let mi210 = &cards[0];
    assert_eq!((mi210.vram_used(), mi210.busy_ns(), mi210.users.len()), (150, 40, 2));
    // over 1000 ns since the older process started: 40 busy ns = 4 %
    assert_eq!(mi210.utilization_since_start(2_000), (4.0, 1_000));
    // identities depend on (index, preset) only
    let alone = super::cards(&[record(300, 0, vec![(0, "mi210", 0, 0)])], &[]);
    assert_eq!(
        (alone[0].number, alone[0].bdf(), alone[0].gpu_id(), alone[0].unique_id()),
        (mi210.number, mi210.bdf(), mi210.gpu_id(), mi210.unique_id())
    );
    // numbers too: the MI300X keeps its number whether or not an MI210 is in use
    let mi300x = super::cards(&[record(400, 0, vec![(0, "mi300x", 0, 0)])], &[]);
    assert_eq!(mi300x[0].number, cards[1].number);
    let all: std::collections::HashSet<String> = cards.iter().map(|c| c.bdf()).collect();
    assert_eq!(all.len(), 3);
    assert_eq!(mi210.uuid().len(), 36);
}

#[test]
fn utilization_over_an_interval_counts_only_the_busy_time_added() {
    let before = cards(&[record(100, 0, vec![(0, "mi210", 0, 500)])], &[]);
    let sample = Sample::take(&before, 1_000);
    let after = cards(
        &[
            record(100, 0, vec![(0, "mi210", 0, 750)]),
            record(200, 1_500, vec![(0, "mi210", 0, 250)]),
        ],
        &[],
    );
    // 250 more from the first process, 250 from a new one, over 1000 ns
    assert_eq!(after[0].utilization_since(&sample, 2_000), (50.0, 1_000));
}

#[test]
fn publishing_costs_nanoseconds_per_allocation_and_dispatch() {
    let dir = temp_dir("cost");
    let p = Publisher::create(&dir, "cost", &[mi210()]).unwrap();
    let n = 1_000_000u32;
    let t = Instant::now();
    for _ in 0..n {
        p.vram_allocated(0, 4096);
        p.vram_freed(0, 4096);
    }
    let alloc_free = t.elapsed() / n;
    let t = Instant::now();
    for _ in 0..n / 10 {
        drop(p.dispatch(0));
    }
    let dispatch = t.elapsed() / (n / 10);
    eprintln!("SMI publishing: {alloc_free:?} per allocation + free, {dispatch:?} per dispatch start + end");
    assert!(
        alloc_free < Duration::from_micros(2) && dispatch < Duration::from_micros(5),
        "{alloc_free:?} {dispatch:?}"
    );
    drop(p);
    let _ = std::fs::remove_dir_all(&dir);
}
