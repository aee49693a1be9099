//! The bench crate's one error type: what failed, and why.
use std::error::Error as StdError;

/// A benchmark or tool run that could not go on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// An option, a request file or the machine does not allow the run (the message says
    /// what to change).
    #[error("{0}")]
    Invalid(String),
    /// A step failed; `source` says why.
    #[error("{step}")]
    Step {
        /// What was being done (`reading FILE`, `synthesis`, ...).
        step: String,
        /// Why it failed.
        #[source]
        source: Box<dyn StdError + Send + Sync>,
    },
    /// The daemon answered an RPC with an error status.
    #[error("daemon answered {:?}: {}", .0.code(), .0.message())]
    Rpc(Box<tonic::Status>),
    /// The engine refused or failed.
    #[error(transparent)]
    Engine(#[from] cuzk_core::EngineError),
    /// The server could not start, serve or stop.
    #[error(transparent)]
    Server(#[from] cuzk_server::ServerError),
    /// A Filecoin request or its test data is unusable.
    #[error(transparent)]
    Filecoin(#[from] cuzk_filecoin::FilecoinError),
}

impl From<tonic::Status> for BenchError {
    fn from(s: tonic::Status) -> Self {
        BenchError::Rpc(Box::new(s))
    }
}

/// Results of this crate.
pub type Result<T, E = BenchError> = std::result::Result<T, E>;

/// Names the step a fallible call was part of (this crate's `anyhow::Context`).
pub(crate) trait Step<T> {
    /// On error, [`BenchError::Step`] with `step`.
    fn step(self, step: &str) -> Result<T>;
    /// On error, [`BenchError::Step`] with the step `f` names.
    fn with_step(self, f: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: StdError + Send + Sync + 'static> Step<T> for std::result::Result<T, E> {
    fn step(self, step: &str) -> Result<T> {
        self.with_step(|| step.to_string())
    }

    fn with_step(self, f: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| BenchError::Step {
            step: f(),
            source: Box::new(e),
        })
    }
}

/// [`BenchError::Invalid`] from a format string (this crate's `bail!`).
macro_rules! invalid {
    ($($t:tt)*) => {
        $crate::error::BenchError::Invalid(format!($($t)*))
    };
}
pub(crate) use invalid;
