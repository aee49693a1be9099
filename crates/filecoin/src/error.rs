//! Typed errors of the Filecoin crate: every request-decoding failure names the field and
//! what was expected, so a client can tell exactly what it sent wrong.

/// Any error of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FilecoinError {
    /// The proof kind is unspecified or not one this crate proves.
    #[error("unsupported proof kind {0}")]
    UnsupportedKind(i32),
    /// `registered_proof` is not a known number for the request's proof kind.
    #[error("registered_proof {got} is not a valid {family} (expected {expected})")]
    UnknownRegisteredProof {
        /// Which numbering (`RegisteredSealProof`, `RegisteredPoStProof`, ...).
        family: &'static str,
        /// The number sent.
        got: u64,
        /// The accepted range.
        expected: &'static str,
    },
    /// `registered_proof` is of the wrong type for the kind (e.g. a WindowPoSt number for a
    /// WinningPoSt request).
    #[error("registered_proof {got} ({name}) cannot be used for {kind}: expected {expected}")]
    WrongProofType {
        /// The request's kind.
        kind: &'static str,
        /// The number sent.
        got: u64,
        /// Its name.
        name: String,
        /// What the kind accepts.
        expected: &'static str,
    },
    /// A sector size is not one Filecoin supports (2 KiB, 8 MiB, 512 MiB, 32 GiB, 64 GiB).
    #[error("field `{field}`: unsupported sector size {got} bytes (expected 2KiB, 8MiB, 512MiB, 32GiB or 64GiB)")]
    UnsupportedSectorSize {
        /// The field carrying the size.
        field: &'static str,
        /// The size sent.
        got: u64,
    },
    /// Two fields disagree (sector size against the registered proof, sector number against the
    /// envelope, ...).
    #[error("field `{field}`: expected {expected}, got {got}")]
    Mismatch {
        /// The field that is wrong.
        field: &'static str,
        /// What the other fields imply.
        expected: String,
        /// What was sent.
        got: String,
    },
    /// The PoRep C2 envelope JSON does not parse.
    #[error("field `vanilla_proof`: invalid C1 envelope JSON (expected {{\"SectorNum\",\"Phase1Out\",\"SectorSize\"}}): {0}")]
    EnvelopeJson(#[source] serde_json::Error),
    /// A JSON object without the envelope's keys, and not a bare `SealCommitPhase1Output`.
    #[error("field `vanilla_proof`: neither the C1 envelope {{\"SectorNum\",\"Phase1Out\",\"SectorSize\"}} nor a SealCommitPhase1Output JSON: {0}")]
    BareC1Json(#[source] serde_json::Error),
    /// `Phase1Out` is not valid base64.
    #[error("field `vanilla_proof.Phase1Out`: invalid base64: {0}")]
    Base64(#[source] base64::DecodeError),
    /// The decoded `Phase1Out` is not a `SealCommitPhase1Output` JSON.
    #[error("field `vanilla_proof.Phase1Out`: invalid SealCommitPhase1Output JSON: {0}")]
    Phase1Json(#[source] serde_json::Error),
    /// A vanilla proof does not decode (bincode).
    #[error("field `{field}[{index}]`: invalid vanilla proof encoding: {source}")]
    VanillaDecode {
        /// `vanilla_proofs`.
        field: &'static str,
        /// Which entry.
        index: usize,
        /// The decoding error.
        source: bincode::Error,
    },
    /// A list has the wrong number of entries (partitions, sectors, challenges).
    #[error("field `{field}`: expected {expected} entries, got {got}")]
    WrongCount {
        /// The field or sub-structure (`vanilla_proofs`, `Phase1Out.vanilla_proofs[0]`, ...).
        field: String,
        /// What the registered proof implies (a number or a range).
        expected: String,
        /// What was sent.
        got: usize,
    },
    /// A byte field has the wrong length (commitments and randomness are 32 bytes).
    #[error("field `{field}`: expected {expected} bytes, got {got}")]
    WrongLength {
        /// The field.
        field: &'static str,
        /// The expected length.
        expected: usize,
        /// The length sent.
        got: usize,
    },
    /// A 32-byte value is not a canonical BLS12-381 scalar (or is all zeros where that is
    /// forbidden).
    #[error("field `{field}`: {reason}")]
    InvalidValue {
        /// The field.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The Filecoin crates rejected the inputs while building a circuit or public inputs.
    #[error("{context}: {message}")]
    Filecoin {
        /// What was being done.
        context: &'static str,
        /// The Filecoin crates' message.
        message: String,
    },
    /// Circuit synthesis failed (or the circuit code panicked on inconsistent input).
    #[error("synthesis of partition {partition} failed: {message}")]
    Synthesis {
        /// The partition.
        partition: usize,
        /// What went wrong.
        message: String,
    },
    /// A proof was rejected by the Filecoin verifier.
    #[error("proof rejected by the Filecoin verifier ({what})")]
    VerificationFailed {
        /// Which verifier.
        what: &'static str,
    },
    /// Proof bytes have the wrong length for the plan.
    #[error("proof bytes: expected {expected} bytes ({partitions} partitions × 192), got {got}")]
    ProofLength {
        /// Expected length.
        expected: usize,
        /// Number of partitions.
        partitions: usize,
        /// Length given.
        got: usize,
    },
    /// An unknown circuit id string.
    #[error("unknown circuit id `{0}` (expected e.g. porep-32g, snap-8m, wpost-2k, winning-64g)")]
    UnknownCircuitId(String),
    /// A Groth16 operation (parameter generation, file I/O) failed.
    #[error(transparent)]
    Groth16(#[from] cuzk_groth16::Error),
    /// A file operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: std::path::PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

impl FilecoinError {
    /// Wraps an error from the Filecoin crates (`anyhow`) with what was being done.
    pub fn filecoin(context: &'static str, err: impl std::fmt::Display) -> FilecoinError {
        FilecoinError::Filecoin {
            context,
            message: format!("{err:#}"),
        }
    }

    /// Wraps an I/O error with its path.
    pub fn io(path: impl Into<std::path::PathBuf>, source: std::io::Error) -> FilecoinError {
        FilecoinError::Io {
            path: path.into(),
            source,
        }
    }
}

/// This crate's result type.
pub type Result<T, E = FilecoinError> = std::result::Result<T, E>;

impl From<cuzk_groth16::ProveError> for FilecoinError {
    fn from(e: cuzk_groth16::ProveError) -> FilecoinError {
        FilecoinError::Groth16(e.into())
    }
}
