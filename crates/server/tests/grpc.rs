//! Integration tests of the gRPC daemon: a real engine and server on a temporary unix socket
//! or 127.0.0.1:0, driven by the tonic client generated from our proto.
mod common;

use common::*;
use cuzk_server::client;
use cuzk_server::proto::{
    await_proof_response, AwaitProofRequest, CancelProofRequest, EvictSrsRequest,
    GetMetricsRequest, GetTimelineRequest, PreloadSrsRequest, ProofKind, ProveRequest,
    SubmitProofRequest,
};
use std::collections::HashSet;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tonic::Code;

const SMALL: &str = "synthetic:constraints=1024,inputs=2";
const TWO_PARTS: &str = "synthetic:constraints=2048,inputs=3,partitions=2";

async fn http_get(addr: std::net::SocketAddr, path: &str) -> String {
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    s.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await
    .expect("write");
    let mut out = String::new();
    s.read_to_string(&mut out).await.expect("read");
    out
}

async fn every_rpc(transport: Transport) {
    let d = start(transport, |_, s| {
        s.metrics_listen = Some("127.0.0.1:0".into());
    })
    .await;
    let mut c = d.client.clone();

    // GetStatus: the budget in the pinned-memory fields, every kind's queue listed.
    let s0 = d.status().await;
    assert_eq!(s0.pinned_memory_limit_bytes, 2 << 30);
    assert_eq!(s0.budget_total_bytes, 2 << 30);
    assert!(s0.queues.iter().any(|q| q.proof_kind == "SYNTHETIC"));
    assert_eq!(s0.total_proofs_completed, 0);
    assert!(s0.rss_bytes > 0 && s0.peak_rss_bytes >= s0.rss_bytes);

    // PreloadSRS twice: loads, then already loaded.
    let id = "synthetic:constraints=2048,inputs=3";
    let circuit = cuzk_core::kinds::synthetic::circuit_id(
        &cuzk_core::kinds::synthetic::parse_request(id).unwrap().spec,
    );
    let p1 = c
        .preload_srs(PreloadSrsRequest {
            circuit_id: circuit.clone(),
        })
        .await
        .expect("preload")
        .into_inner();
    assert!(!p1.already_loaded);
    let p2 = c
        .preload_srs(PreloadSrsRequest {
            circuit_id: circuit.clone(),
        })
        .await
        .expect("preload again")
        .into_inner();
    assert!(p2.already_loaded);

    // Prove: two partitions, verified.
    let r = c
        .prove(prove_req(TWO_PARTS, "every-rpc-prove"))
        .await
        .expect("prove")
        .into_inner()
        .result
        .expect("result");
    assert_eq!(r.status, completed(), "{}", r.error_message);
    verify_synthetic(TWO_PARTS, &r.proof).expect("proof verifies");
    assert!(r.total_ms >= r.queue_wait_ms);

    // SubmitProof + AwaitProof.
    let sub = c
        .submit_proof(synthetic(SMALL, "every-rpc-submit"))
        .await
        .expect("submit")
        .into_inner();
    assert!(!sub.job_id.is_empty());
    assert!(!sub.duplicate);
    let a = c
        .await_proof(AwaitProofRequest {
            job_id: sub.job_id.clone(),
            timeout_ms: 0,
        })
        .await
        .expect("await")
        .into_inner();
    assert_eq!(a.status, completed(), "{}", a.error_message);
    assert_eq!(a.job_id, sub.job_id);
    verify_synthetic(SMALL, &a.proof).expect("proof verifies");

    // Status after: two completed, the SRS loaded.
    let s1 = d.status().await;
    assert_eq!(s1.total_proofs_completed, 2);
    assert_eq!(s1.total_proofs_failed, 0);
    assert!(s1.loaded_srs.iter().any(|e| e.circuit_id == circuit));
    assert!(s1.peak_reserved_bytes > 0);
    assert!(s1.peak_reserved_bytes <= s1.pinned_memory_limit_bytes);
    // Per kind on the wire: both jobs counted, four phases with percentiles of two samples.
    let k = &s1.kind_stats;
    assert_eq!(k.len(), 1, "{k:?}");
    assert_eq!(
        (k[0].proof_kind.as_str(), k[0].completed, k[0].failed),
        ("SYNTHETIC", 2, 0)
    );
    let phases: Vec<&str> = k[0].phases.iter().map(|p| p.phase.as_str()).collect();
    assert_eq!(phases, ["queue", "synthesis", "prover", "total"]);
    let total = &k[0].phases[3];
    assert!(
        total.samples == 2 && total.p50_ms <= total.p99_ms,
        "{total:?}"
    );

    // GetMetrics.
    let m = c
        .get_metrics(GetMetricsRequest {})
        .await
        .expect("metrics")
        .into_inner();
    assert!(m.prometheus_text.contains("cuzk_"), "{}", m.prometheus_text);

    // GetTimeline: both jobs' partitions, every stage reached in order.
    let tl = c
        .get_timeline(GetTimelineRequest {})
        .await
        .expect("timeline")
        .into_inner();
    let ours: Vec<_> = tl
        .partitions
        .iter()
        .filter(|p| p.job_id == r.job_id || p.job_id == sub.job_id)
        .collect();
    assert_eq!(ours.len(), 3, "2 + 1 partitions");
    for p in ours {
        assert!(p.queued_us <= p.synthesis_start_us);
        assert!(p.synthesis_start_us <= p.synthesis_end_us);
        assert!(p.synthesis_end_us <= p.prove_start_us);
        assert!(p.prove_start_us < p.prove_end_us);
        assert!(p.prove_end_us <= p.finalize_end_us);
        assert!(p.finalize_end_us <= tl.now_us);
    }
    assert!(!tl.memory.is_empty());

    // CancelProof: a finished job was not running; an unknown job is NOT_FOUND.
    let cancel = c
        .cancel_proof(CancelProofRequest {
            job_id: sub.job_id.clone(),
        })
        .await
        .expect("cancel finished")
        .into_inner();
    assert!(!cancel.was_running);
    let e = c
        .cancel_proof(CancelProofRequest {
            job_id: "no-such-job".into(),
        })
        .await
        .expect_err("unknown job");
    assert_eq!(e.code(), Code::NotFound, "{e:?}");
    let e = c
        .await_proof(AwaitProofRequest {
            job_id: "no-such-job".into(),
            timeout_ms: 10,
        })
        .await
        .expect_err("unknown job");
    assert_eq!(e.code(), Code::NotFound);
    assert!(e.message().contains("no-such-job"), "{}", e.message());

    // EvictSRS: loaded then not.
    let ev = c
        .evict_srs(EvictSrsRequest {
            circuit_id: circuit.clone(),
        })
        .await
        .expect("evict")
        .into_inner();
    assert!(ev.was_loaded);
    assert!(ev.freed_bytes > 0);
    let ev = c
        .evict_srs(EvictSrsRequest {
            circuit_id: circuit.clone(),
        })
        .await
        .expect("evict again")
        .into_inner();
    assert!(!ev.was_loaded);

    // HTTP side door.
    let maddr = d
        .daemon
        .as_ref()
        .unwrap()
        .metrics_addr()
        .expect("metrics on");
    let body = http_get(maddr, "/metrics").await;
    assert!(body.starts_with("HTTP/1.1 200"), "{body}");
    assert!(body.contains("cuzk_"), "{body}");
    let body = http_get(maddr, "/healthz").await;
    assert!(
        body.starts_with("HTTP/1.1 200") && body.contains("ok"),
        "{body}"
    );
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_rpc_over_unix_socket() {
    every_rpc(Transport::Unix).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_rpc_over_tcp() {
    every_rpc(Transport::Tcp).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unix_socket_has_mode_0660_and_is_removed_on_shutdown() {
    use std::os::unix::fs::PermissionsExt;
    let d = start(Transport::Unix, |_, _| {}).await;
    let path = d.dir.path().join("cuzk.sock");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o660);
    // A second daemon on the same live socket is refused, and the first keeps serving.
    let engine = d.engine().clone();
    let again = cuzk_server::Daemon::start(
        engine,
        cuzk_server::ServeOptions::new(cuzk_server::ListenAddr::Unix(path.clone())),
    )
    .await;
    assert!(matches!(
        again,
        Err(cuzk_server::ServerError::SocketInUse { .. })
    ));
    d.status().await;
    d.stop().await;
    assert!(!path.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submit_then_await_with_timeout() {
    let d = start(Transport::Unix, |_, _| {}).await;
    let mut c = d.client.clone();
    // Four partitions and a first-time setup: far more than 1 ms.
    let spec = "synthetic:constraints=4096,inputs=2,partitions=4";
    let sub = c
        .submit_proof(synthetic(spec, "timeout-1"))
        .await
        .expect("submit")
        .into_inner();
    let a = c
        .await_proof(AwaitProofRequest {
            job_id: sub.job_id.clone(),
            timeout_ms: 1,
        })
        .await
        .expect("await")
        .into_inner();
    assert_eq!(
        a.status,
        await_proof_response::Status::Timeout as i32,
        "got {}",
        status_name(a.status)
    );
    assert!(a.proof.is_empty());
    // The job goes on: a second wait gets the proof.
    let a = c
        .await_proof(AwaitProofRequest {
            job_id: sub.job_id.clone(),
            timeout_ms: 120_000,
        })
        .await
        .expect("await")
        .into_inner();
    assert_eq!(a.status, completed(), "{}", a.error_message);
    verify_synthetic(spec, &a.proof).expect("verifies");
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_request_id_is_one_job() {
    let d = start(Transport::Tcp, |_, _| {}).await;
    let mut c = d.client.clone();
    let s1 = c
        .submit_proof(synthetic(SMALL, "same-id"))
        .await
        .unwrap()
        .into_inner();
    let s2 = c
        .submit_proof(synthetic(SMALL, "same-id"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(s1.job_id, s2.job_id);
    assert!(!s1.duplicate);
    assert!(s2.duplicate);
    // Prove with the same id joins the same job too.
    let r = c
        .prove(prove_req(SMALL, "same-id"))
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap();
    assert_eq!(r.job_id, s1.job_id);
    assert_eq!(r.status, completed());
    verify_synthetic(SMALL, &r.proof).unwrap();
    let s = d.status().await;
    assert_eq!(s.total_proofs_completed, 1, "one job, not two or three");
    // A different id is a different job.
    let s3 = c
        .submit_proof(synthetic(SMALL, "other-id"))
        .await
        .unwrap()
        .into_inner();
    assert_ne!(s3.job_id, s1.job_id);
    d.stop().await;
}

fn non_srs_reserved(s: &cuzk_server::proto::GetStatusResponse) -> u64 {
    s.reserved_by_category
        .iter()
        .filter(|c| c.category != "srs")
        .map(|c| c.bytes)
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_queued_and_running_jobs_returns_memory() {
    let d = start(Transport::Unix, |c, _| {
        c.synthesis_concurrency = 1;
        c.prover_workers_per_device = 1;
        c.channel_capacity = 1;
    })
    .await;
    let mut c = d.client.clone();
    let baseline = non_srs_reserved(&d.status().await);
    let spec = "synthetic:constraints=8192,inputs=2,partitions=12";
    let running = c
        .submit_proof(synthetic(spec, "cancel-running"))
        .await
        .unwrap()
        .into_inner();
    let queued = c
        .submit_proof(synthetic(spec, "cancel-queued"))
        .await
        .unwrap()
        .into_inner();
    // Wait until the first job has started (some partition admitted).
    let started = eventually(Duration::from_secs(60), || {
        let d = &d;
        async move {
            d.status()
                .await
                .queues
                .iter()
                .any(|q| q.proof_kind == "SYNTHETIC" && q.in_progress >= 1)
        }
    })
    .await;
    assert!(started, "first job never started");
    let q = c
        .cancel_proof(CancelProofRequest {
            job_id: queued.job_id.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!q.was_running, "the second job was still queued");
    let r = c
        .cancel_proof(CancelProofRequest {
            job_id: running.job_id.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(r.was_running);
    for job in [&running.job_id, &queued.job_id] {
        let a = c
            .await_proof(AwaitProofRequest {
                job_id: job.clone(),
                timeout_ms: 60_000,
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            a.status,
            await_proof_response::Status::Cancelled as i32,
            "got {}",
            status_name(a.status)
        );
    }
    // Every byte of working set and request payload comes back (the SRS may stay cached).
    let back = eventually(Duration::from_secs(60), || {
        let d = &d;
        async move { non_srs_reserved(&d.status().await) == baseline }
    })
    .await;
    let s = d.status().await;
    assert!(
        back,
        "reserved (non-SRS) {} != baseline {baseline}: {:?}",
        non_srs_reserved(&s),
        s.reserved_by_category
    );
    assert_eq!(s.total_proofs_cancelled, 2);
    // Its queued partitions never started: the timeline has no synthesis for the queued job.
    let tl = c
        .get_timeline(GetTimelineRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(tl
        .partitions
        .iter()
        .filter(|p| p.job_id == queued.job_id)
        .all(|p| p.synthesis_start_us == 0));
    // And the daemon keeps serving.
    let ok = c
        .prove(prove_req(SMALL, "after-cancel"))
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap();
    assert_eq!(ok.status, completed());
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_concurrent_clients() {
    let d = start(Transport::Tcp, |_, _| {}).await;
    let mut set = tokio::task::JoinSet::new();
    for i in 0..8 {
        let addr = d.addr.clone();
        set.spawn(async move {
            // Each client is its own connection.
            let mut c = client::connect(&addr).await.expect("connect");
            let spec = if i % 2 == 0 { SMALL } else { TWO_PARTS };
            let r = c
                .prove(prove_req(spec, &format!("client-{i}")))
                .await
                .expect("prove")
                .into_inner()
                .result
                .expect("result");
            assert_eq!(r.status, completed(), "client {i}: {}", r.error_message);
            verify_synthetic(spec, &r.proof).expect("verifies");
            r.job_id
        });
    }
    let mut jobs = HashSet::new();
    while let Some(j) = set.join_next().await {
        jobs.insert(j.expect("client task"));
    }
    assert_eq!(jobs.len(), 8);
    assert_eq!(d.status().await.total_proofs_completed, 8);
    d.stop().await;
}

/// Sends `req` and expects `code`; returns the message.
async fn refused(c: &mut client::Client, req: SubmitProofRequest, code: Code) -> String {
    let e = c
        .submit_proof(req.clone())
        .await
        .expect_err("must be refused");
    assert_eq!(e.code(), code, "{req:?}: {}", e.message());
    assert!(!e.message().is_empty());
    // Prove takes the same path.
    let e2 = c
        .prove(ProveRequest { submit: Some(req) })
        .await
        .expect_err("must be refused");
    assert_eq!(e2.code(), code);
    e.message().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_inputs_get_clear_errors_and_the_daemon_keeps_serving() {
    let d = start(Transport::Unix, |_, s| {
        s.max_message_bytes = 1 << 20;
    })
    .await;
    let mut c = d.client.clone();

    let mut unknown = synthetic(SMALL, "");
    unknown.proof_kind = 77;
    let m = refused(&mut c, unknown, Code::InvalidArgument).await;
    assert!(m.contains("proof_kind 77"), "{m}");

    let mut unspecified = synthetic(SMALL, "");
    unspecified.proof_kind = 0;
    let m = refused(&mut c, unspecified, Code::InvalidArgument).await;
    assert!(m.contains("UNSPECIFIED"), "{m}");

    let mut prio = synthetic(SMALL, "");
    prio.priority = 9;
    let m = refused(&mut c, prio, Code::InvalidArgument).await;
    assert!(m.contains("priority"), "{m}");

    // Empty vanilla proof.
    let m = refused(&mut c, synthetic("", ""), Code::InvalidArgument).await;
    assert!(m.contains("spec"), "{m}");
    // Garbage payload.
    let m = refused(
        &mut c,
        synthetic("synthetic:colour=blue", ""),
        Code::InvalidArgument,
    )
    .await;
    assert!(m.contains("colour"), "{m}");
    let mut not_utf8 = synthetic("", "");
    not_utf8.vanilla_proof = vec![0xff, 0xfe, 0x00, 0x80];
    refused(&mut c, not_utf8, Code::InvalidArgument).await;

    // Filecoin kinds: truncated C1 JSON, base64 garbage, wrong sector size for the registered
    // proof, empty vanilla proofs. This daemon's planner is synthetic-only, so these are
    // refused as unsupported (still INVALID_ARGUMENT, naming the kind); tests/filecoin.rs
    // sends them to a daemon with the Filecoin planner and checks the payload-level messages.
    let porep = |vanilla: &[u8], registered: u64, size: u64| SubmitProofRequest {
        proof_kind: ProofKind::PorepSealCommit as i32,
        vanilla_proof: vanilla.to_vec(),
        registered_proof: registered,
        sector_size: size,
        sector_number: 1,
        miner_id: 1000,
        ..Default::default()
    };
    refused(
        &mut c,
        porep(br#"{"SectorNum": 1, "Phase1Out": "ey"#, 5, 2048),
        Code::InvalidArgument,
    )
    .await;
    refused(
        &mut c,
        porep(
            br#"{"SectorNum":1,"Phase1Out":"%%%not base64%%%","SectorSize":2048}"#,
            5,
            2048,
        ),
        Code::InvalidArgument,
    )
    .await;
    refused(
        &mut c,
        porep(
            br#"{"SectorNum":1,"Phase1Out":"","SectorSize":2048}"#,
            8,
            2048,
        ),
        Code::InvalidArgument,
    )
    .await;
    let empty_post = SubmitProofRequest {
        proof_kind: ProofKind::WindowPostPartition as i32,
        registered_proof: 10,
        sector_size: 2048,
        randomness: vec![7; 32],
        miner_id: 1000,
        ..Default::default()
    };
    refused(&mut c, empty_post, Code::InvalidArgument).await;

    // Unknown and empty circuit ids.
    let e = c
        .preload_srs(PreloadSrsRequest {
            circuit_id: "porep-1t".into(),
        })
        .await
        .expect_err("unknown circuit");
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("porep-1t"), "{}", e.message());
    let e = c
        .preload_srs(PreloadSrsRequest {
            circuit_id: " ".into(),
        })
        .await
        .expect_err("empty circuit");
    assert_eq!(e.code(), Code::InvalidArgument);
    let e = c
        .evict_srs(EvictSrsRequest {
            circuit_id: "porep-1t".into(),
        })
        .await
        .expect_err("unknown circuit");
    assert_eq!(e.code(), Code::InvalidArgument);
    let e = c
        .await_proof(AwaitProofRequest {
            job_id: String::new(),
            timeout_ms: 0,
        })
        .await
        .expect_err("empty job id");
    assert_eq!(e.code(), Code::InvalidArgument);
    let e = c
        .prove(ProveRequest { submit: None })
        .await
        .expect_err("missing submit");
    assert_eq!(e.code(), Code::InvalidArgument);

    // A payload over the message limit (1 MiB on this daemon; 256 MiB by default) is refused
    // by the transport before it reaches the engine, with gRPC's code for it.
    let mut big = synthetic(SMALL, "");
    big.vanilla_proofs = vec![vec![0x5a; 1 << 20]];
    let e = c.submit_proof(big).await.expect_err("over the limit");
    assert_eq!(e.code(), Code::ResourceExhausted, "{}", e.message());
    assert!(e.message().contains("too large"), "{}", e.message());

    // Nothing above broke the daemon: the next valid request is proved.
    let r = c
        .prove(prove_req(SMALL, "after-bad-inputs"))
        .await
        .expect("valid request")
        .into_inner()
        .result
        .unwrap();
    assert_eq!(r.status, completed());
    verify_synthetic(SMALL, &r.proof).unwrap();
    let s = d.status().await;
    assert_eq!(s.total_proofs_completed, 1);
    assert_eq!(s.total_proofs_failed, 0);
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_queue_is_resource_exhausted() {
    let d = start(Transport::Tcp, |c, _| {
        c.max_queued_jobs = 1;
    })
    .await;
    let mut c = d.client.clone();
    let spec = "synthetic:constraints=4096,inputs=2,partitions=4";
    let first = c
        .submit_proof(synthetic(spec, "q1"))
        .await
        .unwrap()
        .into_inner();
    let e = c
        .submit_proof(synthetic(spec, "q2"))
        .await
        .expect_err("queue full");
    assert_eq!(e.code(), Code::ResourceExhausted, "{}", e.message());
    let a = c
        .await_proof(AwaitProofRequest {
            job_id: first.job_id,
            timeout_ms: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(a.status, completed());
    d.stop().await;
}
