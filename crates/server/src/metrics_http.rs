//! The HTTP side door: `GET /metrics` (Prometheus text from the engine) and `GET /healthz`
//! on a port of its own, so scrapers never touch the gRPC socket. With `server.auth_token_file`
//! set, `/metrics` wants `authorization: Bearer <token>`; `/healthz` stays open.
use crate::auth::AuthToken;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use cuzk_core::Engine;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What the HTTP handlers read.
#[derive(Clone)]
pub(crate) struct HttpState {
    pub(crate) engine: Arc<Engine>,
    /// Set when shutdown starts: `/healthz` then answers 503 so a load balancer stops
    /// sending work while in-flight jobs drain.
    pub(crate) draining: Arc<AtomicBool>,
    /// The gRPC connections' counts, appended to the engine's metrics.
    pub(crate) connections: Arc<crate::admission::ConnectionStats>,
    /// The bearer token `/metrics` asks for, if configured.
    pub(crate) token: Option<AuthToken>,
}

pub(crate) fn router(state: HttpState) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .route("/healthz", get(healthz))
        .with_state(state)
}

async fn metrics(State(s): State<HttpState>, headers: HeaderMap) -> Response {
    if !crate::auth::http_allows(s.token.as_ref(), &headers) {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "missing or wrong bearer token\n",
        )
            .into_response();
    }
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        s.engine.prometheus() + &s.connections.prometheus(),
    )
        .into_response()
}

/// 200 `ok`; 200 `degraded: ...` while some device is quarantined; 503 while draining or
/// when every device is quarantined (the daemon can still try, but it is not healthy).
async fn healthz(State(s): State<HttpState>) -> impl IntoResponse {
    if s.draining.load(Ordering::Relaxed) {
        return (StatusCode::SERVICE_UNAVAILABLE, "draining\n".to_string());
    }
    let devices = s.engine.status().devices;
    let benched: Vec<String> = devices
        .iter()
        .filter(|d| d.quarantined)
        .map(|d| format!("{} quarantined after {} errors", d.name, d.errors))
        .collect();
    if benched.is_empty() {
        (StatusCode::OK, "ok\n".to_string())
    } else if benched.len() == devices.len() {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("unhealthy: {}\n", benched.join("; ")),
        )
    } else {
        (
            StatusCode::OK,
            format!("degraded: {}\n", benched.join("; ")),
        )
    }
}
