//! The kernel's view of the emulated GPUs, as files: what `rocm-smi` (librocm_smi64) and ROCm's thunk read
//! from the amdgpu driver's sysfs and the KFD topology, built in `wavejit exec`'s private directory. The
//! preload library (kfd_preload.c) sends the program's reads of `/sys/module/amdgpu`, `/sys/class/drm`,
//! `/sys/class/kfd`, `/sys/devices/virtual/kfd` and `/sys/devices/wavejit` here; nothing on the real system
//! changes.
//!
//! The cards are those of the SMI registry (`profiler_hooks::smi`: every running wavejit process) plus the
//! devices this `exec` emulates, device index N of preset P being one card (see `wavejit smi`). Layout and
//! where each value comes from:
//!
//! ```text
//! sys/module/amdgpu/initstate             "live" (rocm-smi's driver check)
//! sys/module/amdgpu/version               wavejit's version (the "driver" is the emulator)
//! sys/class/drm/cardN, renderD(128+N)     links to sys/devices/wavejit/<bdf>/drm/…, N the card's place in
//!                                         order of `wavejit smi`'s GPU numbers (librocm_smi needs cards
//!                                         numbered from 0 without gaps)
//! sys/devices/wavejit/<bdf>/              the card's PCI device (bdf: 0000:BB:00.0, BB from (index, preset))
//!     vendor 0x1002 · device: the product's PCI id (MI210 0x740f, MI250X 0x740c, MI300X 0x74a1)
//!     subsystem_vendor 0x1002 · subsystem_device: the device id again (AMD's own board)
//!     product_name: the preset's marketing name
//!     vbios_version: WAVEJIT-<PRESET>-EMULATED (there is no VBIOS; rocm-smi shows the part after the first
//!         '-' as the card's SKU: the preset)
//!     unique_id, serial_number: a stable hash of (preset, index), as `wavejit smi` shows it
//!     mem_info_vram_total: the preset's memory · mem_info_vram_used: bytes of live allocations from the
//!         card's memory pool, summed over its processes (registry); vis_vram the same (all of it is host-visible)
//!     gpu_busy_percent: share of time with a dispatch running — since the card's oldest process started when
//!         the tree is made, then over each refresh interval (every 500 ms while the program runs)
//!     gpu_metrics: the binary metrics table (format 1.1) with the GFX activity (the same percentage, and the busy
//!         time accumulated in ms as gfx_activity_acc), the clocks and the time; every other field all ones
//!         ("not available", as the driver marks them)
//!     pp_dpm_sclk, pp_dpm_mclk: one level, the preset's engine clock and the product's memory clock, current
//!     power_dpm_force_performance_level: "high" (the one level, the peak clock, all the time); without it
//!         rocm-smi counts the performance level, which its default view shows, as a failed reading
//!     drm/cardN/device, drm/renderD…/device: links back to the PCI device
//!     hwmon/hwmonN/name "amdgpu", in0_label "vddgfx", and no sensor readings: librocm_smi64 needs a monitor
//!         (and that label), and reports every missing sensor (temperature, power, fan, voltage) as not supported
//! sys/devices/virtual/kfd/kfd/            (sys/class/kfd/kfd links here)
//!     topology/generation_id, system_properties
//!     topology/nodes/0                    the host CPU (gpu_id 0, cores from the host)
//!     topology/nodes/N+1                  cardN: gpu_id (from (index, preset)), name (gfx target), properties
//!         (SIMDs, CU layout multiplying to the preset's CU count, LDS, wave size, gfx_target_version, vendor,
//!         device, location = the bdf, drm_render_minor, engine clock, unique_id), mem_banks/0 (VRAM size,
//!         bus width, memory clock), io_links/0 (PCIe to the CPU node; the CPU node has one link per card)
//!     proc/<pid>/                         each registry process: pasid (the pid: no address spaces are
//!         emulated), vram_<gpu_id> (its VRAM on that card), sdma_<gpu_id> 0 (copies are not attributed to SDMA
//!         engines), queues/<n>/gpuid (one per live queue with a packet processor)
//! ```
//! Power and temperature are absent (the monitor has no sensors): wavejit does not model them, and rocm-smi
//! reports them as not available.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use emu_core::DevicePreset;
use profiler_hooks::smi::{self, Card, DeviceRecord, Sample};

/// How often the live files are rewritten while the program runs.
pub const REFRESH: Duration = Duration::from_millis(500);

/// A process's use of one card, as KFD lists it under `proc/<pid>`.
struct KfdUse {
    gpu_id: u32,
    vram: u64,
    queues: u64,
}

/// The tree under `root` and the cards it shows (fixed when built: librocm_smi64 enumerates once).
pub struct Tree {
    root: PathBuf,
    /// (index, preset) of cardN.
    cards: Vec<(u32, String)>,
    own: Vec<DeviceRecord>,
}

/// What this `exec` emulates, as registry records with nothing in use yet.
fn own_devices(presets: &[&'static DevicePreset]) -> Vec<DeviceRecord> {
    presets
        .iter()
        .enumerate()
        .map(|(i, p)| DeviceRecord {
            index: i as u32,
            preset: p.id.to_string(),
            gfx: p.gfx.to_string(),
            name: p.name.to_string(),
            compute_units: p.compute_units,
            vram_total: p.memory_bytes,
            engine_clock_mhz: p.engine_clock_mhz,
            memory_clock_mhz: p.memory_clock_mhz,
            pci_device_id: p.pci_device_id,
            vram_used: 0,
            dispatches: 0,
            busy_ns: 0,
            busy_now: false,
            queues: 0,
        })
        .collect()
}

/// Writes a file of the tree before anyone reads it.
fn write(path: &Path, content: &str) -> std::io::Result<()> {
    std::fs::write(path, content)
}

/// Replaces a live file whole: a reader sees the old or the new file, never a mix.
fn replace(path: &Path, content: impl AsRef<[u8]>) -> std::io::Result<()> {
    let tmp = path.with_extension("wavejit-new");
    std::fs::write(&tmp, content)?;
    std::fs::rename(&tmp, path)
}

fn link(target: &str, at: &Path) -> std::io::Result<()> {
    let _ = std::fs::remove_file(at);
    std::os::unix::fs::symlink(target, at)
}

/// `gfx90a` → 90010: major, minor and stepping (hex digits) as KFD's gfx_target_version.
fn gfx_target_version(gfx: &str) -> u32 {
    let digits = gfx.trim_start_matches("gfx");
    if digits.len() < 3 {
        return 0;
    }
    let (major, rest) = digits.split_at(digits.len() - 2);
    let hex = |c: char| c.to_digit(16).unwrap_or(0);
    let mut r = rest.chars();
    major.parse::<u32>().unwrap_or(0) * 10000 + hex(r.next().unwrap_or('0')) * 100 + hex(r.next().unwrap_or('0'))
}

/// Shader arrays × CUs per array giving exactly the card's CU count (librocm_smi64 multiplies them).
fn cu_layout(card: &Card) -> (u32, u32) {
    let per_group = DevicePreset::by_name(&card.preset)
        .map(|p| p.cus_per_group)
        .unwrap_or(card.compute_units)
        .clamp(1, card.compute_units.max(1));
    let per_array = (1..=per_group)
        .rev()
        .find(|d| card.compute_units.is_multiple_of(*d))
        .unwrap_or(1);
    (card.compute_units / per_array, per_array)
}

fn host_cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

impl Tree {
    fn kfd(&self) -> PathBuf {
        self.root.join("sys/devices/virtual/kfd/kfd")
    }

    fn pci(&self, card: &Card) -> PathBuf {
        self.root.join("sys/devices/wavejit").join(card.bdf())
    }

    /// Builds the tree under `root` for the registry's cards and `presets` (this exec's devices). Under the
    /// emulated driver (`only_own`) the topology lists this exec's devices alone, in their order: they are the
    /// GPUs the program's driver serves (render node 128 + N for device N).
    pub fn build(root: &Path, presets: &[&'static DevicePreset], only_own: bool) -> std::io::Result<Tree> {
        let own = own_devices(presets);
        let processes = smi::scan_all().unwrap_or_default();
        let mut cards = smi::cards(&processes, &own);
        if only_own {
            // in the order of WAVEJIT_DEVICES: device N is node N+1 and render node 128 + N
            cards.retain(|c| own.iter().any(|o| o.index == c.index && o.preset == c.preset));
            cards.sort_by_key(|c| c.index);
        }
        let mut tree = Tree {
            root: root.to_path_buf(),
            cards: cards.iter().map(|c| (c.index, c.preset.clone())).collect(),
            own,
        };
        let module = root.join("sys/module/amdgpu");
        std::fs::create_dir_all(&module)?;
        write(&module.join("initstate"), "live\n")?;
        write(
            &module.join("version"),
            &format!("wavejit {}\n", env!("CARGO_PKG_VERSION")),
        )?;
        let drm = root.join("sys/class/drm");
        std::fs::create_dir_all(&drm)?;
        std::fs::create_dir_all(root.join("sys/class/kfd"))?;
        let kfd = tree.kfd();
        std::fs::create_dir_all(kfd.join("topology/nodes"))?;
        std::fs::create_dir_all(kfd.join("proc"))?;
        link("../../devices/virtual/kfd/kfd", &root.join("sys/class/kfd/kfd"))?;
        write(&kfd.join("topology/generation_id"), "1\n")?;
        write(
            &kfd.join("topology/system_properties"),
            "platform_oem 0\nplatform_id 0\nplatform_rev 0\n",
        )?;
        tree.cpu_node(&cards)?;
        for (n, c) in cards.iter().enumerate() {
            tree.card(n, c)?;
        }
        tree.live(&cards, None, smi::monotonic_ns())?;
        tree.cards.shrink_to_fit();
        Ok(tree)
    }

    fn cpu_node(&self, cards: &[Card]) -> std::io::Result<()> {
        let node = self.kfd().join("topology/nodes/0");
        std::fs::create_dir_all(node.join("mem_banks/0"))?;
        std::fs::create_dir_all(node.join("caches/0"))?;
        write(&node.join("gpu_id"), "0\n")?;
        write(&node.join("name"), "\n")?;
        // ROCm's runtime asserts a CPU data cache, and places kernel arguments in the CPU's memory bank
        let props = format!(
            "cpu_cores_count {}\nsimd_count 0\nmem_banks_count 1\ncaches_count 1\nio_links_count {}\ncpu_core_id_base 0\nsimd_id_base 0\nmax_waves_per_simd 0\nlds_size_in_kb 0\ngds_size_in_kb 0\nnum_gws 0\nwave_front_size 0\narray_count 0\nsimd_arrays_per_engine 0\ncu_per_simd_array 0\nsimd_per_cu 0\nmax_slots_scratch_cu 0\ngfx_target_version 0\nvendor_id 0\ndevice_id 0\nlocation_id 0\ndomain 0\ndrm_render_minor 0\nhive_id 0\nnum_sdma_engines 0\nnum_sdma_xgmi_engines 0\nnum_sdma_queues_per_engine 0\nnum_cp_queues 0\nmax_engine_clk_ccompute 3000\n",
            host_cores(),
            cards.len()
        );
        write(&node.join("properties"), &props)?;
        write(
            &node.join("mem_banks/0/properties"),
            &format!(
                "heap_type 0\nsize_in_bytes {}\nflags 0\nwidth 64\nmem_clk_max 2400\n",
                host_memory()
            ),
        )?;
        write(
            &node.join("caches/0/properties"),
            &cache(0, 1, 32, 64, 8, CACHE_DATA | CACHE_CPU),
        )?;
        for i in 0..cards.len() {
            let l = node.join("io_links").join(i.to_string());
            std::fs::create_dir_all(&l)?;
            write(&l.join("properties"), &io_link(0, i + 1))?;
        }
        Ok(())
    }

    /// Card `c` as `card<n>` and KFD node n+1: librocm_smi finds cards numbered from 0 without gaps, so `n` is
    /// the card's place among those shown (`wavejit smi`'s GPU number is `c.number`).
    fn card(&self, n: usize, c: &Card) -> std::io::Result<()> {
        let render = 128 + n;
        let pci = self.pci(c);
        for d in [format!("drm/card{n}"), format!("drm/renderD{render}")] {
            std::fs::create_dir_all(pci.join(&d))?;
            link(&format!("../../../{}", c.bdf()), &pci.join(&d).join("device"))?;
        }
        let drm = self.root.join("sys/class/drm");
        link(
            &format!("../../devices/wavejit/{}/drm/card{n}", c.bdf()),
            &drm.join(format!("card{n}")),
        )?;
        link(
            &format!("../../devices/wavejit/{}/drm/renderD{render}", c.bdf()),
            &drm.join(format!("renderD{render}")),
        )?;
        let files = [
            ("vendor", "0x1002".to_string()),
            ("device", format!("{:#06x}", c.pci_device_id)),
            ("subsystem_vendor", "0x1002".to_string()),
            ("subsystem_device", format!("{:#06x}", c.pci_device_id)),
            ("class", "0x038000".to_string()),
            ("product_name", c.name.clone()),
            ("vbios_version", format!("WAVEJIT-{}-EMULATED", c.preset.to_uppercase())),
            ("unique_id", format!("{:016x}", c.unique_id())),
            ("serial_number", format!("{:016X}", c.unique_id())),
            ("mem_info_vram_total", c.vram_total.to_string()),
            ("mem_info_vis_vram_total", c.vram_total.to_string()),
            ("pp_dpm_sclk", format!("0: {}Mhz *", c.engine_clock_mhz)),
            ("pp_dpm_mclk", format!("0: {}Mhz *", c.memory_clock_mhz)),
            // the emulated GPU runs at its one (peak) clock throughout: DPM held at its highest level
            ("power_dpm_force_performance_level", "high".to_string()),
        ];
        for (name, value) in files {
            write(&pci.join(name), &format!("{value}\n"))?;
        }
        // a hardware monitor without sensors: librocm_smi64 asserts that a card has one, and reports each
        // missing sensor (temperature, power, fan, voltage) as not supported; it does need the label of the
        // voltage sensor (librocm_smi64 5.2 throws without one), so the label is there and the reading is not
        let hwmon = pci.join(format!("hwmon/hwmon{n}"));
        std::fs::create_dir_all(&hwmon)?;
        write(&hwmon.join("name"), "amdgpu\n")?;
        write(&hwmon.join("in0_label"), "vddgfx\n")?;
        // the KFD node
        let node = self.kfd().join("topology/nodes").join((n + 1).to_string());
        std::fs::create_dir_all(node.join("mem_banks/0"))?;
        std::fs::create_dir_all(node.join("io_links/0"))?;
        std::fs::create_dir_all(node.join("caches/0"))?;
        std::fs::create_dir_all(node.join("caches/1"))?;
        write(&node.join("gpu_id"), &format!("{}\n", c.gpu_id()))?;
        write(&node.join("name"), &format!("{}\n", c.gfx))?;
        let (arrays, per_array) = cu_layout(c);
        let preset = DevicePreset::by_name(&c.preset).ok();
        let props = [
            ("cpu_cores_count", 0u64),
            (
                "simd_count",
                c.compute_units as u64 * preset.map_or(4, |p| p.simds_per_cu) as u64,
            ),
            ("mem_banks_count", 1),
            ("caches_count", 2),
            ("io_links_count", 1),
            ("cpu_core_id_base", 0),
            ("simd_id_base", simd_id_base(n)),
            ("max_waves_per_simd", preset.map_or(8, |p| p.max_waves_per_simd) as u64),
            ("lds_size_in_kb", preset.map_or(64, |p| p.lds_bytes / 1024)),
            ("gds_size_in_kb", 0),
            ("num_gws", 64),
            ("wave_front_size", preset.map_or(64, |p| p.wave_size) as u64),
            ("array_count", arrays as u64),
            ("simd_arrays_per_engine", 1),
            ("cu_per_simd_array", per_array as u64),
            ("simd_per_cu", preset.map_or(4, |p| p.simds_per_cu) as u64),
            ("max_slots_scratch_cu", 32),
            ("gfx_target_version", gfx_target_version(&c.gfx) as u64),
            ("vendor_id", 0x1002),
            ("device_id", c.pci_device_id as u64),
            ("location_id", (c.bus() as u64) << 8),
            ("domain", 0),
            ("drm_render_minor", render as u64),
            ("hive_id", 0),
            ("num_sdma_engines", 2),
            ("num_sdma_xgmi_engines", 0),
            ("num_sdma_queues_per_engine", 8),
            ("num_cp_queues", 24),
            ("max_engine_clk_fcompute", c.engine_clock_mhz as u64),
            ("local_mem_size", 0),
            ("fw_version", FW_VERSION),
            ("capability", CAPABILITY),
            ("debug_prop", 0),
            ("sdma_fw_version", SDMA_FW_VERSION),
            ("unique_id", c.unique_id()),
            ("num_xcc", xccs(c) as u64),
            ("max_engine_clk_ccompute", 3000),
        ];
        write(
            &node.join("properties"),
            &props.iter().map(|(k, v)| format!("{k} {v}\n")).collect::<String>(),
        )?;
        // the registry may hold cards of a preset another wavejit has and this one does not: no width known
        let width = DevicePreset::by_name(&c.preset).map_or(0, |p| p.memory_width_bits);
        write(
            &node.join("mem_banks/0/properties"),
            &format!(
                "heap_type 1\nsize_in_bytes {}\nflags 0\nwidth {width}\nmem_clk_max {}\n",
                c.vram_total, c.memory_clock_mhz
            ),
        )?;
        write(&node.join("io_links/0/properties"), &io_link(n + 1, 0))?;
        // the GPU's caches, as ROCm's runtime requires at least one (its vector L1 and its L2)
        let (l1, l2) = preset.map_or((16 << 10, 8 << 20), |p| (p.l1_vector_bytes, p.l2_bytes));
        let gpu_cache = CACHE_DATA | CACHE_HSACU;
        write(
            &node.join("caches/0/properties"),
            &cache(simd_id_base(n), 1, l1 >> 10, 64, 4, gpu_cache),
        )?;
        write(
            &node.join("caches/1/properties"),
            &cache(simd_id_base(n), 2, l2 >> 10, 128, 16, gpu_cache),
        )?;
        // the IP blocks' versions, where tinygrad reads which register layout the GPU has
        for (hwid, (major, minor, revision)) in ip_versions(&c.gfx) {
            let dir = pci.join(format!("ip_discovery/die/0/{hwid}/0"));
            std::fs::create_dir_all(&dir)?;
            for (f, v) in [("major", major), ("minor", minor), ("revision", revision)] {
                write(&dir.join(f), &format!("{v}\n"))?;
            }
        }
        Ok(())
    }

    /// Rewrites what changes: VRAM used, busy percentage (over the time since `earlier`, or since start), and
    /// the KFD process directories.
    fn live(&self, cards: &[Card], earlier: Option<&Sample>, now_ns: u64) -> std::io::Result<()> {
        let kfd_proc = self.kfd().join("proc");
        let mut pids: Vec<(u32, Vec<KfdUse>)> = Vec::new();
        for (index, preset) in &self.cards {
            let Some(c) = cards.iter().find(|c| c.index == *index && &c.preset == preset) else {
                continue;
            };
            let pci = self.pci(c);
            let used = c.vram_used().to_string() + "\n";
            replace(&pci.join("mem_info_vram_used"), &used)?;
            replace(&pci.join("mem_info_vis_vram_used"), &used)?;
            let (util, _) = match earlier {
                Some(s) => c.utilization_since(s, now_ns),
                None => c.utilization_since_start(now_ns),
            };
            replace(&pci.join("gpu_busy_percent"), format!("{}\n", util.round() as u32))?;
            replace(&pci.join("gpu_metrics"), gpu_metrics(c, util.round() as u16, now_ns))?;
            for u in &c.users {
                let entry = match pids.iter_mut().find(|(p, _)| *p == u.pid) {
                    Some(e) => e,
                    None => {
                        pids.push((u.pid, Vec::new()));
                        pids.last_mut().expect("just pushed")
                    }
                };
                entry.1.push(KfdUse {
                    gpu_id: c.gpu_id(),
                    vram: u.vram_used,
                    queues: u.queues,
                });
            }
        }
        // processes that are gone leave
        if let Ok(entries) = std::fs::read_dir(&kfd_proc) {
            for e in entries.flatten() {
                let gone = e
                    .file_name()
                    .to_str()
                    .and_then(|n| n.parse::<u32>().ok())
                    .is_none_or(|pid| !pids.iter().any(|(p, _)| *p == pid));
                if gone {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        for (pid, gpus) in &pids {
            let dir = kfd_proc.join(pid.to_string());
            std::fs::create_dir_all(&dir)?;
            replace(&dir.join("pasid"), format!("{pid}\n"))?;
            let queues_dir = dir.join("queues");
            let _ = std::fs::remove_dir_all(&queues_dir);
            std::fs::create_dir_all(&queues_dir)?;
            let mut q = 0;
            for KfdUse { gpu_id, vram, queues } in gpus {
                replace(&dir.join(format!("vram_{gpu_id}")), format!("{vram}\n"))?;
                replace(&dir.join(format!("sdma_{gpu_id}")), "0\n")?;
                for _ in 0..*queues {
                    std::fs::create_dir_all(queues_dir.join(q.to_string()))?;
                    replace(&queues_dir.join(q.to_string()).join("gpuid"), format!("{gpu_id}\n"))?;
                    q += 1;
                }
            }
        }
        Ok(())
    }

    /// Rewrites the live files every [`REFRESH`] until `stop` is set (on a thread of its own).
    pub fn refresh_until(self, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
        std::thread::spawn(move || {
            let mut earlier: Option<Sample> = None;
            while !stop.load(Ordering::Acquire) {
                let processes = smi::scan_all().unwrap_or_default();
                let now = smi::monotonic_ns();
                let cards = smi::cards(&processes, &self.own);
                if let Some(s) = &earlier {
                    let _ = self.live(&cards, Some(s), now);
                }
                earlier = Some(Sample::take(&cards, now));
                // sleep in small steps so the program's exit is not held up
                for _ in 0..(REFRESH.as_millis() / 50) {
                    if stop.load(Ordering::Acquire) {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        })
    }
}

/// amdgpu's binary `gpu_metrics`, format 1 content 1 (librocm_smi64's `rsmi_gpu_metrics_t`, 96 bytes): what the
/// emulator knows — GFX activity (percent, and the busy time accumulated, in ms), the clocks, the time — and
/// every other field "not available" (all ones, as the driver marks fields a GPU does not report).
fn gpu_metrics(c: &Card, busy_percent: u16, now_ns: u64) -> Vec<u8> {
    let mut m = vec![0xffu8; 96];
    let mut u16_at = |at: usize, v: u16| m[at..at + 2].copy_from_slice(&v.to_le_bytes());
    u16_at(0, 96); // structure_size
    u16_at(16, busy_percent); // average_gfx_activity
    let (sclk, mclk) = (
        c.engine_clock_mhz.min(0xfffe) as u16,
        c.memory_clock_mhz.min(0xfffe) as u16,
    );
    u16_at(40, sclk); // average_gfxclk_frequency
    u16_at(44, mclk); // average_uclk_frequency
    u16_at(54, sclk); // current_gfxclk
    u16_at(58, mclk); // current_uclk
    u16_at(78, 0); // padding
    m[2] = 1; // format_revision
    m[3] = 1; // content_revision
    m[32..40].copy_from_slice(&now_ns.to_le_bytes()); // system_clock_counter, ns
    m[80..84].copy_from_slice(&((c.busy_ns() / 1_000_000) as u32).to_le_bytes()); // gfx_activity_acc
    m
}

/// A PCIe link (type 2) without the override flag: ROCm's runtime then counts on 64-bit atomics across it.
fn io_link(from: usize, to: usize) -> String {
    format!("type 2\nversion_major 0\nversion_minor 0\nnode_from {from}\nnode_to {to}\nweight 20\nmin_latency 0\nmax_latency 0\nmin_bandwidth 0\nmax_bandwidth 0\nrecommended_transfer_size 0\nflags 0\n")
}

/// Cache types (`HSA_CACHE_TYPE_*`): data, instruction, a CPU's, a GPU's (HSA compute unit).
const CACHE_DATA: u32 = 1;
const CACHE_CPU: u32 = 4;
const CACHE_HSACU: u32 = 8;

/// A cache's properties: level, size in KiB, line size, associativity, type.
fn cache(processor: u64, level: u32, size_kib: u64, line: u32, ways: u32, kind: u32) -> String {
    format!("processor_id_low {processor}\nlevel {level}\nsize {size_kib}\ncache_line_size {line}\ncache_lines_per_tag 1\nassociation {ways}\nlatency 1\ntype {kind}\n")
}

/// The first SIMD id of GPU node `n` (a number the caches refer to, as the driver numbers them).
fn simd_id_base(n: usize) -> u64 {
    0x8000_1000 + 0x1000 * n as u64
}

/// The capability word of a GPU node: 64-bit doorbells (DoorbellType 2, which gfx9 queues need), address
/// watch points (4), SRAM ECC (so the ISA is `gfx90a:sramecc+`, as on the real parts), the SVM API (bit 27: ROCr's
/// `HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED`, so HIP's managed memory; the driver serves `AMDKFD_IOC_SVM`).
const CAPABILITY: u64 = 2 << 12 | 1 << 7 | 2 << 8 | 1 << 26 | 1 << 27;
/// Firmware versions the nodes report (the CP microcode and SDMA firmware of shipping MI200/MI300 parts; only
/// gfx7/gfx8 decisions in the runtimes read them).
const FW_VERSION: u64 = 78;
const SDMA_FW_VERSION: u64 = 8;

/// Accelerator dies (XCDs) of a card: an MI300X has eight, the others one.
fn xccs(c: &Card) -> u32 {
    if c.gfx == "gfx942" {
        8
    } else {
        1
    }
}

/// The versions of the IP blocks tinygrad reads (`ip_discovery/die/0/<hwid>/0/{major,minor,revision}`): GC (11),
/// SDMA0 (42) and NBIF (108), as the hardware's discovery table gives them: MI300X GC 9.4.3, SDMA 4.4.2,
/// NBIO 7.9.0; MI200 GC 9.4.2, SDMA 4.4.0, NBIO 7.4.0.
fn ip_versions(gfx: &str) -> [(u32, (u32, u32, u32)); 3] {
    if gfx == "gfx942" {
        [(11, (9, 4, 3)), (42, (4, 4, 2)), (108, (7, 9, 0))]
    } else {
        [(11, (9, 4, 2)), (42, (4, 4, 0)), (108, (7, 4, 0))]
    }
}

/// The host's memory, bytes (`/proc/meminfo`'s MemTotal; 0 if unreadable).
fn host_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kib| kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gfx_target_versions_are_kfds() {
        assert_eq!(gfx_target_version("gfx90a"), 90010);
        assert_eq!(gfx_target_version("gfx942"), 90402);
        assert_eq!(gfx_target_version("gfx1100"), 110000);
    }
}
