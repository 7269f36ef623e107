//! Scripted debugger sessions on the bundled kernels, on the interpreter and on the JIT: register values at
//! breakpoints against the CPU references, watches firing at the instruction that changes them, and reverse
//! execution reaching exactly the state a forward run had at the same point.

mod common;

use serde_json::Value;

use common::{listing, on_both_engines, same, setup, upload, Snapshot};
use emu_core::dispatch::DispatchShape;
use emu_core::engine::{KernelDispatch, Limits};
use emu_core::kernarg::ArgValue;
use emu_core::memory::DeviceMemory;
use inspect::regs::{self, Reg};
use inspect::WaveKey;

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn lane_values(v: &Value) -> Vec<u32> {
    v["values"][0]["lanes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
}

fn exec_of(v: &Value) -> u64 {
    u64::from_str_radix(v["values"][0]["exec"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
}

/// The source register operand `index` (0-based) of an instruction's text.
fn operand(text: &str, index: usize) -> String {
    text.split_once(' ')
        .unwrap()
        .1
        .split(", ")
        .nth(index)
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn the_stored_sum_at_a_breakpoint_on_vadds_store_equals_the_cpu_reference_in_every_wave() {
    for target in ["gfx90a", "gfx942"] {
        let (dev, co) = setup("vadd", target);
        let mem = DeviceMemory::new(dev.memory_bytes).unwrap();
        let n = 300usize;
        let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.37 - 20.0).collect();
        let b: Vec<f32> = (0..n).map(|i| 1.0 / (i as f32 + 1.5)).collect();
        let want = test_kernels::reference::vadd(&a, &b);
        let (da, db) = (upload(&mem, &f32_bytes(&a), "a"), upload(&mem, &f32_bytes(&b), "b"));
        let dc = upload(&mem, &vec![0u8; n * 4], "c");
        let shape = DispatchShape::new([n as u32, 1, 1], [128, 1, 1], dev).unwrap();
        let args = [
            ArgValue::Pointer(da),
            ArgValue::Pointer(db),
            ArgValue::Pointer(dc),
            ArgValue::U32(n as u32),
        ];
        let d = KernelDispatch {
            mem: &mem,
            device: dev,
            co: &co,
            kernel: &co.kernels[0],
            shape,
            args: &args,
            limits: Limits::default(),
        };
        let (store, text) = listing(&co)
            .into_iter()
            .find(|(_, t)| t.starts_with("global_store_dword "))
            .expect("vadd stores c[i]");
        let data = operand(&text, 1);
        on_both_engines(
            &d,
            &co,
            WaveKey {
                workgroup: [0; 3],
                wave: 0,
            },
            &mut |engine, dbg| {
                let bp = dbg.cmd(&format!("break {store:#x}"));
                assert_eq!(bp["instruction"], text.as_str());
                let mut hits = Vec::new();
                loop {
                    let stop = dbg.cmd("continue");
                    if stop["stop"]["reason"] == "dispatch_ended" {
                        break;
                    }
                    assert_eq!(stop["stop"]["reason"], "breakpoint", "{engine}: {stop}");
                    let wave: WaveKey = stop["stop"]["wave"].as_str().unwrap().parse().unwrap();
                    let v = dbg.cmd(&format!("print {data}"));
                    let (values, exec) = (lane_values(&v), exec_of(&v));
                    let mut active = 0;
                    for (lane, value) in values.iter().enumerate() {
                        let i = wave.workgroup[0] as usize * 128 + wave.wave as usize * 64 + lane;
                        assert_eq!(
                            exec >> lane & 1 == 1,
                            i < n,
                            "{engine} {target}: EXEC at the store, lane {lane} of {wave}"
                        );
                        if i < n {
                            assert_eq!(
                                *value,
                                want[i].to_bits(),
                                "{engine} {target}: {data} lane {lane} of wave {wave} (c[{i}])"
                            );
                            active += 1;
                        }
                    }
                    hits.push((wave, active));
                }
                // 300 work-items in blocks of 128: two full workgroups of two waves, then one wave of 44 lanes
                let waves: Vec<String> = hits.iter().map(|h| h.0.to_string()).collect();
                assert_eq!(
                    waves,
                    ["0,0,0:0", "0,0,0:1", "1,0,0:0", "1,0,0:1", "2,0,0:0"],
                    "{engine} {target}"
                );
                assert_eq!(hits.iter().map(|h| h.1).sum::<usize>(), n);
            },
        );
    }
}

#[test]
fn the_divergent_kernels_stored_values_and_its_device_call_step_as_the_cpu_reference_says() {
    let (dev, co) = setup("divergence", "gfx90a");
    let mem = DeviceMemory::new(dev.memory_bytes).unwrap();
    let n = 100usize;
    let seeds: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) % 5000).collect();
    let want = test_kernels::reference::divergence(&seeds);
    let out = upload(&mem, &vec![0u8; n * 8], "out");
    let ds = upload(
        &mem,
        &seeds.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>(),
        "seed",
    );
    let shape = DispatchShape::new([n as u32, 1, 1], [64, 1, 1], dev).unwrap();
    let args = [ArgValue::Pointer(out), ArgValue::Pointer(ds), ArgValue::U32(n as u32)];
    let d = KernelDispatch {
        mem: &mem,
        device: dev,
        co: &co,
        kernel: &co.kernels[0],
        shape,
        args: &args,
        limits: Limits::default(),
    };
    let list = listing(&co);
    let stores: Vec<(u64, String)> = list
        .iter()
        .filter(|(_, t)| t.starts_with("global_store_dwordx2"))
        .cloned()
        .collect();
    assert!(!stores.is_empty());
    let call = list
        .iter()
        .position(|(_, t)| t.starts_with("s_swappc_b64"))
        .expect("divergence calls collatz_steps");
    let (call_pc, after_call) = (list[call].0, list[call + 1].0);
    let callee = co
        .functions
        .iter()
        .find(|f| f.name == "collatz_steps")
        .expect("the device function is a symbol");
    on_both_engines(
        &d,
        &co,
        WaveKey {
            workgroup: [1, 0, 0],
            wave: 0,
        },
        &mut |engine, dbg| {
            // next steps over the call, finish comes back out of it
            dbg.cmd(&format!("break {call_pc:#x}"));
            let s = dbg.cmd("continue");
            assert_eq!(
                s["stop"]["wave"], "1,0,0:0",
                "{engine}: wave 1,0,0:0 was chosen and workgroup 0 has not started"
            );
            let before = dbg.state();
            let s = dbg.cmd("next");
            assert_eq!(
                s["stop"]["reason"], "return",
                "{engine}: next over a call runs until the wave is back after it"
            );
            let after = dbg.state();
            assert_eq!(after.pc, after_call, "{engine}: next stops after the call");
            assert!(
                after.executed > before.executed + 10,
                "{engine}: next ran the whole device function ({} -> {})",
                before.executed,
                after.executed
            );
            assert!(
                s["stop"]["where"].as_str().unwrap().starts_with("divergence+"),
                "{engine}: {s}"
            );
            dbg.cmd("reverse-step 1");
            assert!(
                dbg.state().pc >= callee.address && dbg.state().pc < callee.address + callee.size,
                "{engine}: one instruction back is the callee's return"
            );
            // back to before the call: the state the forward run had there
            dbg.cmd(&format!("reverse-step {}", after.executed - before.executed - 1));
            same(
                &dbg.state(),
                &before,
                &format!("{engine}: reverse-step reaches the state a forward run had"),
            );
            dbg.cmd("delete");
            dbg.cmd(&format!("break collatz_steps+{:#x}", 0));
            let s = dbg.cmd("continue");
            assert_eq!(s["stop"]["where"], "collatz_steps+0x0", "{engine}");
            assert_eq!(
                dbg.state().executed,
                before.executed + 1,
                "{engine}: the callee's first instruction comes right after the call"
            );
            let s = dbg.cmd("finish");
            assert_eq!(s["stop"]["reason"], "return", "{engine}");
            assert_eq!(dbg.state().pc, after_call, "{engine}: finish returns to the caller");
        },
    );
    mem.write(out, &vec![0u8; n * 8]).unwrap();
    on_both_engines(
        &d,
        &co,
        WaveKey {
            workgroup: [0, 0, 0],
            wave: 0,
        },
        &mut |engine, dbg| {
            // the values each store writes are the CPU reference's, lane by lane
            for (pc, _) in &stores {
                dbg.cmd(&format!("break {pc:#x}"));
            }
            let mut covered = vec![0u32; n];
            loop {
                let s = dbg.cmd("continue");
                if s["stop"]["reason"] == "dispatch_ended" {
                    break;
                }
                let wave: WaveKey = s["stop"]["wave"].as_str().unwrap().parse().unwrap();
                let text = s["stop"]["instruction"].as_str().unwrap().to_string();
                let data = operand(&text, 1);
                let r = regs::parse(&data).unwrap();
                let (Reg::V(lo), Reg::V(hi)) = (r[0], r[1]) else {
                    panic!("{text}")
                };
                let lo = dbg.cmd(&format!("print v{lo}"));
                let hi = dbg.cmd(&format!("print v{hi}"));
                let exec = exec_of(&lo);
                let (lo, hi) = (lane_values(&lo), lane_values(&hi));
                for lane in (0..64).filter(|l| exec >> l & 1 == 1) {
                    let i = wave.workgroup[0] as usize * 64 + lane;
                    assert_eq!(
                        lo[lane] as u64 | (hi[lane] as u64) << 32,
                        want[i],
                        "{engine}: out[{i}] at {text}"
                    );
                    covered[i] += 1;
                }
            }
            assert!(
                covered.iter().all(|&c| c == 1),
                "{engine}: every work-item's value is stored exactly once: {covered:?}"
            );
        },
    );
}

#[test]
fn watches_fire_at_the_instruction_that_changes_them_and_reverse_execution_reproduces_forward_states() {
    let (dev, co) = setup("reduce", "gfx90a");
    let mem = DeviceMemory::new(dev.memory_bytes).unwrap();
    let n = 512usize;
    let input: Vec<f32> = (0..n).map(|i| ((i * 7) % 23) as f32 - 5.5).collect();
    let want = test_kernels::reference::reduce_sum(&input);
    let din = upload(&mem, &f32_bytes(&input), "in");
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
        limits: Limits::default(),
    };
    let list = listing(&co);
    let store = list
        .iter()
        .find(|(_, t)| t.starts_with("global_store_dword"))
        .expect("reduce stores its sum")
        .0;
    let mut states: Vec<Vec<Snapshot>> = Vec::new();
    on_both_engines(
        &d,
        &co,
        WaveKey {
            workgroup: [0; 3],
            wave: 2,
        },
        &mut |engine, dbg| {
            let mut seen = Vec::new();
            // a memory watch on out[1]: the store of workgroup 1's wave 0 writes the block's sum there
            dbg.cmd(&format!("watch {:#x}:4", dout + 4));
            let s = dbg.cmd("continue");
            assert_eq!(s["stop"]["reason"], "watch", "{engine}: {s}");
            assert_eq!(s["stop"]["changed_by"], "1,0,0:0", "{engine}");
            assert_eq!(
                u64::from_str_radix(s["stop"]["changed_at"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap(),
                dbg.state_code_base() + store,
                "{engine}: the watch names the store"
            );
            let new: Vec<u8> = s["stop"]["new"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b.as_u64().unwrap() as u8)
                .collect();
            assert_eq!(
                new,
                want[1].to_le_bytes(),
                "{engine}: the new value is the CPU's sum of block 1"
            );
            assert_eq!(s["stop"]["wave"], "1,0,0:0", "{engine}: the focus moves to the writer");
            // back to the start of the chosen wave, then a register watch: it fires after each instruction that
            // writes the register with a new value, and that instruction names it as its destination
            let s = dbg.cmd("reverse-continue");
            assert_eq!(s["stop"]["reason"], "start", "{engine}: no earlier hit: {s}");
            dbg.cmd("delete");
            dbg.cmd("wave 0,0,0:2");
            dbg.cmd("watch v2[7]");
            let mut hits = 0;
            for _ in 0..6 {
                let s = dbg.cmd("continue");
                if s["stop"]["reason"] != "watch" {
                    break;
                }
                let at = s["stop"]["changed_at"].as_str().unwrap();
                let pc = u64::from_str_radix(at.trim_start_matches("0x"), 16).unwrap() - dbg.state_code_base();
                let text = &list
                    .iter()
                    .find(|(a, _)| *a == pc)
                    .expect("the watch names an instruction of the kernel")
                    .1;
                let dst = regs::in_text(text);
                assert!(
                    dst.first() == Some(&Reg::V(2))
                        || text.starts_with("v_lshlrev_b64 v[2:3]")
                        || text.contains(" v[2:"),
                    "{engine}: `{text}` does not write v2"
                );
                let lane7 = lane_values(&dbg.cmd("print v2"))[7];
                assert_eq!(s["stop"]["new"].as_u64().unwrap() as u32, lane7, "{engine}");
                hits += 1;
            }
            assert!(hits >= 2, "{engine}: v2 changes more than once in wave 2");
            dbg.cmd("delete");
            // reverse-step, then forward again: the same states as the forward run
            dbg.cmd("reverse-continue");
            dbg.cmd("wave 0,0,0:2");
            for _ in 0..4 {
                dbg.cmd("step 12");
                seen.push(dbg.state());
            }
            assert_eq!(seen[3].executed, 48);
            dbg.cmd("reverse-step 36");
            same(
                &dbg.state(),
                &seen[0],
                &format!("{engine}: 36 back from the 4th stop is the 1st"),
            );
            for (k, want) in seen.iter().enumerate().skip(1) {
                dbg.cmd("step 12");
                same(
                    &dbg.state(),
                    want,
                    &format!("{engine}: stepping forward after stepping back, stop {k}"),
                );
            }
            // through barriers: wave 2 waits at each s_barrier while the other waves run
            dbg.cmd("step 20");
            let far = dbg.state();
            assert_eq!(far.executed, 68);
            assert!(far.lds.iter().any(|&b| b != 0), "{engine}: the waves have filled LDS");
            dbg.cmd("reverse-step 20");
            same(&dbg.state(), &seen[3], &format!("{engine}: back across barriers"));
            dbg.cmd("step 20");
            same(&dbg.state(), &far, &format!("{engine}: and forward again"));
            let h = dbg.cmd("history");
            assert!(h["history"].as_array().unwrap().len() > 10);
            seen.push(far);
            states.push(seen);
        },
    );
    // both engines stop in the same states (up to the addresses each run loaded the code and arguments at)
    assert_eq!(states[0].len(), states[1].len());
    for (k, (a, b)) in states[0].iter().zip(&states[1]).enumerate() {
        same(
            &a.contents(),
            &b.contents(),
            &format!("stop {k}: the interpreter and the JIT give the same picture"),
        );
    }
}
