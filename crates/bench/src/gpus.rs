//! `cuzk bench gpus`: multi-GPU scaling of the engine. A PoRep-shaped partition (aux ≈
//! constraints, A density 100 %, B density 25 %, 92 % of aux values in {0, 1}) is synthesized
//! once per size, and the engine is fed pre-synthesized partitions of it, so the run measures
//! the engine and the provers, not circuit code. A partition is materialized either as a copy
//! of the template (`--feed copy`; written into a finished partition's buffers when the engine
//! hands some back), or (`--feed handback`, the default) by handing a finished partition's
//! buffers back unchanged when the prover returned them intact — checked against the template
//! at 256 evenly spaced positions of every vector — and copying otherwise. The same
//! partitions go through engines over the first 1, 2, … visible GPUs in one process; the
//! table gives steady-state throughput per GPU count, the ratio to one GPU, and each GPU's
//! busy fraction.
//!
//! TIMING-ONLY parameters (successive multiples of the generators): the proofs DO NOT VERIFY,
//! so the engine's self-check is off in this command.
use crate::error::{invalid, Result, Step};
use crate::pipeline::DeviceBusy;
use cuzk_core::{
    Config, Engine, EngineError, JobPlan, JobState, PartitionPlan, Planner, ProofRequest,
    SynthesisContext, Work,
};
use cuzk_cuda::CudaProver;
use cuzk_groth16::{ProverBackend, Scalar, Srs, Synthesized};
use cuzk_testkit::timing::{self, PartitionShape, NOT_VERIFYING};
use rayon::prelude::*;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What `cuzk bench gpus` runs (see the CLI's arguments for the defaults).
#[derive(Clone, Debug)]
pub struct GpusOptions {
    /// Partition sizes as powers of two (constraints + inputs = 2^k).
    pub log_n: Vec<u32>,
    /// GPU counts to compare (the first k visible devices), one engine each.
    pub gpus: Vec<usize>,
    /// Measured partitions per GPU (after the warm-up).
    pub partitions_per_gpu: usize,
    /// Warm-up partitions per GPU (SRS upload, first allocations), not measured.
    pub warmup_per_gpu: usize,
    /// Prover workers per GPU.
    pub workers: usize,
    /// Finished partitions' buffer sets the engine keeps for reuse (0: free them).
    pub reuse_buffers: usize,
    /// Partitions per submitted job.
    pub job_partitions: usize,
    /// Partitions synthesized (copied) at once per GPU; with the channel and the workers this
    /// bounds the partitions in flight.
    pub synthesis_per_gpu: usize,
    /// Measured proofs per GPU left out of the steady-state rate (the pipeline's ramp-up).
    pub skip_per_gpu: usize,
    /// How a partition is materialized.
    pub feed: Feed,
}

/// How the bench materializes a pre-synthesized partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feed {
    /// Hand an intact finished partition back; copy the template otherwise.
    Handback,
    /// Always copy the template.
    Copy,
}

/// Plans jobs of copies of one pre-synthesized partition; the SRS is timing-only.
struct TimingPlanner {
    shape: PartitionShape,
    template: Arc<Synthesized>,
    feed: Feed,
    /// Syntheses that got a finished partition's buffers (copied into or handed back).
    reused: Arc<AtomicUsize>,
    /// Syntheses that handed intact buffers back without copying.
    intact: Arc<AtomicUsize>,
}

impl TimingPlanner {
    fn circuit_id(&self) -> String {
        format!("timing-only-porep-like-2^{}", self.shape.log_n)
    }
}

/// `src` copied into `dst`'s allocation (or a fresh one), in parallel.
fn copy_into(dst: Option<Vec<Scalar>>, src: &[Scalar]) -> Vec<Scalar> {
    match dst {
        Some(mut v) => {
            v.clear();
            v.par_extend(src.par_iter().copied());
            v
        }
        None => src.par_iter().copied().collect(),
    }
}

/// Whether `s` holds the template's values (same lengths; 256 evenly spaced positions of every
/// vector compared).
fn looks_intact(s: &Synthesized, t: &Synthesized) -> bool {
    fn same(x: &[Scalar], y: &[Scalar]) -> bool {
        x.len() == y.len()
            && (0..256usize).all(|k| {
                let i = k * x.len() / 256;
                x.get(i) == y.get(i)
            })
    }
    s.num_constraints == t.num_constraints
        && same(&s.inputs, &t.inputs)
        && same(&s.aux, &t.aux)
        && s.compact == t.compact
        && same(&s.a, &t.a)
        && same(&s.b, &t.b)
        && same(&s.c, &t.c)
        && s.a_aux_density == t.a_aux_density
        && s.b_aux_density == t.b_aux_density
        && s.b_input_density == t.b_input_density
}

fn copy_of(t: &Synthesized, reuse: Option<Synthesized>) -> Synthesized {
    let mut bufs: [Option<Vec<Scalar>>; 5] = match reuse {
        Some(s) => [Some(s.inputs), Some(s.aux), Some(s.a), Some(s.b), Some(s.c)],
        None => Default::default(),
    };
    Synthesized {
        inputs: copy_into(bufs[0].take(), &t.inputs),
        aux: copy_into(bufs[1].take(), &t.aux),
        a: copy_into(bufs[2].take(), &t.a),
        b: copy_into(bufs[3].take(), &t.b),
        c: copy_into(bufs[4].take(), &t.c),
        a_aux_density: t.a_aux_density.clone(),
        b_input_density: t.b_input_density.clone(),
        b_aux_density: t.b_aux_density.clone(),
        num_constraints: t.num_constraints,
        compact: t.compact.clone(),
        compiled: t.compiled.clone(),
    }
}

impl Planner for TimingPlanner {
    fn plan(&self, req: ProofRequest) -> Result<JobPlan, EngineError> {
        let spec = match &req.work {
            Work::Synthetic(spec) => Some(spec.as_str()),
            Work::Filecoin(_) => None,
        };
        let n = spec
            .and_then(|s| s.strip_prefix("partitions="))
            .and_then(|s| s.parse::<usize>().ok())
            .filter(|n| *n > 0)
            .ok_or_else(|| EngineError::InvalidRequest("expected `partitions=N`".into()))?;
        let t = &self.template;
        let shape = (t.num_constraints, t.inputs.len(), t.num_aux());
        let partitions = (0..n)
            .map(|index| {
                let (t, reused, intact) = (
                    self.template.clone(),
                    self.reused.clone(),
                    self.intact.clone(),
                );
                let feed = self.feed;
                PartitionPlan {
                    circuit_id: self.circuit_id(),
                    index,
                    public_inputs: t.inputs[1..].to_vec(),
                    shape_hint: Some(shape),
                    shape_counted: false,
                    synthesize: std::sync::Arc::new(move |ctx: SynthesisContext| {
                        let Some(spent) = ctx.reuse else {
                            return Ok(copy_of(&t, None));
                        };
                        reused.fetch_add(1, Ordering::Relaxed);
                        if feed == Feed::Handback && looks_intact(&spent, &t) {
                            intact.fetch_add(1, Ordering::Relaxed);
                            return Ok(spent);
                        }
                        Ok(copy_of(&t, Some(spent)))
                    }),
                }
            })
            .collect();
        Ok(JobPlan {
            partitions,
            verify: None,
            finish: None,
        })
    }

    fn params_path(&self, _circuit_id: &str) -> Result<PathBuf, EngineError> {
        Ok(PathBuf::from(timing::timing_only_file_name(
            self.shape.log_n,
        )))
    }

    /// An upper bound: H, L, A and B_G1 as long as the domain, B_G2 too.
    fn srs_size_hint(&self, _circuit_id: &str) -> Result<u64, EngineError> {
        let n = 1u64 << self.shape.log_n;
        Ok(4 * 96 * n + 192 * n)
    }

    fn load_srs(&self, _circuit_id: &str) -> Result<Srs, EngineError> {
        Ok(timing::timing_only_srs(&self.shape))
    }
}

/// One engine run's figures.
struct RunFigures {
    gpus: usize,
    partitions: usize,
    wall: f64,
    steady: f64,
    busy: Vec<DeviceBusy>,
    reused: usize,
    intact: usize,
}

fn engine_config(args: &GpusOptions, gpus: usize, template_bytes: u64) -> Config {
    let mut c = Config::default_for_machine();
    // The template lives outside the engine: take it off the budget.
    c.set_budget(c.budget_bytes.saturating_sub(template_bytes));
    c.self_verify = false;
    // TIMING-ONLY parameters by construction (this bench's whole point; said in its output).
    c.allow_timing_only = true;
    c.prover_interlock = false;
    c.prover_workers_per_device = args.workers;
    c.channel_capacity = args.workers * gpus;
    c.reuse_buffers = args.reuse_buffers;
    c.synthesis_concurrency = (args.synthesis_per_gpu * gpus).max(1);
    c
}

async fn run_jobs(engine: &Engine, partitions: usize, per_job: usize) -> Result<Vec<String>> {
    let mut ids = Vec::new();
    let mut left = partitions;
    while left > 0 {
        let n = left.min(per_job.max(1));
        left -= n;
        let req = ProofRequest::synthetic(format!("partitions={n}"));
        ids.push(engine.submit(req)?.job_id);
    }
    for id in &ids {
        let o = engine.wait(id, None).await?;
        if !matches!(o.state, JobState::Completed { .. }) {
            return Err(invalid!("job {id}: {:?}", o.state));
        }
    }
    Ok(ids)
}

fn run_one(
    args: &GpusOptions,
    planner: &Arc<TimingPlanner>,
    provers: &[CudaProver],
) -> Result<RunFigures> {
    let gpus = provers.len();
    let template_bytes = planner.template.heap_bytes() as u64;
    let config = engine_config(args, gpus, template_bytes);
    // Another handle on each device (it shares the device's state: SRS copy, contexts).
    let backends = provers
        .iter()
        .map(|p| CudaProver::new(p.ordinal()).map(|p| Arc::new(p) as Arc<dyn ProverBackend>))
        .collect::<std::result::Result<Vec<_>, _>>()
        .step("opening the GPUs")?;
    let rt = tokio::runtime::Runtime::new().step("starting tokio")?;
    rt.block_on(async {
        let engine = Engine::new(config, backends, planner.clone())?;
        run_jobs(&engine, args.warmup_per_gpu * gpus, args.job_partitions).await?;
        let reused0 = planner.reused.load(Ordering::Relaxed);
        let intact0 = planner.intact.load(Ordering::Relaxed);
        // Each device's busy time as the engine reports it (the CUDA prover's own timing of
        // its exclusive phase), before and after.
        let status0 = engine.status();
        let n = args.partitions_per_gpu * gpus;
        let t0 = Instant::now();
        let ids = run_jobs(&engine, n, args.job_partitions).await?;
        let elapsed = t0.elapsed();
        let status1 = engine.status();
        let wall = elapsed.as_secs_f64();
        let timeline = engine.timeline();
        let mine: Vec<_> = timeline
            .into_iter()
            .filter(|r| ids.contains(&r.job_id))
            .collect();
        let busy = DeviceBusy::between(&status0.devices, &status1.devices, elapsed, &mine);
        // Steady state: the rate at which measured proofs leave the GPUs, after the first
        // `skip_per_gpu` per GPU (the ramp-up).
        let mut ends: Vec<Duration> = mine.iter().filter_map(|r| r.prove_end).collect();
        ends.sort();
        let skip = (args.skip_per_gpu * gpus).min(ends.len().saturating_sub(2));
        let steady = match (ends.get(skip), ends.last()) {
            (Some(a), Some(b)) if ends.len() > skip + 1 => {
                (*b - *a).as_secs_f64() / (ends.len() - 1 - skip) as f64
            }
            _ => wall / n as f64,
        };
        let reused = planner.reused.load(Ordering::Relaxed) - reused0;
        let intact = planner.intact.load(Ordering::Relaxed) - intact0;
        engine.shutdown(Duration::from_secs(60)).await;
        Ok(RunFigures {
            gpus,
            partitions: n,
            wall,
            steady,
            busy,
            reused,
            intact,
        })
    })
}

/// Runs `cuzk bench gpus` and prints its table.
pub fn run(args: &GpusOptions) -> Result<()> {
    let devices = cuzk_cuda::devices();
    if devices.is_empty() {
        return Err(invalid!(
            "no CUDA device visible (this command needs a build with `--features cuda` and a GPU)"
        ));
    }
    let most = args.gpus.iter().copied().max().unwrap_or(1);
    if most > devices.len() || args.gpus.contains(&0) {
        return Err(invalid!(
            "--gpus {:?}: {} device(s) visible",
            args.gpus,
            devices.len()
        ));
    }
    eprintln!("WARNING: {NOT_VERIFYING}");
    let provers = devices
        .iter()
        .take(most)
        .map(|d| CudaProver::new(d.ordinal))
        .collect::<std::result::Result<Vec<_>, _>>()
        .step("opening the GPUs")?;
    for d in devices.iter().take(most) {
        println!("device {}: {}", d.ordinal, d.name);
    }
    println!(
        "feed: {:?}; reused = syntheses given a finished partition's buffers (intact = handed back without a copy)",
        args.feed
    );
    println!(
        "{:>5} {:>4} {:>6} {:>8} {:>10} {:>12} {:>7} {:>14}  busy per GPU",
        "size", "gpus", "parts", "wall_s", "wall_s/p", "steady_s/p", "ratio", "reused/intact"
    );
    for &log_n in &args.log_n {
        if !(10..=27).contains(&log_n) {
            return Err(invalid!("--log-n {log_n}: 10..=27"));
        }
        let shape = PartitionShape::porep_like(log_n);
        let t = Instant::now();
        let planner = Arc::new(TimingPlanner {
            shape,
            template: Arc::new(timing::porep_like_partition(&shape, u64::from(log_n))),
            feed: args.feed,
            reused: Arc::default(),
            intact: Arc::default(),
        });
        eprintln!(
            "2^{log_n}: template partition ({:.1} GiB) in {:.1} s",
            planner.template.heap_bytes() as f64 / (1u64 << 30) as f64,
            t.elapsed().as_secs_f64()
        );
        let mut base = None;
        for &g in &args.gpus {
            let f = run_one(args, &planner, &provers[..g])?;
            let first = *base.get_or_insert(f.steady);
            let busy: Vec<String> = f
                .busy
                .iter()
                .map(|b| match b.fraction {
                    Some(x) => format!("{}={:.0}%[{}]", b.name, x * 100.0, b.source),
                    None => format!("{}=not measured", b.name),
                })
                .collect();
            println!(
                "{:>5} {:>4} {:>6} {:>8.2} {:>10.3} {:>12.3} {:>7.2} {:>14} {}",
                format!("2^{log_n}"),
                f.gpus,
                f.partitions,
                f.wall,
                f.wall / f.partitions as f64,
                f.steady,
                first / f.steady,
                format!("{}/{}/{}", f.reused, f.intact, f.partitions),
                busy.join(" ")
            );
        }
    }
    println!("ratio = steady throughput / steady throughput of the first GPU count listed");
    println!(
        "busy per GPU = the device's busy time over the measured wall; [backend] = {}",
        cuzk_core::BusySource::Backend.describe()
    );
    Ok(())
}
