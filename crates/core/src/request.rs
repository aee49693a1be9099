//! What callers send (proof requests) and get back (job outcomes, timings).
use std::fmt;
use std::time::Duration;

/// The kind of proof a request asks for: `cuzk-filecoin`'s type (the gRPC `ProofKind`, plus
/// [`ProofKind::Synthetic`] for test and benchmark circuits), one type for every crate.
pub use cuzk_filecoin::ProofKind;

/// Scheduling priority; higher runs first. FIFO within one level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Priority {
    /// Background work.
    Low,
    /// The default.
    #[default]
    Normal,
    /// E.g. WindowPoSt.
    High,
    /// E.g. WinningPoSt, which has a deadline of seconds.
    Critical,
}

impl Priority {
    /// Every level, lowest first.
    pub const ALL: [Priority; 4] = [
        Priority::Low,
        Priority::Normal,
        Priority::High,
        Priority::Critical,
    ];

    /// Upper-case name (`LOW`, `NORMAL`, `HIGH`, `CRITICAL`).
    pub fn name(self) -> &'static str {
        match self {
            Priority::Low => "LOW",
            Priority::Normal => "NORMAL",
            Priority::High => "HIGH",
            Priority::Critical => "CRITICAL",
        }
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A proof request, as received from a client (fields follow `SubmitProofRequest`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProofRequest {
    /// The caller's idempotency key: a second submit with the same non-empty id returns the
    /// first job instead of starting another. Empty: no idempotency.
    pub request_id: String,
    /// What to prove.
    pub kind: ProofKind,
    /// Scheduling priority.
    pub priority: Priority,
    /// Sector size in bytes.
    pub sector_size: u64,
    /// Numeric registered proof (RegisteredSealProof / PoSt / Update, as in the FFI).
    pub registered_proof: u64,
    /// Single vanilla proof payload (PoRep C1 envelope; synthetic spec string).
    pub vanilla_proof: Vec<u8>,
    /// Per-partition or per-sector vanilla proofs (SnapDeals, PoSt).
    pub vanilla_proofs: Vec<Vec<u8>>,
    /// Sector number.
    pub sector_number: u64,
    /// Miner actor id.
    pub miner_id: u64,
    /// 32-byte PoSt randomness.
    pub randomness: Vec<u8>,
    /// WindowPoSt partition index.
    pub partition_index: u32,
    /// SnapDeals: old replica commitment.
    pub comm_r_old: Vec<u8>,
    /// SnapDeals: new replica commitment.
    pub comm_r_new: Vec<u8>,
    /// SnapDeals: new data commitment.
    pub comm_d_new: Vec<u8>,
}

impl ProofRequest {
    /// Bytes of payload the request carries (accounted while it is queued).
    pub fn payload_bytes(&self) -> u64 {
        (self.vanilla_proof.len()
            + self.vanilla_proofs.iter().map(Vec::len).sum::<usize>()
            + self.randomness.len()
            + self.comm_r_old.len()
            + self.comm_r_new.len()
            + self.comm_d_new.len()
            + self.request_id.len()) as u64
    }

    /// SHA-256 of everything that decides the proof: kind, registered proof, sector size and
    /// number, miner, PoSt randomness and partition, commitments and every payload byte (each
    /// field length-prefixed). Not the request id or the priority: a retry of the same work
    /// at another priority is the same request. Two requests with one `request_id` are one
    /// job only when their digests agree.
    pub fn digest(&self) -> [u8; 32] {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        let mut field = |b: &[u8]| {
            h.update((b.len() as u64).to_le_bytes());
            h.update(b);
        };
        field(self.kind.to_string().as_bytes());
        field(&self.registered_proof.to_le_bytes());
        field(&self.sector_size.to_le_bytes());
        field(&self.sector_number.to_le_bytes());
        field(&self.miner_id.to_le_bytes());
        field(&self.partition_index.to_le_bytes());
        field(&self.randomness);
        field(&self.comm_r_old);
        field(&self.comm_r_new);
        field(&self.comm_d_new);
        field(&self.vanilla_proof);
        field(&(self.vanilla_proofs.len() as u64).to_le_bytes());
        for v in &self.vanilla_proofs {
            field(v);
        }
        h.finalize().into()
    }
}

/// The answer to a submit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submitted {
    /// The job's id, for `wait` and `cancel`.
    pub job_id: String,
    /// Jobs queued ahead of this one (0: it is next or already running).
    pub queue_position: u32,
    /// True when `request_id` matched an existing job and that job was returned.
    pub duplicate: bool,
}

/// How a job ended (or that the wait for it timed out).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobState {
    /// The proof: partition proofs (192 bytes each) concatenated in partition order.
    Completed {
        /// The proof bytes.
        proof: Vec<u8>,
    },
    /// The job failed; the message says why.
    Failed {
        /// A readable reason.
        error: String,
    },
    /// The job was cancelled.
    Cancelled,
    /// `wait` gave up before the job finished; the job goes on.
    TimedOut,
}

impl JobState {
    /// Short upper-case name (`COMPLETED`, `FAILED`, `CANCELLED`, `TIMEOUT`).
    pub fn name(&self) -> &'static str {
        match self {
            JobState::Completed { .. } => "COMPLETED",
            JobState::Failed { .. } => "FAILED",
            JobState::Cancelled => "CANCELLED",
            JobState::TimedOut => "TIMEOUT",
        }
    }
}

/// Where a job's time went. Stage durations are summed over partitions, except `queue_wait`
/// (submit until the first partition was admitted) and `total` (submit until done).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobTimings {
    /// From submit until the first partition got its memory and started.
    pub queue_wait: Duration,
    /// Time spent loading the SRS on this job's behalf.
    pub srs_load: Duration,
    /// Synthesis, summed over partitions.
    pub synthesis: Duration,
    /// Prover (`start` + `finish`), summed over partitions.
    pub prover: Duration,
    /// From submit until the job ended.
    pub total: Duration,
}

/// A job's result as returned by `wait`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobOutcome {
    /// The job's id.
    pub job_id: String,
    /// How it ended.
    pub state: JobState,
    /// Where the time went (so far, for `TimedOut`).
    pub timings: JobTimings,
    /// Something the caller must know about a completed proof: set when it was made with
    /// TIMING-ONLY parameters and so does not verify.
    pub note: Option<String>,
}

/// At most 128 bytes of caller-supplied text (cut at a character boundary, `…` appended), for
/// error messages that echo input back.
pub(crate) fn clip(s: &str) -> std::borrow::Cow<'_, str> {
    const MAX: usize = 128;
    if s.len() <= MAX {
        return s.into();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end]).into()
}
