//! The partition vocabulary every kind's planner speaks: [`PartitionJob`] (one Groth16
//! circuit of a request), [`ProofPlan`] (a request's jobs plus its verifier), their
//! [`MemoryEstimate`], the `Synthesis` a planner wraps each circuit builder in, and the
//! helpers the planners share (guarded synthesis, proof-length and verdict checks).
use std::panic::{catch_unwind, AssertUnwindSafe};

use blstrs::Scalar;
use cuzk_groth16::{Recorder, RecorderMode, Synthesized};

use crate::error::{FilecoinError, Result};
use crate::registry::{CircuitId, CircuitKind, ProofKind, RegisteredProof, SectorSize};

/// Bytes of one encoded partition proof.
pub const PARTITION_PROOF_BYTES: usize = cuzk_groth16::proof::PROOF_BYTES;

/// Synthesizes one partition's circuit into our recorder, recording into a finished
/// partition's buffers when given some (see [`Recorder::reusing`]). Building the circuit
/// (which copies that partition's share of the vanilla proof) happens inside, so a plan holds
/// no witness until a job runs.
pub type SynthFn =
    Box<dyn Fn(RecorderMode, Option<Synthesized>) -> Result<Synthesized> + Send + Sync>;

/// Checks a whole job's proof bytes with the Filecoin verifier.
pub type VerifyFn = Box<dyn Fn(&[u8]) -> Result<()> + Send + Sync>;

/// Turns the concatenated partition proofs into the bytes filecoin-proofs returns when that
/// is more than the concatenation (NI-PoRep: the SnarkPack aggregate of the partition proofs).
pub type FinishFn = Box<dyn Fn(Vec<u8>) -> Result<Vec<u8>> + Send + Sync>;

/// What a planner makes of one partition's circuit builder: the job's work. Production
/// plans use `Recorded` (synthesis into our recorder, a [`SynthFn`]); the synthesis
/// benchmark plans with bellperson's synthesis instead (`cuzk-testkit`'s `reference`,
/// through [`crate::plan::plan_with`]).
pub trait Synthesis {
    /// The work a job carries.
    type Work: Send;

    /// Wraps `build`, which builds partition `partition`'s circuit, into the job's work.
    /// `build` may run more than once: the engine synthesizes a partition again to retry it
    /// after a device error.
    fn work<C, F>(partition: usize, estimate: MemoryEstimate, build: F) -> Self::Work
    where
        C: bellpepper_core::Circuit<Scalar> + Send,
        F: Fn() -> Result<C> + Send + Sync + 'static;

    /// [`Synthesis::work`] for a circuit whose witness alone can also be recorded faster than
    /// its own synthesis does (in parallel): `witness` records a witness-only synthesis into
    /// the recorder it is given, and must give exactly the values `build`'s circuit does. The
    /// default ignores it.
    fn work_with_witness<C, F, W>(
        partition: usize,
        estimate: MemoryEstimate,
        build: F,
        witness: W,
    ) -> Self::Work
    where
        C: bellpepper_core::Circuit<Scalar> + Send,
        F: Fn() -> Result<C> + Send + Sync + 'static,
        W: Fn(Recorder) -> Result<Synthesized> + Send + Sync + 'static,
    {
        drop(witness);
        Self::work(partition, estimate, build)
    }
}

/// Synthesis into our recorder (what the engine proves with).
pub(crate) struct Recorded;

static WITNESS_FALLBACKS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Partitions whose fast (parallel) witness failed or had the wrong shape, so that the
/// circuit's own synthesis ran instead, since the process started (each is also logged as an
/// error).
pub fn witness_fallbacks() -> u64 {
    WITNESS_FALLBACKS.load(std::sync::atomic::Ordering::Relaxed)
}

static NATIVE_MISMATCHES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Circuit shapes whose native witness (`native`) differed from the circuit's gadgets when
/// compared at run time, since the process started: each turned the native path off for
/// that shape and is logged as an error.
pub fn native_witness_mismatches() -> u64 {
    NATIVE_MISMATCHES.load(std::sync::atomic::Ordering::Relaxed)
}

static NATIVE_PARTITIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Partitions whose witness was computed natively (`native`) since the process started.
pub fn native_witness_partitions() -> u64 {
    NATIVE_PARTITIONS.load(std::sync::atomic::Ordering::Relaxed)
}

pub(crate) fn count_native_partition() {
    NATIVE_PARTITIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

pub(crate) fn count_native_mismatch() {
    NATIVE_MISMATCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

impl Synthesis for Recorded {
    type Work = SynthFn;

    fn work<C, F>(partition: usize, estimate: MemoryEstimate, build: F) -> SynthFn
    where
        C: bellpepper_core::Circuit<Scalar> + Send,
        F: Fn() -> Result<C> + Send + Sync + 'static,
    {
        Box::new(move |mode, reuse| synthesize_guarded(partition, estimate, mode, reuse, &build))
    }

    /// Witness-only recordings go through `witness`; if it fails or its result does not have
    /// the circuit's counted shape, that is logged as an error and the circuit's own
    /// synthesis runs instead (never a silent switch).
    fn work_with_witness<C, F, W>(
        partition: usize,
        estimate: MemoryEstimate,
        build: F,
        witness: W,
    ) -> SynthFn
    where
        C: bellpepper_core::Circuit<Scalar> + Send,
        F: Fn() -> Result<C> + Send + Sync + 'static,
        W: Fn(Recorder) -> Result<Synthesized> + Send + Sync + 'static,
    {
        Box::new(move |mode, reuse| {
            if mode != RecorderMode::WitnessOnly {
                return synthesize_guarded(partition, estimate, mode, reuse, &build);
            }
            let fast = guarded(partition, || witness(estimate.recorder(mode, reuse)))
                .and_then(|w| estimate.check_witness(partition, w));
            match fast {
                Ok(w) => Ok(w),
                Err(e) => {
                    WITNESS_FALLBACKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    tracing::error!(
                        partition,
                        cause = %e,
                        "the parallel witness failed or does not have the circuit's shape; \
                         synthesizing the partition with the circuit's own code instead"
                    );
                    synthesize_guarded(partition, estimate, mode, None, &build)
                }
            }
        })
    }
}

/// The shape of one partition circuit and what synthesizing it costs in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// Constraints enforced by the circuit.
    pub constraints: usize,
    /// Public inputs, counting ONE.
    pub inputs: usize,
    /// Auxiliary variables.
    pub aux: usize,
    /// Whether the figures were counted on this circuit (true) or extrapolated (false).
    pub exact: bool,
}

const SCALAR: u64 = 32;

impl MemoryEstimate {
    /// Bytes of a, b and c (one scalar per constraint and per input, each).
    pub fn abc_bytes(&self) -> u64 {
        3 * SCALAR * (self.constraints + self.inputs) as u64
    }

    /// Bytes of the input and aux assignments.
    pub fn assignment_bytes(&self) -> u64 {
        SCALAR * (self.inputs + self.aux) as u64
    }

    /// Bytes of the density bitmaps.
    pub fn density_bytes(&self) -> u64 {
        (2 * self.aux + self.inputs).div_ceil(8) as u64
    }

    /// What a synthesized partition holds: a/b/c, assignments and densities, plus 5% for
    /// the circuit's own copy of the vanilla proof and allocator slack (more when the shape
    /// is extrapolated).
    pub fn working_set_bytes(&self) -> u64 {
        let base = self.abc_bytes() + self.assignment_bytes() + self.density_bytes();
        let margin = if self.exact { base / 20 } else { base / 5 };
        base + margin
    }

    /// The shape of the circuit `id` (counted figures where we have them, else extrapolated).
    pub fn for_circuit(id: CircuitId) -> MemoryEstimate {
        use CircuitKind::*;
        use SectorSize::*;
        let (constraints, inputs, aux, exact) = match (id.kind, id.size) {
            // Counted by synthesizing the real circuits (notes/filecoin-crates.md).
            (PoRep, S2KiB) => (2_687_921, 40, 2_685_673, true),
            (PoRep, S8MiB) => (3_844_929, 40, 3_842_449, true),
            (PoRep, S32GiB) => (130_278_541, 328, 130_169_893, true),
            (WinningPost, S2KiB) => (90_750, 133, 91_674, true),
            (WinningPost, S32GiB) => (370_590, 133, 375_210, true),
            (WindowPost, S2KiB) => (21_866, 23, 22_128, true),
            (WindowPost, S32GiB) => (125_279_217, 25_840, 126_902_376, true),
            (Snap, S2KiB) => (1_705_039, 5, 1_703_569, true),
            (Snap, S8MiB) => (10_007_503, 5, 9_998_039, true),
            (Snap, S32GiB) => (81_049_499, 5, 80_978_488, true),
            // Extrapolated: deeper trees than the counted neighbour, rounded up.
            (PoRep, S512MiB) => (4_700_000, 40, 4_700_000, false),
            (PoRep, S64GiB) => (136_000_000, 328, 136_000_000, false),
            (WinningPost, S8MiB) => (200_000, 133, 202_000, false),
            (WinningPost, S512MiB) => (300_000, 133, 303_000, false),
            (WinningPost, S64GiB) => (390_000, 133, 395_000, false),
            (WindowPost, S8MiB) => (48_000, 23, 48_500, false),
            (WindowPost, S512MiB) => (70_000, 23, 71_000, false),
            // filecoin-proofs' constants.rs: 2300 sectors give 129,887,900 constraints.
            (WindowPost, S64GiB) => (129_887_900, 25_301, 131_600_000, false),
            (Snap, S512MiB) => (40_000_000, 5, 40_000_000, false),
            (Snap, S64GiB) => (84_000_000, 5, 84_000_000, false),
        };
        MemoryEstimate {
            constraints,
            inputs,
            aux,
            exact,
        }
    }

    /// `w` if it has this shape (when the shape was counted), else a synthesis error.
    pub(crate) fn check_witness(&self, partition: usize, w: Synthesized) -> Result<Synthesized> {
        let got = (w.num_constraints, w.inputs.len(), w.num_aux());
        let want = (self.constraints, self.inputs, self.aux);
        if self.exact && got != want {
            return Err(FilecoinError::Synthesis {
                partition,
                message: format!(
                    "witness has (constraints, inputs, aux) = {got:?}, the circuit {want:?}"
                ),
            });
        }
        Ok(w)
    }

    /// A recorder preallocated for this shape (so synthesis does not reallocate), in
    /// `reuse`'s allocations when given.
    pub fn recorder(&self, mode: RecorderMode, reuse: Option<Synthesized>) -> Recorder {
        match reuse {
            Some(spent) => Recorder::reusing(mode, spent, self.constraints, self.inputs, self.aux),
            None => Recorder::with_hints(mode, self.constraints, self.inputs, self.aux),
        }
    }
}

/// One Groth16 circuit of a request.
pub struct PartitionJob<W = SynthFn> {
    /// Which SRS proves it.
    pub circuit_id: CircuitId,
    /// Index of this partition within the request (proof order).
    pub partition: usize,
    /// The partition index the circuit itself encodes (differs from `partition` for a
    /// WindowPoSt partition, which is one partition of a larger deadline).
    pub circuit_partition: usize,
    /// Public inputs as filecoin-proofs computes them (`generate_public_inputs`), without ONE.
    pub public_inputs: Vec<Scalar>,
    /// Shape and memory estimate.
    pub estimate: MemoryEstimate,
    /// Builds and synthesizes the circuit (a [`SynthFn`] in every plan but the synthesis
    /// benchmark's).
    pub synthesize: W,
}

impl<W> std::fmt::Debug for PartitionJob<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartitionJob")
            .field("circuit_id", &self.circuit_id)
            .field("partition", &self.partition)
            .field("circuit_partition", &self.circuit_partition)
            .field("public_inputs", &self.public_inputs.len())
            .field("estimate", &self.estimate)
            .finish_non_exhaustive()
    }
}

impl PartitionJob {
    /// Runs the synthesis closure in `mode`.
    pub fn run(self, mode: RecorderMode) -> Result<Synthesized> {
        (self.synthesize)(mode, None)
    }

    /// Runs the synthesis closure in `mode`, recording into `reuse`'s allocations.
    pub fn run_reusing(
        self,
        mode: RecorderMode,
        reuse: Option<Synthesized>,
    ) -> Result<Synthesized> {
        (self.synthesize)(mode, reuse)
    }
}

/// A request turned into partition jobs.
pub struct ProofPlan<W = SynthFn> {
    /// The request's kind.
    pub kind: ProofKind,
    /// Its decoded registered proof.
    pub registered_proof: RegisteredProof,
    /// The circuit every job uses.
    pub circuit_id: CircuitId,
    /// The partitions, in proof order.
    pub jobs: Vec<PartitionJob<W>>,
    /// Checks the finished proof bytes (see [`ProofPlan::verify`]).
    pub verifier: VerifyFn,
    /// Applied to the concatenated partition proofs before verification, when the kind's
    /// output is not just their concatenation (see [`ProofPlan::finish`]).
    pub finisher: Option<FinishFn>,
}

impl<W> std::fmt::Debug for ProofPlan<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProofPlan")
            .field("kind", &self.kind)
            .field("registered_proof", &self.registered_proof)
            .field("circuit_id", &self.circuit_id)
            .field("jobs", &self.jobs)
            .finish_non_exhaustive()
    }
}

impl<W> ProofPlan<W> {
    /// Number of partitions (and of 192-byte proofs in the result).
    pub fn partitions(&self) -> usize {
        self.jobs.len()
    }

    /// Takes the jobs out (to hand them to workers), keeping the verifier.
    pub fn take_jobs(&mut self) -> Vec<PartitionJob<W>> {
        std::mem::take(&mut self.jobs)
    }

    /// Checks finished proof bytes with filecoin-proofs' verifier for this kind.
    pub fn verify(&self, proof: &[u8]) -> Result<()> {
        (self.verifier)(proof)
    }

    /// The bytes filecoin-proofs returns for this request, from the concatenated partition
    /// proofs ([`crate::plan::assemble`]): the same bytes for every kind but NI-PoRep, whose
    /// partition proofs are aggregated (SnarkPack v2) as `seal_commit_phase2` does.
    pub fn finish(&self, assembled: Vec<u8>) -> Result<Vec<u8>> {
        match &self.finisher {
            Some(f) => f(assembled),
            None => Ok(assembled),
        }
    }
}

/// Wraps circuit construction + synthesis: runs `build` (which may fail or, on inconsistent
/// vanilla proofs, panic inside the Filecoin crates) and turns both into typed errors.
pub(crate) fn synthesize_guarded<C, F>(
    partition: usize,
    estimate: MemoryEstimate,
    mode: RecorderMode,
    reuse: Option<Synthesized>,
    build: &F,
) -> Result<Synthesized>
where
    C: bellpepper_core::Circuit<Scalar>,
    F: Fn() -> Result<C>,
{
    guarded(partition, || {
        let circuit = build()?;
        Recorder::synthesize_into(estimate.recorder(mode, reuse), circuit).map_err(|e| {
            FilecoinError::Synthesis {
                partition,
                message: e.to_string(),
            }
        })
    })
}

/// Runs `run`, turning a panic inside it (the Filecoin crates panic on some inconsistent
/// vanilla proofs) into a typed synthesis error.
fn guarded<T>(partition: usize, run: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(run)) {
        Ok(r) => r,
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "circuit code panicked".to_string());
            Err(FilecoinError::Synthesis {
                partition,
                message: format!("panic: {message}"),
            })
        }
    }
}

/// Splits proof bytes into `partitions` 192-byte chunks, checking the length.
pub(crate) fn check_proof_len(proof: &[u8], partitions: usize) -> Result<()> {
    let expected = partitions * PARTITION_PROOF_BYTES;
    if proof.len() != expected {
        return Err(FilecoinError::ProofLength {
            expected,
            partitions,
            got: proof.len(),
        });
    }
    Ok(())
}

/// Turns a verifier's `Result<bool>` into ours.
pub(crate) fn verdict(what: &'static str, r: anyhow::Result<bool>) -> Result<()> {
    match r {
        Ok(true) => Ok(()),
        Ok(false) => Err(FilecoinError::VerificationFailed { what }),
        Err(e) => Err(FilecoinError::filecoin(what, e)),
    }
}

/// Verifies each 192-byte proof against its public inputs with the circuit's verifying key
/// from the Filecoin parameter cache (bellperson's batch verifier). Used where no
/// filecoin-proofs entry point takes exactly what we prove (one WindowPoSt partition of a
/// larger deadline; NI-PoRep circuit proofs before aggregation).
pub(crate) fn verify_with_vk(
    what: &'static str,
    vk: &bellperson::groth16::VerifyingKey<blstrs::Bls12>,
    inputs: &[Vec<Scalar>],
    proof: &[u8],
) -> Result<()> {
    check_proof_len(proof, inputs.len())?;
    let pvk = bellperson::groth16::prepare_verifying_key(vk);
    let proofs = proof
        .chunks(PARTITION_PROOF_BYTES)
        .map(bellperson::groth16::Proof::<blstrs::Bls12>::read)
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| FilecoinError::filecoin(what, e))?;
    let refs: Vec<_> = proofs.iter().collect();
    let mut rng = rand::rngs::OsRng;
    verdict(
        what,
        bellperson::groth16::verify_proofs_batch(&pvk, &mut rng, &refs, inputs)
            .map_err(anyhow::Error::from),
    )
}
