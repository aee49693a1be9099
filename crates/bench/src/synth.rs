//! `cuzk bench synth`: real-size synthesis (issue 14 item 3). One partition of each
//! TIMING-ONLY request of the real shapes (`cuzk_testkit::shaped`, built in memory: random
//! but well-formed vanilla proofs, whose proofs would not verify; none is made here) is
//! synthesized twice in one run:
//! - as the daemon synthesizes it: the Filecoin planner's own partition closure, with the
//!   circuit's prepared data (compiled matrices where the planner compiles, made once and
//!   timed apart), on every core of the global rayon pool;
//! - by bellperson's own prover-side synthesis, on a rayon pool of one thread: its rate is
//!   per core, the comparison the issue asks for.
//!
//! With `compile_all`, a kind the daemon records in full (WindowPoSt, without
//! `compile_window_post`) is also synthesized through compiled matrices, in a row of its own:
//! what compiling it would cost and save.
//!
//! Ours is timed twice: the first synthesis in the process (which includes the run-time check
//! of a native witness against the circuit's gadgets) and the same partition again, from a
//! fresh plan (the steady state, the figure the rate and ratio use). Each side's time
//! includes building the circuit from the vanilla proof and freeing what synthesis produced. Its peak host bytes are the growth of the process's peak RSS over
//! its run (`/proc/self/clear_refs` resets the peak; `None` where that is not available).
use crate::error::{invalid, Result, Step};
use cuzk_core::kinds::filecoin::FilecoinPlanner;
use cuzk_core::{Planner, ProofRequest, SynthesisContext};
use cuzk_filecoin::SectorSize;
use cuzk_groth16::Synthesized;
use std::time::{Duration, Instant};

/// What `cuzk bench synth` runs.
#[derive(Clone, Debug)]
pub struct SynthOptions {
    /// The requests' sector size (32 GiB or 64 GiB for the real shapes).
    pub sector_size: SectorSize,
    /// Kinds to run, of `porep`, `snap`, `wpost`, `winning`.
    pub kinds: Vec<String>,
    /// Seed of the requests' random values.
    pub seed: u64,
    /// Also time bellperson's synthesis on one thread.
    pub bellperson: bool,
    /// Also synthesize the kinds the daemon records in full through compiled matrices.
    pub compile_all: bool,
    /// Leave a/b/c to the device, as the daemon does beside GPU provers that make them
    /// (`[srs] device_abc`): ours is the witness only. Otherwise a/b/c are evaluated on the
    /// host from the compiled matrices, as beside the CPU prover.
    pub device_abc: bool,
    /// Plan as the daemon does with `[srs] compile_window_post` (its default): WindowPoSt
    /// through compiled matrices and the witness-only recording in the daemon's own row;
    /// `false` records it in full, as with `compile_window_post = false`.
    pub compile_window_post: bool,
}

/// How a row's partition was synthesized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SynthPath {
    /// As the daemon does it.
    Daemon,
    /// Through compiled matrices, which the daemon does not use for this circuit.
    CompiledNotTheDaemons,
}

/// One partition synthesized both ways.
#[derive(Clone, Debug)]
pub struct SynthRow {
    /// The kind's name.
    pub kind: String,
    /// The partition's circuit id.
    pub circuit_id: String,
    /// How ours was synthesized.
    pub path: SynthPath,
    /// Its constraints.
    pub constraints: usize,
    /// Threads our synthesis ran on.
    pub threads: usize,
    /// Making the circuit's prepared data (the compile of its matrices), when it has any,
    /// and the bytes it holds.
    pub prepare: Option<(Duration, u64)>,
    /// Our synthesis (the daemon's path), wall, in steady state: the partition's second
    /// synthesis in this process.
    pub ours: Duration,
    /// The first synthesis's wall, which includes the once-per-process run-time check of a
    /// native witness against the circuit's gadgets (PoRep: one challenge through both).
    pub ours_first: Duration,
    /// Its peak host bytes (the prepared data excluded: it was made before).
    pub ours_peak: Option<u64>,
    /// bellperson's synthesis on one thread, wall, and its peak host bytes (in a
    /// [`SynthPath::CompiledNotTheDaemons`] row, the same measurement as the daemon row's).
    pub bellperson: Option<(Duration, Option<u64>)>,
}

impl SynthRow {
    /// Our constraints per second per core.
    pub fn ours_per_core(&self) -> f64 {
        self.constraints as f64 / self.ours.as_secs_f64() / self.threads.max(1) as f64
    }

    /// bellperson's constraints per second on its one core.
    pub fn bellperson_per_core(&self) -> Option<f64> {
        self.bellperson
            .map(|(t, _)| self.constraints as f64 / t.as_secs_f64())
    }
}

/// The current and peak resident set of this process, in bytes (`VmRSS`, `VmHWM`).
fn rss() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kb: u64 = line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kb * 1024)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// Runs `f`, returning its result, its wall time and how far the peak RSS rose above the
/// RSS at its start.
fn measured<T>(f: impl FnOnce() -> T) -> (T, Duration, Option<u64>) {
    // "5" resets the peak RSS to the current RSS (proc(5), clear_refs).
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let before = rss().map(|(now, _)| now);
    let t = Instant::now();
    let out = f();
    let dt = t.elapsed();
    let peak = match (reset, before, rss()) {
        (true, Some(b), Some((_, hwm))) => Some(hwm.saturating_sub(b)),
        _ => None,
    };
    (out, dt, peak)
}

/// The constraint count of a synthesis result, the result freed (inside the measurement:
/// both sides' times include freeing what synthesis made).
fn constraints_of<E>(s: std::result::Result<Synthesized, E>) -> std::result::Result<usize, E> {
    s.map(|s| {
        let n = s.num_constraints;
        drop(s);
        n
    })
}

/// Synthesizes partition 0 of each kind's TIMING-ONLY request both ways.
pub fn run(opts: &SynthOptions) -> Result<Vec<SynthRow>> {
    let shaped = cuzk_testkit::shaped::requests(opts.sector_size, opts.seed)?;
    // The planner reads no parameter file to plan or prepare.
    let planner = FilecoinPlanner::new(std::env::temp_dir())
        .with_window_post_compiled(opts.compile_window_post);
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .step("a one-thread pool for bellperson")?;
    let mut rows = Vec::new();
    for kind in &opts.kinds {
        let req = match kind.as_str() {
            "porep" => &shaped.porep,
            "snap" => &shaped.snap,
            "wpost" => &shaped.wpost,
            "winning" => &shaped.winning,
            k => return Err(invalid!("kind {k}: one of porep, snap, wpost, winning")),
        };
        let mut plan = planner
            .plan(ProofRequest::filecoin(req.clone()).with_id("bench-synth (TIMING-ONLY)"))?;
        if plan.partitions.is_empty() {
            return Err(invalid!("{kind}: the plan has no partitions"));
        }
        let part = plan.partitions.swap_remove(0);
        let circuit_id = part.circuit_id.clone();
        let t = Instant::now();
        let prepared = planner.prepare(&circuit_id)?;
        let prepare = prepared.as_ref().map(|p| (t.elapsed(), p.bytes));
        let prepared = prepared.map(|p| p.data);
        let ctx = || SynthesisContext {
            prepared: prepared.clone(),
            reuse: None,
            defer_abc: opts.device_abc,
        };
        let (first, ours_first, _) = measured(|| constraints_of((part.synthesize)(ctx())));
        first
            .map_err(std::io::Error::other)
            .with_step(|| format!("synthesizing {circuit_id}"))?;
        // The same partition again, from a fresh plan: the steady state.
        let part = planner
            .plan(ProofRequest::filecoin(req.clone()).with_id("bench-synth (TIMING-ONLY)"))?
            .partitions
            .swap_remove(0);
        let (synthesized, ours, ours_peak) = measured(|| constraints_of((part.synthesize)(ctx())));
        let constraints = synthesized
            .map_err(std::io::Error::other)
            .with_step(|| format!("synthesizing {circuit_id} again"))?;
        let bellperson = if opts.bellperson {
            // Its time excludes planning, as ours does; its peak is over the whole call.
            let (synthesis, _, peak) = measured(|| {
                one_thread.install(|| cuzk_testkit::synth_bench::time_bellperson_partition(req, 0))
            });
            Some((synthesis?, peak))
        } else {
            None
        };
        let row = SynthRow {
            kind: kind.clone(),
            circuit_id,
            path: SynthPath::Daemon,
            constraints,
            threads: rayon::current_num_threads(),
            prepare,
            ours,
            ours_first,
            ours_peak,
            bellperson,
        };
        let compiled = if opts.compile_all && row.prepare.is_none() {
            Some(compiled_row(req, &row, opts.device_abc)?)
        } else {
            None
        };
        rows.push(row);
        rows.extend(compiled);
    }
    Ok(rows)
}

/// `daemon`'s partition again, witness-only and (unless `device_abc`) evaluated against the
/// circuit's compiled matrices (compiled first, timed apart).
fn compiled_row(
    req: &cuzk_filecoin::ProofRequest,
    daemon: &SynthRow,
    device_abc: bool,
) -> Result<SynthRow> {
    let job = cuzk_filecoin::plan(req)?
        .take_jobs()
        .into_iter()
        .next()
        .ok_or_else(|| invalid!("{}: the plan has no partitions", daemon.kind))?;
    let t = Instant::now();
    let shape = cuzk_filecoin::compiled::compile(job.circuit_id)?;
    let prepare = Some((t.elapsed(), shape.heap_bytes() as u64));
    let (constraints, ours, ours_peak) = measured(|| {
        constraints_of(
            job.run(cuzk_groth16::RecorderMode::WitnessOnly)
                .and_then(|w| {
                    if device_abc {
                        Ok(w)
                    } else {
                        Ok(shape.evaluate(w)?)
                    }
                }),
        )
    });
    Ok(SynthRow {
        path: SynthPath::CompiledNotTheDaemons,
        constraints: constraints?,
        prepare,
        ours,
        ours_first: ours,
        ours_peak,
        ..daemon.clone()
    })
}

fn gib(b: Option<u64>) -> String {
    b.map_or("-".into(), |b| {
        format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64)
    })
}

/// The table `cuzk bench synth` prints.
pub fn table(rows: &[SynthRow]) -> String {
    let mut s = String::from(
        "TIMING-ONLY requests (random vanilla proofs of the real shapes): synthesis time and memory only\n\
         | partition | constraints | prepare (bytes) | ours: first run (checks) | ours: wall on N threads | ours c/s per core | ours peak | bellperson on 1 thread | bellperson c/s | bellperson peak | per-core ratio |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let prepare = r.prepare.map_or("-".into(), |(t, b)| {
            format!("{:.1} s ({})", t.as_secs_f64(), gib(Some(b)))
        });
        let (bp_t, bp_rate, bp_peak, ratio) = match (r.bellperson, r.bellperson_per_core()) {
            (Some((t, peak)), Some(rate)) => (
                format!("{:.2} s", t.as_secs_f64()),
                format!("{:.2} M", rate / 1e6),
                gib(peak),
                format!("{:.2}x", r.ours_per_core() / rate),
            ),
            _ => ("-".into(), "-".into(), "-".into(), "-".into()),
        };
        let path = match r.path {
            SynthPath::Daemon => "",
            SynthPath::CompiledNotTheDaemons => " (compiled: not the daemon's path)",
        };
        s.push_str(&format!(
            "| {} {}{} | {} | {} | {:.2} s | {:.2} s on {} | {:.2} M | {} | {} | {} | {} | {} |\n",
            r.kind,
            r.circuit_id,
            path,
            r.constraints,
            prepare,
            r.ours_first.as_secs_f64(),
            r.ours.as_secs_f64(),
            r.threads,
            r.ours_per_core() / 1e6,
            gib(r.ours_peak),
            bp_t,
            bp_rate,
            bp_peak,
            ratio,
        ));
    }
    s
}
