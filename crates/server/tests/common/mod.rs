//! Shared helpers of the server's integration tests: a real daemon (engine + gRPC server) on
//! a temporary unix socket or 127.0.0.1:0, a tonic client, synthetic requests and a
//! client-side verifier that re-derives the synthetic verifying key.
#![allow(dead_code)]
pub mod fc;
pub mod pb;

use cuzk_core::kinds::synthetic::{circuit_id, parse_request, SyntheticPlanner};
use cuzk_core::{Config, Engine, Planner};
use cuzk_groth16::proof::PROOF_BYTES;
use cuzk_groth16::verifier::{verify_proof, PreparedVerifyingKey};
use cuzk_groth16::{CpuProver, Proof, ProverBackend};
use cuzk_server::client::{self, Client};
use cuzk_server::proto::{
    await_proof_response, GetStatusRequest, GetStatusResponse, ProofKind, ProveRequest,
    SubmitProofRequest,
};
use cuzk_server::{Daemon, ListenAddr, ServeOptions};
use std::sync::Arc;
use std::time::Duration;

/// Which socket the daemon listens on.
#[derive(Clone, Copy, Debug)]
pub enum Transport {
    Unix,
    Tcp,
}

pub struct TestDaemon {
    pub daemon: Option<Daemon>,
    pub client: Client,
    pub addr: String,
    pub dir: tempfile::TempDir,
}

impl TestDaemon {
    pub async fn stop(mut self) {
        if let Some(d) = self.daemon.take() {
            d.shutdown().await.expect("clean shutdown");
        }
    }

    pub fn engine(&self) -> &Arc<Engine> {
        self.daemon.as_ref().expect("running").engine()
    }

    pub async fn status(&self) -> GetStatusResponse {
        self.client
            .clone()
            .get_status(GetStatusRequest {})
            .await
            .expect("GetStatus")
            .into_inner()
    }
}

/// A small, test-sized engine config.
pub fn test_config() -> Config {
    let mut c = Config::default_for_machine();
    c.budget_bytes = 2 << 30;
    c.request_buffer_bytes = 64 << 20;
    c.synthesis_concurrency = 2;
    c.prover_workers_per_device = 2;
    c.channel_capacity = 2;
    c.result_retention = Duration::from_secs(120);
    c
}

pub async fn start(
    transport: Transport,
    tweak: impl FnOnce(&mut Config, &mut ServeOptions),
) -> TestDaemon {
    start_with(transport, Arc::new(SyntheticPlanner::default()), tweak).await
}

/// [`start`] with a given planner.
pub async fn start_with(
    transport: Transport,
    planner: Arc<dyn Planner>,
    tweak: impl FnOnce(&mut Config, &mut ServeOptions),
) -> TestDaemon {
    let backends: Vec<Arc<dyn ProverBackend>> = vec![Arc::new(CpuProver::default())];
    start_with_backends(transport, planner, backends, tweak).await
}

/// [`start_with`] with given prover backends.
pub async fn start_with_backends(
    transport: Transport,
    planner: Arc<dyn Planner>,
    backends: Vec<Arc<dyn ProverBackend>>,
    tweak: impl FnOnce(&mut Config, &mut ServeOptions),
) -> TestDaemon {
    let dir = tempfile::tempdir().expect("tempdir");
    let listen = match transport {
        Transport::Unix => ListenAddr::Unix(dir.path().join("cuzk.sock")),
        Transport::Tcp => ListenAddr::Tcp("127.0.0.1:0".into()),
    };
    let mut config = test_config();
    config.params_dir = dir.path().join("params");
    let mut serve = ServeOptions::new(listen);
    serve.drain_timeout = Duration::from_secs(60);
    tweak(&mut config, &mut serve);
    let engine = Arc::new(Engine::new(config, backends, planner).expect("engine"));
    let daemon = Daemon::start(engine, serve).await.expect("daemon starts");
    let addr = daemon.addr().to_string();
    let client = client::connect(&addr).await.expect("client connects");
    TestDaemon {
        daemon: Some(daemon),
        client,
        addr,
        dir,
    }
}

/// A synthetic submit request for `spec`.
pub fn synthetic(spec: &str, request_id: &str) -> SubmitProofRequest {
    SubmitProofRequest {
        request_id: request_id.into(),
        proof_kind: ProofKind::Synthetic as i32,
        vanilla_proof: spec.as_bytes().to_vec(),
        ..Default::default()
    }
}

pub fn prove_req(spec: &str, request_id: &str) -> ProveRequest {
    ProveRequest {
        submit: Some(synthetic(spec, request_id)),
    }
}

/// Verifies a synthetic job's proof (every partition) against the verifying key re-derived
/// from the spec with the planner's setup seed.
pub fn verify_synthetic(spec: &str, proof: &[u8]) -> Result<(), String> {
    let r = parse_request(spec)?;
    let srs = SyntheticPlanner::default()
        .load_srs(&circuit_id(&r.spec))
        .map_err(|e| e.to_string())?;
    let pvk = PreparedVerifyingKey::from(srs.vk());
    let inputs = r.spec.public_inputs();
    if proof.len() != r.partitions * PROOF_BYTES {
        return Err(format!("proof is {} bytes", proof.len()));
    }
    for (i, c) in proof.chunks(PROOF_BYTES).enumerate() {
        let p = Proof::from_bytes(c).map_err(|e| e.to_string())?;
        if !verify_proof(&pvk, &p, &inputs).map_err(|e| e.to_string())? {
            return Err(format!("partition {i} does not verify"));
        }
    }
    Ok(())
}

pub fn completed() -> i32 {
    await_proof_response::Status::Completed as i32
}

pub fn status_name(n: i32) -> &'static str {
    await_proof_response::Status::try_from(n)
        .map(|s| s.as_str_name())
        .unwrap_or("?")
}

/// Polls `f` every 20 ms until it is true or `within` passes.
pub async fn eventually<F, Fut>(within: Duration, mut f: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if f().await {
            return true;
        }
        if tokio::time::Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whether some partition of `engine` is in progress within a minute.
pub async fn until_running(engine: &Arc<Engine>) -> bool {
    eventually(Duration::from_secs(60), || {
        let e = engine.clone();
        async move { e.status().queues.iter().any(|q| q.in_progress >= 1) }
    })
    .await
}

/// Sends `body` as the one message of a unary call and returns the grpc-status it gets.
pub async fn raw_unary(addr: &str, method: &str, body: &[u8]) -> tonic::Code {
    let path = addr.strip_prefix("unix://").expect("a unix address");
    let io = tokio::net::UnixStream::connect(path)
        .await
        .expect("connect");
    let (mut send, conn) = h2::client::handshake(io).await.expect("h2 handshake");
    tokio::spawn(conn);
    let req = http::Request::post(format!("http://localhost/cuzk.v1.ProvingEngine/{method}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .unwrap();
    let (resp, mut stream) = send.send_request(req, false).expect("send");
    let mut framed = vec![0u8];
    framed.extend((body.len() as u32).to_be_bytes());
    framed.extend_from_slice(body);
    stream.send_data(framed.into(), true).expect("body");
    let resp = resp.await.expect("response");
    let status = |h: &http::HeaderMap| {
        h.get("grpc-status")
            .map(|v| tonic::Code::from_bytes(v.as_bytes()))
    };
    if let Some(code) = status(resp.headers()) {
        return code;
    }
    let mut body = resp.into_body();
    while body.data().await.is_some() {}
    let trailers = body.trailers().await.expect("trailers").expect("some");
    status(&trailers).expect("grpc-status")
}
