//! How proof kinds plug into the engine: a [`Planner`] turns a request into partition plans.
use crate::error::EngineError;
use crate::request::ProofRequest;
use cuzk_groth16::{Scalar, Srs, Synthesized};
use std::fmt;
use std::path::PathBuf;

/// Synthesizes one partition: runs on a CPU pool thread, allocates the working set.
pub type SynthesizeFn = Box<dyn FnOnce() -> Result<Synthesized, String> + Send>;

/// Checks a job's whole proof (e.g. Filecoin's `verify_seal`); `Err` carries the reason.
pub type VerifyFn = Box<dyn Fn(&[u8]) -> Result<(), String> + Send + Sync>;

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
            .finish()
    }
}

/// A job: its partitions and an optional whole-proof check.
#[derive(Default)]
pub struct JobPlan {
    /// Partitions, in output order (their `index` fields are 0..n).
    pub partitions: Vec<PartitionPlan>,
    /// Job-level external verification run on the assembled proof.
    pub verify: Option<VerifyFn>,
}

impl fmt::Debug for JobPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JobPlan")
            .field("partitions", &self.partitions)
            .field("verify", &self.verify.is_some())
            .finish()
    }
}

/// Turns requests into partition plans and names the parameter files.
///
/// `plan` runs on the caller's thread during [`crate::Engine::submit`], so bad input is
/// reported at once; expensive work belongs in the `synthesize` closures.
pub trait Planner: Send + Sync {
    /// Validates and splits a request. Bad input: [`EngineError::InvalidRequest`].
    fn plan(&self, req: &ProofRequest) -> Result<JobPlan, EngineError>;

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
        crate::srs::read_params_file(circuit_id, &path)
    }
}
