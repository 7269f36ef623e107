//! The session as a Chrome/Perfetto trace (the JSON trace-event format: `{"traceEvents": [...]}`, complete
//! events `ph: X` with microsecond `ts`/`dur`, metadata events naming processes and threads, flow events
//! `s`/`f` for arrows).
//!
//! Layout: each profiled process is a trace process (its real pid) whose threads carry its HSA calls; each
//! GPU agent of a process is a trace process `GPU <agent> (<device>) of pid <pid>` with one thread per queue
//! (kernels and barrier packets) and one for the copy engine; an arrow goes from the doorbell store that
//! launched a kernel to the kernel. With `--timing --wave-trace N`, each traced dispatch gets a trace process
//! with one thread per traced wave: every instruction's issue cycle, and before it the cycles it stalled,
//! named by reason. Under `--timing` the device tracks show modeled time, placed from the
//! start of their process; host tracks show host time. Times are relative to the session's first record.
//! Kernels are named by their demangled names; a kernel event's `args.symbol` is the symbol.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use isa_amdgpu::codeobj::names::demangle;
use profiler_hooks::record::Session;

const GPU_PID_BASE: u64 = 1 << 24;
const WAVES_PID_BASE: u64 = 1 << 25;
const COPY_TID: u64 = 1 << 16;

fn meta(pid: u64, tid: Option<u64>, what: &str, name: &str) -> Value {
    match tid {
        Some(tid) => json!({"ph": "M", "pid": pid, "tid": tid, "name": what, "args": {"name": name}}),
        None => json!({"ph": "M", "pid": pid, "name": what, "args": {"name": name}}),
    }
}

/// The trace document.
pub fn trace(s: &Session) -> Value {
    let origin = s
        .processes
        .iter()
        .map(|p| p.start_ns)
        .chain(s.api.iter().map(|a| a.start_ns))
        .chain(s.dispatches.iter().map(|d| s.device_span(d).0.min(d.start_ns)))
        .min()
        .unwrap_or(0);
    let us = |ns: u64| ns.saturating_sub(origin) as f64 / 1000.0;
    let ids = super::csv::Ids::of(s);
    let mut ev: Vec<Value> = Vec::new();
    let process_index: BTreeMap<u32, u64> = s.processes.iter().enumerate().map(|(i, p)| (p.pid, i as u64)).collect();
    let gpu_pid =
        |pid: u32, agent: u32| GPU_PID_BASE + process_index.get(&pid).copied().unwrap_or(0) * 64 + agent as u64;
    for p in &s.processes {
        let cmd: String = p.command.chars().take(80).collect();
        ev.push(meta(
            p.pid as u64,
            None,
            "process_name",
            &format!("{cmd} (pid {})", p.pid),
        ));
        ev.push(json!({"ph": "M", "pid": p.pid, "name": "process_sort_index", "args": {"sort_index": process_index[&p.pid]}}));
        for a in p.agents.iter().filter(|a| a.kind != "cpu") {
            let gp = gpu_pid(p.pid, a.index);
            ev.push(meta(
                gp,
                None,
                "process_name",
                &format!("GPU {} ({}, {}) of pid {}", a.index, a.name, a.gfx, p.pid),
            ));
            ev.push(meta(gp, Some(COPY_TID), "thread_name", "copy engine"));
        }
    }
    let mut threads: BTreeMap<(u32, u64), ()> = BTreeMap::new();
    for (i, a) in s.api.iter().enumerate() {
        if threads.insert((a.pid, a.tid), ()).is_none() {
            ev.push(meta(
                a.pid as u64,
                Some(a.tid),
                "thread_name",
                &format!("HSA API (thread {})", a.tid),
            ));
        }
        ev.push(json!({"ph": "X", "cat": "hsa_api", "name": a.name, "pid": a.pid, "tid": a.tid, "ts": us(a.start_ns), "dur": us(a.end_ns) - us(a.start_ns), "args": {"correlation_id": ids.api_corr[i]}}));
    }
    let mut queues: BTreeMap<(u32, u32, u64), ()> = BTreeMap::new();
    let mut queue_track = |ev: &mut Vec<Value>, pid: u32, agent: u32, queue: u64| {
        let q = ids.queue[&(pid, queue)];
        if queues.insert((pid, agent, q), ()).is_none() {
            ev.push(meta(
                gpu_pid(pid, agent),
                Some(q),
                "thread_name",
                &format!("queue {q} ({queue:#x})"),
            ));
        }
        (gpu_pid(pid, agent), q)
    };
    for d in &s.dispatches {
        let (start, end) = s.device_span(d);
        let (tpid, tid) = queue_track(&mut ev, d.pid, d.agent, d.queue);
        let corr = ids.dispatch[&(d.pid, d.id)];
        let counters: serde_json::Map<String, Value> = d.counters.iter().map(|(n, v)| (n.clone(), json!(v))).collect();
        ev.push(json!({
            "ph": "X", "cat": "kernel", "name": demangle(&d.kernel), "pid": tpid, "tid": tid, "ts": us(start), "dur": us(end) - us(start),
            "args": {"dispatch_id": corr, "correlation_id": ids.dispatch_corr[&(d.pid, d.id)], "symbol": d.kernel, "grid": d.grid, "workgroup": d.workgroup, "lds_bytes": d.lds_bytes, "scratch_bytes": d.scratch_bytes,
                     "arch_vgprs": d.arch_vgprs, "accum_vgprs": d.accum_vgprs, "sgprs": d.sgprs, "modeled": d.modeled.is_some(), "error": d.error, "counters": counters}
        }));
        if let Some(i) = s.launch_of(d) {
            let a = &s.api[i];
            let mid = (us(a.start_ns) + us(a.end_ns)) / 2.0;
            ev.push(json!({"ph": "s", "cat": "launch", "name": "launch", "id": corr, "pid": a.pid, "tid": a.tid, "ts": mid}));
            ev.push(json!({"ph": "f", "bp": "e", "cat": "launch", "name": "launch", "id": corr, "pid": tpid, "tid": tid, "ts": us(start)}));
        }
    }
    for b in &s.barriers {
        let (tpid, tid) = queue_track(&mut ev, b.pid, b.agent, b.queue);
        ev.push(json!({"ph": "X", "cat": "barrier", "name": format!("barrier-{}", b.kind), "pid": tpid, "tid": tid, "ts": us(b.start_ns), "dur": us(b.end_ns) - us(b.start_ns)}));
    }
    for c in &s.copies {
        let agent = if c.dst_agent != 0 {
            c.dst_agent
        } else {
            c.src_agent.max(1)
        };
        ev.push(json!({"ph": "X", "cat": "copy", "name": format!("copy {}", c.direction), "pid": gpu_pid(c.pid, agent), "tid": COPY_TID, "ts": us(c.start_ns), "dur": us(c.end_ns) - us(c.start_ns), "args": {"bytes": c.bytes, "correlation_id": ids.copy_corr[&(c.pid, c.id)]}}));
    }
    for (n, (pid, dispatch, waves)) in s.waves.iter().enumerate() {
        let Some(d) = s.dispatches.iter().find(|d| d.pid == *pid && d.id == *dispatch) else {
            continue;
        };
        let mhz = s
            .process(*pid)
            .and_then(|p| p.agents.iter().find(|a| a.index == d.agent))
            .and_then(|a| emu_core::DevicePreset::by_name(&a.kind).ok())
            .map_or(1000, |p| p.engine_clock_mhz) as f64;
        let base = us(s.device_span(d).0);
        let at = |cycle: u64| base + cycle as f64 / mhz;
        let wpid = WAVES_PID_BASE + n as u64;
        ev.push(meta(
            wpid,
            None,
            "process_name",
            &format!(
                "waves of {} (dispatch {}, pid {pid})",
                demangle(&d.kernel),
                ids.dispatch[&(*pid, *dispatch)]
            ),
        ));
        for (t, w) in waves.iter().enumerate() {
            let place = w
                .placement
                .map(|p| format!(" on XCD {} SE {} CU {} SIMD {}", p.xcd, p.se, p.cu, p.simd))
                .unwrap_or_default();
            ev.push(meta(
                wpid,
                Some(t as u64),
                "thread_name",
                &format!("workgroup {:?} wave {}{place}", w.workgroup, w.wave),
            ));
            let mut free = w.start;
            for inst in &w.instructions {
                // the stall spans end at the issue cycle, never reaching back before the previous issue
                let st = &inst.stalls;
                let mut from = inst.cycle.saturating_sub(st.total()).max(free);
                for (why, n) in [
                    ("vmcnt", st.vmcnt),
                    ("lgkmcnt", st.lgkmcnt),
                    ("barrier", st.barrier),
                    ("dependency", st.dependency),
                    ("unit busy", st.unit_busy),
                    ("fetch", st.fetch),
                    ("sleep", st.sleep),
                    ("arbitration", st.arbitration),
                ] {
                    let n = n.min(inst.cycle.saturating_sub(from));
                    if n > 0 {
                        ev.push(json!({"ph": "X", "cat": "stall", "name": format!("stall: {why}"), "pid": wpid, "tid": t, "ts": at(from), "dur": n as f64 / mhz}));
                        from += n;
                    }
                }
                ev.push(json!({"ph": "X", "cat": "issue", "name": inst.mnemonic, "pid": wpid, "tid": t, "ts": at(inst.cycle), "dur": 1.0 / mhz, "args": {"pc": format!("{:#x}", inst.pc), "cycle": inst.cycle}}));
                free = inst.cycle + 1;
            }
        }
    }
    json!({"traceEvents": ev, "displayTimeUnit": "ns", "otherData": {"producer": "wavejit profile"}})
}
