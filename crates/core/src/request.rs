//! What callers send (proof requests) and get back (job outcomes, timings).
use std::fmt;
use std::time::Duration;

/// The kind of proof a job proves: a Filecoin proof, or a synthetic circuit (tests and
/// benchmarks). Numbered as the wire protocol's `ProofKind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProofKind {
    /// A Filecoin proof (wire numbers 1–4).
    Filecoin(cuzk_filecoin::ProofKind),
    /// A synthetic circuit whose spec travels in `vanilla_proof` (`SYNTHETIC` = 100).
    Synthetic,
}

impl ProofKind {
    /// PoRep commit phase 2.
    pub const POREP: ProofKind = ProofKind::Filecoin(cuzk_filecoin::ProofKind::PoRepSealCommit);
    /// SnapDeals sector update.
    pub const SNAP: ProofKind = ProofKind::Filecoin(cuzk_filecoin::ProofKind::SnapDealsUpdate);
    /// One WindowPoSt partition.
    pub const WINDOW_POST: ProofKind =
        ProofKind::Filecoin(cuzk_filecoin::ProofKind::WindowPostPartition);
    /// WinningPoSt.
    pub const WINNING_POST: ProofKind = ProofKind::Filecoin(cuzk_filecoin::ProofKind::WinningPost);
    /// Every kind, in reporting order.
    pub const ALL: [ProofKind; 5] = [
        ProofKind::POREP,
        ProofKind::SNAP,
        ProofKind::WINDOW_POST,
        ProofKind::WINNING_POST,
        ProofKind::Synthetic,
    ];
    /// The wire number of [`ProofKind::Synthetic`].
    pub const SYNTHETIC_WIRE: i32 = 100;

    /// From the wire number.
    pub fn from_wire(n: i32) -> Result<ProofKind, cuzk_filecoin::FilecoinError> {
        match n {
            Self::SYNTHETIC_WIRE => Ok(ProofKind::Synthetic),
            n => cuzk_filecoin::ProofKind::from_wire(n).map(ProofKind::Filecoin),
        }
    }

    /// The wire number.
    pub fn to_wire(self) -> i32 {
        match self {
            ProofKind::Filecoin(k) => k.to_wire(),
            ProofKind::Synthetic => Self::SYNTHETIC_WIRE,
        }
    }

    /// The protocol's name (`POREP_SEAL_COMMIT`, …, `SYNTHETIC`), as status, metrics and logs
    /// print it.
    pub fn name(self) -> &'static str {
        match self {
            ProofKind::Filecoin(k) => k.name(),
            ProofKind::Synthetic => "SYNTHETIC",
        }
    }

    /// The short lowercase name people type (`porep`, …, `synthetic`).
    pub fn short_name(self) -> &'static str {
        match self {
            ProofKind::Filecoin(k) => k.short_name(),
            ProofKind::Synthetic => "synthetic",
        }
    }

    /// The most `vanilla_proofs` entries a request of this kind may carry
    /// ([`cuzk_filecoin::ProofKind::max_vanilla_proofs`]; synthetic requests take none).
    pub fn max_vanilla_proofs(self) -> usize {
        match self {
            ProofKind::Filecoin(k) => k.max_vanilla_proofs(),
            ProofKind::Synthetic => 0,
        }
    }

    /// The level a request of this kind runs at when it names none: WinningPoSt (a deadline
    /// of seconds) CRITICAL, WindowPoSt HIGH, everything else NORMAL.
    pub fn natural_priority(self) -> Priority {
        match self {
            ProofKind::WINNING_POST => Priority::Critical,
            ProofKind::WINDOW_POST => Priority::High,
            _ => Priority::Normal,
        }
    }
}

impl From<cuzk_filecoin::ProofKind> for ProofKind {
    fn from(k: cuzk_filecoin::ProofKind) -> ProofKind {
        ProofKind::Filecoin(k)
    }
}

impl fmt::Display for ProofKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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

/// A proof request as the engine takes it: what is generic (the caller's id, the priority)
/// and the work, decoded from the wire once (by the server) into its kind's own type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProofRequest {
    /// The caller's idempotency key: a second submit with the same non-empty id returns the
    /// first job instead of starting another. Empty: no idempotency.
    pub request_id: String,
    /// Scheduling priority.
    pub priority: Priority,
    /// What to prove.
    pub work: Work,
}

/// What a request proves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Work {
    /// A Filecoin proof: kind, registered proof and payload.
    Filecoin(cuzk_filecoin::ProofRequest),
    /// A synthetic circuit, by its spec string (`synthetic:constraints=…,partitions=…`).
    Synthetic(String),
}

impl ProofRequest {
    /// A request for `work` with no request id, at its kind's natural priority.
    pub fn new(work: Work) -> ProofRequest {
        let kind = work.kind();
        ProofRequest {
            request_id: String::new(),
            priority: kind.natural_priority(),
            work,
        }
    }

    /// A Filecoin request with no request id, at its kind's natural priority.
    pub fn filecoin(req: cuzk_filecoin::ProofRequest) -> ProofRequest {
        ProofRequest::new(Work::Filecoin(req))
    }

    /// A synthetic circuit's request with no request id, at NORMAL priority.
    pub fn synthetic(spec: impl Into<String>) -> ProofRequest {
        ProofRequest::new(Work::Synthetic(spec.into()))
    }

    /// The same request under `request_id`.
    pub fn with_id(self, request_id: impl Into<String>) -> ProofRequest {
        ProofRequest {
            request_id: request_id.into(),
            ..self
        }
    }

    /// What kind of proof it asks for.
    pub fn kind(&self) -> ProofKind {
        self.work.kind()
    }

    /// Bytes of payload the request carries (accounted while it is queued).
    pub fn payload_bytes(&self) -> u64 {
        self.request_id.len() as u64
            + match &self.work {
                Work::Filecoin(r) => r.payload_bytes(),
                Work::Synthetic(spec) => spec.len() as u64,
            }
    }

    /// SHA-256 of everything that decides the proof, each value length-prefixed: a Filecoin
    /// request's [`cuzk_filecoin::ProofRequest::digest_fields`] (its kind first), or
    /// `SYNTHETIC` and the spec. Not the request id or the priority: a retry of the same work
    /// at another priority is the same request. Two requests with one `request_id` are one
    /// job only when their digests agree.
    pub fn digest(&self) -> [u8; 32] {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        let mut field = |b: &[u8]| {
            h.update((b.len() as u64).to_le_bytes());
            h.update(b);
        };
        match &self.work {
            Work::Filecoin(r) => r.digest_fields(&mut field),
            Work::Synthetic(spec) => {
                field(ProofKind::Synthetic.name().as_bytes());
                field(spec.as_bytes());
            }
        }
        h.finalize().into()
    }
}

impl Work {
    /// What kind of proof it is.
    pub fn kind(&self) -> ProofKind {
        match self {
            Work::Filecoin(r) => ProofKind::Filecoin(r.kind()),
            Work::Synthetic(_) => ProofKind::Synthetic,
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use cuzk_filecoin::ProofKind as Fc;

    fn snap() -> cuzk_filecoin::ProofRequest {
        let mut r = cuzk_filecoin::ProofRequest::new(Fc::SnapDealsUpdate, 2048, 0).unwrap();
        r.vanilla_proofs = vec![vec![1, 2, 3]];
        r.comm_r_old = vec![4; 32];
        r
    }

    /// Two requests under one id are one job only when the digest agrees: every field that
    /// decides the proof must change it, the id and the priority must not.
    #[test]
    fn the_digest_covers_every_field_that_decides_the_proof() {
        let base = ProofRequest::filecoin(snap());
        let d = base.digest();
        let mut changed: Vec<(&str, cuzk_filecoin::ProofRequest)> = Vec::new();
        let mut with = |what, f: &dyn Fn(&mut cuzk_filecoin::ProofRequest)| {
            let mut r = snap();
            f(&mut r);
            changed.push((what, r));
        };
        with("vanilla_proof", &|r| r.vanilla_proof = vec![0]);
        with("vanilla_proofs", &|r| r.vanilla_proofs[0][2] = 9);
        with("one more entry", &|r| r.vanilla_proofs.push(Vec::new()));
        with("sector_number", &|r| r.sector_number = 1);
        with("miner_id", &|r| r.miner_id = 1);
        with("randomness", &|r| r.randomness = vec![0; 32]);
        with("partition_index", &|r| r.partition_index = 1);
        with("comm_r_old", &|r| r.comm_r_old[0] = 5);
        with("comm_r_new", &|r| r.comm_r_new = vec![4; 32]);
        with("comm_d_new", &|r| r.comm_d_new = vec![4; 32]);
        // Bytes moved from one field to the next: length prefixes tell them apart.
        with("a byte moved", &|r| {
            r.comm_r_old.pop();
            r.comm_r_new = vec![4];
        });
        changed.push(("registered proof", snap().with_header(0, 1).unwrap()));
        for (what, r) in changed {
            assert_ne!(ProofRequest::filecoin(r).digest(), d, "{what}");
        }
        let same = ProofRequest {
            request_id: "retry".into(),
            priority: Priority::Low,
            ..base.clone()
        };
        assert_eq!(same.digest(), d);
        // A sector size of 0 is the registered proof's: the same request.
        let sized = snap().with_header(2048, 0).unwrap();
        assert_eq!(ProofRequest::filecoin(sized).digest(), d);
        assert_ne!(ProofRequest::synthetic("x").digest(), d);
    }

    #[test]
    fn kinds_keep_the_wire_numbers_and_natural_priorities() {
        for k in ProofKind::ALL {
            assert_eq!(ProofKind::from_wire(k.to_wire()).unwrap(), k);
        }
        assert_eq!(ProofKind::Synthetic.to_wire(), 100);
        assert_eq!(ProofKind::POREP.to_wire(), 1);
        assert!(ProofKind::from_wire(0).is_err() && ProofKind::from_wire(5).is_err());
        let winning = cuzk_filecoin::ProofRequest::new(Fc::WinningPost, 2048, 0).unwrap();
        assert_eq!(ProofRequest::filecoin(winning).priority, Priority::Critical);
        assert_eq!(ProofRequest::synthetic("x").priority, Priority::Normal);
        assert_eq!(ProofKind::SNAP.to_string(), "SNAP_DEALS_UPDATE");
    }
}
