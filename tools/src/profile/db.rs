//! The session as a SQLite database, modelled on ROCm's rocpd tables (processes, agents, queues, kernel
//! symbols, dispatches, counters, copies, API calls) plus the wave trace. `docs/profiling.md` documents the
//! schema; [`SCHEMA`] is its definition. `wavejit analyze` reads it back ([`load`]). Kernel names are
//! demangled (`kernel_symbols.name`, the `kernels` and `counters` views), the symbol beside them
//! (`mangled_name`).

use std::path::Path;

use rusqlite::{params, Connection};

use isa_amdgpu::codeobj::names::demangle;

use profiler_hooks::catalog;
use profiler_hooks::record::{AgentInfo, ApiRecord, BarrierRecord, CopyRecord, DispatchRecord, ProcessInfo, Session};

/// The version of [`SCHEMA`] (`metadata.schema_version`); [`load`] reads this version only.
pub const SCHEMA_VERSION: u32 = 2;

/// The tables and views (times in nanoseconds; see `docs/profiling.md`).
pub const SCHEMA: &str = r#"
CREATE TABLE metadata (tag TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE processes (id INTEGER PRIMARY KEY, pid INTEGER NOT NULL, ppid INTEGER NOT NULL, command TEXT NOT NULL,
    start INTEGER NOT NULL, timing INTEGER NOT NULL);
CREATE TABLE agents (id INTEGER PRIMARY KEY, pid INTEGER NOT NULL, agent_index INTEGER NOT NULL, type TEXT NOT NULL,
    device TEXT NOT NULL, name TEXT NOT NULL, gfx TEXT NOT NULL, compute_units INTEGER NOT NULL);
CREATE TABLE queues (id INTEGER PRIMARY KEY, pid INTEGER NOT NULL, agent_id INTEGER NOT NULL REFERENCES agents(id),
    queue_index INTEGER NOT NULL, address INTEGER NOT NULL);
CREATE TABLE kernel_symbols (id INTEGER PRIMARY KEY, name TEXT NOT NULL, mangled_name TEXT NOT NULL UNIQUE);
CREATE TABLE dispatches (id INTEGER PRIMARY KEY, pid INTEGER NOT NULL, tid INTEGER NOT NULL, dispatch_index INTEGER NOT NULL,
    agent_id INTEGER NOT NULL REFERENCES agents(id), queue_id INTEGER NOT NULL REFERENCES queues(id),
    kernel_id INTEGER NOT NULL REFERENCES kernel_symbols(id), kernel_object INTEGER NOT NULL,
    start INTEGER NOT NULL, end INTEGER NOT NULL, host_start INTEGER NOT NULL, host_end INTEGER NOT NULL, modeled INTEGER NOT NULL,
    grid_x INTEGER NOT NULL, grid_y INTEGER NOT NULL, grid_z INTEGER NOT NULL,
    workgroup_x INTEGER NOT NULL, workgroup_y INTEGER NOT NULL, workgroup_z INTEGER NOT NULL,
    lds_size INTEGER NOT NULL, scratch_size INTEGER NOT NULL, arch_vgpr_count INTEGER NOT NULL,
    accum_vgpr_count INTEGER NOT NULL, sgpr_count INTEGER NOT NULL, wave_size INTEGER NOT NULL, error TEXT,
    correlation_id INTEGER NOT NULL);
CREATE TABLE pmc_info (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, source TEXT NOT NULL, description TEXT NOT NULL);
CREATE TABLE pmc_events (dispatch_id INTEGER NOT NULL REFERENCES dispatches(id), pmc_id INTEGER NOT NULL REFERENCES pmc_info(id),
    value INTEGER NOT NULL, PRIMARY KEY (dispatch_id, pmc_id));
CREATE TABLE memory_copies (id INTEGER PRIMARY KEY, pid INTEGER NOT NULL, direction TEXT NOT NULL,
    src_agent_id INTEGER REFERENCES agents(id), dst_agent_id INTEGER REFERENCES agents(id), size INTEGER NOT NULL,
    src_address INTEGER NOT NULL, dst_address INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL,
    correlation_id INTEGER NOT NULL);
CREATE TABLE barriers (id INTEGER PRIMARY KEY, pid INTEGER NOT NULL, queue_id INTEGER NOT NULL REFERENCES queues(id),
    kind TEXT NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL);
CREATE TABLE api_calls (id INTEGER PRIMARY KEY, pid INTEGER NOT NULL, tid INTEGER NOT NULL, domain TEXT NOT NULL,
    name TEXT NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL, correlation_id INTEGER NOT NULL);
CREATE TABLE waves (id INTEGER PRIMARY KEY, dispatch_id INTEGER NOT NULL REFERENCES dispatches(id),
    workgroup_x INTEGER NOT NULL, workgroup_y INTEGER NOT NULL, workgroup_z INTEGER NOT NULL, wave INTEGER NOT NULL,
    xcd INTEGER, se INTEGER, cu INTEGER, simd INTEGER, start_cycle INTEGER NOT NULL, end_cycle INTEGER);
CREATE TABLE wave_instructions (wave_id INTEGER NOT NULL REFERENCES waves(id), seq INTEGER NOT NULL, pc INTEGER NOT NULL,
    mnemonic TEXT NOT NULL, cycle INTEGER NOT NULL, stall_vmcnt INTEGER NOT NULL, stall_lgkmcnt INTEGER NOT NULL,
    stall_barrier INTEGER NOT NULL, stall_dependency INTEGER NOT NULL, stall_unit_busy INTEGER NOT NULL,
    stall_fetch INTEGER NOT NULL, stall_sleep INTEGER NOT NULL, stall_arbitration INTEGER NOT NULL,
    PRIMARY KEY (wave_id, seq));
CREATE VIEW kernels AS
    SELECT d.id AS id, d.pid AS pid, d.tid AS tid, a.agent_index AS agent, a.device AS device, q.queue_index AS queue,
        k.name AS name, k.mangled_name AS mangled_name, d.start AS start, d.end AS end, d.end - d.start AS duration, d.modeled AS modeled,
        d.grid_x AS grid_x, d.grid_y AS grid_y, d.grid_z AS grid_z,
        d.workgroup_x AS workgroup_x, d.workgroup_y AS workgroup_y, d.workgroup_z AS workgroup_z,
        d.lds_size AS lds_size, d.scratch_size AS scratch_size, d.arch_vgpr_count AS arch_vgpr_count,
        d.accum_vgpr_count AS accum_vgpr_count, d.sgpr_count AS sgpr_count
    FROM dispatches d JOIN agents a ON a.id = d.agent_id JOIN queues q ON q.id = d.queue_id JOIN kernel_symbols k ON k.id = d.kernel_id;
CREATE VIEW counters AS
    SELECT e.dispatch_id AS dispatch_id, k.name AS kernel, k.mangled_name AS mangled_name, p.name AS counter, p.source AS source, e.value AS value
    FROM pmc_events e JOIN pmc_info p ON p.id = e.pmc_id JOIN dispatches d ON d.id = e.dispatch_id
    JOIN kernel_symbols k ON k.id = d.kernel_id;
"#;

/// Writes `s` to a new database at `path` (an existing file is replaced).
pub fn write(s: &Session, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let _ = std::fs::remove_file(path);
    let mut db = Connection::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    db.execute_batch(SCHEMA)?;
    let tx = db.transaction()?;
    let ids = super::csv::Ids::of(s);
    tx.execute(
        &format!("INSERT INTO metadata VALUES ('producer', 'wavejit profile'), ('schema_version', '{SCHEMA_VERSION}'), ('time_unit', 'ns')"),
        [],
    )?;
    let mut agent_ids = std::collections::BTreeMap::new();
    for p in &s.processes {
        tx.execute(
            "INSERT INTO processes (pid, ppid, command, start, timing) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![p.pid, p.ppid, p.command, p.start_ns as i64, p.timing],
        )?;
        for a in &p.agents {
            let ty = if a.kind == "cpu" { "CPU" } else { "GPU" };
            tx.execute(
                "INSERT INTO agents (pid, agent_index, type, device, name, gfx, compute_units) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![p.pid, a.index, ty, a.kind, a.name, a.gfx, a.compute_units],
            )?;
            agent_ids.insert((p.pid, a.index), tx.last_insert_rowid());
        }
    }
    // an agent no process record names (a process that died before writing it) still gets a row
    let mut agent_id = |tx: &rusqlite::Transaction<'_>, pid: u32, agent: u32| -> rusqlite::Result<i64> {
        if let Some(&id) = agent_ids.get(&(pid, agent)) {
            return Ok(id);
        }
        tx.execute("INSERT INTO agents (pid, agent_index, type, device, name, gfx, compute_units) VALUES (?1, ?2, 'GPU', '', '', '', 0)", params![pid, agent])?;
        let id = tx.last_insert_rowid();
        agent_ids.insert((pid, agent), id);
        Ok(id)
    };
    let mut queue_ids = std::collections::BTreeMap::new();
    let queue_agent: std::collections::BTreeMap<(u32, u64), u32> = s
        .dispatches
        .iter()
        .map(|d| ((d.pid, d.queue), d.agent))
        .chain(s.barriers.iter().map(|b| ((b.pid, b.queue), b.agent)))
        .collect();
    for (&(pid, address), &index) in &ids.queue {
        let agent = agent_id(&tx, pid, queue_agent.get(&(pid, address)).copied().unwrap_or(1))?;
        tx.execute(
            "INSERT INTO queues (pid, agent_id, queue_index, address) VALUES (?1, ?2, ?3, ?4)",
            params![pid, agent, index as i64, address as i64],
        )?;
        queue_ids.insert((pid, address), tx.last_insert_rowid());
    }
    for (symbol, &id) in &ids.kernel {
        tx.execute(
            "INSERT INTO kernel_symbols (id, name, mangled_name) VALUES (?1, ?2, ?3)",
            params![id as i64, demangle(symbol), symbol],
        )?;
    }
    // every counter of the catalogue, then the names of rocprofv3's `_sum` form the session recorded
    let mut pmc: Vec<(String, &str, String)> = catalog::all()
        .map(|c| (c.name.to_string(), c.source.name(), c.description.to_string()))
        .collect();
    for (name, _) in s.dispatches.iter().flat_map(|d| &d.counters) {
        if let (false, Some(c)) = (pmc.iter().any(|p| &p.0 == name), catalog::lookup(name)) {
            let what = format!(
                "{}, summed over every instance of its block (rocprofv3's {name}); wavejit counts over the whole device, so it equals {}",
                c.name, c.name
            );
            pmc.push((name.clone(), c.source.name(), what));
        }
    }
    for (i, (name, source, description)) in pmc.iter().enumerate() {
        tx.execute(
            "INSERT INTO pmc_info (id, name, source, description) VALUES (?1, ?2, ?3, ?4)",
            params![i as i64 + 1, name, source, description],
        )?;
    }
    let pmc_id = |name: &str| pmc.iter().position(|p| p.0 == name).map(|i| i as i64 + 1);
    for d in &s.dispatches {
        let id = ids.dispatch[&(d.pid, d.id)] as i64;
        let (start, end) = s.device_span(d);
        let agent = agent_id(&tx, d.pid, d.agent)?;
        tx.execute(
            "INSERT INTO dispatches VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27)",
            params![
                id,
                d.pid,
                d.tid as i64,
                d.id as i64,
                agent,
                queue_ids[&(d.pid, d.queue)],
                ids.kernel[&d.kernel] as i64,
                d.kernel_object as i64,
                start as i64,
                end as i64,
                d.start_ns as i64,
                d.end_ns as i64,
                d.modeled.is_some(),
                d.grid[0],
                d.grid[1],
                d.grid[2],
                d.workgroup[0],
                d.workgroup[1],
                d.workgroup[2],
                d.lds_bytes,
                d.scratch_bytes,
                d.arch_vgprs,
                d.accum_vgprs,
                d.sgprs,
                d.wave_size,
                d.error,
                ids.dispatch_corr[&(d.pid, d.id)] as i64
            ],
        )?;
        for (name, value) in &d.counters {
            if let Some(p) = pmc_id(name) {
                tx.execute(
                    "INSERT INTO pmc_events VALUES (?1, ?2, ?3)",
                    params![id, p, *value as i64],
                )?;
            }
        }
    }
    for c in &s.copies {
        let (src, dst) = (agent_id(&tx, c.pid, c.src_agent)?, agent_id(&tx, c.pid, c.dst_agent)?);
        tx.execute(
            "INSERT INTO memory_copies (pid, direction, src_agent_id, dst_agent_id, size, src_address, dst_address, start, end, correlation_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![c.pid, c.direction, src, dst, c.bytes as i64, c.src as i64, c.dst as i64, c.start_ns as i64, c.end_ns as i64, ids.copy_corr[&(c.pid, c.id)] as i64],
        )?;
    }
    for b in &s.barriers {
        tx.execute(
            "INSERT INTO barriers (pid, queue_id, kind, start, end) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                b.pid,
                queue_ids[&(b.pid, b.queue)],
                b.kind,
                b.start_ns as i64,
                b.end_ns as i64
            ],
        )?;
    }
    {
        let mut st =
            tx.prepare("INSERT INTO api_calls (pid, tid, domain, name, start, end, correlation_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")?;
        for (i, a) in s.api.iter().enumerate() {
            let domain = profiler_hooks::record::api_domain(&a.name);
            st.execute(params![
                a.pid,
                a.tid as i64,
                domain,
                a.name,
                a.start_ns as i64,
                a.end_ns as i64,
                ids.api_corr[i] as i64
            ])?;
        }
        let mut wave = tx.prepare("INSERT INTO waves (dispatch_id, workgroup_x, workgroup_y, workgroup_z, wave, xcd, se, cu, simd, start_cycle, end_cycle) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)")?;
        let mut inst = tx
            .prepare("INSERT INTO wave_instructions VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)")?;
        for (pid, dispatch, waves) in &s.waves {
            let Some(&id) = ids.dispatch.get(&(*pid, *dispatch)) else {
                continue;
            };
            for w in waves {
                let p = w.placement;
                wave.execute(params![
                    id as i64,
                    w.workgroup[0],
                    w.workgroup[1],
                    w.workgroup[2],
                    w.wave,
                    p.map(|p| p.xcd),
                    p.map(|p| p.se),
                    p.map(|p| p.cu),
                    p.map(|p| p.simd),
                    w.start as i64,
                    w.end.map(|e| e as i64)
                ])?;
                let wid = tx.last_insert_rowid();
                for (seq, i) in w.instructions.iter().enumerate() {
                    let st = &i.stalls;
                    inst.execute(params![
                        wid,
                        seq as i64,
                        i.pc as i64,
                        i.mnemonic,
                        i.cycle as i64,
                        st.vmcnt as i64,
                        st.lgkmcnt as i64,
                        st.barrier as i64,
                        st.dependency as i64,
                        st.unit_busy as i64,
                        st.fetch as i64,
                        st.sleep as i64,
                        st.arbitration as i64
                    ])?;
                }
            }
        }
    }
    tx.commit()?;
    Ok(())
}

/// Reads a database [`write`] made back into a session (what `wavejit analyze` needs: processes, agents,
/// dispatches with their counters, copies, barriers, API calls; not the wave trace).
pub fn load(path: &Path) -> Result<Session, Box<dyn std::error::Error>> {
    let db = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let producer: Option<String> = db
        .query_row("SELECT value FROM metadata WHERE tag = 'producer'", [], |r| r.get(0))
        .ok();
    if producer.as_deref() != Some("wavejit profile") {
        return Err(format!("{}: not a database of `wavejit profile`", path.display()).into());
    }
    let version: Option<String> = db
        .query_row("SELECT value FROM metadata WHERE tag = 'schema_version'", [], |r| {
            r.get(0)
        })
        .ok();
    if version.as_deref() != Some(SCHEMA_VERSION.to_string().as_str()) {
        return Err(format!(
            "{}: schema version {} of `wavejit profile`'s database, this wavejit reads version {SCHEMA_VERSION}: profile again",
            path.display(),
            version.as_deref().unwrap_or("unknown")
        )
        .into());
    }
    let mut s = Session::default();
    let mut st = db.prepare("SELECT pid, ppid, command, start, timing FROM processes ORDER BY id")?;
    let procs = st.query_map([], |r| {
        Ok(ProcessInfo {
            pid: r.get(0)?,
            ppid: r.get(1)?,
            command: r.get(2)?,
            start_ns: r.get::<_, i64>(3)? as u64,
            timing: r.get(4)?,
            agents: Vec::new(),
        })
    })?;
    s.processes = procs.collect::<Result<_, _>>()?;
    let mut st = db.prepare("SELECT pid, agent_index, device, name, gfx, compute_units FROM agents ORDER BY id")?;
    let agents = st.query_map([], |r| {
        Ok((
            r.get::<_, u32>(0)?,
            AgentInfo {
                index: r.get(1)?,
                kind: r.get(2)?,
                name: r.get(3)?,
                gfx: r.get(4)?,
                compute_units: r.get(5)?,
            },
        ))
    })?;
    for a in agents {
        let (pid, a) = a?;
        if let Some(p) = s.processes.iter_mut().find(|p| p.pid == pid) {
            p.agents.push(a);
        }
    }
    let mut st = db.prepare(
        "SELECT d.id, d.pid, d.tid, a.agent_index, q.address, k.mangled_name, d.kernel_object, d.grid_x, d.grid_y, d.grid_z, d.workgroup_x, d.workgroup_y, d.workgroup_z,
                d.lds_size, d.scratch_size, d.arch_vgpr_count, d.accum_vgpr_count, d.sgpr_count, d.wave_size, d.host_start, d.host_end, d.modeled, d.start, d.end, d.error
         FROM dispatches d JOIN agents a ON a.id = d.agent_id JOIN queues q ON q.id = d.queue_id JOIN kernel_symbols k ON k.id = d.kernel_id ORDER BY d.id",
    )?;
    let rows = st.query_map([], |r| {
        let g = |i: usize| r.get::<_, u32>(i);
        let modeled: bool = r.get(21)?;
        let (ds, de) = (r.get::<_, i64>(22)? as u64, r.get::<_, i64>(23)? as u64);
        Ok(DispatchRecord {
            id: r.get::<_, i64>(0)? as u64,
            pid: r.get(1)?,
            tid: r.get::<_, i64>(2)? as u64,
            agent: g(3)?,
            queue: r.get::<_, i64>(4)? as u64,
            kernel: r.get(5)?,
            kernel_object: r.get::<_, i64>(6)? as u64,
            grid: [g(7)?, g(8)?, g(9)?],
            workgroup: [g(10)?, g(11)?, g(12)?],
            lds_bytes: g(13)?,
            scratch_bytes: g(14)?,
            arch_vgprs: g(15)?,
            accum_vgprs: g(16)?,
            sgprs: g(17)?,
            wave_size: g(18)?,
            start_ns: r.get::<_, i64>(19)? as u64,
            end_ns: r.get::<_, i64>(20)? as u64,
            // stored as device-track times: kept relative to the process start below
            modeled: modeled.then_some((ds, de)),
            counters: Vec::new(),
            error: r.get(24)?,
        })
    })?;
    s.dispatches = rows.collect::<Result<_, _>>()?;
    for d in &mut s.dispatches {
        if let (Some((a, b)), Some(p)) = (d.modeled, s.processes.iter().find(|p| p.pid == d.pid)) {
            d.modeled = Some((a - p.start_ns.min(a), b - p.start_ns.min(b)));
        }
    }
    let mut st = db.prepare("SELECT e.dispatch_id, p.name, e.value FROM pmc_events e JOIN pmc_info p ON p.id = e.pmc_id ORDER BY e.dispatch_id, p.id")?;
    let rows = st.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)? as u64,
            r.get::<_, String>(1)?,
            r.get::<_, i64>(2)? as u64,
        ))
    })?;
    for row in rows {
        let (id, name, value) = row?;
        if let Some(d) = s.dispatches.iter_mut().find(|d| d.id == id) {
            d.counters.push((name, value));
        }
    }
    let mut st = db.prepare(
        "SELECT c.id, c.pid, c.size, c.src_address, c.dst_address, c.direction, s.agent_index, d.agent_index, c.start, c.end FROM memory_copies c
         LEFT JOIN agents s ON s.id = c.src_agent_id LEFT JOIN agents d ON d.id = c.dst_agent_id ORDER BY c.id",
    )?;
    let rows = st.query_map([], |r| {
        Ok(CopyRecord {
            id: r.get::<_, i64>(0)? as u64,
            pid: r.get(1)?,
            bytes: r.get::<_, i64>(2)? as u64,
            src: r.get::<_, i64>(3)? as u64,
            dst: r.get::<_, i64>(4)? as u64,
            direction: r.get(5)?,
            src_agent: r.get::<_, Option<u32>>(6)?.unwrap_or(0),
            dst_agent: r.get::<_, Option<u32>>(7)?.unwrap_or(0),
            start_ns: r.get::<_, i64>(8)? as u64,
            end_ns: r.get::<_, i64>(9)? as u64,
        })
    })?;
    s.copies = rows.collect::<Result<_, _>>()?;
    let mut st = db.prepare("SELECT b.id, b.pid, a.agent_index, q.address, b.kind, b.start, b.end FROM barriers b JOIN queues q ON q.id = b.queue_id JOIN agents a ON a.id = q.agent_id ORDER BY b.id")?;
    let rows = st.query_map([], |r| {
        Ok(BarrierRecord {
            id: r.get::<_, i64>(0)? as u64,
            pid: r.get(1)?,
            agent: r.get(2)?,
            queue: r.get::<_, i64>(3)? as u64,
            kind: r.get(4)?,
            start_ns: r.get::<_, i64>(5)? as u64,
            end_ns: r.get::<_, i64>(6)? as u64,
        })
    })?;
    s.barriers = rows.collect::<Result<_, _>>()?;
    let mut st = db.prepare("SELECT pid, tid, name, start, end FROM api_calls ORDER BY id")?;
    let rows = st.query_map([], |r| {
        Ok(ApiRecord {
            pid: r.get(0)?,
            tid: r.get::<_, i64>(1)? as u64,
            name: r.get(2)?,
            start_ns: r.get::<_, i64>(3)? as u64,
            end_ns: r.get::<_, i64>(4)? as u64,
        })
    })?;
    s.api = rows.collect::<Result<_, _>>()?;
    Ok(s)
}
