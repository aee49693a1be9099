//! Wire compatibility with Curio's cuzk client: messages hand-encoded as raw protobuf bytes
//! using the field numbers and types of shared/PROTOCOL.md decode into our prost types, and
//! our types encode to exactly those bytes. A renumbered or retyped field fails here.
use cuzk_server::proto::{
    await_proof_response, srs_status, AwaitProofRequest, AwaitProofResponse, CancelProofRequest,
    CancelProofResponse, EvictSrsRequest, EvictSrsResponse, GetMetricsResponse, GetStatusResponse,
    GpuStatus, PreloadSrsRequest, PreloadSrsResponse, Priority, ProofKind, ProveRequest,
    ProveResponse, QueueStatus, SrsStatus, SubmitProofRequest, SubmitProofResponse,
};
mod common;

use common::pb::W;
use prost::Message;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn bytes(rng: &mut ChaCha8Rng, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    rng.fill_bytes(&mut v);
    v
}

#[test]
fn submit_proof_request_fields_match_protocol() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed_0001);
    let vanilla = bytes(&mut rng, 300); // > 127: a two-byte length prefix
    let vp1 = bytes(&mut rng, 17);
    let vp2 = bytes(&mut rng, 5);
    let rand32 = bytes(&mut rng, 32);
    let (c1, c2, c3) = (
        bytes(&mut rng, 32),
        bytes(&mut rng, 32),
        bytes(&mut rng, 32),
    );
    let sector_size = 34_359_738_368u64;
    let sector_number: u64 = rng.gen_range(1..1 << 40);
    let miner_id: u64 = rng.gen_range(1000..1 << 30);
    let partition_index: u32 = rng.gen_range(1..100);

    let wire = W::default()
        .s(1, "req-42")
        .u(2, 1) // POREP_SEAL_COMMIT
        .u(3, sector_size)
        .u(4, 8) // RegisteredSealProof StackedDrg32GiBV1_1
        .u(5, 3) // HIGH
        .b(10, &vanilla)
        .b(11, &vp1)
        .b(11, &vp2)
        .u(20, sector_number)
        .u(21, miner_id)
        .b(22, &rand32)
        .u(23, partition_index as u64)
        .b(30, &c1)
        .b(31, &c2)
        .b(32, &c3)
        .0;

    let m = SubmitProofRequest::decode(wire.as_slice()).expect("decodes");
    assert_eq!(m.request_id, "req-42");
    assert_eq!(m.proof_kind, ProofKind::PorepSealCommit as i32);
    assert_eq!(m.sector_size, sector_size);
    assert_eq!(m.registered_proof, 8);
    assert_eq!(m.priority, Priority::High as i32);
    assert_eq!(m.vanilla_proof, vanilla);
    assert_eq!(m.vanilla_proofs, vec![vp1, vp2]);
    assert_eq!(m.sector_number, sector_number);
    assert_eq!(m.miner_id, miner_id);
    assert_eq!(m.randomness, rand32);
    assert_eq!(m.partition_index, partition_index);
    assert_eq!((m.comm_r_old, m.comm_r_new, m.comm_d_new), (c1, c2, c3));
    // And back: prost writes fields in number order, so the bytes are identical.
    assert_eq!(
        SubmitProofRequest::decode(wire.as_slice())
            .unwrap()
            .encode_to_vec(),
        wire
    );
}

#[test]
fn enum_numbers_match_protocol() {
    let kinds = [
        (ProofKind::Unspecified, 0),
        (ProofKind::PorepSealCommit, 1),
        (ProofKind::SnapDealsUpdate, 2),
        (ProofKind::WindowPostPartition, 3),
        (ProofKind::WinningPost, 4),
    ];
    for (k, n) in kinds {
        assert_eq!(k as i32, n, "{k:?}");
    }
    let prios = [
        (Priority::Unspecified, 0),
        (Priority::Low, 1),
        (Priority::Normal, 2),
        (Priority::High, 3),
        (Priority::Critical, 4),
    ];
    for (p, n) in prios {
        assert_eq!(p as i32, n, "{p:?}");
    }
    use await_proof_response::Status;
    let st = [
        (Status::Unknown, 0),
        (Status::Completed, 1),
        (Status::Failed, 2),
        (Status::Cancelled, 3),
        (Status::Timeout, 4),
    ];
    for (s, n) in st {
        assert_eq!(s as i32, n, "{s:?}");
    }
    assert_eq!(srs_status::Tier::Hot as i32, 0);
    assert_eq!(srs_status::Tier::Warm as i32, 1);
    assert_eq!(srs_status::Tier::Cold as i32, 2);
    // The names a Go client's generated code uses for logging.
    assert_eq!(ProofKind::WinningPost.as_str_name(), "WINNING_POST");
    assert_eq!(Status::Timeout.as_str_name(), "TIMEOUT");
}

#[test]
fn responses_encode_to_protocol_bytes() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed_0002);
    let proof = bytes(&mut rng, 1920);

    let ours = SubmitProofResponse {
        job_id: "job-1".into(),
        queue_position: 7,
        assigned_gpu: "0".into(),
        duplicate: false,
    };
    let wire = W::default().s(1, "job-1").u(2, 7).s(3, "0").0;
    assert_eq!(ours.encode_to_vec(), wire);

    let ours = AwaitProofResponse {
        job_id: "job-1".into(),
        status: await_proof_response::Status::Completed as i32,
        proof: proof.clone(),
        error_message: "none".into(),
        queue_wait_ms: 11,
        srs_load_ms: 12,
        synthesis_ms: 13_000,
        gpu_compute_ms: 14,
        total_ms: 150_000,
    };
    let await_wire = W::default()
        .s(1, "job-1")
        .u(2, 1)
        .b(3, &proof)
        .s(4, "none")
        .u(10, 11)
        .u(11, 12)
        .u(12, 13_000)
        .u(13, 14)
        .u(14, 150_000);
    let await_bytes = await_wire.0.clone();
    assert_eq!(ours.encode_to_vec(), await_bytes);

    // Prove wraps them at field 1.
    let prove = ProveResponse {
        result: Some(ours.clone()),
    };
    assert_eq!(prove.encode_to_vec(), W::default().b(1, &await_bytes).0);
    let pr = ProveRequest::decode(
        W::default()
            .m(1, W::default().s(1, "r").u(2, 4).u(5, 4))
            .0
            .as_slice(),
    )
    .unwrap();
    let sub = pr.submit.expect("submit at field 1");
    assert_eq!(sub.proof_kind, ProofKind::WinningPost as i32);
    assert_eq!(sub.priority, Priority::Critical as i32);

    assert_eq!(
        CancelProofResponse { was_running: true }.encode_to_vec(),
        W::default().u(1, 1).0
    );
    assert_eq!(
        PreloadSrsResponse {
            already_loaded: true,
            load_time_ms: 999
        }
        .encode_to_vec(),
        W::default().u(1, 1).u(2, 999).0
    );
    assert_eq!(
        EvictSrsResponse {
            was_loaded: true,
            freed_bytes: 1 << 33
        }
        .encode_to_vec(),
        W::default().u(1, 1).u(2, 1 << 33).0
    );
    assert_eq!(
        GetMetricsResponse {
            prometheus_text: "cuzk_up 1\n".into()
        }
        .encode_to_vec(),
        W::default().s(1, "cuzk_up 1\n").0
    );
}

#[test]
fn requests_decode_from_protocol_bytes() {
    let a = AwaitProofRequest::decode(W::default().s(1, "j").u(2, 30_000).0.as_slice()).unwrap();
    assert_eq!((a.job_id.as_str(), a.timeout_ms), ("j", 30_000));
    let c = CancelProofRequest::decode(W::default().s(1, "j2").0.as_slice()).unwrap();
    assert_eq!(c.job_id, "j2");
    let p = PreloadSrsRequest::decode(W::default().s(1, "porep-32g").0.as_slice()).unwrap();
    assert_eq!(p.circuit_id, "porep-32g");
    let e = EvictSrsRequest::decode(W::default().s(1, "wpost-32g").0.as_slice()).unwrap();
    assert_eq!(e.circuit_id, "wpost-32g");
}

#[test]
fn get_status_response_matches_protocol() {
    let gpu = W::default()
        .u(1, 1)
        .s(2, "H200")
        .u(3, 140 << 30)
        .u(4, 100 << 30)
        .s(5, "job-9")
        .s(6, "POREP_SEAL_COMMIT");
    let srs = W::default()
        .s(1, "porep-32g")
        .u(2, 2) // COLD
        .u(3, 47 << 30)
        .u(4, 3);
    let queue = W::default().s(1, "WINNING_POST").u(2, 5).u(3, 1);
    let wire = W::default()
        .m(1, gpu)
        .m(2, srs)
        .m(3, queue)
        .u(4, 100)
        .u(5, 2)
        .u(6, 3600)
        .u(7, 12 << 30)
        .u(8, 64 << 30)
        .0;
    let s = GetStatusResponse::decode(wire.as_slice()).unwrap();
    assert_eq!(
        s.gpus,
        vec![GpuStatus {
            ordinal: 1,
            name: "H200".into(),
            vram_total_bytes: 140 << 30,
            vram_free_bytes: 100 << 30,
            current_job_id: "job-9".into(),
            current_proof_kind: "POREP_SEAL_COMMIT".into(),
            // cuzk extensions (fields 100-106): absent from Curio's message, so defaults.
            busy_ms: 0,
            busy_source: String::new(),
            partitions: 0,
            errors: 0,
            quarantined: false,
            busy_fraction_last_minute: 0.0,
            busy_window_ms: 0,
        }]
    );
    assert_eq!(
        s.loaded_srs,
        vec![SrsStatus {
            circuit_id: "porep-32g".into(),
            tier: srs_status::Tier::Cold as i32,
            size_bytes: 47 << 30,
            ref_count: 3,
            // cuzk extensions (fields 100, 101): absent, so false.
            timing_only: false,
            host_copy_released: false,
            device_bytes: vec![],
            matrices_device_bytes: vec![],
        }]
    );
    assert_eq!(
        s.queues,
        vec![QueueStatus {
            proof_kind: "WINNING_POST".into(),
            pending: 5,
            in_progress: 1,
        }]
    );
    assert_eq!(
        (
            s.total_proofs_completed,
            s.total_proofs_failed,
            s.uptime_seconds
        ),
        (100, 2, 3600)
    );
    assert_eq!(s.pinned_memory_bytes, 12 << 30);
    assert_eq!(s.pinned_memory_limit_bytes, 64 << 30);
    // Our extensions are new field numbers: a Curio-only message leaves them at zero, and the
    // Curio fields re-encode to the same bytes when the extensions are unset.
    assert_eq!(s.budget_total_bytes, 0);
    assert_eq!(s.encode_to_vec(), wire);
}
