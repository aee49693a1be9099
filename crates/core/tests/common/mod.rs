//! Test support: a fake prover backend that sleeps controlled durations and really allocates
//! the declared sizes, and a fake planner with controlled partition sizes and counts.
#![allow(dead_code)]

pub mod own_copy;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use cuzk_core::{
    Config, EngineError, JobPlan, PartitionPlan, Planner, ProofRequest, Work, WorkingSetEstimate,
};
use cuzk_groth16::prover::PendingG2;
use cuzk_groth16::{Pending, Proof, ProveError, ProverBackend, Srs, Synthesized, VerifyingKey};
use group::prime::PrimeCurveAffine;
use parking_lot::Mutex;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Synthesized partitions alive (from synthesis until the backend frees a/b/c), and the most
/// seen at once: shared by a planner and a backend.
#[derive(Debug, Default)]
pub struct Live {
    pub now: AtomicI64,
    pub max: AtomicI64,
    /// Syntheses that recorded into a finished partition's buffers.
    pub reused: AtomicI64,
}

impl Live {
    fn inc(&self) {
        let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.max.fetch_max(n, Ordering::SeqCst);
    }

    fn dec(&self) {
        self.now.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A backend whose `start` pads a/b/c to the domain (like the CPU prover does in place),
/// sleeps `start`, and whose `finish` sleeps `finish`. Records each `start` interval.
pub struct FakeBackend {
    pub start: Duration,
    pub finish: Duration,
    pub intervals: Mutex<Vec<(Instant, Instant)>>,
    pub concurrent: Mutex<(u32, u32)>,
    pub live: Arc<Live>,
    /// Hand a/b/c back from `start_reusing` (like the CUDA prover) instead of freeing them.
    pub reuse: bool,
    /// Like the CUDA prover: `start` spends its first half outside and its second half under
    /// a device lock of its own, times the lock's hold in `device_busy_ns`, reports it as
    /// `device_busy`, and says it locks the device itself.
    pub own_lock: bool,
    pub device_lock: Mutex<()>,
    pub device_busy_ns: AtomicU64,
    /// What it says its `start` holds beyond a circuit (`start_host_bytes`); `None`: the CPU
    /// prover's layout.
    pub start_host: Option<u64>,
}

impl FakeBackend {
    pub fn new(start_ms: u64, finish_ms: u64) -> FakeBackend {
        FakeBackend {
            start: Duration::from_millis(start_ms),
            finish: Duration::from_millis(finish_ms),
            intervals: Mutex::new(Vec::new()),
            concurrent: Mutex::new((0, 0)),
            live: Arc::default(),
            reuse: false,
            own_lock: false,
            device_lock: Mutex::new(()),
            device_busy_ns: AtomicU64::new(0),
            start_host: None,
        }
    }

    /// Says its `start` holds `bytes` beyond each circuit (as the CUDA prover's plans).
    pub fn with_start_host(mut self, bytes: u64) -> FakeBackend {
        self.start_host = Some(bytes);
        self
    }

    /// Serializes the second half of `start` under a timed lock of its own (see `own_lock`).
    pub fn own_lock(mut self) -> FakeBackend {
        self.own_lock = true;
        self
    }

    /// Sum of the `start` intervals (what the engine used to report as busy time).
    pub fn summed_start(&self) -> Duration {
        self.intervals.lock().iter().map(|(a, b)| *b - *a).sum()
    }

    /// Hands buffers back from `start_reusing`.
    pub fn reusing(mut self) -> FakeBackend {
        self.reuse = true;
        self
    }

    /// Counts freed partitions in `live`.
    pub fn with_live(mut self, live: Arc<Live>) -> FakeBackend {
        self.live = live;
        self
    }

    /// Fraction of [first start, last end] covered by some `start` call.
    pub fn busy_fraction(&self) -> f64 {
        let mut v = self.intervals.lock().clone();
        v.sort();
        let (Some(first), Some(last)) = (v.first().map(|x| x.0), v.iter().map(|x| x.1).max())
        else {
            return 0.0;
        };
        let mut covered = Duration::ZERO;
        let mut cur: Option<(Instant, Instant)> = None;
        for (a, b) in v {
            match cur {
                Some((ca, cb)) if a <= cb => cur = Some((ca, cb.max(b))),
                Some((ca, cb)) => {
                    covered += cb - ca;
                    cur = Some((a, b));
                }
                None => cur = Some((a, b)),
            }
        }
        if let Some((ca, cb)) = cur {
            covered += cb - ca;
        }
        covered.as_secs_f64() / (last - first).as_secs_f64().max(1e-9)
    }

    /// Most `start` calls seen running at once.
    pub fn max_concurrent(&self) -> u32 {
        self.concurrent.lock().1
    }
}

impl ProverBackend for FakeBackend {
    fn name(&self) -> String {
        "fake".into()
    }

    fn start_host_bytes(&self, _circuit: &Synthesized) -> Option<u64> {
        self.start_host
    }

    fn start(
        &self,
        srs: &Srs,
        circuit: Synthesized,
        r: Scalar,
        s: Scalar,
    ) -> Result<Pending, ProveError> {
        self.start_inner(srs, circuit, r, s).map(|(p, _)| p)
    }

    fn start_reusing(
        &self,
        srs: &Srs,
        circuit: Synthesized,
        r: Scalar,
        s: Scalar,
    ) -> Result<(Pending, Option<Synthesized>), ProveError> {
        self.start_inner(srs, circuit, r, s)
    }

    fn device_memory(&self) -> Option<(u64, u64)> {
        Some((80 << 30, 79 << 30))
    }

    fn locks_device_itself(&self) -> bool {
        self.own_lock
    }

    fn device_busy(&self) -> Option<Duration> {
        self.own_lock
            .then(|| Duration::from_nanos(self.device_busy_ns.load(Ordering::SeqCst)))
    }

    fn finish(&self, _srs: &Srs, _pending: Pending) -> Result<Proof, ProveError> {
        std::thread::sleep(self.finish);
        Ok(Proof {
            a: G1Affine::generator(),
            b: G2Affine::generator(),
            c: G1Affine::generator(),
        })
    }
}

impl FakeBackend {
    fn start_inner(
        &self,
        _srs: &Srs,
        mut circuit: Synthesized,
        r: Scalar,
        s: Scalar,
    ) -> Result<(Pending, Option<Synthesized>), ProveError> {
        {
            let mut c = self.concurrent.lock();
            c.0 += 1;
            c.1 = c.1.max(c.0);
        }
        let t0 = Instant::now();
        let domain = circuit.a.len().next_power_of_two();
        let x = Scalar::from(3u64);
        circuit.a.resize(domain, x);
        circuit.b.resize(domain, x);
        circuit.c.resize(domain, x);
        if self.own_lock {
            std::thread::sleep(self.start / 2);
            let guard = self.device_lock.lock();
            let held = Instant::now();
            std::thread::sleep(self.start - self.start / 2);
            self.device_busy_ns
                .fetch_add(held.elapsed().as_nanos() as u64, Ordering::SeqCst);
            drop(guard);
        } else {
            std::thread::sleep(self.start);
        }
        let spent = if self.reuse {
            Some(circuit)
        } else {
            drop(circuit);
            None
        };
        self.live.dec();
        self.intervals.lock().push((t0, Instant::now()));
        self.concurrent.lock().0 -= 1;
        let pending = Pending {
            r,
            s,
            a_g1: G1Projective::from(G1Affine::generator()),
            b_g1: G1Projective::from(G1Affine::generator()),
            h_l: G1Projective::from(G1Affine::generator()),
            b_g2: PendingG2::Done(G2Projective::from(G2Affine::generator())),
        };
        Ok((pending, spent))
    }
}

/// Plans `partitions` partitions of a fixed shape; synthesis sleeps `synth` and allocates
/// real vectors of the shape's size. Payload `huge` asks for a shape far over any budget;
/// payload `bigsrs` names a circuit whose SRS exceeds any budget; payload `other` names a
/// second circuit of the same shape (another SRS).
pub struct FakePlanner {
    pub partitions: usize,
    pub constraints: usize,
    pub synth: Duration,
    pub srs_points: usize,
    pub live: Arc<Live>,
}

impl FakePlanner {
    pub const INPUTS: usize = 3;

    pub fn shape(&self) -> (usize, usize, usize) {
        (self.constraints, Self::INPUTS, self.constraints / 2)
    }

    /// A synthesized partition of the planner's shape (what `synthesize` returns).
    /// [`FakePlanner::synthesized`] written into a finished partition's allocations.
    pub fn synthesized_into(shape: (usize, usize, usize), spent: Synthesized) -> Synthesized {
        let (c, i, a) = shape;
        let x = Scalar::from(0x1234_5678u64);
        let fill = |mut v: Vec<Scalar>, n: usize| {
            v.clear();
            v.resize(n, x);
            v
        };
        Synthesized {
            inputs: fill(spent.inputs, i),
            aux: fill(spent.aux, a),
            a: fill(spent.a, c + i),
            b: fill(spent.b, c + i),
            c: fill(spent.c, c + i),
            num_constraints: c,
            ..Default::default()
        }
    }

    pub fn synthesized(shape: (usize, usize, usize)) -> Synthesized {
        let (c, i, a) = shape;
        let x = Scalar::from(0x1234_5678u64);
        let len = c + i;
        Synthesized {
            inputs: vec![x; i],
            aux: vec![x; a],
            a: vec![x; len],
            b: vec![x; len],
            c: vec![x; len],
            num_constraints: c,
            ..Default::default()
        }
    }
}

impl Planner for FakePlanner {
    fn plan(&self, req: ProofRequest) -> Result<JobPlan, EngineError> {
        if spec(&req) == "bad" {
            return Err(EngineError::InvalidRequest("bad payload".into()));
        }
        let (circuit_id, shape) = match spec(&req) {
            "huge" => ("huge", (1usize << 34, Self::INPUTS, 1usize << 33)),
            "bigsrs" => ("bigsrs", self.shape()),
            "other" => ("other", self.shape()),
            _ => ("fake", self.shape()),
        };
        let synth = self.synth;
        let live = self.live.clone();
        let partitions = (0..self.partitions)
            .map(|index| {
                let live = live.clone();
                PartitionPlan {
                    circuit_id: circuit_id.to_string(),
                    index,
                    public_inputs: vec![Scalar::from(index as u64 + 1)],
                    shape_hint: Some(shape),
                    shape_counted: false,
                    synthesize: std::sync::Arc::new(move |ctx| {
                        live.inc();
                        let s = match ctx.reuse {
                            Some(spent) => {
                                live.reused.fetch_add(1, Ordering::SeqCst);
                                FakePlanner::synthesized_into(shape, spent)
                            }
                            None => FakePlanner::synthesized(shape),
                        };
                        std::thread::sleep(synth);
                        Ok(s)
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

    fn params_path(&self, circuit_id: &str) -> Result<PathBuf, EngineError> {
        match circuit_id {
            "fake" | "huge" | "bigsrs" | "other" => {
                Ok(PathBuf::from(format!("/nonexistent/{circuit_id}")))
            }
            _ => Err(EngineError::UnknownCircuit(circuit_id.into())),
        }
    }

    fn srs_size_hint(&self, circuit_id: &str) -> Result<u64, EngineError> {
        match circuit_id {
            "bigsrs" => Ok(1 << 50),
            _ => Ok(fake_srs(self.srs_points).size_bytes()),
        }
    }

    fn load_srs(&self, _circuit_id: &str) -> Result<Srs, EngineError> {
        Ok(fake_srs(self.srs_points))
    }
}

/// An SRS of generator points: `points` real G1 points in `h`. γ = δ = the G2 generator, so
/// the engine sees TIMING-ONLY parameters (which they are: fake proofs).
/// A synthetic request's spec string (the fake planners' payload); "" for any other work.
pub fn spec(req: &ProofRequest) -> &str {
    match &req.work {
        Work::Synthetic(s) => s,
        Work::Filecoin(_) => "",
    }
}

pub fn fake_srs(points: usize) -> Srs {
    let g1 = G1Affine::generator();
    let g2 = G2Affine::generator();
    let vk = VerifyingKey {
        alpha_g1: g1,
        beta_g1: g1,
        beta_g2: g2,
        gamma_g2: g2,
        delta_g1: g1,
        delta_g2: g2,
        ic: vec![g1; FakePlanner::INPUTS],
    };
    Srs::new(vk, vec![g1; points], vec![], vec![], vec![], vec![])
}

/// A simulation config: `budget` bytes plus the request buffer, no self-check (fake proofs
/// from [`fake_srs`]'s TIMING-ONLY parameters, which it allows).
pub fn sim_config(budget: u64) -> Config {
    let mut c = Config::default_for_machine();
    c.allow_timing_only = true;
    c.request_buffer_bytes = 1 << 20;
    c.budget_bytes = budget + c.request_buffer_bytes;
    // Budgets here are counted in partitions: no urgent reserve unless a test asks for one.
    c.urgent_reserve_bytes = Some(0);
    c.self_verify = false;
    c.synthesis_concurrency = 4;
    c.prover_workers_per_device = 2;
    c.channel_capacity = 2;
    c.sample_interval = Duration::from_millis(1);
    c
}

/// The most one partition of `planner`'s shape reserves at once (before and after calibration).
pub fn partition_worth(planner: &FakePlanner) -> u64 {
    let (c, i, a) = planner.shape();
    let hinted = WorkingSetEstimate::from_shape(c, i, a).admission_bytes();
    let measured = WorkingSetEstimate::from_synthesized(&FakePlanner::synthesized(planner.shape()))
        .admission_bytes();
    hinted.max(measured)
}
