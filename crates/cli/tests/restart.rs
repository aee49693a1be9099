//! Issue 32 item 3: `kill -9` of the daemon under load, then a restart. Every client call in
//! flight fails at once as a lost connection (none hangs), a call while the daemon is down
//! fails at once with UNAVAILABLE, and the same requests sent again to the restarted daemon (same socket, same
//! request ids, the same client channel, as Curio retries a task) complete and verify.
//! (That a kill leaves no file the daemon writes corrupt is tested where the files are
//! written: `a_kill_during_a_write_leaves_no_corrupt_cache` in `cuzk-groth16`'s
//! `compiled/tests.rs` kills a cache writer mid-write, and every writer goes through
//! `atomic.rs`: a temporary file, synced, renamed over.)
mod common;

use common::*;
use cuzk_server::proto::await_proof_response;
use std::time::{Duration, Instant};
use tonic::Code;

const SPEC: &str = "synthetic:constraints=4096,inputs=2,partitions=4";
const CONFIG: &str = "[memory]\nbudget = \"2GiB\"\n[pipeline]\nsynthesis_concurrency = 1\n\
                      [allow]\nsynthetic = true\n";
const CALLS: usize = 6;

#[test]
fn kill_9_under_load_fails_calls_at_once_and_a_restart_proves_them_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = spawn_daemon(dir.path(), CONFIG);
    let addr = d.addr.clone();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let c = rt
        .block_on(cuzk_server::client::connect(&addr))
        .expect("connect");

    // Load: six Prove calls; once one runs, kill -9.
    let calls: Vec<_> = (0..CALLS)
        .map(|i| {
            let mut c = c.clone();
            rt.spawn(async move { c.prove(synthetic(SPEC, &format!("retry-{i}"))).await })
        })
        .collect();
    rt.block_on(until_running(&c));
    d.child.kill().expect("kill -9");
    let killed = Instant::now();
    d.child.wait().unwrap();

    // Every call in flight fails promptly with UNAVAILABLE: none hangs.
    for (i, call) in calls.into_iter().enumerate() {
        let r = rt
            .block_on(async { tokio::time::timeout(Duration::from_secs(10), call).await })
            .unwrap_or_else(|_| panic!("call {i} hung after kill -9"))
            .unwrap();
        // A connection lost mid-call: grpc-go (Curio's client) reports UNAVAILABLE; tonic,
        // this client, UNKNOWN with a transport error as the source.
        let e = r.expect_err("no answer can come from a killed daemon");
        let lost = e.code() == Code::Unavailable
            || (e.code() == Code::Unknown && e.message().contains("transport error"));
        assert!(lost, "call {i}: {e}");
    }
    println!(
        "{CALLS} in-flight calls failed (connection lost) within {:?} of kill -9",
        killed.elapsed()
    );
    // While it is down, a call fails at once too (the socket file is stale). The channel may
    // not have seen its connection close yet: the first call can still fail as a lost
    // connection (tonic: CANCELLED, "connection closed", or hyper's "connection was not
    // ready" when the dead connection is picked before its close is seen); the next dials
    // the stale socket and must be UNAVAILABLE.
    let t = Instant::now();
    let down = |id: &str| {
        rt.block_on(async {
            tokio::time::timeout(
                Duration::from_secs(10),
                c.clone().prove(synthetic(SPEC, id)),
            )
            .await
        })
        .expect("a call to a dead daemon hung")
        .expect_err("nobody is listening")
    };
    let mut e = down("retry-0");
    if e.code() != Code::Unavailable {
        let text = e.to_string();
        let closed = matches!(e.code(), Code::Cancelled | Code::Unknown)
            && (text.contains("connection closed") || text.contains("connection was not ready"));
        assert!(closed, "{e}");
        e = down("retry-0");
    }
    assert_eq!(e.code(), Code::Unavailable, "{e}");
    println!("a call while down: UNAVAILABLE in {:?}", t.elapsed());

    // Restart on the same socket (the stale file is replaced); the same requests, by the
    // same ids on the same client channel, complete and verify.
    let _d2 = spawn_daemon(dir.path(), CONFIG);
    let proofs = rt.block_on(async {
        let again: Vec<_> = (0..CALLS)
            .map(|i| {
                let mut c = c.clone();
                tokio::spawn(async move { c.prove(synthetic(SPEC, &format!("retry-{i}"))).await })
            })
            .collect();
        let mut proofs = Vec::new();
        for call in again {
            let r = call.await.unwrap().expect("Prove after restart");
            proofs.push(r.into_inner().result.expect("a result"));
        }
        proofs
    });
    for (i, r) in proofs.iter().enumerate() {
        assert_eq!(
            r.status,
            await_proof_response::Status::Completed as i32,
            "retry-{i}: {}",
            r.error_message
        );
        verify(SPEC, &r.proof);
    }
}
