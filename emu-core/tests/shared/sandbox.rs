// The sandbox of the tests that run single instructions of every kind (emu-core/tests/corpus.rs,
// jit/tests/coverage.rs): a wave with pseudo-random registers, all lanes on, a 128 KiB private segment per
// lane, and device memory that maps the pages an instruction touches (Sandbox::run maps each page an access
// faults on and runs the instruction again), so memory instructions load and store.

/// A wave to run `inst` on: pseudo-random SGPRs (below 0x10000), VGPRs and AGPRs (below 0x1000), EXEC all
/// ones, a 128 KiB private segment per lane (past every offset the registers and an instruction's offset
/// make) which FLAT_SCRATCH addresses. For a vector memory instruction the SGPRs and VGPRs are multiples of 16, so the addresses they make
/// suit atomics of every size (as long as the instruction's offset does).
fn sandbox_wave(inst: &isa_amdgpu::Inst) -> emu_core::wave::WaveState {
    use isa_amdgpu::table::Unit;
    let mut w = emu_core::wave::WaveState::new(0x1000, 256, 256);
    let mut s = 0x9e37_79b9u32;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s
    };
    let align = if matches!(inst.info.unit, Unit::Vmem | Unit::Flat) { !15 } else { !0 };
    for r in w.sgprs.iter_mut().take(102) {
        *r = next() & 0xffff & align;
    }
    for v in &mut w.vgprs {
        for x in v.iter_mut() {
            *x = next() & 0xfff & align;
        }
    }
    for v in &mut w.agprs {
        for x in v.iter_mut() {
            *x = next() & 0xfff;
        }
    }
    w.set_exec(u64::MAX);
    w.scratch_lane_bytes = 0x2_0000;
    w.scratch_base = 0x10_0000;
    // FLAT_SCRATCH: the wave's private segment, as a dispatch sets it
    (w.sgprs[102], w.sgprs[103]) = (0x10_0000, 0);
    w
}

/// One page of host memory standing for a device page (8-byte aligned, for 64-bit atomics).
type SandboxPage = Box<[u64; 512]>;

/// Device memory whose only mappings are the pages the instruction being run touches, each backed by a
/// zeroed host page (the addresses the sandbox wave's registers make lie outside the arena).
struct Sandbox {
    mem: emu_core::memory::DeviceMemory,
    /// The mapped pages by device address.
    pages: std::cell::RefCell<std::collections::BTreeMap<u64, SandboxPage>>,
}

/// At most this many pages are mapped for one instruction (64 lanes, each touching a few).
const SANDBOX_MAX_PAGES: usize = 1024;

impl Sandbox {
    fn new() -> Sandbox {
        Sandbox {
            mem: emu_core::memory::DeviceMemory::new(1 << 32).unwrap(),
            pages: Default::default(),
        }
    }

    /// Runs `f` (which runs one instruction from a fresh wave) with no pages mapped, then, as long as it stops
    /// on a memory access to an unmapped page, again with that page mapped and every mapped page zeroed, and
    /// returns how it ended last. The pages stay mapped until the next call.
    fn run<T>(
        &self,
        mut f: impl FnMut() -> Result<T, emu_core::sem::ExecError>,
    ) -> Result<T, emu_core::sem::ExecError> {
        let old: Vec<u64> = self.pages.borrow().keys().copied().collect();
        for address in old {
            self.mem.unmap_host(address).unwrap();
        }
        self.pages.borrow_mut().clear();
        loop {
            let r = f();
            match &r {
                Err(emu_core::sem::ExecError::Memory { fault, .. }) if self.map(fault.address, fault.len) => {
                    self.zero()
                }
                _ => return r,
            }
        }
    }

    /// Maps the unmapped pages of `[address, address + len)`; whether it mapped any.
    fn map(&self, address: u64, len: u64) -> bool {
        let page = emu_core::memory::PAGE;
        let Some(end) = address.checked_add(len.max(1)) else {
            return false;
        };
        let mut pages = self.pages.borrow_mut();
        let mut mapped = false;
        let mut p = address / page * page;
        while p < end && pages.len() < SANDBOX_MAX_PAGES {
            if let std::collections::btree_map::Entry::Vacant(e) = pages.entry(p) {
                let host: SandboxPage = Box::new([0; 512]);
                if self.mem.map_host_at(p, page, host.as_ptr() as u64, "sandbox page").is_err() {
                    return mapped;
                }
                e.insert(host);
                mapped = true;
            }
            p = match p.checked_add(page) {
                Some(p) => p,
                None => break,
            };
        }
        mapped
    }

    /// Zeroes every mapped page.
    fn zero(&self) {
        for p in self.pages.borrow_mut().values_mut() {
            p.fill(0);
        }
    }

    /// The mapped pages' contents.
    #[allow(dead_code)] // corpus.rs runs only the interpreter and compares nothing
    fn contents(&self) -> Vec<(u64, Vec<u64>)> {
        self.pages.borrow().iter().map(|(&a, p)| (a, p.to_vec())).collect()
    }
}
