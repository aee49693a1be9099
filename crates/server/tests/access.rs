//! Who may talk to the daemon: a non-loopback TCP listener without a token refuses to start,
//! a configured token is required of every TCP request (gRPC and `/metrics`) but never on the
//! unix socket, and `admin_rpcs = false` turns PreloadSRS/EvictSRS into PERMISSION_DENIED.
mod common;

use common::*;
use cuzk_core::kinds::synthetic::SyntheticPlanner;
use cuzk_core::Engine;
use cuzk_groth16::{CpuProver, ProverBackend};
use cuzk_server::proto::{EvictSrsRequest, GetStatusRequest, PreloadSrsRequest};
use cuzk_server::{AuthToken, Daemon, ListenAddr, ServeOptions, ServerError};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tonic::Code;

const TOKEN: &str = "test-token-0123456789abcdef";

fn token() -> AuthToken {
    AuthToken::new(TOKEN).expect("valid token")
}

fn engine() -> Arc<Engine> {
    let backends: Vec<Arc<dyn ProverBackend>> = vec![Arc::new(CpuProver::default())];
    let planner = Arc::new(SyntheticPlanner::default());
    Arc::new(Engine::new(test_config(), backends, planner).expect("engine"))
}

fn with_bearer<T>(msg: T, token: &str) -> tonic::Request<T> {
    let mut r = tonic::Request::new(msg);
    let v = format!("Bearer {token}").parse().expect("ascii header");
    r.metadata_mut().insert("authorization", v);
    r
}

async fn http_get(addr: std::net::SocketAddr, path: &str, auth: Option<&str>) -> String {
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let auth = auth.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Connection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.expect("write");
    let mut out = String::new();
    s.read_to_string(&mut out).await.expect("read");
    out
}

#[tokio::test]
async fn non_loopback_tcp_without_token_refuses_to_start() {
    let opts = ServeOptions::new(ListenAddr::Tcp("0.0.0.0:0".into()));
    match Daemon::start(engine(), opts).await {
        Err(ServerError::TokenRequired { listener, .. }) => assert_eq!(listener, "gRPC"),
        Err(other) => panic!("expected TokenRequired, got {other}"),
        Ok(_) => panic!("a daemon on 0.0.0.0 without a token started"),
    }
    // The metrics port follows the same rule.
    let mut opts = ServeOptions::new(ListenAddr::Tcp("127.0.0.1:0".into()));
    opts.metrics_listen = Some("0.0.0.0:0".into());
    match Daemon::start(engine(), opts).await {
        Err(e @ ServerError::TokenRequired { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains("HTTP metrics") && msg.contains("auth_token_file"),
                "{msg}"
            );
        }
        Err(other) => panic!("expected TokenRequired, got {other}"),
        Ok(_) => panic!("metrics on 0.0.0.0 without a token started"),
    }
    // With a token, the same address is allowed.
    let mut opts = ServeOptions::new(ListenAddr::Tcp("0.0.0.0:0".into()));
    opts.auth_token = Some(token());
    let d = Daemon::start(engine(), opts)
        .await
        .expect("starts with a token");
    d.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn tcp_request_without_the_configured_token_is_unauthenticated() {
    let d = start(Transport::Tcp, |_, s| {
        s.auth_token = Some(token());
        s.metrics_listen = Some("127.0.0.1:0".into());
    })
    .await;
    let mut c = d.client.clone();
    let err = c.get_status(GetStatusRequest {}).await.unwrap_err();
    assert_eq!(err.code(), Code::Unauthenticated, "{err:?}");
    assert!(err.message().contains("bearer token"), "{}", err.message());
    let wrong = c
        .get_status(with_bearer(
            GetStatusRequest {},
            "test-token-0123456789abcdeX",
        ))
        .await
        .unwrap_err();
    assert_eq!(wrong.code(), Code::Unauthenticated);
    let ok = c
        .get_status(with_bearer(GetStatusRequest {}, TOKEN))
        .await
        .expect("the token is accepted")
        .into_inner();
    assert_eq!(ok.budget_total_bytes, 2 << 30);

    let m = d
        .daemon
        .as_ref()
        .unwrap()
        .metrics_addr()
        .expect("metrics on");
    let denied = http_get(m, "/metrics", None).await;
    assert!(denied.starts_with("HTTP/1.1 401"), "{denied}");
    let wrong = http_get(m, "/metrics", Some("nope-nope-nope-nope-nope")).await;
    assert!(wrong.starts_with("HTTP/1.1 401"), "{wrong}");
    let allowed = http_get(m, "/metrics", Some(TOKEN)).await;
    assert!(allowed.starts_with("HTTP/1.1 200"), "{allowed}");
    let health = http_get(m, "/healthz", None).await;
    assert!(
        health.starts_with("HTTP/1.1 200"),
        "/healthz stays open: {health}"
    );
    d.stop().await;
}

#[tokio::test]
async fn unix_socket_never_asks_for_the_token() {
    let d = start(Transport::Unix, |_, s| s.auth_token = Some(token())).await;
    let s = d.status().await;
    assert_eq!(s.budget_total_bytes, 2 << 30);
    d.stop().await;
}

#[tokio::test]
async fn admin_rpcs_off_answer_permission_denied() {
    let d = start(Transport::Unix, |_, s| s.admin_rpcs = false).await;
    let mut c = d.client.clone();
    let id = "synthetic-whatever".to_string();
    let p = c
        .preload_srs(PreloadSrsRequest {
            circuit_id: id.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(p.code(), Code::PermissionDenied, "{p:?}");
    assert!(
        p.message().contains("admin_rpcs = false"),
        "{}",
        p.message()
    );
    let e = c
        .evict_srs(EvictSrsRequest { circuit_id: id })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied, "{e:?}");
    // The rest of the API is unaffected.
    assert_eq!(d.status().await.budget_total_bytes, 2 << 30);
    d.stop().await;
}
