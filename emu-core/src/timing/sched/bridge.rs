//! The bridge to functional execution: a wave's block run on the engine with an observer that records each
//! executed instruction and its lane accesses, which become the wave's queue of instructions to issue.

use super::*;

/// Where an instruction's lane accesses are kept beside it: records `acc[start..start + len]`, or (`len` is
/// [`AccAt::RANGE`]) the range `ranges[start]`.
#[derive(Debug, Clone, Copy)]
pub(super) struct AccAt {
    pub(super) start: u32,
    pub(super) len: u32,
}

impl AccAt {
    pub(super) const RANGE: u32 = u32::MAX;
    pub(super) const NONE: AccAt = AccAt { start: 0, len: 0 };

    /// `a` appended to `acc` or `ranges`.
    pub(super) fn push(a: &Accesses<'_>, acc: &mut Vec<LaneAccess>, ranges: &mut Vec<LaneRange>) -> AccAt {
        match a {
            Accesses::Range(r) => {
                ranges.push(*r);
                AccAt {
                    start: ranges.len() as u32 - 1,
                    len: AccAt::RANGE,
                }
            }
            Accesses::Lanes(l) => {
                acc.extend_from_slice(l);
                AccAt {
                    start: (acc.len() - l.len()) as u32,
                    len: l.len() as u32,
                }
            }
        }
    }

    /// The accesses kept at `self`.
    pub(super) fn get<'b>(self, acc: &'b [LaneAccess], ranges: &[LaneRange]) -> Accesses<'b> {
        match self.len {
            AccAt::RANGE => Accesses::Range(ranges[self.start as usize]),
            len => Accesses::Lanes(Cow::Borrowed(&acc[self.start as usize..(self.start + len) as usize])),
        }
    }
}

/// What an observer is told about a queued instruction (kept only for an active observer).
#[derive(Debug, Clone, Copy)]
pub(super) struct Observed {
    pub(super) pc: u64,
    pub(super) exec: u64,
    /// Its lane accesses, in the wave's `acc` and `ranges`.
    pub(super) acc: AccAt,
}

/// An instruction the engine executed in the block being run.
#[derive(Debug, Clone, Copy)]
pub(super) struct Entry {
    pub(super) pc: u64,
    pub(super) exec: u64,
    /// Its index into [`Model::infos`] + 1, or 0 when the model had none for it yet (the instruction is then
    /// in [`Log::new`]).
    pub(super) info: u32,
    /// Its accesses, in the log's `acc` and `ranges`.
    pub(super) acc: AccAt,
}

/// What the engine reports while running a block: each executed instruction, the instructions the model has
/// not seen yet (by entry), their lane accesses.
pub(super) struct Log {
    pub(super) entries: Vec<Entry>,
    pub(super) new: Vec<(u32, Inst)>,
    pub(super) acc: Vec<LaneAccess>,
    pub(super) ranges: Vec<LaneRange>,
    pub(super) buf: Vec<LaneAccess>,
    /// The model's [`Model::info_at`], lent for the block's run, and the code's base: an instruction the
    /// model knows is logged by its info alone.
    pub(super) known: Vec<u32>,
    pub(super) base: u64,
    /// How many of `entries` have accesses: at least the memory instructions among them that had active
    /// lanes, and so what the wave's memory work takes room for at once.
    pub(super) accessing: u32,
}

thread_local! {
    /// The log of the block being run: engines run a wave's block on the thread that asks them to, so the
    /// model finds the block's instructions here when `run_wave` returns.
    pub(super) static LOG: RefCell<Log> = const {
        RefCell::new(Log { entries: Vec::new(), new: Vec::new(), acc: Vec::new(), ranges: Vec::new(), buf: Vec::new(), known: Vec::new(), base: 0, accessing: 0 })
    };
}

/// The observer the model runs blocks with: it records each executed instruction and its lane accesses. It
/// reads the log only once the run has ended, so it takes runs of instructions without memory accesses as
/// batches; it ends the run (asks to switch waves) once the run has recorded more than [`MAX_QUEUED_LANES`]
/// lane accesses, which only a memory instruction's report can bring about.
pub(super) struct Recorder;

impl Log {
    pub(super) fn record(&mut self, pc: u64, inst: &Inst, exec: u64, accesses: &Accesses<'_>) {
        let at = AccAt::push(
            &classify(inst, accesses, &mut self.buf),
            &mut self.acc,
            &mut self.ranges,
        );
        self.accessing += (at.len != 0) as u32;
        self.entry(pc, inst, exec, at);
    }

    /// [`Log::record`] of an instruction without accesses (one of a batch).
    #[inline]
    pub(super) fn record_plain(&mut self, pc: u64, inst: &Inst, exec: u64) {
        self.entry(pc, inst, exec, AccAt::NONE);
    }

    /// The entry of an instruction whose accesses are at `at`, by its info when the model knows it.
    #[inline(always)]
    pub(super) fn entry(&mut self, pc: u64, inst: &Inst, exec: u64, at: AccAt) {
        let info = self
            .known
            .get((pc.wrapping_sub(self.base) / 4) as usize)
            .copied()
            .unwrap_or(0);
        if info == 0 {
            self.new.push((self.entries.len() as u32, *inst));
        }
        self.entries.push(Entry {
            pc,
            exec,
            info,
            acc: at,
        });
    }
}

impl Observer for Recorder {
    const WANTS_ACCESSES: bool = true;
    const BATCHES: bool = true;
    fn instruction(&self, ev: &InstEvent<'_>) {
        LOG.with_borrow_mut(|log| log.record(ev.pc, ev.inst, ev.exec, &ev.accesses));
    }
    fn switch_wave(&self, _ev: &InstEvent<'_>) -> bool {
        LOG.with_borrow(|log| log.acc.len() > MAX_QUEUED_LANES)
    }
    fn batch(&self, b: &InstBatch<'_>) {
        LOG.with_borrow_mut(|log| {
            for _ in 0..b.times {
                for (pc, inst, exec) in b.iter() {
                    log.record_plain(pc, inst, exec);
                }
            }
        });
    }
}

/// Instructions a wave runs on the engine each time its queue is empty (blocks on the JIT, so a few more;
/// fewer when it reaches a barrier, its end or a clock-reading instruction): the wave's state is in the host's
/// caches while it runs, and one run serves many issues. With 64, `stream_read` over every wave slot of an
/// MI210 (about 340 instructions a wave) took 1.1x the time it takes with 512 (`wavejit bench --timing`,
/// alternating runs). The queue it fills takes 8 bytes an instruction (and its memory instructions' work
/// 48 bytes each): at most about 4 KiB a resident wave and its work, 40 MiB and the work over the 9,728 wave
/// slots of an MI300X.
pub(super) const RUN_AHEAD: u64 = 512;

/// Lane accesses (records, not ranges) after which a wave's run ends ([`Recorder`]): gathers of thousands of
/// resident waves keep little queued.
pub(super) const MAX_QUEUED_LANES: usize = 512;

impl<'a, R: WaveRunner, O: Observer> Model<'a, R, O> {
    /// Runs the wave on the engine at cycle `t` for up to [`RUN_AHEAD`] instructions, filling its queue
    /// (which is empty): each instruction with its next-line fetch and, for a memory instruction, its line
    /// requests and LDS bank cycles worked out from its lane accesses.
    pub(super) fn run_block(&mut self, t: u64, w: usize) -> Result<(), EngineError> {
        let cx = DispatchContext {
            progress: self.progress.as_deref(),
            ..self.cx
        };
        let (slot, index) = (self.waves[w].slot as usize, self.waves[w].index);
        let sl = self.slots[slot].as_mut().expect("resident");
        let (linear, scratch) = (sl.linear, sl.group.scratch);
        let Group { wg, waves, lds, .. } = &mut sl.group;
        let wave = &mut waves[index as usize];
        if wave.vgprs.is_empty() {
            // its first block: the group was built without register files ([`Dispatch::group_registers_later`])
            self.d.give_registers(&self.template, *wg, index, wave);
        }
        wave.clock = WaveClock {
            base: self.clock.base + t,
            ..self.clock
        };
        let run = WaveRun {
            mem: self.d.mem,
            code: self.d.launch.code,
            cx: &cx,
            workgroup: *wg,
            wave_index: index,
            wave,
            lds,
            cache: self.d.launch.cache,
            limits: self.block_limits,
        };
        let known = std::mem::take(&mut self.info_at);
        LOG.with_borrow_mut(|log| {
            log.entries.clear();
            log.new.clear();
            log.acc.clear();
            log.ranges.clear();
            log.known = known;
            log.base = self.d.launch.code.base;
            log.accessing = 0;
        });
        let ran = self.d.runner.run_wave(run, &Recorder);
        if let Some(p) = cx.progress {
            p.note(&mut waves[index as usize]);
        }
        // the block's instructions and their accesses (the buffers swap places with the log's)
        let accessing = LOG.with_borrow_mut(|log| {
            self.info_at = std::mem::take(&mut log.known);
            std::mem::swap(&mut self.entries, &mut log.entries);
            std::mem::swap(&mut self.new_insts, &mut log.new);
            std::mem::swap(&mut self.block_acc, &mut log.acc);
            std::mem::swap(&mut self.block_ranges, &mut log.ranges);
            log.accessing
        });
        ran?;
        let wg = *wg;
        let (next_pc, gws) = (waves[index as usize].pc, waves[index as usize].at_grid_sync());
        if gws {
            return Err(self.fail(format!(
                "workgroup {wg:?} reached ds_gws_barrier or a GWS semaphore: grid-wide sync is not modeled"
            )));
        }
        if self.entries.is_empty() {
            return Err(self.fail(format!(
                "workgroup {wg:?} wave {index}: the engine ran no instruction at {next_pc:#x}"
            )));
        }
        if waves[index as usize].status == WaveStatus::Done {
            // the wave ran to its end: its registers are read no more, and a wave placed soon can use their memory
            self.d.keep_parts(&mut waves[index as usize]);
        }
        let entries = std::mem::take(&mut self.entries);
        let acc = std::mem::take(&mut self.block_acc);
        let ranges = std::mem::take(&mut self.block_ranges);
        let scratch = scratch.map(|base| (base, linear));
        let (line_shift, code_base) = (self.icache_line_shift, self.d.launch.code.base);
        let wave = &mut self.waves[w];
        // the queue is filled here and goes back to the wave at the end (so the loop reaches it without the wave)
        let mut queue = std::mem::take(&mut wave.queue);
        queue.clear();
        queue.reserve(entries.len());
        wave.work.clear();
        wave.work.reserve(accessing as usize);
        wave.reqs.clear();
        wave.observed.clear();
        wave.acc.clear();
        wave.ranges.clear();
        let mut new = 0;
        for (
            k,
            &Entry {
                pc,
                exec,
                info,
                acc: at,
            },
        ) in entries.iter().enumerate()
        {
            let info = if info != 0 {
                info - 1
            } else {
                let (at, inst) = self.new_insts[new];
                debug_assert_eq!(at as usize, k);
                new += 1;
                self.info_at_pc(pc, Some(&inst), (wg, index))?
            };
            let next = entries.get(k + 1).map_or(next_pc, |e| e.pc);
            let i = &self.infos[info as usize];
            let (flows, size, pipe) = (i.flows, i.size, i.timing.pipe);
            // the wave's instruction buffer holds the line of `pc`: a taken branch refetches, and so does going on
            // into another line
            let taken = flows && next != pc + size as u64;
            let mut bits = info | if taken { TAKEN | FETCH } else { 0 };
            if next >> line_shift != pc >> line_shift {
                bits |= FETCH;
            }
            // the instruction's lane accesses, looked up only where they are used
            let lanes = || at.get(&acc, &ranges);
            let work = match pipe {
                Pipe::Smem => Some(self.scalar_work(w, &lanes())),
                Pipe::Vmem | Pipe::Flat => Some(self.vector_work(w, &lanes(), scratch)),
                Pipe::Lds => Some(self.lds_work(&lanes())),
                _ => None,
            };
            if let Some(work) = work {
                self.waves[w].work.push(work);
                bits |= WORK;
            }
            // a PC below the code or 4 GiB past its start wraps here: the dispatch fails at it (the engine's fault or
            // the next head's decode) before any result depends on this entry's fetch
            queue.push(Executed {
                next_pc: next.wrapping_sub(code_base) as u32,
                bits,
            });
            if O::ACTIVE {
                let wave = &mut self.waves[w];
                let acc = if O::WANTS_ACCESSES {
                    AccAt::push(&lanes(), &mut wave.acc, &mut wave.ranges)
                } else {
                    AccAt::NONE
                };
                wave.observed.push(Observed { pc, exec, acc });
            }
        }
        self.waves[w].queue = queue;
        let wave = &mut self.waves[w];
        wave.pos = 0;
        wave.len = wave.queue.len() as u32;
        wave.peek_pc = next_pc;
        wave.ran_at = t;
        wave.head = wave.queue[0];
        wave.next_work = 0;
        if let Some(&work) = wave.work.first().filter(|_| wave.head.bits & WORK != 0) {
            wave.head_work = work;
        }
        self.entries = entries;
        self.block_acc = acc;
        self.block_ranges = ranges;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorder_ends_a_run_after_the_memory_instruction_that_passes_the_lane_bound() {
        // ds_read_b32 v1, v2 (gfx90a): 64 lane records per wave-wide access
        let inst = isa_amdgpu::decode(
            &[0x00, 0x00, 0x6c, 0xd8, 0x02, 0x00, 0x00, 0x01],
            0,
            isa_amdgpu::Target::Gfx90a,
        )
        .expect("ds_read_b32");
        let lanes: Vec<LaneAccess> = (0..64)
            .map(|l| LaneAccess {
                lane: l as u8,
                space: Space::Lds,
                dir: Dir::Read,
                bytes: 4,
                address: 4 * l * 7,
            })
            .collect();
        let range = Accesses::Range(LaneRange {
            space: Space::Global,
            dir: Dir::Read,
            bytes: 4,
            base: 0x1000,
            lanes: u64::MAX,
        });
        LOG.with_borrow_mut(|log| log.acc.clear());
        let mut ended_at = None;
        for k in 1..=20 {
            // a range between the records: it counts no lane records
            for accesses in [Accesses::Lanes(Cow::Borrowed(&lanes)), range.clone()] {
                let ev = InstEvent {
                    workgroup: [0; 3],
                    wave: 0,
                    pc: 0,
                    inst: &inst,
                    exec: u64::MAX,
                    accesses,
                };
                Recorder.instruction(&ev);
                if Recorder.switch_wave(&ev) && ended_at.is_none() {
                    ended_at = Some(k);
                }
            }
        }
        LOG.with_borrow_mut(|log| {
            log.entries.clear();
            log.new.clear();
            log.acc.clear();
            log.ranges.clear();
        });
        assert_eq!(
            ended_at,
            Some(MAX_QUEUED_LANES / 64 + 1),
            "the run ends after the access that passes {MAX_QUEUED_LANES} lanes"
        );
    }
}
