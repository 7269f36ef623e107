//! What the debugger tests share: the bundled kernels on a device, a debugger scripted on both engines
//! ([`on_both_engines`]) through [`Dbg`], and the state a stop shows ([`Snapshot`]).

use serde_json::Value;

use emu_core::engine::{Interpreter, KernelDispatch, WaveRunner};
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::wave::WaveStatus;
use emu_core::DevicePreset;
use inspect::protocol::{self, View};
use inspect::{Answer, DebugInfo, Debugger, Session, WaveKey};
use isa_amdgpu::codeobj::CodeObject;

pub fn setup(kernel: &str, target: &str) -> (&'static DevicePreset, CodeObject) {
    let dev = DevicePreset::by_name(if target == "gfx942" { "mi300x" } else { "mi210" }).unwrap();
    let name = format!("{kernel}-{target}.co");
    let co = CodeObject::parse(test_kernels::by_name(&name).unwrap(), &name).unwrap();
    (dev, co)
}

pub fn upload(mem: &DeviceMemory, bytes: &[u8], label: &str) -> u64 {
    let a = mem.allocate(bytes.len() as u64, AllocKind::Buffer, label).unwrap();
    mem.write(a, bytes).unwrap();
    a
}

/// Every instruction of the kernel's code object: (offset in the code object, text), from the disassembler.
pub fn listing(co: &CodeObject) -> Vec<(u64, String)> {
    let target = isa_amdgpu::Target::from_name(&co.target.processor).unwrap();
    co.functions
        .iter()
        .flat_map(|f| {
            isa_amdgpu::decode_all(f.code(), f.address, target)
                .into_iter()
                .map(|(a, i)| (a, isa_amdgpu::disasm::text(&i.unwrap())))
        })
        .collect()
}

/// What the tests ask of a debugger, whichever runner it has. (Each test file compiles this module; the
/// terminal view's methods are the gdb_promises tests'.)
#[allow(dead_code)]
pub trait Dbg {
    /// The whole answer, whether it succeeded or not.
    fn answer(&mut self, line: &str) -> Answer;
    /// The JSON answer of a command that succeeds.
    fn cmd(&mut self, line: &str) -> Value {
        let a = self.answer(line);
        assert_eq!(a.json["ok"], true, "`{line}`: {}", a.text);
        a.json
    }
    fn state(&self) -> Snapshot;
    fn state_code_base(&self) -> u64;
    /// The terminal view with `last` as the last answer, from its line `from` on.
    fn screen(&self, last: &str, from: usize, view: &View) -> protocol::Screen;
    /// What the terminal view writes while it answers `input`.
    fn terminal(&mut self, input: &str, size: (usize, usize), color: bool) -> String;
}

impl<R: WaveRunner> Dbg for Debugger<'_, R> {
    fn answer(&mut self, line: &str) -> Answer {
        self.execute(line)
    }

    fn screen(&self, last: &str, from: usize, view: &View) -> protocol::Screen {
        protocol::screen(self, last, from, view)
    }

    fn terminal(&mut self, input: &str, size: (usize, usize), color: bool) -> String {
        let first = self.execute("wave");
        let mut out = Vec::new();
        protocol::terminal(self, &first, &mut input.as_bytes(), &mut out, &|| size, color).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn state_code_base(&self) -> u64 {
        self.session.launch().code.base
    }

    fn state(&self) -> Snapshot {
        let w = self.session.wave(self.focus).expect("the focused wave has a state");
        Snapshot {
            wave: self.focus,
            time: self.session.time(),
            sgprs: w.sgprs.to_vec(),
            vgprs: w.vgprs.clone(),
            agprs: w.agprs.clone(),
            scc: w.scc,
            pc: w.pc - self.session.launch().code.base,
            executed: w.executed,
            status: w.status,
            lds: self.session.lds().to_vec(),
            memory: self.session.memory().snapshot_buffers().unwrap(),
        }
    }
}

/// Everything a stop shows (the PC relative to the code, which each run loads elsewhere).
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub wave: WaveKey,
    pub time: u64,
    pub sgprs: Vec<u32>,
    pub vgprs: Vec<[u32; 64]>,
    pub agprs: Vec<[u32; 64]>,
    pub scc: bool,
    pub pc: u64,
    pub executed: u64,
    pub status: WaveStatus,
    pub lds: Vec<u8>,
    pub memory: Vec<(u64, Vec<u8>)>,
}

impl Snapshot {
    /// The state without the addresses that differ from one run to the next (the code and kernarg
    /// addresses in SGPRs; device memory compared by contents).
    pub fn contents(&self) -> Snapshot {
        Snapshot {
            sgprs: Vec::new(),
            memory: self.memory.iter().map(|m| (0, m.1.clone())).collect(),
            ..self.clone()
        }
    }
}

/// Asserts two stops are the same, naming the first part that differs.
pub fn same(a: &Snapshot, b: &Snapshot, what: &str) {
    let parts: [(&str, bool); 10] = [
        ("wave", a.wave == b.wave),
        ("time", a.time == b.time),
        ("pc", a.pc == b.pc),
        ("executed", a.executed == b.executed),
        ("status", a.status == b.status),
        ("scc", a.scc == b.scc),
        ("sgprs", a.sgprs == b.sgprs),
        ("vgprs and agprs", a.vgprs == b.vgprs && a.agprs == b.agprs),
        ("LDS", a.lds == b.lds),
        ("device memory", a.memory == b.memory),
    ];
    if let Some((p, _)) = parts.iter().find(|p| !p.1) {
        panic!(
            "{what}: {p} differ (time {} vs {}, pc {:#x} vs {:#x}, executed {} vs {})",
            a.time, b.time, a.pc, b.pc, a.executed, b.executed
        );
    }
}

/// Runs `script` on a debugger over `d` on each engine, starting at `wave`.
pub fn on_both_engines(
    d: &KernelDispatch<'_>,
    co: &CodeObject,
    wave: WaveKey,
    script: &mut dyn FnMut(&str, &mut dyn Dbg),
) {
    let info = DebugInfo::of(co, d.kernel);
    let before = d.mem.snapshot_buffers().unwrap();
    let jit = jit::Jit::with_options(jit::JitOptions::eager()).unwrap();
    run_session(d, &Interpreter, info.clone(), wave, &mut |x| script("interp", x));
    d.mem.restore_buffers(&before).unwrap();
    run_session(d, &jit, info, wave, &mut |x| script("jit", x));
}

fn run_session<R: WaveRunner>(
    d: &KernelDispatch<'_>,
    runner: &R,
    info: DebugInfo,
    wave: WaveKey,
    f: &mut dyn FnMut(&mut dyn Dbg),
) {
    d.launch(|mem, device, launch, limits| {
        let session = Session::new(mem, device, launch, runner, limits.max_wave_instructions)?;
        let (mut dbg, first) = Debugger::start(session, info, wave)?;
        assert_eq!(first.json["stop"]["reason"], "start");
        f(&mut dbg);
        dbg.finish_dispatch()?;
        Ok(())
    })
    .unwrap();
}
