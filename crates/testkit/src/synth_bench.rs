//! Synthesis speed: our recorder against bellperson's own prover-side synthesis
//! (the crate's `reference` module), on the same real circuit, in one run. Both sides include building
//! the circuit from the vanilla proof and freeing what synthesis produced.
use std::time::{Duration, Instant};

use bellperson::SynthesisError;
use blstrs::Scalar;
use cuzk_groth16::RecorderMode;
use serde::Serialize;

use cuzk_filecoin::error::Result;
use cuzk_filecoin::plan::plan;
use cuzk_filecoin::request::ProofRequest;

/// One circuit's synthesis timings.
#[derive(Clone, Debug, Serialize)]
pub struct SynthBench {
    /// Circuit id.
    pub circuit_id: String,
    /// Constraints per synthesis (from our recorder).
    pub constraints: usize,
    /// Repetitions of each side.
    pub reps: usize,
    /// Best time of ours.
    pub ours_best: Duration,
    /// Best time of bellperson.
    pub bellperson_best: Duration,
    /// Median time of ours.
    pub ours_median: Duration,
    /// Median time of bellperson.
    pub bellperson_median: Duration,
    /// Median time of our recorder in witness-only mode (`enforce` does nothing): the
    /// circuit's own cost (witness computation, gadget code), which no constraint system
    /// can remove.
    pub witness_only_median: Duration,
    /// Median time of witness-only synthesis + [`cuzk_filecoin::compiled::CompiledCircuit::evaluate`].
    pub compiled_median: Duration,
    /// One-off time to compile the circuit shape (walk its blank circuit).
    pub compile_time: Duration,
}

impl SynthBench {
    /// Our constraints per second (median).
    pub fn ours_rate(&self) -> f64 {
        self.constraints as f64 / self.ours_median.as_secs_f64()
    }

    /// bellperson's constraints per second (median).
    pub fn bellperson_rate(&self) -> f64 {
        self.constraints as f64 / self.bellperson_median.as_secs_f64()
    }

    /// Speed-up of the compiled path over bellperson (medians).
    pub fn compiled_speedup(&self) -> f64 {
        self.bellperson_median.as_secs_f64() / self.compiled_median.as_secs_f64()
    }

    /// Speed-up of ours over bellperson (medians).
    pub fn speedup(&self) -> f64 {
        self.bellperson_median.as_secs_f64() / self.ours_median.as_secs_f64()
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn first<W>(
    plan: Result<cuzk_filecoin::partition::ProofPlan<W>>,
) -> Result<cuzk_filecoin::partition::PartitionJob<W>> {
    plan?.take_jobs().into_iter().next().ok_or_else(|| {
        cuzk_filecoin::error::FilecoinError::filecoin("benchmark", "plan has no partitions")
    })
}

fn first_job(req: &ProofRequest) -> Result<cuzk_filecoin::partition::PartitionJob> {
    first(plan(req))
}

/// Builds partition `index` of `req` and synthesizes it with bellperson's own prover-side
/// synthesis (its `ProvingAssignment`, freed inside), on the calling thread's rayon pool;
/// returns the time of both. Planning is not timed.
pub fn time_bellperson_partition(req: &ProofRequest, index: usize) -> Result<Duration> {
    let job = crate::reference::plan(req)?
        .take_jobs()
        .into_iter()
        .nth(index)
        .ok_or_else(|| {
            cuzk_filecoin::error::FilecoinError::filecoin("benchmark", "no such partition")
        })?;
    let t = Instant::now();
    (job.synthesize)()?;
    Ok(t.elapsed())
}

/// Times synthesis of the first partition of `req`, ours and bellperson's alternately,
/// `reps` times each (the request is re-planned every time; planning is not timed).
pub fn bench_request(req: &ProofRequest, reps: usize) -> Result<SynthBench> {
    let reps = reps.max(1);
    let mut ours = Vec::with_capacity(reps);
    let mut theirs = Vec::with_capacity(reps);
    let mut witness = Vec::with_capacity(reps);
    let mut compiled = Vec::with_capacity(reps);
    let t = Instant::now();
    let shape = cuzk_filecoin::compiled::compile(first_job(req)?.circuit_id)?;
    let compile_time = t.elapsed();
    let mut constraints = 0;
    let mut circuit_id = String::new();
    for _ in 0..reps {
        let job = first_job(req)?;
        circuit_id = job.circuit_id.to_string();
        let t = Instant::now();
        let s = job.run(RecorderMode::Full)?;
        constraints = s.num_constraints;
        drop(s);
        ours.push(t.elapsed());

        theirs.push(time_bellperson_partition(req, 0)?);

        let job = first_job(req)?;
        let t = Instant::now();
        drop(job.run(RecorderMode::WitnessOnly)?);
        witness.push(t.elapsed());

        let job = first_job(req)?;
        let t = Instant::now();
        drop(shape.evaluate(job.run(RecorderMode::WitnessOnly)?)?);
        compiled.push(t.elapsed());
    }
    Ok(SynthBench {
        circuit_id,
        constraints,
        reps,
        ours_best: *ours.iter().min().unwrap_or(&Duration::ZERO),
        bellperson_best: *theirs.iter().min().unwrap_or(&Duration::ZERO),
        ours_median: median(ours),
        bellperson_median: median(theirs),
        witness_only_median: median(witness),
        compiled_median: median(compiled),
        compile_time,
    })
}

/// A constraint system that builds every linear combination the circuit hands it and drops
/// it, records nothing, and ignores missing witness values: it measures what the circuit's
/// constraint *structure* costs (closures, `LinearCombination` allocation) under any
/// bellpepper constraint system, and it runs on blank circuits, so full-size (32 GiB)
/// partitions can be walked without their data.
#[derive(Default)]
struct StructureOnly {
    constraints: usize,
    terms: usize,
    vars: usize,
}

impl bellpepper_core::ConstraintSystem<Scalar> for StructureOnly {
    type Root = Self;

    cuzk_groth16::count_variables!(vars, vars, evaluated);

    cuzk_groth16::enforce!(|self, _, a, b, c| {
        self.constraints += 1;
        self.terms += a(bellpepper_core::LinearCombination::zero()).len();
        self.terms += b(bellpepper_core::LinearCombination::zero()).len();
        self.terms += c(bellpepper_core::LinearCombination::zero()).len();
    });

    cuzk_groth16::flat_namespaces!();
}

/// What walking a blank circuit's structure found.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct StructureWalk {
    /// Constraints.
    pub constraints: usize,
    /// Non-zero terms over A, B and C.
    pub terms: usize,
    /// Variables (inputs and aux, without ONE).
    pub variables: usize,
    /// Time of the walk.
    pub elapsed: Duration,
}

struct Walk;

impl cuzk_filecoin::params::CircuitVisitor for Walk {
    type Output = std::result::Result<StructureWalk, SynthesisError>;
    fn visit<C: bellpepper_core::Circuit<Scalar> + Send>(self, circuit: C) -> Self::Output {
        let mut cs = StructureOnly::default();
        let t = Instant::now();
        circuit.synthesize(&mut cs)?;
        Ok(StructureWalk {
            constraints: cs.constraints,
            terms: cs.terms,
            variables: cs.vars,
            elapsed: t.elapsed(),
        })
    }
}

/// Walks the blank circuit of `id` with a structure-only constraint system (no witness, no
/// recording): the constraint-building cost every constraint system pays for this circuit.
pub fn walk_blank_structure(id: cuzk_filecoin::registry::CircuitId) -> Result<StructureWalk> {
    cuzk_filecoin::params::with_blank_circuit(id, Walk)?.map_err(|e| {
        cuzk_filecoin::error::FilecoinError::Synthesis {
            partition: 0,
            message: e.to_string(),
        }
    })
}
