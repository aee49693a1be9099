//! Typed errors of the engine: what a caller of [`crate::Engine`] can be told.
use std::time::Duration;

/// Any error the engine reports to a caller.
///
/// The server maps these to transport status codes in one place; every variant says which
/// family it belongs to (bad input, not found, overload, internal).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The request is malformed (bad payload, wrong sector size, empty vanilla proofs...).
    /// Bad input: the caller should not retry unchanged.
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// No job with this id is known (never submitted, or its result has expired).
    #[error("not found: {0}")]
    NotFound(String),
    /// The queue holds as many jobs (or request bytes) as it is configured to; retry later.
    #[error("queue full: {0}")]
    QueueFull(String),
    /// One partition of the request needs more memory than the whole budget; it can never run.
    #[error(
        "too large: {what} needs {needed} bytes but the whole memory budget is {budget} bytes"
    )]
    TooLarge {
        /// What needed the memory (`partition 3 of porep-32g`, `SRS porep-32g`).
        what: String,
        /// Bytes needed at once.
        needed: u64,
        /// The total budget.
        budget: u64,
    },
    /// The request asks for something this daemon's configuration turns off (synthetic
    /// circuits, timing-only parameters). Not retryable until the operator changes it.
    #[error("disabled: {0}")]
    Disabled(String),
    /// The request's `request_id` belongs to a job of a different request. Not retryable
    /// unchanged: the caller must use another id.
    #[error("request id conflict: {0}")]
    RequestIdConflict(String),
    /// The engine is shutting down and accepts no new work.
    #[error("engine is shutting down")]
    ShuttingDown,
    /// The circuit id names no known circuit shape.
    #[error("unknown circuit id `{0}`")]
    UnknownCircuit(String),
    /// Loading or validating an SRS (parameters file) failed.
    #[error("SRS {circuit_id}: {message}")]
    Srs {
        /// The circuit whose parameters failed.
        circuit_id: String,
        /// What went wrong.
        message: String,
    },
    /// The configuration is invalid.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A wait for a job ended without the job finishing.
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    /// A bug or an unexpected failure inside the engine.
    #[error("internal error: {0}")]
    Internal(String),
}

/// Errors of the memory budget.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BudgetError {
    /// The request exceeds the whole budget and could never be granted.
    #[error("{needed} bytes requested but the whole budget is {budget} bytes")]
    TooLarge {
        /// Bytes requested.
        needed: u64,
        /// The total budget.
        budget: u64,
    },
    /// The budget was closed (engine shutdown) while waiting.
    #[error("the memory budget is closed")]
    Closed,
}
