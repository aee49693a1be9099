//! Shutting the daemon down: in-flight proofs drain and new work is refused; past the drain
//! timeout, what is left is answered CANCELLED.
mod common;

use common::*;
use cuzk_server::proto::await_proof_response;
use std::time::Duration;
use tonic::Code;

const SMALL: &str = "synthetic:constraints=1024,inputs=2";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_drains_in_flight_and_refuses_new_work() {
    let d = start(Transport::Unix, |_, s| {
        s.drain_timeout = Duration::from_secs(120);
    })
    .await;
    let mut c = d.client.clone();
    let spec = "synthetic:constraints=4096,inputs=2,partitions=3";
    let mut c2 = c.clone();
    let inflight = tokio::spawn(async move {
        c2.prove(prove_req(spec, "drain-me"))
            .await
            .map(|r| r.into_inner().result.unwrap())
    });
    let engine = d.engine().clone();
    assert!(until_running(&engine).await);
    let TestDaemon { daemon, dir, .. } = d;
    let stopper = tokio::spawn(daemon.unwrap().shutdown());
    // Once the engine stops accepting, a new submit is refused: UNAVAILABLE from the engine,
    // or a transport error if the connection already got GOAWAY.
    assert!(
        eventually(Duration::from_secs(10), || {
            let e = engine.clone();
            async move { !e.status().accepting }
        })
        .await
    );
    match c.submit_proof(synthetic(SMALL, "late")).await {
        Ok(r) => panic!("accepted new work while draining: {r:?}"),
        Err(s) => assert!(
            matches!(
                s.code(),
                Code::Unavailable | Code::Unknown | Code::Cancelled
            ),
            "{s:?}"
        ),
    }
    let r = inflight.await.unwrap().expect("in-flight Prove answered");
    assert_eq!(r.status, completed(), "{}", r.error_message);
    verify_synthetic(spec, &r.proof).unwrap();
    stopper.await.unwrap().expect("clean shutdown");
    assert!(!dir.path().join("cuzk.sock").exists());
    assert!(c
        .get_status(cuzk_server::proto::GetStatusRequest {})
        .await
        .is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_past_the_drain_timeout_reports_cancelled() {
    let d = start(Transport::Tcp, |c, s| {
        c.synthesis_concurrency = 1;
        s.drain_timeout = Duration::from_millis(50);
    })
    .await;
    let c = d.client.clone();
    let spec = "synthetic:constraints=8192,inputs=2,partitions=16";
    let mut c2 = c.clone();
    let inflight = tokio::spawn(async move {
        c2.prove(prove_req(spec, "too-slow"))
            .await
            .map(|r| r.into_inner().result.unwrap())
    });
    let engine = d.engine().clone();
    assert!(until_running(&engine).await);
    d.stop().await;
    let r = inflight
        .await
        .unwrap()
        .expect("answered before the server closed");
    assert_eq!(
        r.status,
        await_proof_response::Status::Cancelled as i32,
        "got {}",
        status_name(r.status)
    );
}
