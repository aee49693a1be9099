//! Regression tests for the daemon's front door (issue 15 items 3 and 5): planning ran on the
//! runtime's worker threads, so slow plans stalled every other RPC; and ids of any length
//! were accepted, stored and echoed back.
mod common;

use common::{start_with, synthetic, Transport};
use cuzk_core::kinds::synthetic::SyntheticPlanner;
use cuzk_core::{EngineError, JobPlan, Planner, ProofRequest};
use cuzk_groth16::Srs;
use cuzk_server::proto::{AwaitProofRequest, GetStatusRequest, PreloadSrsRequest};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The synthetic planner, taking 1.5 s to plan each request (a large C1 output's JSON).
struct SlowPlanner(SyntheticPlanner);

impl Planner for SlowPlanner {
    fn plan(&self, req: ProofRequest) -> Result<JobPlan, EngineError> {
        std::thread::sleep(Duration::from_millis(1500));
        self.0.plan(req)
    }
    fn params_path(&self, id: &str) -> Result<PathBuf, EngineError> {
        self.0.params_path(id)
    }
    fn srs_size_hint(&self, id: &str) -> Result<u64, EngineError> {
        self.0.srs_size_hint(id)
    }
    fn load_srs(&self, id: &str) -> Result<Srs, EngineError> {
        self.0.load_srs(id)
    }
}

/// Four slow plans at once on a one-thread runtime: GetStatus must still answer at once.
#[tokio::test(flavor = "current_thread")]
async fn slow_plans_do_not_stall_other_rpcs() {
    let d = start_with(
        Transport::Unix,
        Arc::new(SlowPlanner(SyntheticPlanner::default())),
        |_, _| {},
    )
    .await;
    let mut submits = Vec::new();
    for i in 0..4 {
        let mut c = d.client.clone();
        submits.push(tokio::spawn(async move {
            let spec = "synthetic:constraints=256,inputs=1";
            c.submit_proof(synthetic(spec, &format!("slow-{i}"))).await
        }));
    }
    // A client on a thread and runtime of its own, so its clock is not the server's.
    let addr = d.addr.clone();
    let probe = tokio::task::spawn_blocking(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let mut c = cuzk_server::client::connect(&addr).await.expect("connect");
            tokio::time::sleep(Duration::from_millis(300)).await;
            let t = std::time::Instant::now();
            c.get_status(GetStatusRequest {}).await.expect("GetStatus");
            t.elapsed()
        })
    });
    for s in submits {
        s.await.unwrap().expect("submit");
    }
    let took = probe.await.unwrap();
    println!("GetStatus took {took:?} during four plans");
    assert!(
        took < Duration::from_millis(700),
        "GetStatus waited {took:?} behind the plans"
    );
    d.stop().await;
}

/// Ids over 256 bytes are refused before they are stored; error messages stay under 1 KiB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlong_ids_are_refused_and_never_echoed_whole() {
    let d = common::start(Transport::Unix, |_, _| {}).await;
    let mut c = d.client.clone();
    let long = "p".repeat(100_000);
    let e = c
        .preload_srs(PreloadSrsRequest {
            circuit_id: long.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument);
    assert!(e.message().len() < 1024, "{} bytes", e.message().len());
    let e = c
        .submit_proof(synthetic("synthetic:constraints=256", &long))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument);
    assert!(e.message().contains("request_id"), "{}", e.message());
    let e = c
        .await_proof(AwaitProofRequest {
            job_id: long.clone(),
            timeout_ms: 1,
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument);
    // An id of legal length that names nothing: NOT_FOUND / INVALID_ARGUMENT, short message.
    let e = c
        .preload_srs(PreloadSrsRequest {
            circuit_id: "q".repeat(256),
        })
        .await
        .unwrap_err();
    assert!(e.message().len() < 1024, "{} bytes", e.message().len());
    d.stop().await;
}

/// Issue 15 item 2: 3 million empty `vanilla_proofs` entries (6 MB on the wire, 72 MB once
/// prost had made a `Vec` of each) are refused from the raw bytes, before decoding.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vanilla_proof_floods_are_refused_before_decoding() {
    use cuzk_server::proto::ProofKind;
    let d = common::start(Transport::Unix, |_, _| {}).await;
    let mut c = d.client.clone();
    let flood = cuzk_server::proto::SubmitProofRequest {
        request_id: "flood".into(),
        proof_kind: ProofKind::WinningPost as i32,
        vanilla_proofs: vec![Vec::new(); 3_000_000],
        ..Default::default()
    };
    let e = c.submit_proof(flood).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e}");
    assert!(
        e.message().contains("refused before decoding"),
        "{}",
        e.message()
    );
    assert!(e.message().contains("at most 1"), "{}", e.message());
    // Bytes that are not a message at all: INVALID_ARGUMENT (prost's codec says INTERNAL).
    let raw = synthetic("synthetic:constraints=256", "cut");
    let wire = prost::Message::encode_to_vec(&raw);
    let e = common::raw_unary(&d.addr, "SubmitProof", &wire[..wire.len() - 3]).await;
    assert_eq!(e, tonic::Code::InvalidArgument);
    d.stop().await;
}

/// Issue 15 item 2: a message on the wire counts against the request buffer before it is
/// decoded, and the bytes come back once it has been.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_count_against_the_request_buffer_while_they_arrive() {
    let d = common::start(Transport::Unix, |c, _| c.request_buffer_bytes = 1 << 20).await;
    let mut c = d.client.clone();
    // 700 KB fits the 1 MiB buffer as a payload, but not twice over while it is received.
    let mut big = synthetic("synthetic:constraints=256", "big");
    big.vanilla_proof.resize(700_000, b' ');
    let e = c.submit_proof(big).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e}");
    assert!(e.message().contains("request buffer"), "{}", e.message());
    assert!(e.message().len() < 1024);
    // 200 KB (the spec, padded with spaces the parser trims) is received and proved.
    let mut small = synthetic("synthetic:constraints=256", "small");
    small.vanilla_proof.resize(200_000, b' ');
    let job = c
        .submit_proof(small)
        .await
        .expect("200 KB passes")
        .into_inner()
        .job_id;
    let done = c
        .await_proof(AwaitProofRequest {
            job_id: job,
            timeout_ms: 60_000,
        })
        .await
        .expect("await")
        .into_inner();
    assert_eq!(done.status, common::completed(), "{}", done.error_message);
    assert!(
        common::eventually(Duration::from_secs(5), || async {
            d.engine().status().request_bytes_in_use == 0
        })
        .await,
        "the received messages' bytes were not given back"
    );
    d.stop().await;
}

/// Issue 15 item 2: the server advertises its per-connection stream bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_per_connection_are_bounded() {
    let d = common::start(Transport::Unix, |_, s| s.max_streams_per_connection = 3).await;
    let path = d.addr.strip_prefix("unix://").unwrap().to_string();
    let io = tokio::net::UnixStream::connect(path).await.unwrap();
    let (send, conn) = h2::client::handshake(io).await.unwrap();
    tokio::spawn(conn);
    let mut send = send.ready().await.unwrap();
    let req = http::Request::post("http://localhost/cuzk.v1.ProvingEngine/GetStatus")
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .unwrap();
    let (resp, mut stream) = send.send_request(req, false).unwrap();
    stream.send_data(vec![0u8; 5].into(), true).unwrap();
    resp.await.unwrap();
    assert_eq!(send.current_max_send_streams(), 3);
    d.stop().await;
}

/// Issue 29: a message that does not fit the request buffer now waits for room instead of
/// being refused (its sender held back, nothing more read), and its bytes become its job's
/// payload; it is refused only after `server.request_buffer_wait`, or at once when it could
/// never fit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_waits_for_room_in_the_request_buffer_instead_of_being_refused() {
    // A: 400 KB held as its payload for as long as its job runs (an SRS of 2^15 constraints
    // made, then the proof); B: 400 KB, 800 KB while it arrives, so in a 1.25 MiB buffer
    // (1.09 MiB for messages, an eighth set aside for waiting ones' windows) it fits only
    // once A is done.
    let spec = "synthetic:constraints=32768";
    let padded = |id: &str| {
        let mut r = synthetic(spec, id);
        r.vanilla_proof.resize(400_000, b' ');
        r
    };
    for wait in [Duration::from_secs(120), Duration::from_millis(300)] {
        let d = common::start(Transport::Unix, |c, s| {
            c.request_buffer_bytes = 1_310_720;
            s.request_buffer_wait = wait;
        })
        .await;
        let mut c = d.client.clone();
        let a = c
            .submit_proof(padded("a"))
            .await
            .expect("A")
            .into_inner()
            .job_id;
        let t0 = std::time::Instant::now();
        let b = c.submit_proof(padded("b")).await;
        let waited = t0.elapsed();
        let a_done = c
            .await_proof(AwaitProofRequest {
                job_id: a.clone(),
                timeout_ms: 1,
            })
            .await
            .expect("await A")
            .into_inner()
            .status;
        let in_use = d.engine().status().request_bytes_in_use;
        if wait > Duration::from_secs(1) {
            let b = b
                .expect("B waits for room, then is queued")
                .into_inner()
                .job_id;
            assert_eq!(
                a_done,
                common::completed(),
                "B got room only once A was done"
            );
            assert!(waited > Duration::from_millis(200), "{waited:?}");
            // B's payload holds its bytes now, not twice them.
            assert!(in_use <= 400_000 + 4096, "{in_use}");
            let done = c
                .await_proof(AwaitProofRequest {
                    job_id: b,
                    timeout_ms: 120_000,
                })
                .await
                .unwrap()
                .into_inner();
            assert_eq!(done.status, common::completed(), "{}", done.error_message);
        } else {
            let e = b.expect_err("no room within 300 ms");
            assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e}");
            assert!(e.message().contains("waited 300ms"), "{}", e.message());
            assert!(waited < Duration::from_secs(5), "{waited:?}");
        }
        assert!(
            common::eventually(Duration::from_secs(120), || async {
                d.engine().status().request_bytes_in_use == 0
            })
            .await,
            "the request buffer's bytes were not all given back"
        );
        d.stop().await;
    }
}

/// Issue 29: many messages larger than the request buffer's free room, sent at once on one
/// HTTP/2 connection (as a client's channel does). The ones waiting for room must not hold
/// back the ones that have it: their unread bytes may not fill the connection's flow-control
/// window. Every message arrives and is proved, none refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_messages_do_not_stall_the_connection_they_share() {
    let d = common::start(Transport::Unix, |c, _| c.request_buffer_bytes = 16 << 20).await;
    let n = 12;
    let mut calls = Vec::new();
    for i in 0..n {
        let mut c = d.client.clone();
        let mut r = synthetic("synthetic:constraints=256", &format!("m{i}"));
        // 1.5 MB: 3 MB while it arrives, so four arrive at a time and the rest wait, and the
        // jobs' payloads (18 MB in all) do not fit at once either.
        r.vanilla_proof.resize(1_500_000, b' ');
        calls.push(tokio::spawn(async move {
            let job = c.submit_proof(r).await?.into_inner().job_id;
            c.await_proof(AwaitProofRequest {
                job_id: job,
                timeout_ms: 60_000,
            })
            .await
            .map(|r| r.into_inner().status)
        }));
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    for (i, call) in calls.into_iter().enumerate() {
        let status = tokio::time::timeout_at(deadline, call)
            .await
            .expect("the messages stalled: waiting ones held the connection's window")
            .unwrap()
            .unwrap_or_else(|e| panic!("message {i}: {e}"));
        assert_eq!(status, common::completed(), "message {i}");
    }
    d.stop().await;
}
