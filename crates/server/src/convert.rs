//! Conversions between protobuf messages and the engine's types. Proto-level problems (an
//! enum number the daemon does not know, a missing id) are caught here; everything about the
//! payload itself is the engine's planner's business.
use crate::error::ApiError;
use crate::proto::{self, GetStatusResponse, GetTimelineResponse, SubmitProofRequest};
use cuzk_core::{Category, Engine, EngineError, Priority, ProofKind, ProofRequest, SrsTier, Work};
use std::time::Duration;

/// The engine kind for a proto `ProofKind` number.
pub(crate) fn proof_kind(n: i32) -> Result<ProofKind, ApiError> {
    match proto::ProofKind::try_from(n) {
        Ok(proto::ProofKind::Unspecified) => Err(ApiError::InvalidArgument(
            "proof_kind is PROOF_KIND_UNSPECIFIED; set POREP_SEAL_COMMIT (1), SNAP_DEALS_UPDATE \
             (2), WINDOW_POST_PARTITION (3), WINNING_POST (4) or SYNTHETIC (100)"
                .into(),
        )),
        Ok(known) => ProofKind::from_wire(known as i32)
            .map_err(|e| ApiError::InvalidArgument(format!("proof_kind {n}: {e}"))),
        Err(_) => Err(ApiError::InvalidArgument(format!(
            "unknown proof_kind {n}; this daemon knows 1-4 and 100 (SYNTHETIC)"
        ))),
    }
}

/// The engine priority for a proto `Priority`. UNSPECIFIED takes the kind's natural level
/// ([`ProofKind::natural_priority`]).
pub(crate) fn priority(n: i32, kind: ProofKind) -> Result<Priority, ApiError> {
    match proto::Priority::try_from(n) {
        Ok(proto::Priority::Low) => Ok(Priority::Low),
        Ok(proto::Priority::Normal) => Ok(Priority::Normal),
        Ok(proto::Priority::High) => Ok(Priority::High),
        Ok(proto::Priority::Critical) => Ok(Priority::Critical),
        Ok(proto::Priority::Unspecified) => Ok(kind.natural_priority()),
        Err(_) => Err(ApiError::InvalidArgument(format!(
            "unknown priority {n}; expected 0-4"
        ))),
    }
}

/// The longest id (request, job or circuit id) a request may carry. Real ones are short
/// (`job-` + 16 hex digits, `porep-32g`, a sector's name); anything longer is refused before
/// it is stored or echoed.
pub(crate) const MAX_ID_BYTES: usize = 256;

fn bounded_id<'a>(field: &str, s: &'a str) -> Result<&'a str, ApiError> {
    if s.len() > MAX_ID_BYTES {
        return Err(ApiError::InvalidArgument(format!(
            "{field} is {} bytes; at most {MAX_ID_BYTES}",
            s.len()
        )));
    }
    Ok(s)
}

/// A proto submit request → the engine's request, decoded once: a Filecoin proof's kind and
/// registered proof (checked against the sector size; 0 takes the proof's), or a synthetic
/// circuit's spec string. Payload fields move; nothing is copied. What the payload itself
/// says is the kind's planner's business.
pub(crate) fn proof_request(r: SubmitProofRequest) -> Result<ProofRequest, ApiError> {
    bounded_id("request_id", &r.request_id)?;
    let kind = proof_kind(r.proof_kind)?;
    let priority = priority(r.priority, kind)?;
    let invalid = |m: String| ApiError::Engine(EngineError::InvalidRequest(m));
    let work = match kind {
        ProofKind::Synthetic => Work::Synthetic(
            String::from_utf8(r.vanilla_proof)
                .map_err(|_| invalid("the synthetic spec string is not UTF-8".into()))?,
        ),
        ProofKind::Filecoin(kind) => {
            let mut fc = cuzk_filecoin::ProofRequest::new(kind, r.sector_size, r.registered_proof)
                .map_err(|e| invalid(e.to_string()))?;
            fc.vanilla_proof = r.vanilla_proof;
            fc.vanilla_proofs = r.vanilla_proofs;
            fc.sector_number = r.sector_number;
            fc.miner_id = r.miner_id;
            fc.randomness = r.randomness;
            fc.partition_index = r.partition_index;
            fc.comm_r_old = r.comm_r_old;
            fc.comm_r_new = r.comm_r_new;
            fc.comm_d_new = r.comm_d_new;
            Work::Filecoin(fc)
        }
    };
    Ok(ProofRequest {
        request_id: r.request_id,
        priority,
        work,
    })
}

/// The wire message of a Filecoin request `req` (what a client sends; no request id, the
/// kind's natural priority): the inverse of [`proof_request`].
pub fn submit_request(req: &cuzk_filecoin::ProofRequest) -> SubmitProofRequest {
    SubmitProofRequest {
        request_id: String::new(),
        proof_kind: req.kind().to_wire(),
        sector_size: req.sector_size().bytes(),
        registered_proof: req.registered_proof(),
        priority: proto::Priority::Unspecified as i32,
        vanilla_proof: req.vanilla_proof.clone(),
        vanilla_proofs: req.vanilla_proofs.clone(),
        sector_number: req.sector_number,
        miner_id: req.miner_id,
        randomness: req.randomness.clone(),
        partition_index: req.partition_index,
        comm_r_old: req.comm_r_old.clone(),
        comm_r_new: req.comm_r_new.clone(),
        comm_d_new: req.comm_d_new.clone(),
    }
}

/// A job id from a request; empty is refused here so the engine never sees it.
pub(crate) fn job_id(s: &str) -> Result<String, ApiError> {
    let s = bounded_id("job_id", s)?;
    if s.trim().is_empty() {
        return Err(ApiError::InvalidArgument("job_id is empty".into()));
    }
    Ok(s.to_string())
}

/// A circuit id from a request; empty is refused here.
pub(crate) fn circuit_id(s: &str) -> Result<String, ApiError> {
    let s = bounded_id("circuit_id", s)?;
    if s.trim().is_empty() {
        return Err(ApiError::InvalidArgument(
            "circuit_id is empty; e.g. porep-32g, wpost-32g, porep-2k".into(),
        ));
    }
    Ok(s.to_string())
}

/// The engine's status → `GetStatusResponse`. The pinned-memory fields carry the engine's
/// byte budget (see the proto): `pinned_memory_limit_bytes` = budget total,
/// `pinned_memory_bytes` = reserved now.
pub(crate) fn status(engine: &Engine) -> GetStatusResponse {
    let s = engine.status();
    let g = &s.stages;
    let stage = |name: &str, n: u64| proto::StageCount {
        stage: name.to_string(),
        partitions: u32::try_from(n).unwrap_or(u32::MAX),
    };
    let (rss, peak_rss) = process_rss();
    GetStatusResponse {
        gpus: s
            .devices
            .iter()
            .map(|d| proto::GpuStatus {
                ordinal: d.index,
                name: d.name.clone(),
                // 0 = no device memory (the CPU prover).
                vram_total_bytes: d.memory.map_or(0, |m| m.0),
                vram_free_bytes: d.memory.map_or(0, |m| m.1),
                current_job_id: d.current_job.clone().unwrap_or_default(),
                current_proof_kind: d
                    .current_kind
                    .map(|k| k.name().to_string())
                    .unwrap_or_default(),
                busy_ms: d.busy.map_or(0, |b| b.as_millis() as u64),
                busy_source: d.busy_source.name().to_string(),
                partitions: d.partitions,
                errors: d.errors,
                quarantined: d.quarantined,
                busy_fraction_last_minute: d
                    .busy_last_minute
                    .map_or(0.0, |(_, ppm)| ppm as f64 / 1e6),
                busy_window_ms: d.busy_last_minute.map_or(0, |(w, _)| w.as_millis() as u64),
            })
            .collect(),
        loaded_srs: s
            .srs
            .iter()
            .map(|e| proto::SrsStatus {
                circuit_id: e.circuit_id.clone(),
                tier: match e.tier {
                    SrsTier::Hot => proto::srs_status::Tier::Hot,
                    SrsTier::Warm => proto::srs_status::Tier::Warm,
                    SrsTier::Cold => proto::srs_status::Tier::Cold,
                } as i32,
                size_bytes: e.size_bytes,
                ref_count: e.ref_count,
                timing_only: e.timing_only,
                host_copy_released: e.host_released,
                device_bytes: e.device_bytes.clone(),
                matrices_device_bytes: e.matrices_device_bytes.clone(),
            })
            .collect(),
        queues: s
            .queues
            .iter()
            .map(|q| proto::QueueStatus {
                proof_kind: q.kind.name().to_string(),
                pending: q.pending,
                in_progress: q.in_progress,
            })
            .collect(),
        total_proofs_completed: s.total_completed,
        total_proofs_failed: s.total_failed,
        uptime_seconds: s.uptime.as_secs(),
        pinned_memory_bytes: s.budget.reserved,
        pinned_memory_limit_bytes: s.budget.total,
        budget_total_bytes: s.budget.total,
        budget_reserved_bytes: s.budget.reserved,
        reserved_by_category: cats(&s.budget.by_category),
        peak_reserved_bytes: s.budget.peak,
        peak_reserved_by_category: cats(&s.budget.peak_by_category),
        rss_bytes: rss,
        peak_rss_bytes: peak_rss,
        stages: vec![
            stage("queued", g.queued),
            stage("synthesizing", g.synthesizing),
            stage("waiting_for_prover", g.waiting_for_prover),
            stage("proving", g.proving),
            stage("finalizing", g.finalizing),
        ],
        total_proofs_cancelled: s.total_cancelled,
        partition_memory: s
            .partition_memory
            .iter()
            .map(|m| proto::PartitionMemory {
                circuit_id: m.circuit_id.clone(),
                reserved_bytes: m.reserved,
                measured_bytes: m.measured,
            })
            .collect(),
        kind_stats: s
            .kinds
            .iter()
            .map(|k| proto::KindStats {
                proof_kind: k.kind.name().to_string(),
                completed: k.completed,
                failed: k.failed,
                cancelled: k.cancelled,
                phases: k
                    .phases
                    .iter()
                    .map(|p| proto::PhaseLatency {
                        phase: p.phase.to_string(),
                        p50_ms: p.p50.as_millis() as u64,
                        p99_ms: p.p99.as_millis() as u64,
                        samples: p.recent as u64,
                    })
                    .collect(),
            })
            .collect(),
    }
}

fn cats(v: &[(Category, u64)]) -> Vec<proto::ReservedBytes> {
    v.iter()
        .map(|(c, b)| proto::ReservedBytes {
            category: c.name().to_string(),
            bytes: *b,
        })
        .collect()
}

/// This process's resident set (VmRSS) and its peak (VmHWM) in bytes, from
/// `/proc/self/status`; zeros where that file is unavailable.
fn process_rss() -> (u64, u64) {
    let Ok(text) = std::fs::read_to_string("/proc/self/status") else {
        return (0, 0);
    };
    let field = |name: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse::<u64>().ok())
            .map_or(0, |kib| kib * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

fn opt_us(d: Option<Duration>) -> u64 {
    // 0 means "not reached"; a stage reached at exactly the engine's first microsecond is
    // reported as 1 µs so it is not mistaken for that.
    d.map_or(0, |d| us(d).max(1))
}

/// The engine's recent partition timelines and memory samples → `GetTimelineResponse`.
pub(crate) fn timeline(engine: &Engine) -> GetTimelineResponse {
    let now = engine.status().uptime;
    GetTimelineResponse {
        partitions: engine
            .timeline()
            .into_iter()
            .map(|p| proto::PartitionTimeline {
                job_id: p.job_id,
                partition: u32::try_from(p.partition).unwrap_or(u32::MAX),
                circuit_id: p.circuit_id,
                queued_us: us(p.queued).max(1),
                synthesis_start_us: opt_us(p.synth_start),
                synthesis_end_us: opt_us(p.synth_end),
                prove_start_us: opt_us(p.prove_start),
                prove_end_us: opt_us(p.prove_end),
                finalize_end_us: opt_us(p.finished),
                device: p.device.unwrap_or_default(),
                outcome: p.outcome,
            })
            .collect(),
        memory: engine
            .memory_samples()
            .into_iter()
            .map(|m| proto::MemorySample {
                t_us: us(m.at),
                reserved_bytes: m.reserved,
                by_category: cats(&m.by_category),
            })
            .collect(),
        now_us: us(now),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wire request is decoded once, here: the kind's registered proof is checked against
    /// the sector size (0: the proof's), the payload moves into the typed request, a synthetic
    /// spec must be text.
    #[test]
    fn a_submit_request_is_decoded_into_the_kind_s_typed_request() {
        let snap = SubmitProofRequest {
            request_id: "r".into(),
            proof_kind: proto::ProofKind::SnapDealsUpdate as i32,
            registered_proof: 3,
            vanilla_proofs: vec![vec![7; 3]],
            comm_r_old: vec![1; 32],
            ..Default::default()
        };
        let req = proof_request(snap.clone()).unwrap();
        assert_eq!(
            (req.request_id.as_str(), req.priority),
            ("r", Priority::Normal)
        );
        let Work::Filecoin(fc) = &req.work else {
            panic!("{:?}", req.work)
        };
        assert_eq!(fc.sector_size(), cuzk_filecoin::SectorSize::S32GiB);
        assert_eq!(
            (fc.vanilla_proofs.clone(), fc.comm_r_old.clone()),
            (vec![vec![7; 3]], vec![1; 32])
        );
        assert_eq!(submit_request(fc).registered_proof, 3);
        let mismatch = SubmitProofRequest {
            sector_size: 2048,
            ..snap
        };
        match proof_request(mismatch) {
            Err(ApiError::Engine(EngineError::InvalidRequest(m))) => {
                assert!(m.contains("registered_proof"), "{m}")
            }
            other => panic!("{other:?}"),
        }
        let synthetic = |spec: Vec<u8>| SubmitProofRequest {
            proof_kind: proto::ProofKind::Synthetic as i32,
            vanilla_proof: spec,
            ..Default::default()
        };
        let req = proof_request(synthetic(b"synthetic:constraints=64".to_vec())).unwrap();
        assert_eq!(req.work, Work::Synthetic("synthetic:constraints=64".into()));
        assert!(matches!(
            proof_request(synthetic(vec![0xff, 0xfe])),
            Err(ApiError::Engine(EngineError::InvalidRequest(_)))
        ));
    }

    #[test]
    fn kinds_and_priorities_map_both_known_and_unknown() {
        assert_eq!(proof_kind(1).unwrap(), ProofKind::POREP);
        assert_eq!(proof_kind(4).unwrap(), ProofKind::WINNING_POST);
        assert_eq!(proof_kind(100).unwrap(), ProofKind::Synthetic);
        assert!(matches!(proof_kind(0), Err(ApiError::InvalidArgument(_))));
        assert!(matches!(proof_kind(7), Err(ApiError::InvalidArgument(_))));
        assert_eq!(
            priority(0, ProofKind::WINNING_POST).unwrap(),
            Priority::Critical
        );
        assert_eq!(priority(0, ProofKind::WINDOW_POST).unwrap(), Priority::High);
        assert_eq!(priority(1, ProofKind::WINNING_POST).unwrap(), Priority::Low);
        assert!(priority(9, ProofKind::Synthetic).is_err());
    }
}
