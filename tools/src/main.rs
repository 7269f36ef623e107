//! `wavejit`: the command line of the wavejit AMD GPU emulator.
//!
//! `disasm` (llvm-objdump-identical listings of code objects, HIP executables and libraries), `info` (targets,
//! kernels, descriptors, metadata), `run` (one kernel dispatch, arguments from the command line and files),
//! `demo` (the bundled kernels against their CPU references), `bench` (engine and timing-model throughput),
//! `exec` (an unmodified ROCm program on emulated GPUs through the HSA runtime shim), `smi` (the emulated
//! devices of running programs), `profile` (hardware counters, traces and a database of every dispatch of a
//! program) and `analyze` (speed-of-light metrics and a roofline from a profile). Kernels run on the JIT, the interpreter or both in crosscheck (`--engine`);
//! `--timing` runs dispatches in the timing model.

mod analyze;
mod bench;
mod debug;
mod demo;
mod disasm;
mod engine;
mod exec;
mod host;
mod info;
mod profile;
mod roofline;
mod run;
mod smi;
mod timing;
mod trace;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand};
use emu_core::DevicePreset;

/// `wavejit --version`: the package's version and the commit the binary was built from.
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("WAVEJIT_COMMIT"), ")");

#[derive(Parser)]
#[command(
    name = "wavejit",
    version = VERSION,
    about = "wavejit: a JIT-compiling AMD GPU emulator (gfx90a / gfx942)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Disassemble every function of a code object, HIP executable or shared library (llvm-objdump-19 text).
    ///
    /// Each function prints as `<name>:` followed by one line per instruction:
    /// `<text>  // <address>: <encoding>`; code before the code section's first symbol prints under the
    /// section's name (`.text:`), as llvm-objdump lists it. Without FILE, disassembles the bundled sample kernel.
    #[command(
        after_help = "Examples:\n  wavejit disasm\n  wavejit disasm kernel.co\n  wavejit disasm ./app --target gfx90a:xnack- --kernel _Z4vaddPfS_S_i\n  wavejit disasm /usr/lib/x86_64-linux-gnu/librocrand.so.1 --target gfx90a"
    )]
    Disasm {
        /// Code object, HIP executable, shared library or offload bundle. Default: the bundled sample.
        #[arg(value_parser = code_file)]
        file: Option<PathBuf>,
        /// Only code objects for this target id (`gfx90a`, `gfx90a:xnack-`, `gfx942`).
        #[arg(long)]
        target: Option<String>,
        /// Only this function (kernel or device function) by symbol name.
        #[arg(long)]
        kernel: Option<String>,
    },
    /// Run one kernel dispatch on an emulated GPU.
    #[command(
        after_help = "Example (c[i] = a[i] + b[i] over 1000 floats):\n  wavejit run vadd-gfx942.co --kernel vadd --grid 1000 --block 256 \\\n      --arg in=a.bin --arg in=b.bin --arg out=c.bin:4000 --arg u32=1000\n\nArgument kinds, in the kernel's argument order: u32=V i32=V u64=V i64=V f32=V f64=V (by value),\nin=PATH (device buffer filled from the file), out=PATH:BYTES (zeroed buffer written to PATH after\nthe run), inout=PATH (filled from PATH and written back). Hidden arguments are filled automatically."
    )]
    // the argument kinds are listed in the after-help
    #[command(mut_arg("args", |a| a.help("Kernel arguments, in order (see below)")))]
    Run {
        #[command(flatten)]
        kernel: KernelArgs,
        /// Write statistics as JSON to this file.
        #[arg(long)]
        stats_json: Option<PathBuf>,
        /// Stop the dispatch after SECS seconds with a report of where each wave is (also WAVEJIT_TIMEOUT).
        /// A dispatch running longer than a few seconds reports its progress on stderr meanwhile.
        #[arg(long, value_name = "SECS")]
        timeout: Option<String>,
        /// Fault at any kernel access outside its allocation's bytes, also inside the allocation's last page,
        /// where a GPU (and wavejit by default, with a warning) lets it through; allocations get redzones
        /// (unowned address space as large as each, 1 MiB to 1 GiB), so one far past a buffer faults too.
        #[arg(long)]
        memcheck: bool,
        /// Host threads running workgroups (default: all cores); results do not depend on it.
        #[arg(long)]
        threads: Option<usize>,
        /// The engine that runs the kernel.
        #[arg(long, value_enum, default_value_t = engine::EngineKind::Jit)]
        engine: engine::EngineKind,
        /// Run in the timing model (one host thread): modeled cycles and time, occupancy, stalls, cache
        /// statistics (a summary, and in --stats-json).
        #[arg(long)]
        timing: bool,
        /// JIT: entries into a block that run on the interpreter before it is translated (0: translate every
        /// block on first use). Default: the tiered engine's threshold (or WAVEJIT_JIT_HOT).
        #[arg(long)]
        hot_after: Option<u32>,
        /// Profile the dispatch: hardware counters (modeled ones too with --timing) into DIR as CSV, trace
        /// JSON and a SQLite database, as `wavejit profile` writes them.
        #[arg(long, value_name = "DIR")]
        profile: Option<PathBuf>,
        /// With --profile --timing: trace the instructions of the first N waves.
        #[arg(long, value_name = "N", default_value_t = 0)]
        wave_trace: usize,
    },
    /// Step through a kernel dispatch, forwards and backwards: breakpoints, watches, registers per lane.
    #[command(
        after_help = "Example (the divergent kernel, stopping at its first instruction):\n  wavejit debug divergence-gfx90a.co --grid 64 --block 64 --arg out=/dev/null:512 --arg in=seeds.bin --arg u32=64\n\nOn a terminal: a full-screen view (an empty line repeats the last command, `more` pages a long answer;\nthe EXEC strip shows lanes as # and ., coloured unless NO_COLOR is set). Otherwise one command per line on\nstdin, answers on stdout (one JSON object per line with --json). Commands: step [N], next, finish,\ncontinue, break PC|SYMBOL+OFF, watch REG[LANE]|ADDRESS, print ..., disasm, wave, waves,\ninfo kernel|breakpoints, reverse-step [N], reverse-continue, history, help [CMD], quit.\n\nstep, next, finish and continue stop where any wave hits a breakpoint or a watch fires; the focus then\nmoves to that wave (the answer names its workgroup and index). Breakpoints show as SYMBOL+OFFSET.\nRegisters go by the disassembler's names or rocgdb's: v3, v3[5], s5, exec, vcc, m0, scc, pc, a2, or\n$v3, $exec, $s5, $a2."
    )]
    Debug {
        #[command(flatten)]
        kernel: KernelArgs,
        /// The wave to stop at first: WG_X,WG_Y,WG_Z:WAVE (default 0,0,0:0).
        #[arg(long)]
        wave: Option<String>,
        /// The engine that runs the kernel (one: they give the same picture).
        #[arg(long, value_enum, default_value_t = engine::OneEngine::Jit)]
        engine: engine::OneEngine,
        /// Answer every command with one JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Record a dispatch and write the wavefront explorer: one self-contained HTML page.
    #[command(
        after_help = "Example:\n  wavejit trace reduce-gfx942.co --grid 512 --block 256 --arg in=x.bin --arg out=sums.bin:8 --arg u32=512 --html reduce.html\n\nThe page shows every recorded wave's instructions with EXEC as a 64-lane grid per step, the registers\neach instruction changed, the lanes' memory addresses and cache lines, LDS bank conflicts, barrier waits and\nthe waves of a workgroup side by side; with --timing also the cycle timeline of the waves of a CU."
    )]
    Trace {
        #[command(flatten)]
        kernel: KernelArgs,
        /// Where to write the page.
        #[arg(long)]
        html: PathBuf,
        /// Record only these workgroups (linear indices, comma-separated; default: from the first until the
        /// instruction budget is used up).
        #[arg(long)]
        workgroups: Option<String>,
        /// Instructions to record in all (the page stays responsive with hundreds of thousands).
        #[arg(long, default_value_t = 50_000)]
        max_recorded: u64,
        /// Also run the dispatch in the timing model and draw the cycle timeline of the waves of a CU.
        #[arg(long)]
        timing: bool,
        /// The engine that runs the kernel (one: they give the same picture).
        #[arg(long, value_enum, default_value_t = engine::OneEngine::Jit)]
        engine: engine::OneEngine,
    },
    /// Run the bundled kernels on an emulated GPU and check them against their CPU references.
    Demo {
        #[arg(long, value_parser = device(), ignore_case = true, help = default_device_help())]
        device: Option<&'static DevicePreset>,
        /// The engine that runs the kernels.
        #[arg(long, value_enum, default_value_t = engine::EngineKind::Jit)]
        engine: engine::EngineKind,
        /// Run every kernel in the timing model and show its modeled time.
        #[arg(long)]
        timing: bool,
        /// Fault at any kernel access outside its allocation's bytes, also inside the allocation's last page;
        /// allocations get redzones (unowned address space as large as each, 1 MiB to 1 GiB).
        #[arg(long)]
        memcheck: bool,
    },
    /// Measure engine throughput: VALU lane-ops/s on an ALU loop, emulated GFLOP/s on a tiled SGEMM.
    Bench {
        #[arg(long, value_parser = device(), ignore_case = true, help = default_device_help())]
        device: Option<&'static DevicePreset>,
        /// Host threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// SGEMM size (a multiple of 16).
        #[arg(long, default_value_t = 256)]
        sgemm_n: u32,
        /// Loop iterations of the ALU-loop kernel (more: more ALU-bound).
        #[arg(long, default_value_t = 1000)]
        iterations: u32,
        /// Times each engine runs each kernel; the fastest run counts, for both engines alike (the machine
        /// may be shared: the fastest is the least disturbed). The scaling figures take the fastest of as many
        /// rounds (at least three, and at least a second's worth of one-thread runs) at one and at all host
        /// threads.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
        repeat: u32,
        /// Measure the timing model instead: wave-instructions per second per host core on the ALU loop and on
        /// a streaming kernel, against functional mode.
        #[arg(long)]
        timing: bool,
        /// Measure what the exact hardware counters cost: the ALU loop and a streaming kernel with counters on
        /// against off, on the interpreter and the JIT.
        #[arg(long, conflicts_with = "timing")]
        counters: bool,
        /// Also write every figure as JSON to this file (`-`: to stdout, the text then going to stderr).
        #[arg(long, conflicts_with = "counters")]
        json: Option<String>,
    },
    /// Run a ROCm program (HIP application, rocminfo, …) on emulated GPUs through the HSA runtime shim.
    #[command(
        after_help = exec_after_help()
    )]
    Exec {
        #[arg(long, value_name = "DEVICES", help = devices_help("default: the presets of the program's GPU targets, below"))]
        device: Option<String>,
        /// How the program reaches the GPUs: hsa (wavejit's HSA runtime replaces ROCm's) or kfd (the program's
        /// own ROCm, or tinygrad's runtime, over an emulated kernel driver: /dev/kfd and the render nodes).
        #[arg(long, default_value = "hsa", value_name = "hsa|kfd")]
        driver: exec::Route,
        #[arg(long, help = engine::EngineKind::help("The engine that runs kernels"))]
        engine: Option<String>,
        /// Run every dispatch in the timing model: the runtime's dispatch timestamps (and so
        /// hipEventElapsedTime) report modeled time, and the program's end prints a table of each kernel's
        /// modeled time (also WAVEJIT_TIMING=1).
        #[arg(long)]
        timing: bool,
        /// Fault at any kernel access outside its allocation's bytes, also inside the allocation's last page,
        /// where a GPU (and wavejit by default, with a warning) lets it through; allocations get redzones
        /// (unowned address space as large as each, 1 MiB to 1 GiB), so one far past a buffer faults too
        /// (also WAVEJIT_MEMCHECK=1).
        #[arg(long)]
        memcheck: bool,
        /// Stop a wave after this many instructions, 0 for no limit (also WAVEJIT_MAX_INSTRUCTIONS;
        /// default 10 billion, as for every command).
        #[arg(long, value_name = "N")]
        max_instructions: Option<u64>,
        /// Stop any dispatch that runs longer than SECS seconds, with a fault report of where each wave is
        /// (also WAVEJIT_TIMEOUT, for programs a test harness starts). A dispatch running longer than a few
        /// seconds reports its progress on stderr meanwhile.
        #[arg(long, value_name = "SECS")]
        timeout: Option<String>,
        /// Run the first dispatch of this kernel under the step debugger (commands on stdin; a mangled
        /// name's plain part is enough: vadd for _Z4vaddPfS_S_i). A kernel the program never dispatches is
        /// an error at its end, listing the ones it did.
        #[arg(long, value_name = "KERNEL")]
        debug: Option<String>,
        /// With --debug: the wave to stop at first, WG_X,WG_Y,WG_Z:WAVE.
        #[arg(long)]
        wave: Option<String>,
        /// With --debug: answer in JSON, one object per line.
        #[arg(long)]
        json: bool,
        /// Record the first dispatch of --kernel and write the wavefront explorer page here (with --timing,
        /// the cycle timeline too). A kernel the program never dispatches is an error at its end.
        #[arg(long, value_name = "OUT.html")]
        trace_html: Option<PathBuf>,
        /// The kernel --trace-html records.
        #[arg(long)]
        kernel: Option<String>,
        /// With --trace-html: instructions to record at most.
        #[arg(long)]
        max_recorded: Option<u64>,
        /// The program and its arguments (after --).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        command: Vec<String>,
    },
    /// Show the emulated GPUs of the running wavejit processes: memory, processes, busy time (like amd-smi).
    #[command(
        after_help = "Examples:\n  wavejit smi\n  wavejit smi metric --json\n  wavejit smi process --watch 1\n\nEvery process under `wavejit exec` (any program on the runtime shim) publishes its emulated devices;\ndevice N of one preset is one card, summed over processes. Utilization is the share of time with a\ndispatch running: since start, or over the last interval with --watch. Power and temperature are not\nmodeled. rocm-smi itself runs as `wavejit exec -- rocm-smi ...`."
    )]
    Smi {
        /// list, static, metric or process (default: one line per card).
        #[arg(value_enum)]
        view: Option<smi::View>,
        /// JSON (an array with one object per card; `[]` when no wavejit process runs).
        #[arg(long)]
        json: bool,
        /// Print again every SECS seconds (utilization then over the last interval).
        #[arg(long, value_name = "SECS")]
        watch: Option<f64>,
        /// With --watch: stop after N prints.
        #[arg(long, value_name = "N")]
        iterations: Option<u64>,
    },
    /// Profile every kernel dispatch of a ROCm program (and its child processes) on emulated GPUs.
    #[command(
        after_help = "Examples:\n  wavejit profile --list-counters\n  wavejit profile -o prof -- ./my_hip_app\n  wavejit profile --timing --counters SQ_INSTS_VALU,TCC_HIT,TCC_MISS -o prof -- ./my_hip_app\n  wavejit profile --pmc SQ_WAVES_sum SQ_INSTS_VALU -o prof -- ./my_hip_app\n  wavejit profile --timing --wave-trace 4 --format json -o prof -- ./my_hip_app\n  wavejit analyze prof\n\nWrites into DIR: kernel_trace.csv, counter_collection.csv, memory_copy_trace.csv, hsa_api_trace.csv\n(rocprofv3's columns), trace.json (Chrome/Perfetto: chrome://tracing or ui.perfetto.dev) and profile.db\n(SQLite; schema in docs/profiling.md)."
    )]
    Profile {
        /// Print every counter, its meaning and whether it is exact or modeled, and stop.
        #[arg(long)]
        list_counters: bool,
        /// Counters to collect, comma- or space-separated (default: every exact counter, and with --timing
        /// every modeled one). --pmc is rocprofv3's spelling; rocprofv3's X_sum names are accepted (wavejit's
        /// counters are whole-device totals, so X_sum is X) and recorded under the name given.
        #[arg(long, visible_alias = "pmc", num_args = 1.., value_name = "COUNTER")]
        counters: Vec<String>,
        /// Run every dispatch in the timing model: modeled timestamps and the modeled counters.
        #[arg(long)]
        timing: bool,
        /// Output directory.
        #[arg(short = 'o', long = "output", default_value = "wavejit-profile")]
        output: PathBuf,
        /// Output formats, comma-separated: csv, json, db.
        #[arg(long, default_value = "csv,json,db")]
        format: String,
        /// With --timing: trace the instructions of the first N waves of every dispatch (trace JSON and DB).
        #[arg(long, value_name = "N", default_value_t = 0)]
        wave_trace: usize,
        #[arg(long, value_name = "DEVICES", help = devices_help("as for exec"))]
        device: Option<String>,
        /// How the program reaches the GPUs, as for exec: hsa (wavejit's HSA runtime, which also records the
        /// program's hsa_* calls) or kfd (its own ROCm over the emulated kernel driver, which records its ioctls).
        #[arg(long, default_value = "hsa", value_name = "hsa|kfd")]
        driver: exec::Route,
        #[arg(long, help = engine::EngineKind::help("The engine that runs kernels"))]
        engine: Option<String>,
        /// Stop any dispatch that runs longer than SECS seconds, as for exec (also WAVEJIT_TIMEOUT).
        #[arg(long, value_name = "SECS")]
        timeout: Option<String>,
        /// The program and its arguments (after --).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        command: Vec<String>,
    },
    /// Speed-of-light metrics, instruction mix, top kernels and a roofline chart from a profile.
    #[command(
        after_help = "Examples:\n  wavejit analyze prof\n  wavejit analyze prof/profile.db --json\n\nDB_OR_DIR: a profile.db or the directory `wavejit profile -o` wrote. The roofline (roofline.svg,\nroofline.png, written beside the database) needs a profile made with --timing."
    )]
    Analyze {
        /// profile.db, or the profile's directory.
        path: PathBuf,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show targets, kernels, kernel descriptors and metadata of a code object or host binary.
    Info {
        /// Code object, HIP executable, shared library or offload bundle.
        #[arg(value_parser = code_file)]
        file: PathBuf,
        /// Only code objects for this target id.
        #[arg(long)]
        target: Option<String>,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// The dispatch `run`, `debug` and `trace` take.
#[derive(clap::Args)]
struct KernelArgs {
    /// Code object (or HIP binary / library holding one).
    #[arg(value_parser = code_file)]
    file: PathBuf,
    /// Kernel name (optional when the code object has one kernel).
    #[arg(long)]
    kernel: Option<String>,
    /// Work-items per dimension: X[,Y[,Z]].
    #[arg(long)]
    grid: String,
    /// Workgroup size: X[,Y[,Z]].
    #[arg(long)]
    block: String,
    /// The emulated GPU (default: the preset matching the code object's target).
    #[arg(long, value_parser = device(), ignore_case = true)]
    device: Option<&'static DevicePreset>,
    /// Kernel arguments, in order, as for `run` (u32=V ... in=PATH out=PATH:BYTES inout=PATH).
    #[arg(long = "arg")]
    args: Vec<String>,
    /// Dynamic LDS bytes per workgroup, as hipModuleLaunchKernel's sharedMemBytes: the dispatch's group
    /// segment is the kernel descriptor's static LDS plus BYTES (Triton kernels ask for all their LDS here),
    /// and its hidden dynamic-LDS argument is BYTES. Their sum may not exceed the device's LDS.
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    lds: u32,
    /// Stop a wave after this many instructions (runaway kernels; 0: no limit).
    #[arg(long, value_name = "N", default_value_t = emu_core::engine::DEFAULT_MAX_WAVE_INSTRUCTIONS)]
    max_instructions: u64,
}

impl KernelArgs {
    fn prepare(&self) -> Result<run::Prepared, Box<dyn std::error::Error>> {
        run::Prepared::new(
            &self.file,
            self.kernel.as_deref(),
            self.device.map(|d| d.id),
            &self.grid,
            &self.block,
            &self.args,
            self.lds,
            false,
        )
    }
}

/// `--device`: the id or an alias of a preset, in any case; help and errors list the ids of
/// [`emu_core::PRESETS`].
fn device() -> impl TypedValueParser<Value = &'static DevicePreset> {
    PossibleValuesParser::new(
        emu_core::PRESETS
            .iter()
            .map(|p| PossibleValue::new(p.id).aliases(p.aliases.iter().copied())),
    )
    .try_map(|name| DevicePreset::by_name(&name))
}

/// The help of `--device` where none given means the default device.
fn default_device_help() -> String {
    format!("The emulated GPU (default: {})", DevicePreset::default_device().id)
}

/// The help of a `--device` that takes a comma-separated list (`exec`, `profile`, which check the names).
fn devices_help(default: &str) -> String {
    let ids: Vec<&str> = emu_core::PRESETS.iter().map(|p| p.id).collect();
    format!("Emulated GPUs, comma-separated ({}; {default})", ids.join(", "))
}

/// The after-help of `exec`: examples, and the default devices as [`exec::preset_for_target`] and
/// [`DevicePreset::program_default`] choose them.
fn exec_after_help() -> String {
    let (default, fallback) = (DevicePreset::default_device().id, DevicePreset::program_default().id);
    let mut targets: Vec<&str> = emu_core::PRESETS.iter().map(|p| p.gfx).collect();
    targets.sort();
    targets.dedup();
    let by_target: Vec<String> = targets
        .iter()
        .filter_map(|&t| exec::preset_for_target(t).map(|p| format!("{t}: {}", p.id)))
        .collect();
    format!(
        "Examples:\n  wavejit exec -- rocminfo\n  wavejit exec --device {default},{fallback} -- ./my_hip_app --size 1024\n  \
         wavejit exec --debug vadd -- ./vadd                      # step through vadd's first dispatch\n  \
         wavejit exec --trace-html vadd.html --kernel vadd -- ./vadd\n\nThe program is unmodified: it loads the \
         shim as libhsa-runtime64.so.1. Default devices: the presets\nmatching the GPU targets in the program's fat \
         binary ({}), else one {fallback}.\nA --device the program's code objects (or its HIP runtime) cannot run \
         on is refused before it starts,\nnaming the devices that would work.",
        by_target.join(", ")
    )
}

/// A file argument that names a code object, executable or library: a directory is refused as one (reading
/// it would fail with an error of the system's that does not say so).
fn code_file(path: &str) -> Result<PathBuf, String> {
    let p = PathBuf::from(path);
    if p.is_dir() {
        return Err(format!(
            "{path} is a directory; give a code object, HIP executable or shared library"
        ));
    }
    Ok(p)
}

fn main() -> ExitCode {
    host::restart_with_huge_page_heap();
    let cli = Cli::parse();
    if let Command::Exec {
        device,
        driver,
        engine,
        timing,
        memcheck,
        max_instructions,
        timeout,
        debug,
        wave,
        json,
        trace_html,
        kernel,
        max_recorded,
        command,
    } = &cli.command
    {
        let options = exec::Options {
            devices: device.clone(),
            engine: engine.clone(),
            timing: *timing,
            memcheck: *memcheck,
            max_instructions: *max_instructions,
            timeout: timeout.clone(),
            inspect: exec::Inspect {
                debug: debug.clone(),
                wave: wave.clone(),
                json: *json,
                trace_html: trace_html.clone(),
                kernel: kernel.clone(),
                max_recorded: *max_recorded,
            },
            env: Vec::new(),
            route: *driver,
        };
        return match exec::run(&options, command) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("wavejit: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if let Command::Profile {
        list_counters,
        counters,
        timing,
        output,
        format,
        wave_trace,
        device,
        driver,
        engine,
        timeout,
        command,
    } = &cli.command
    {
        if *list_counters {
            print!("{}", profile::list_counters());
            return ExitCode::SUCCESS;
        }
        let run = || -> Result<ExitCode, Box<dyn std::error::Error>> {
            if command.is_empty() {
                return Err("wavejit profile needs a program to run: wavejit profile [OPTIONS] -- PROGRAM [ARGS…] (or --list-counters)".into());
            }
            let formats = profile::Formats::parse(format)?;
            profile::run(profile::ProfileArgs {
                counters: (!counters.is_empty()).then(|| counters.join(",")),
                timing: *timing,
                output: output.clone(),
                formats,
                wave_trace: *wave_trace,
                device: device.clone(),
                route: *driver,
                engine: engine.clone(),
                timeout: timeout.clone(),
                command: command.clone(),
            })
        };
        return match run() {
            Ok(code) => code,
            Err(e) => {
                eprintln!("wavejit: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let result = match cli.command {
        Command::Exec { .. } | Command::Profile { .. } => unreachable!("handled above"),
        Command::Analyze { path, json } => analyze::run(&path, json),
        Command::Disasm { file, target, kernel } => disasm::run(file.as_deref(), target.as_deref(), kernel.as_deref()),
        Command::Info { file, target, json } => info::run(&file, target.as_deref(), json),
        Command::Smi {
            view,
            json,
            watch,
            iterations,
        } => smi::run(view, json, watch, iterations),
        Command::Demo {
            device,
            engine,
            timing,
            memcheck,
        } => demo::run(device.map(|d| d.id), engine, timing, memcheck),
        Command::Bench {
            device,
            threads,
            sgemm_n,
            iterations,
            repeat,
            timing,
            counters,
            json,
        } => {
            if counters {
                bench::run_counters(device.map(|d| d.id), iterations, repeat)
            } else if timing {
                bench::run_timing(device.map(|d| d.id), iterations, repeat, json.as_deref())
            } else {
                bench::run(bench::BenchArgs {
                    device: device.map(|d| d.id),
                    threads,
                    sgemm_n,
                    iterations,
                    repeat,
                    json: json.as_deref(),
                })
            }
        }
        Command::Debug {
            kernel,
            wave,
            engine,
            json,
        } => kernel.prepare().and_then(|prepared| {
            debug::run(debug::DebugArgs {
                prepared,
                max_instructions: kernel.max_instructions,
                engine,
                wave,
                json,
            })
        }),
        Command::Trace {
            kernel,
            html,
            workgroups,
            max_recorded,
            timing,
            engine,
        } => kernel.prepare().and_then(|prepared| {
            trace::run(trace::TraceArgs {
                prepared,
                html,
                workgroups,
                max_recorded,
                timing,
                engine,
                max_instructions: kernel.max_instructions,
            })
        }),
        Command::Run {
            kernel:
                KernelArgs {
                    file,
                    kernel,
                    grid,
                    block,
                    device,
                    args,
                    lds,
                    max_instructions,
                },
            stats_json,
            timeout,
            memcheck,
            threads,
            engine,
            timing,
            hot_after,
            profile,
            wave_trace,
        } => run::run(run::RunArgs {
            file,
            kernel,
            grid,
            block,
            device: device.map(|d| d.id.to_string()),
            args,
            lds,
            stats_json,
            max_instructions,
            timeout,
            memcheck,
            threads,
            engine,
            timing,
            hot_after,
            profile,
            wave_trace,
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if let Some(io) = e.downcast_ref::<std::io::Error>() {
                if io.kind() == std::io::ErrorKind::BrokenPipe {
                    return ExitCode::SUCCESS;
                }
            }
            eprintln!("wavejit: {e}");
            ExitCode::FAILURE
        }
    }
}
