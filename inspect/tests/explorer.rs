//! The wavefront explorer in a real browser: the page of a divergent kernel and of an LDS reduction is loaded
//! in headless Chromium (Debian's `chromium`), and the DOM it renders is checked against the engine's own
//! record of the dispatch (an observer on a plain dispatch: every instruction's PC and EXEC, every lane's
//! address). The recordings of the interpreter and the JIT are the same. Screenshots go to the test's temporary
//! directory (and to `WAVEJIT_SCREENSHOTS` when set: how `docs/img/` is made).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use emu_core::dispatch::DispatchShape;
use emu_core::engine::{Interpreter, KernelDispatch, Limits, WaveRunner};
use emu_core::kernarg::ArgValue;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::observe::{Event, Observer, Space};
use emu_core::DevicePreset;
use inspect::explorer::{self, Options, Trace};
use inspect::{DebugInfo, Session};
use isa_amdgpu::codeobj::CodeObject;

fn setup(kernel: &str, target: &str) -> (&'static DevicePreset, CodeObject) {
    let dev = DevicePreset::by_name(if target == "gfx942" { "mi300x" } else { "mi210" }).unwrap();
    let name = format!("{kernel}-{target}.co");
    let co = CodeObject::parse(test_kernels::by_name(&name).unwrap(), &name).unwrap();
    (dev, co)
}

fn upload(mem: &DeviceMemory, bytes: &[u8], label: &str) -> u64 {
    let a = mem.allocate(bytes.len() as u64, AllocKind::Buffer, label).unwrap();
    mem.write(a, bytes).unwrap();
    a
}

/// One executed instruction as the engine reports it: code offset, EXEC, and each lane's first address.
#[derive(Debug, Clone, PartialEq)]
struct Rec {
    pc: u64,
    exec: u64,
    lanes: BTreeMap<u8, u64>,
    lds: bool,
}

/// The engine's record of a plain dispatch, per wave (`X,Y,Z:W`), in execution order.
#[derive(Default)]
struct Record {
    inner: Mutex<(u64, BTreeMap<String, Vec<Rec>>)>,
}

impl Observer for Record {
    const WANTS_ACCESSES: bool = true;
    fn event(&self, ev: &Event<'_>) {
        let mut g = self.inner.lock().unwrap();
        match ev {
            Event::DispatchBegin { code_base, .. } => g.0 = *code_base,
            Event::Instruction(i) => {
                let base = g.0;
                let key = format!("{},{},{}:{}", i.workgroup[0], i.workgroup[1], i.workgroup[2], i.wave);
                // (scalar loads read the kernel arguments, which each launch places elsewhere)
                let mut lanes = BTreeMap::new();
                for a in i.accesses.iter().filter(|a| a.space != Space::Scalar) {
                    lanes.entry(a.lane).or_insert(a.address);
                }
                let lds = i.accesses.first().is_some_and(|a| a.space == Space::Lds);
                g.1.entry(key).or_default().push(Rec {
                    pc: i.pc - base,
                    exec: i.exec,
                    lanes,
                    lds,
                });
            }
            _ => {}
        }
    }
}

fn engine_record(d: &KernelDispatch<'_>) -> BTreeMap<String, Vec<Rec>> {
    let before = d.mem.snapshot_buffers().unwrap();
    let r = Record::default();
    d.run_with(&Interpreter, &r).unwrap();
    d.mem.restore_buffers(&before).unwrap();
    r.inner.into_inner().unwrap().1
}

fn record<R: WaveRunner>(d: &KernelDispatch<'_>, co: &CodeObject, runner: &R, engine: &str) -> Trace {
    let info = DebugInfo::of(co, d.kernel);
    let before = d.mem.snapshot_buffers().unwrap();
    let t = d
        .launch(|mem, device, launch, limits| {
            let mut s = Session::new(mem, device, launch, runner, limits.max_wave_instructions)?;
            explorer::record(
                &mut s,
                engine,
                &Options {
                    max_recorded: 1_000_000,
                    workgroups: None,
                },
                &info.functions,
            )
        })
        .unwrap();
    d.mem.restore_buffers(&before).unwrap();
    t
}

/// The trace's steps as the engine's records (lane addresses from the recorded accesses).
fn as_records(t: &Trace) -> BTreeMap<String, Vec<Rec>> {
    t.waves
        .iter()
        .map(|w| {
            let recs = w
                .steps
                .iter()
                .map(|s| {
                    let mut lanes = BTreeMap::new();
                    for a in s.a.iter().filter(|_| s.s != Some("scalar")) {
                        lanes.entry(a.0).or_insert(a.1);
                    }
                    Rec {
                        pc: s.pc,
                        exec: u64::from_str_radix(&s.x, 16).unwrap(),
                        lanes,
                        lds: s.s == Some("lds"),
                    }
                })
                .collect();
            (w.id.clone(), recs)
        })
        .collect()
}

fn chromium() -> &'static str {
    for c in ["chromium", "chromium-browser"] {
        if Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return c;
        }
    }
    panic!("headless Chromium is needed for this test: `apt-get install chromium` (scripts/setup.sh installs it)");
}

fn browser(args: &[&str], url: &str) -> std::process::Output {
    // a profile of its own for every run: tests run browsers side by side
    static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let profile = tempdir(&format!(
        "chromium-profile-{}",
        RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--allow-file-access-from-files",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The DOM after the page's script ran, at `hash`.
fn dump(page: &Path, hash: &str) -> String {
    let out = browser(
        &["--window-size=1500,1000", "--virtual-time-budget=2000", "--dump-dom"],
        &format!("file://{}#{hash}", page.display()),
    );
    let dom = String::from_utf8(out.stdout).unwrap();
    assert!(
        dom.contains("data-ready=\"1\""),
        "the page's script did not finish: {}",
        &dom[..dom.len().min(2000)]
    );
    dom
}

fn screenshot(page: &Path, hash: &str, name: &str) {
    let dir = tempdir("shots");
    let png = dir.join(name);
    browser(
        &[
            "--window-size=1500,900",
            "--virtual-time-budget=2000",
            &format!("--screenshot={}", png.display()),
        ],
        &format!("file://{}#{hash}", page.display()),
    );
    let bytes = std::fs::read(&png).expect("chromium wrote the screenshot");
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 20_000,
        "{name}: {} bytes",
        bytes.len()
    );
    if let Ok(d) = std::env::var("WAVEJIT_SCREENSHOTS") {
        std::fs::write(Path::new(&d).join(name), &bytes).unwrap();
    }
}

fn tempdir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("explorer-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The attributes of every element carrying `attr`, as maps.
fn elements<'d>(dom: &'d str, attr: &str) -> Vec<BTreeMap<&'d str, &'d str>> {
    let mut out = Vec::new();
    let needle = format!(" {attr}=\"");
    let mut at = 0;
    while let Some(i) = dom[at..].find(&needle) {
        let start = dom[..at + i].rfind('<').unwrap();
        let end = at + i + dom[at + i..].find('>').unwrap();
        let tag = &dom[start..end];
        let mut m = BTreeMap::new();
        let mut rest = tag;
        while let Some(eq) = rest.find("=\"") {
            let name = rest[..eq].rsplit(' ').next().unwrap();
            let v_end = rest[eq + 2..].find('"').unwrap();
            m.insert(name, &rest[eq + 2..eq + 2 + v_end]);
            rest = &rest[eq + 3 + v_end..];
        }
        out.push(m);
        at = end;
    }
    out
}

/// The `<i>` lane cells inside the row starting at `row_attr`, as a mask.
fn row_lanes(dom: &str, step: usize) -> u64 {
    let start = dom.find(&format!("data-step=\"{step}\"")).unwrap();
    let lanes = start + dom[start..].find("class=\"lanes\"").unwrap();
    let end = lanes + dom[lanes..].find("</div>").unwrap();
    let mut m = 0u64;
    for (l, cell) in dom[lanes..end].split("<i").skip(1).enumerate() {
        if cell.starts_with(" class=\"on\"") {
            m |= 1 << l;
        }
    }
    m
}

/// Checks the page's wave list and the rows it renders at `step` of every wave against the engine's record.
fn check_rows(page: &Path, want: &BTreeMap<String, Vec<Rec>>, step_of: &dyn Fn(&[Rec]) -> usize) {
    let dom = dump(page, "");
    let listed: BTreeMap<&str, usize> = elements(&dom, "data-wave")
        .iter()
        .filter(|e| e.contains_key("data-count"))
        .map(|e| (e["data-wave"], e["data-count"].parse().unwrap()))
        .collect();
    assert_eq!(listed.len(), want.len(), "the page lists every wave");
    for (wave, recs) in want {
        assert_eq!(listed[wave.as_str()], recs.len(), "instruction count of wave {wave}");
        let k = step_of(recs);
        let dom = dump(page, &format!("wave={wave}&step={k}"));
        let rows = elements(&dom, "data-exec");
        assert!(
            rows.len() >= 20.min(recs.len()),
            "wave {wave}: the page renders the rows in view ({} of them)",
            rows.len()
        );
        for r in &rows {
            let i: usize = r["data-step"].parse().unwrap();
            assert_eq!(
                u64::from_str_radix(r["data-exec"], 16).unwrap(),
                recs[i].exec,
                "EXEC of step {i} of wave {wave}"
            );
            assert_eq!(
                r["data-pc"].parse::<u64>().unwrap(),
                recs[i].pc,
                "PC of step {i} of wave {wave}"
            );
            assert_eq!(
                row_lanes(&dom, i),
                recs[i].exec,
                "the lane grid of step {i} of wave {wave}"
            );
        }
        assert!(
            rows.iter().any(|r| r["data-step"] == k.to_string()),
            "wave {wave}: step {k} is in view"
        );
        let detail = elements(&dom, "data-lane");
        assert_eq!(detail.len(), 64, "the selected step lists its 64 lanes");
        for e in &detail {
            let lane: u8 = e["data-lane"].parse().unwrap();
            assert_eq!(
                e.get("data-addr").map(|a| a.parse::<u64>().unwrap()),
                recs[k].lanes.get(&lane).copied(),
                "address of lane {lane} at step {k} of wave {wave}"
            );
        }
    }
}

#[test]
fn the_divergent_kernels_page_shows_the_engines_exec_masks_in_chromium() {
    let (dev, co) = setup("divergence", "gfx90a");
    let mem = DeviceMemory::new(dev.memory_bytes).unwrap();
    let n = 100u32;
    let seeds: Vec<u8> = (0..n)
        .flat_map(|i| (i.wrapping_mul(2_654_435_761) % 5000).to_le_bytes())
        .collect();
    let out = upload(&mem, &vec![0u8; n as usize * 8], "out");
    let ds = upload(&mem, &seeds, "seed");
    let shape = DispatchShape::new([n, 1, 1], [64, 1, 1], dev).unwrap();
    let args = [ArgValue::Pointer(out), ArgValue::Pointer(ds), ArgValue::U32(n)];
    let d = KernelDispatch {
        mem: &mem,
        device: dev,
        co: &co,
        kernel: &co.kernels[0],
        shape,
        args: &args,
        limits: Limits {
            threads: Some(1),
            ..Limits::default()
        },
    };
    let want = engine_record(&d);
    let interp = record(&d, &co, &Interpreter, "interp");
    let jit = record(
        &d,
        &co,
        &jit::Jit::with_options(jit::JitOptions::eager()).unwrap(),
        "jit",
    );
    assert_eq!(
        as_records(&interp),
        want,
        "the interpreter's recording is the engine's record"
    );
    assert_eq!(as_records(&jit), want, "the JIT's recording is the engine's record");
    // the divergence is in the data: some step runs with part of the lanes
    let divergent = |recs: &[Rec]| {
        recs.iter()
            .position(|r| r.exec != recs[0].exec && r.exec != 0)
            .expect("the kernel diverges")
    };
    for recs in want.values() {
        divergent(recs);
    }
    let dir = tempdir("pages");
    let page = dir.join("divergence.html");
    std::fs::write(&page, explorer::html(&jit).unwrap()).unwrap();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("http://") && !html.contains("https://") && !html.contains(" src="),
        "the page loads nothing from elsewhere"
    );
    check_rows(&page, &want, &divergent);
    let first = want.keys().next().unwrap();
    // the instruction that switches lanes off, selected
    screenshot(
        &page,
        &format!("wave={first}&step={}", divergent(&want[first]) - 1),
        "explorer-divergence.png",
    );
}

#[test]
fn the_lds_reductions_page_shows_lane_addresses_and_barriers_in_chromium() {
    let (dev, co) = setup("reduce", "gfx90a");
    let mem = DeviceMemory::new(dev.memory_bytes).unwrap();
    let n = 512usize;
    let input: Vec<f32> = (0..n).map(|i| (i % 19) as f32 * 0.5).collect();
    let din = upload(
        &mem,
        &input.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>(),
        "in",
    );
    let dout = upload(&mem, &[0u8; 8], "out");
    let shape = DispatchShape::new([n as u32, 1, 1], [256, 1, 1], dev).unwrap();
    let args = [ArgValue::Pointer(din), ArgValue::Pointer(dout), ArgValue::U32(n as u32)];
    let d = KernelDispatch {
        mem: &mem,
        device: dev,
        co: &co,
        kernel: &co.kernels[0],
        shape,
        args: &args,
        limits: Limits {
            threads: Some(1),
            ..Limits::default()
        },
    };
    let want = engine_record(&d);
    let jit = jit::Jit::with_options(jit::JitOptions::eager()).unwrap();
    let mut trace = record(&d, &co, &jit, "jit");
    assert_eq!(as_records(&trace), want, "the JIT's recording is the engine's record");
    assert_eq!(
        as_records(&record(&d, &co, &Interpreter, "interp")),
        want,
        "the interpreter's recording is the engine's record"
    );
    // every wave waits at each of the 9 barriers; the page knows when each was released
    for w in &trace.waves {
        let barriers: Vec<_> = w
            .steps
            .iter()
            .filter(|s| trace.insts[&s.pc].text == "s_barrier")
            .collect();
        assert_eq!(barriers.len(), 9, "wave {}", w.id);
        assert!(
            barriers.iter().all(|s| s.rel.is_some_and(|r| r >= s.t)),
            "wave {}: each barrier wait ends",
            w.id
        );
    }
    // with the timing model's cycle timeline
    let rec = explorer::TimelineRecorder::new(1_000_000);
    let (stats, _) = d.run_timed(&jit, &rec).unwrap();
    rec.into_trace(&mut trace, stats.cycles.unwrap());
    assert_eq!(
        trace.timeline.len() as u64,
        stats.wave_instructions,
        "every issued instruction is on the timeline"
    );
    let dir = tempdir("pages");
    let page = dir.join("reduce.html");
    std::fs::write(&page, explorer::html(&trace).unwrap()).unwrap();
    // the rows and lane addresses at the first global load and at the first LDS access
    let load = |recs: &[Rec]| {
        recs.iter()
            .position(|r| !r.lanes.is_empty() && !r.lds && r.lanes.len() == 64)
            .expect("each wave loads its 64 floats")
    };
    check_rows(&page, &want, &load);
    let lds = |recs: &[Rec]| recs.iter().position(|r| r.lds).expect("each wave writes LDS");
    check_rows(&page, &want, &lds);
    let first = want.keys().next().unwrap();
    let dom = dump(&page, &format!("wave={first}&tab=wg"));
    assert!(
        dom.contains("class=\"row barrier\""),
        "the workgroup view lines the waves up at barriers"
    );
    screenshot(
        &page,
        &format!("wave={first}&step={}", lds(&want[first])),
        "explorer-reduce-lds.png",
    );
    screenshot(&page, &format!("wave={first}&tab=wg"), "explorer-reduce-workgroup.png");
    screenshot(
        &page,
        &format!("wave={first}&tab=timeline"),
        "explorer-reduce-timeline.png",
    );
}

#[test]
fn the_page_title_names_a_cxx_kernel_by_its_demangled_name() {
    let (dev, mut co) = setup("divergence", "gfx90a");
    // the kernel as a HIP compiler names it: divergence(unsigned int*, unsigned int const*, unsigned int)
    co.kernels[0].name = "_Z10divergencePjPKjj".into();
    let mem = DeviceMemory::new(dev.memory_bytes).unwrap();
    let out = upload(&mem, &[0u8; 64 * 8], "out");
    let seeds = upload(&mem, &[0u8; 64 * 4], "seed");
    let args = [ArgValue::Pointer(out), ArgValue::Pointer(seeds), ArgValue::U32(64)];
    let d = KernelDispatch {
        mem: &mem,
        device: dev,
        co: &co,
        kernel: &co.kernels[0],
        shape: DispatchShape::new([64, 1, 1], [64, 1, 1], dev).unwrap(),
        args: &args,
        limits: Limits {
            threads: Some(1),
            ..Limits::default()
        },
    };
    let t = record(&d, &co, &Interpreter, "interp");
    assert_eq!(
        (t.kernel.as_str(), t.symbol.as_str()),
        (
            "divergence(unsigned int*, unsigned int const*, unsigned int)",
            "_Z10divergencePjPKjj"
        )
    );
    // the page's title is made from the recording's `kernel`
    let html = explorer::html(&t).unwrap();
    assert!(
        html.contains("\"kernel\":\"divergence(unsigned int*, unsigned int const*, unsigned int)\""),
        "the page carries the demangled name for its title"
    );
}
