//! Issue 32 item 4: slow and abusive clients are bounded, each by a named setting, and while
//! they go on a well-behaved client's proofs still complete:
//! - idle connections by `server.max_connections` (one more is closed on arrival);
//! - connections that say nothing by `server.handshake_timeout`;
//! - oversized metadata by `server.max_header_list_size`;
//! - a message that trickles in by `server.request_arrival_timeout` (its bytes freed);
//! - clients that go away, or fall silent, mid-call: their jobs are cancelled (a silent one
//!   found by the keepalive pings, `server.keepalive_interval` + `keepalive_timeout`).
mod common;

use common::{
    completed, eventually, prove_req, start, until_running, verify_synthetic, TestDaemon, Transport,
};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::UnixStream;

const SPEC: &str = "synthetic:constraints=256";
/// HTTP/2's client preface and an empty SETTINGS frame: what every real client sends first.
const HELLO: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0";

fn socket(d: &TestDaemon) -> PathBuf {
    PathBuf::from(d.addr.strip_prefix("unix://").expect("a unix address"))
}

/// The well-behaved client proves, and the proof verifies.
async fn proves(d: &TestDaemon, id: &str) {
    let r = d
        .client
        .clone()
        .prove(prove_req(SPEC, id))
        .await
        .unwrap_or_else(|e| panic!("{id}: {e}"))
        .into_inner()
        .result
        .expect("a result");
    assert_eq!(r.status, completed(), "{id}: {}", r.error_message);
    verify_synthetic(SPEC, &r.proof).unwrap();
}

/// Whether the server closes `s` within `within` (reading and dropping what it sends).
async fn closed_within(s: &mut UnixStream, within: Duration) -> bool {
    let mut buf = [0u8; 4096];
    tokio::time::timeout(within, async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .is_ok()
}

/// A connection that has sent the preface (a refused one may be closed before it is sent).
async fn hello(path: &PathBuf) -> UnixStream {
    let mut s = UnixStream::connect(path).await.expect("connect");
    let _ = s.write_all(HELLO).await;
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_past_max_connections_are_closed_on_arrival() {
    let d = start(Transport::Unix, |_, s| {
        s.max_connections = 8;
        s.handshake_timeout = Duration::from_secs(60);
    })
    .await;
    let stats = || d.daemon.as_ref().unwrap().connections();
    proves(&d, "before").await;
    assert_eq!(stats().open(), 1, "the client's connection");
    let path = socket(&d);
    let mut idle = Vec::new();
    for _ in 0..7 {
        idle.push(hello(&path).await);
    }
    assert!(eventually(Duration::from_secs(5), || async { stats().open() == 8 }).await);
    let t = Instant::now();
    for i in 0..20 {
        let mut extra = hello(&path).await;
        assert!(
            closed_within(&mut extra, Duration::from_secs(5)).await,
            "connection {i} past the limit was kept"
        );
    }
    println!(
        "20 connections past max_connections = 8 closed on arrival in {:?}",
        t.elapsed()
    );
    assert_eq!(stats().refused(), 20);
    // The idle ones within the limit are kept, and the client keeps proving.
    for s in &mut idle {
        assert!(!closed_within(s, Duration::from_millis(50)).await);
    }
    proves(&d, "during").await;
    drop(idle);
    assert!(eventually(Duration::from_secs(5), || async { stats().open() == 1 }).await);
    let mut fresh = cuzk_server::client::connect(&d.addr)
        .await
        .expect("a place");
    fresh
        .get_status(cuzk_server::proto::GetStatusRequest {})
        .await
        .expect("a new client once places are free");
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_that_say_nothing_are_closed_at_the_handshake_timeout() {
    let d = start(Transport::Unix, |_, s| {
        s.handshake_timeout = Duration::from_millis(300);
    })
    .await;
    let stats = || d.daemon.as_ref().unwrap().connections();
    let path = socket(&d);
    let mut silent = Vec::new();
    for _ in 0..50 {
        silent.push(UnixStream::connect(&path).await.expect("connect"));
    }
    let mut talking = hello(&path).await;
    proves(&d, "meanwhile").await;
    for (i, s) in silent.iter_mut().enumerate() {
        assert!(
            closed_within(s, Duration::from_secs(5)).await,
            "silent connection {i} kept"
        );
    }
    assert_eq!(stats().handshake_timeouts(), 50);
    // One that spoke in time is not timed out, however long it then idles.
    assert!(!closed_within(&mut talking, Duration::from_millis(800)).await);
    proves(&d, "after").await;
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_metadata_is_refused_and_the_client_keeps_proving() {
    let d = start(Transport::Unix, |_, s| s.max_header_list_bytes = 16 << 10).await;
    let mut c = d.client.clone();
    let call = |pad: usize| {
        let mut r = tonic::Request::new(prove_req(SPEC, &format!("pad-{pad}")));
        let v = "x".repeat(pad).parse().unwrap();
        r.metadata_mut().insert("x-pad", v);
        r
    };
    let e = c
        .prove(call(64 << 10))
        .await
        .expect_err("64 KiB of metadata");
    println!("64 KiB of metadata: {:?}: {}", e.code(), e.message());
    assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e}");
    let r = c
        .prove(call(4 << 10))
        .await
        .expect("4 KiB of metadata passes")
        .into_inner()
        .result
        .unwrap();
    assert_eq!(r.status, completed(), "{}", r.error_message);
    proves(&d, "after").await;
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_that_trickles_in_is_cut_off_and_its_bytes_freed() {
    let d = start(Transport::Unix, |_, s| {
        s.request_arrival_timeout = Duration::from_secs(1);
    })
    .await;
    let io = UnixStream::connect(socket(&d)).await.unwrap();
    let (send, conn) = h2::client::handshake(io).await.unwrap();
    tokio::spawn(conn);
    let mut send = send.ready().await.unwrap();
    let req = http::Request::post("http://localhost/cuzk.v1.ProvingEngine/Prove")
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .unwrap();
    let (resp, mut stream) = send.send_request(req, false).unwrap();
    // A 200 KB message announced, then 1 KiB every 100 ms: 20 s to arrive.
    let mut head = vec![0u8];
    head.extend(200_000u32.to_be_bytes());
    stream.send_data(head.into(), false).unwrap();
    let trickle = tokio::spawn(async move {
        for _ in 0..200 {
            if stream.send_data(vec![b' '; 1024].into(), false).is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let t = Instant::now();
    let engine = d.engine().clone();
    assert!(
        eventually(Duration::from_secs(5), || {
            let e = engine.clone();
            async move { e.status().request_bytes_in_use > 0 }
        })
        .await,
        "the trickle holds no bytes"
    );
    proves(&d, "meanwhile").await;
    let resp = tokio::time::timeout(Duration::from_secs(10), resp)
        .await
        .expect("cut off in time")
        .expect("a response");
    let code = resp
        .headers()
        .get("grpc-status")
        .map(|v| tonic::Code::from_bytes(v.as_bytes()));
    println!("trickle cut off after {:?}: {code:?}", t.elapsed());
    assert_eq!(code, Some(tonic::Code::DeadlineExceeded));
    assert!(
        eventually(Duration::from_secs(5), || {
            let e = engine.clone();
            async move { e.status().request_bytes_in_use == 0 }
        })
        .await,
        "the trickle's bytes were not given back"
    );
    trickle.abort();
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prove_client_that_goes_away_has_its_job_cancelled() {
    let d = start(Transport::Unix, |c, _| {
        c.synthesis_concurrency = 1;
    })
    .await;
    let spec = "synthetic:constraints=8192,inputs=2,partitions=16";
    let mut c2 = d.client.clone();
    let call = tokio::spawn(async move { c2.prove(prove_req(spec, "abandoned")).await });
    let engine = d.engine().clone();
    assert!(until_running(&engine).await);
    // The client gives up: the RPC is reset and the daemon drops the handler.
    call.abort();
    let cancelled = eventually(Duration::from_secs(30), || {
        let e = engine.clone();
        async move { e.status().total_cancelled == 1 }
    })
    .await;
    assert!(cancelled, "abandoned Prove job was not cancelled");
    d.stop().await;
}

/// A connection that can be frozen: from then on it neither reads nor writes, as a peer
/// that lost power or its network does (its socket stays open, nothing is answered).
struct Freezable {
    io: UnixStream,
    frozen: Arc<AtomicBool>,
}

impl AsyncRead for Freezable {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.frozen.load(Ordering::SeqCst) {
            return Poll::Pending;
        }
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for Freezable {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if self.frozen.load(Ordering::SeqCst) {
            return Poll::Pending;
        }
        Pin::new(&mut self.io).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prove_client_that_falls_silent_is_dropped_by_keepalive_and_its_job_cancelled() {
    let d = start(Transport::Unix, |c, s| {
        c.synthesis_concurrency = 1;
        s.keepalive_interval = Duration::from_millis(300);
        s.keepalive_timeout = Duration::from_millis(300);
    })
    .await;
    let stats = || d.daemon.as_ref().unwrap().connections();
    let frozen = Arc::new(AtomicBool::new(false));
    let io = Freezable {
        io: UnixStream::connect(socket(&d)).await.unwrap(),
        frozen: frozen.clone(),
    };
    let (send, conn) = h2::client::handshake(io).await.unwrap();
    let conn = tokio::spawn(conn);
    let mut send = send.ready().await.unwrap();
    let req = http::Request::post("http://localhost/cuzk.v1.ProvingEngine/Prove")
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .unwrap();
    let (_resp, mut stream) = send.send_request(req, false).unwrap();
    let spec = "synthetic:constraints=8192,inputs=2,partitions=16";
    let body = prost::Message::encode_to_vec(&prove_req(spec, "silent"));
    let mut framed = vec![0u8];
    framed.extend((body.len() as u32).to_be_bytes());
    framed.extend(body);
    stream.send_data(framed.into(), true).unwrap();
    let engine = d.engine().clone();
    assert!(until_running(&engine).await, "the job never started");
    let open = stats().open();
    let t = Instant::now();
    frozen.store(true, Ordering::SeqCst);
    let cancelled = eventually(Duration::from_secs(30), || {
        let e = engine.clone();
        async move { e.status().total_cancelled == 1 }
    })
    .await;
    println!(
        "silent client's job cancelled {:?} after it fell silent",
        t.elapsed()
    );
    assert!(cancelled, "the silent client's job was not cancelled");
    assert!(
        eventually(Duration::from_secs(5), || async {
            stats().open() == open - 1
        })
        .await
    );
    proves(&d, "after").await;
    conn.abort();
    d.stop().await;
}
