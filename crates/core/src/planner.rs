//! How proof kinds plug into the engine: a [`Planner`] turns a request into partition plans.
use crate::error::EngineError;
use crate::request::ProofRequest;
use cuzk_groth16::{Scalar, Srs, Synthesized};
use std::any::Any;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// Synthesizes one partition: runs on a CPU pool thread, allocates the working set (or
/// reuses [`SynthesisContext::reuse`]). It may run again: a partition whose prover failed is
/// synthesized anew for its one retry (on another device when there is one).
pub type SynthesizeFn = Arc<dyn Fn(SynthesisContext) -> Result<Synthesized, String> + Send + Sync>;

/// Data a planner derives once per circuit id (e.g. pre-compiled constraint matrices). It is
/// made right after the SRS loads, lives exactly as long as the loaded SRS, and its bytes are
/// covered by the SRS's reservation.
pub type PreparedData = Arc<dyn Any + Send + Sync>;

/// What [`Planner::prepare`] made, and what it holds.
pub struct Prepared {
    /// The data, handed to every synthesis of the circuit id.
    pub data: PreparedData,
    /// Heap bytes it holds.
    pub bytes: u64,
    /// Aux variables that every satisfying witness of the circuit holds as 0 or 1, when the
    /// data knows them (a compiled circuit: `cuzk_groth16::CompiledCircuit::bounded_aux`).
    /// Before any partition is measured, a partition whose a/b/c are deferred reserves a
    /// full scalar only for the rest ([`crate::WorkingSetEstimate::from_deferred_shape`]).
    pub bounded_aux: Option<usize>,
}

/// What the engine hands a synthesis.
#[derive(Default)]
pub struct SynthesisContext {
    /// The circuit id's prepared data, if the planner made any.
    pub prepared: Option<PreparedData>,
    /// A finished partition's buffers of the same circuit id, to record into instead of
    /// allocating (see `cuzk_groth16::Recorder::reusing`); contents unspecified. Memory
    /// beyond them is not covered by the partition's reservation any more than usual.
    pub reuse: Option<Synthesized>,
    /// Every prover makes a/b/c itself from compiled matrices on its device
    /// (`ProverBackend::evaluates_abc`): a circuit with compiled matrices should defer them
    /// (`cuzk_groth16::CompiledCircuit::defer`) instead of evaluating them on the host.
    pub defer_abc: bool,
}

impl SynthesisContext {
    /// The prepared data as a `T`, if there is some of that type.
    pub fn prepared<T: Any>(&self) -> Option<&T> {
        self.prepared.as_deref().and_then(|d| d.downcast_ref::<T>())
    }
}

impl fmt::Debug for SynthesisContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SynthesisContext")
            .field("prepared", &self.prepared.is_some())
            .field("reuse", &self.reuse.as_ref().map(|s| s.heap_bytes()))
            .field("defer_abc", &self.defer_abc)
            .finish()
    }
}

/// Checks a job's whole proof (e.g. Filecoin's `verify_seal`); `Err` carries the reason.
pub type VerifyFn = Box<dyn Fn(&[u8]) -> Result<(), String> + Send + Sync>;

/// Turns the job's concatenated partition proofs into the proof it returns, when that is
/// more than their concatenation (e.g. an NI-PoRep aggregate); `Err` carries the reason.
pub type FinishFn = Box<dyn Fn(Vec<u8>) -> Result<Vec<u8>, String> + Send + Sync>;

/// One partition: one Groth16 circuit instance.
pub struct PartitionPlan {
    /// The circuit shape, which names the SRS (`porep-32g`, `synthetic-...`).
    pub circuit_id: String,
    /// Position of the partition's proof in the job's output.
    pub index: usize,
    /// Public inputs, without the leading ONE; used to self-verify the partition proof.
    pub public_inputs: Vec<Scalar>,
    /// (constraints, inputs including ONE, aux variables) if known before synthesis; sizes the
    /// first reservation of a circuit id before any calibration sample exists.
    pub shape_hint: Option<(usize, usize, usize)>,
    /// The hint is the circuit's counted shape and synthesis preallocates exactly to it, so
    /// its vectors never grow by reallocation: the first reservation needs no growth margin
    /// (see [`crate::WorkingSetEstimate::from_counted_shape`]).
    pub shape_counted: bool,
    /// Produces the synthesized circuit.
    pub synthesize: SynthesizeFn,
}

impl fmt::Debug for PartitionPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PartitionPlan")
            .field("circuit_id", &self.circuit_id)
            .field("index", &self.index)
            .field("public_inputs", &self.public_inputs.len())
            .field("shape_hint", &self.shape_hint)
            .field("shape_counted", &self.shape_counted)
            .finish()
    }
}

/// A job: its partitions and an optional whole-proof check.
#[derive(Default)]
pub struct JobPlan {
    /// Partitions, in output order (their `index` fields are 0..n).
    pub partitions: Vec<PartitionPlan>,
    /// Job-level external verification run on the finished proof.
    pub verify: Option<VerifyFn>,
    /// Applied to the concatenated partition proofs before verification; `None`: the job's
    /// proof is their concatenation.
    pub finish: Option<FinishFn>,
}

impl fmt::Debug for JobPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JobPlan")
            .field("partitions", &self.partitions)
            .field("verify", &self.verify.is_some())
            .field("finish", &self.finish.is_some())
            .finish()
    }
}

/// Host bytes a circuit's prepared data holds ([`Planner::prepare_hints`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrepareHints {
    /// Once the backends hold what they can of it (compiled matrices resident in VRAM):
    /// what stays on the host beside the SRS.
    pub held: u64,
    /// All of it in host memory (for synthesis on the host).
    pub host: u64,
}

/// Turns requests into partition plans and names the parameter files.
///
/// `plan` runs on the caller's thread during [`crate::Engine::submit`], so bad input is
/// reported at once; expensive work belongs in the `synthesize` closures.
pub trait Planner: Send + Sync {
    /// Validates and splits a request, which it owns: its payload moves into the plan's
    /// closures rather than being copied. Bad input: [`EngineError::InvalidRequest`].
    fn plan(&self, req: ProofRequest) -> Result<JobPlan, EngineError>;

    /// The `.params` file of a circuit id. Unknown id: [`EngineError::UnknownCircuit`].
    fn params_path(&self, circuit_id: &str) -> Result<PathBuf, EngineError>;

    /// Bytes the loaded SRS will occupy, if known without loading it; sizes the reservation
    /// taken before loading. The default uses the parameter file's length.
    fn srs_size_hint(&self, circuit_id: &str) -> Result<u64, EngineError> {
        let path = self.params_path(circuit_id)?;
        std::fs::metadata(&path)
            .map(|m| m.len())
            .map_err(|e| EngineError::Srs {
                circuit_id: circuit_id.to_string(),
                message: format!("{}: {e}", path.display()),
            })
    }

    /// Loads the SRS of a circuit id. Runs on a blocking thread under a reservation of
    /// [`Planner::srs_size_hint`] bytes. The default reads [`Planner::params_path`].
    fn load_srs(&self, circuit_id: &str) -> Result<Srs, EngineError> {
        let path = self.params_path(circuit_id)?;
        crate::params::read_params_file(circuit_id, &path)
    }

    /// The SRS of a circuit id with its points left in the parameter file
    /// ([`crate::params::read_params_header_file`]), for a load that streams them into the
    /// devices' own memory a window at a time instead of holding them on the host. `Ok(None)`
    /// (the default): there is no such file to stream from, and the SRS is loaded with
    /// [`Planner::load_srs`]. A planner whose `load_srs` reads [`Planner::params_path`] as it
    /// is returns that file's header; one whose `load_srs` does anything else keeps the
    /// default.
    fn load_srs_header(&self, _circuit_id: &str) -> Result<Option<Srs>, EngineError> {
        Ok(None)
    }

    /// Host bytes [`Planner::prepare`]'s data holds for a circuit id once loaded (an estimate
    /// is fine: the SRS reservation is corrected to the real figure), from the circuit's
    /// shape alone: admission asks for every partition of a circuit not loaded. Default:
    /// nothing is prepared.
    fn prepare_hints(&self, _circuit_id: &str) -> PrepareHints {
        PrepareHints::default()
    }

    /// Host bytes [`Planner::prepare`] holds at its peak while the SRS loads and its data is
    /// handed to the backends, which the load reserves (it may look at files: a cached
    /// circuit's header, and the windows its matrices pass in, instead of a compile's). The
    /// default: [`PrepareHints::host`].
    fn prepare_load_hint(&self, circuit_id: &str) -> u64 {
        self.prepare_hints(circuit_id).host
    }

    /// Derives per-circuit data once, beside the load of the SRS of `circuit_id` (a blocking
    /// thread, under the load's reservation: [`Planner::prepare_load_hint`]). `Ok(None)`: nothing to
    /// prepare (the default). An error is logged and synthesis goes on without prepared
    /// data. What it leaves in a file (a cached circuit's matrices) is either handed to the
    /// backends by them, or read in by [`Planner::settle_on_host`].
    fn prepare(&self, _circuit_id: &str) -> Result<Option<Prepared>, EngineError> {
        Ok(None)
    }

    /// Brings into host memory what `prepared` left in a file, for synthesis on the host
    /// (the backends did not take it); runs on a blocking thread under a reservation of
    /// [`PrepareHints::host`]. Whatever is found wrong on the way (a damaged cache) is made
    /// again, not used. The default has nothing to bring.
    fn settle_on_host(
        &self,
        _circuit_id: &str,
        _prepared: &mut Prepared,
    ) -> Result<(), EngineError> {
        Ok(())
    }

    /// Where the working-set measurements of `circuit_id` are kept between starts, so the
    /// first partitions after a restart reserve what one was measured to hold (see
    /// `measured.rs`). Default: nowhere, every start measures again.
    fn measurement_dir(&self, _circuit_id: &str) -> Option<PathBuf> {
        None
    }
}
