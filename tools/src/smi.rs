//! `wavejit smi [list|static|metric|process] [--json] [--watch SECS]`: the emulated GPUs of the running wavejit
//! processes, in the manner of amd-smi (its command names, JSON field names and `{"value", "unit"}` pairs).
//!
//! Everything comes from the per-user SMI registry (`profiler_hooks::smi`): each process on the runtime shim
//! publishes its devices, the device memory it has allocated, its dispatches and the time one was running.
//! Device index N of preset P is one card of the machine, summed over the processes using it. What the
//! emulator knows is shown exactly (memory, processes, busy time); the clocks are the preset's (the emulated GPU
//! runs at one clock); power and temperature are not shown: wavejit has no power or thermal model.
//!
//! Utilization is the share of wall time with a dispatch running: since the oldest of the card's processes
//! started, or, under `--watch`, over the last interval (each view says which). A card's number follows from
//! its (index, preset) alone (`profiler_hooks::smi::card_number`), so it does not change as programs come and
//! go. VRAM is shown in whole MiB rounded down (`MB`, as amd-smi writes it) in every view, text and JSON; the
//! `emulated` blocks add the exact bytes.

use std::io::Write as _;
use std::time::Duration;

use profiler_hooks::smi::{self, Card, Sample};
use serde_json::Value;

/// What to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum View {
    /// The cards: number, PCI address, UUID, name, target.
    List,
    /// Fixed facts: ASIC ids, compute units, target, VRAM size, clocks, bus.
    Static,
    /// Live figures: utilization, VRAM used, clocks, dispatches.
    Metric,
    /// Per card, its processes: pid, name, VRAM, busy time, dispatches, queues.
    Process,
}

const MIB: u64 = 1 << 20;

/// VRAM as every view shows it: whole MiB, rounded down (amd-smi's `MB`); exact bytes only under `emulated`.
fn vram_mb(bytes: u64) -> Node {
    unit(bytes / MIB, "MB")
}

/// A view as an ordered tree: serialized as JSON in this order, and printed as amd-smi prints its
/// human-readable form (`KEY: value` lines, nested blocks indented, value/unit pairs as `value unit`).
enum Node {
    Val(Value),
    /// amd-smi's `{"value": …, "unit": …}`.
    Unit(Value, &'static str),
    Map(Vec<(&'static str, Node)>),
    List(Vec<Node>),
}

fn val(v: impl Into<Value>) -> Node {
    Node::Val(v.into())
}

fn unit(v: impl Into<Value>, u: &'static str) -> Node {
    Node::Unit(v.into(), u)
}

fn map(fields: Vec<(&'static str, Node)>) -> Node {
    Node::Map(fields)
}

impl serde::Serialize for Node {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Node::Val(v) => v.serialize(s),
            Node::Unit(v, u) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("value", v)?;
                m.serialize_entry("unit", u)?;
                m.end()
            }
            Node::Map(fields) => {
                let mut m = s.serialize_map(Some(fields.len()))?;
                for (k, v) in fields {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
            Node::List(items) => {
                let mut q = s.serialize_seq(Some(items.len()))?;
                for i in items {
                    q.serialize_element(i)?;
                }
                q.end()
            }
        }
    }
}

impl Node {
    fn scalar(&self) -> Option<String> {
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        match self {
            Node::Val(v) => Some(text(v)),
            Node::Unit(v, u) => Some(format!("{} {u}", text(v))),
            _ => None,
        }
    }

    /// Appends the human-readable form of the fields of this map, indented by `indent`.
    fn render(&self, out: &mut String, indent: usize) {
        let pad = " ".repeat(indent);
        let Node::Map(fields) = self else { return };
        for (k, v) in fields {
            let key = k.to_uppercase();
            match v {
                Node::Map(_) => {
                    out.push_str(&format!("{pad}{key}:\n"));
                    v.render(out, indent + 4);
                }
                Node::List(items) => {
                    out.push_str(&format!("{pad}{key}:\n"));
                    if items.is_empty() {
                        out.push_str(&format!("{pad}    (none)\n"));
                    }
                    for (i, item) in items.iter().enumerate() {
                        out.push_str(&format!("{pad}    {i}:\n"));
                        item.render(out, indent + 8);
                    }
                }
                leaf => out.push_str(&format!("{pad}{key}: {}\n", leaf.scalar().unwrap_or_default())),
            }
        }
    }
}

/// How utilization was measured: since start, or over the last watch interval.
struct Window<'a> {
    since: Option<&'a Sample>,
    now_ns: u64,
}

impl Window<'_> {
    fn utilization(&self, card: &Card) -> (f64, u64) {
        match self.since {
            Some(s) => card.utilization_since(s, self.now_ns),
            None => card.utilization_since_start(self.now_ns),
        }
    }

    fn basis(&self) -> &'static str {
        if self.since.is_some() {
            "last interval"
        } else {
            "since start"
        }
    }
}

fn emulated(c: &Card, mut more: Vec<(&'static str, Node)>) -> Node {
    let mut fields = vec![("preset", val(c.preset.clone())), ("index", val(c.index))];
    fields.append(&mut more);
    map(fields)
}

/// `node`: the card's KFD node in `wavejit exec`'s sysfs view made now (its place among the cards shown + 1).
fn list_node(c: &Card, node: usize) -> Node {
    map(vec![
        ("gpu", val(c.number)),
        ("bdf", val(c.bdf())),
        ("uuid", val(c.uuid())),
        ("kfd_id", val(c.gpu_id())),
        ("node_id", val(node)),
        ("market_name", val(c.name.clone())),
        ("target_graphics_version", val(c.gfx.clone())),
        ("emulated", emulated(c, vec![])),
    ])
}

fn static_node(c: &Card) -> Node {
    map(vec![
        ("gpu", val(c.number)),
        (
            "asic",
            map(vec![
                ("market_name", val(c.name.clone())),
                ("vendor_id", val("0x1002")),
                ("vendor_name", val("Advanced Micro Devices Inc. [AMD/ATI]")),
                ("device_id", val(format!("{:#06x}", c.pci_device_id))),
                ("asic_serial", val(format!("0x{:016X}", c.unique_id()))),
                ("num_compute_units", val(c.compute_units)),
                ("target_graphics_version", val(c.gfx.clone())),
            ]),
        ),
        ("bus", map(vec![("bdf", val(c.bdf()))])),
        ("vram", map(vec![("size", vram_mb(c.vram_total))])),
        (
            "clock",
            map(vec![
                ("sys", map(vec![("max", unit(c.engine_clock_mhz, "MHz"))])),
                ("mem", map(vec![("max", unit(c.memory_clock_mhz, "MHz"))])),
            ]),
        ),
        ("emulated", emulated(c, vec![])),
    ])
}

fn clock_node(mhz: u32) -> Node {
    map(vec![
        ("clk", unit(mhz, "MHz")),
        ("min_clk", unit(mhz, "MHz")),
        ("max_clk", unit(mhz, "MHz")),
    ])
}

fn metric_node(c: &Card, w: &Window) -> Node {
    let (util, window_ns) = w.utilization(c);
    let used = c.vram_used();
    map(vec![
        ("gpu", val(c.number)),
        (
            "usage",
            map(vec![
                ("gfx_activity", unit((util * 10.0).round() / 10.0, "%")),
                ("basis", val(w.basis())),
                ("window", unit((window_ns as f64 / 1e7).round() / 100.0, "s")),
            ]),
        ),
        (
            "clock",
            map(vec![
                ("gfx_0", clock_node(c.engine_clock_mhz)),
                ("mem_0", clock_node(c.memory_clock_mhz)),
            ]),
        ),
        (
            "mem_usage",
            map(vec![
                ("total_vram", vram_mb(c.vram_total)),
                ("used_vram", vram_mb(used)),
                ("free_vram", vram_mb(c.vram_total.saturating_sub(used))),
            ]),
        ),
        (
            "emulated",
            emulated(
                c,
                vec![
                    ("vram_used", unit(used, "B")),
                    ("busy", unit(c.busy_ns(), "ns")),
                    ("dispatches", val(c.dispatches())),
                    ("processes", val(c.users.len())),
                ],
            ),
        ),
    ])
}

fn process_node(c: &Card) -> Node {
    let list = c
        .users
        .iter()
        .map(|u| {
            map(vec![(
                "process_info",
                map(vec![
                    ("name", val(u.name.clone())),
                    ("pid", val(u.pid)),
                    ("mem_usage", vram_mb(u.vram_used)),
                    ("memory_usage", map(vec![("vram_mem", vram_mb(u.vram_used))])),
                    ("usage", map(vec![("gfx", unit(u.busy_ns, "ns"))])),
                    ("dispatches", val(u.dispatches)),
                    ("queues", val(u.queues)),
                    ("emulated", map(vec![("vram_used", unit(u.vram_used, "B"))])),
                ]),
            )])
        })
        .collect();
    map(vec![("gpu", val(c.number)), ("process_list", Node::List(list))])
}

fn view_nodes(view: View, cards: &[Card], w: &Window) -> Vec<Node> {
    cards
        .iter()
        .enumerate()
        .map(|(i, c)| match view {
            View::List => list_node(c, i + 1),
            View::Static => static_node(c),
            View::Metric => metric_node(c, w),
            View::Process => process_node(c),
        })
        .collect()
}

/// The default view: one line per card.
fn summary(cards: &[Card], w: &Window) -> String {
    let mut rows = vec![[
        "GPU",
        "NAME",
        "TARGET",
        "CUs",
        "VRAM USED / TOTAL",
        "GPU USE",
        "SCLK",
        "MCLK",
        "PIDS",
    ]
    .map(String::from)
    .to_vec()];
    for c in cards {
        let (util, _) = w.utilization(c);
        rows.push(vec![
            c.number.to_string(),
            c.name.clone(),
            c.gfx.clone(),
            c.compute_units.to_string(),
            format!("{} / {} MB", c.vram_used() / MIB, c.vram_total / MIB),
            format!("{util:.0}%"),
            format!("{} MHz", c.engine_clock_mhz),
            format!("{} MHz", c.memory_clock_mhz),
            c.users.iter().map(|u| u.pid.to_string()).collect::<Vec<_>>().join(","),
        ]);
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|i| rows.iter().map(|r| r[i].len()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &rows {
        let line: Vec<String> = r.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

fn footnote(view: Option<View>, w: &Window) -> String {
    let mut s = String::new();
    if matches!(view, None | Some(View::Metric)) {
        s.push_str(&format!(
            "GPU use: share of time with a dispatch running, {}.\n",
            match w.since {
                Some(_) => "over the last interval",
                None => "since the card's oldest process started",
            }
        ));
    }
    if matches!(view, None | Some(View::Metric) | Some(View::Static)) {
        s.push_str("Clocks: the emulated preset's. Power and temperature: not modeled by wavejit, not shown.\n");
    }
    s
}

/// Runs `wavejit smi`: `view` (None: the one-line-per-card summary) as text or JSON, once or every `watch`
/// seconds (`iterations` times, or until interrupted).
pub fn run(
    view: Option<View>,
    json_out: bool,
    watch: Option<f64>,
    iterations: Option<u64>,
) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(s) = watch.filter(|s| !(s.is_finite() && *s > 0.0)) {
        return Err(format!("--watch {s}: expected a positive number of seconds").into());
    }
    let stdout = std::io::stdout();
    let mut previous: Option<Sample> = None;
    let mut done = 0u64;
    loop {
        let processes = smi::scan_all()?;
        let now_ns = smi::monotonic_ns();
        let cards = smi::cards(&processes, &[]);
        let w = Window {
            since: previous.as_ref(),
            now_ns,
        };
        let mut text = String::new();
        if json_out {
            let doc = Node::List(view_nodes(view.unwrap_or(View::Metric), &cards, &w));
            // a stream of one-line documents under --watch, one pretty document otherwise
            text = if watch.is_some() {
                serde_json::to_string(&doc)?
            } else {
                serde_json::to_string_pretty(&doc)?
            };
            text.push('\n');
        } else {
            if let Some(secs) = watch {
                text.push_str(&format!("=== wavejit smi (every {secs}s) ===\n"));
            }
            if cards.is_empty() {
                let dirs: Vec<String> = smi::reader_dirs().iter().map(|d| d.display().to_string()).collect();
                text.push_str(&format!(
                    "No wavejit process is running: no emulated GPU to show (registry: {}).\n",
                    dirs.join(", ")
                ));
            } else {
                match view {
                    None => text.push_str(&summary(&cards, &w)),
                    Some(v) => {
                        for (c, node) in cards.iter().zip(view_nodes(v, &cards, &w)) {
                            text.push_str(&format!("GPU: {}\n", c.number));
                            // the map without its leading "gpu" field
                            if let Node::Map(mut fields) = node {
                                fields.retain(|(k, _)| *k != "gpu");
                                Node::Map(fields).render(&mut text, 4);
                            }
                            text.push('\n');
                        }
                    }
                }
                text.push_str(&footnote(view, &w));
            }
        }
        {
            let mut out = stdout.lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
        done += 1;
        let Some(secs) = watch else { return Ok(()) };
        if iterations.is_some_and(|n| done >= n) {
            return Ok(());
        }
        previous = Some(Sample::take(&cards, now_ns));
        std::thread::sleep(Duration::from_secs_f64(secs));
    }
}
