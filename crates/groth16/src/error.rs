//! Typed errors of the Groth16 crate.
use std::path::PathBuf;

/// Any error of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A parameter or verifying-key file could not be read or is malformed.
    #[error(transparent)]
    Params(#[from] ParamsError),
    /// Proving failed.
    #[error(transparent)]
    Prove(#[from] ProveError),
    /// Circuit synthesis failed.
    #[error("synthesis failed: {0}")]
    Synthesis(#[from] bellpepper_core::SynthesisError),
    /// A setup's points could not be made (a point maker's device failed, or a section did
    /// not fit the file format).
    #[error("making the setup's points: {0}")]
    Points(String),
}

/// Errors compiling a circuit's constraint matrices ([`crate::compiled::CompiledCircuit`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompileError {
    /// The circuit's synthesis failed.
    #[error("compiling {circuit}: {source}")]
    Synthesis {
        /// The circuit's name.
        circuit: String,
        /// The failure.
        source: bellpepper_core::SynthesisError,
    },
    /// More terms or variables than 32-bit indices hold.
    #[error("{circuit} is too large for 32-bit term indices")]
    TooLarge {
        /// The circuit's name.
        circuit: String,
    },
    /// A circuit compiled as a preamble and repeated parts
    /// ([`crate::compiled::CompiledCircuit::compile_repeated`]) is not one.
    #[error("{circuit} is not a preamble and repeated parts: {why}")]
    NotRepeated {
        /// The circuit's name.
        circuit: String,
        /// What did not match.
        why: String,
    },
    /// Compiling into a file
    /// ([`crate::compiled::CompiledCircuit::compile_repeated_to_file`]): it could not be
    /// written or opened again.
    #[error("compiling {circuit} into {}: {source}", path.display())]
    File {
        /// The circuit's name.
        circuit: String,
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Errors reading or writing `.params` / `.vk` files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParamsError {
    /// The OS refused an operation on the file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file ends before the section it announces.
    #[error("truncated file: section `{section}` needs {needed} bytes at offset {offset}, file has {len}")]
    Truncated {
        /// Section being read (`vk.alpha_g1`, `h`, `b_g2`, ...).
        section: &'static str,
        /// Byte offset where the read started.
        offset: u64,
        /// Bytes the read needed.
        needed: u64,
        /// File length.
        len: u64,
    },
    /// A point failed to decode (bad encoding, not on the curve, or not in the subgroup).
    #[error("invalid point in section `{section}` (index {index}) at offset {offset}: {reason}")]
    BadPoint {
        /// Section being read.
        section: &'static str,
        /// Index of the point within the section.
        index: usize,
        /// Byte offset of the point.
        offset: u64,
        /// What was wrong.
        reason: &'static str,
    },
    /// Bytes remain after the last section.
    #[error("trailing bytes: {extra} bytes after offset {offset}")]
    TrailingBytes {
        /// Where the last section ended.
        offset: u64,
        /// How many bytes follow.
        extra: u64,
    },
    /// A section count is implausible (e.g. larger than the file could hold).
    #[error(
        "section `{section}` at offset {offset} announces {count} points, more than the file holds"
    )]
    BadCount {
        /// Section being read.
        section: &'static str,
        /// Byte offset of the count.
        offset: u64,
        /// The count read.
        count: u64,
    },
    /// A single point asked for is not there: its index is past the section, or the host
    /// copy was released and the parameters were not read from a file.
    #[error("no point {index} in section `{section}` of {count} points")]
    NoSuchPoint {
        /// The section.
        section: &'static str,
        /// The index asked for.
        index: usize,
        /// The section's length.
        count: usize,
    },
}

/// Errors from a prover backend.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProveError {
    /// The synthesized circuit does not match the parameters' shape.
    #[error("circuit does not match the parameters: {what}: expected {expected}, got {got}")]
    ShapeMismatch {
        /// What differs (`inputs`, `h bases`, ...).
        what: &'static str,
        /// What the parameters imply.
        expected: usize,
        /// What the circuit has.
        got: usize,
    },
    /// The circuit was synthesized in witness-only mode but the prover needs a/b/c.
    #[error("circuit was synthesized without a/b/c (witness-only mode)")]
    MissingEvaluations,
    /// The backend is not available (e.g. built without CUDA, no device).
    #[error("backend unavailable: {0}")]
    Unavailable(String),
    /// A device-side failure, with the failing expression and location where known.
    #[error("device error: {0}")]
    Device(String),
    /// A point of the parameters could not be read (their host copy was released and the
    /// file changed or became unreadable). The parameters' fault, not the device's.
    #[error("reading the parameters: {0}")]
    Params(#[from] ParamsError),
}
