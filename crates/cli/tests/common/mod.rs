//! The real `cuzk` binary as a process, shared by its tests: spawn `cuzk daemon` on a socket
//! in a temporary directory, signal it, wait for it, and make and verify synthetic requests.
#![allow(dead_code)]
use cuzk_core::kinds::synthetic::{circuit_id, parse_request, SyntheticPlanner};
use cuzk_core::Planner;
use cuzk_groth16::proof::PROOF_BYTES;
use cuzk_groth16::verifier::{verify_proof, PreparedVerifyingKey};
use cuzk_groth16::Proof;
use cuzk_server::proto::{ProofKind, ProveRequest, SubmitProofRequest};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct DaemonProcess {
    pub child: Child,
    pub addr: String,
}

impl Drop for DaemonProcess {
    fn drop(&mut self) {
        // Only if a test failed half-way: do not leave the daemon running.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Starts `cuzk daemon` with `config` on a socket in `dir` and waits for its address line.
pub fn spawn_daemon(dir: &Path, config: &str) -> DaemonProcess {
    spawn_daemon_with(dir, config, &[])
}

/// [`spawn_daemon`] with extra environment variables.
pub fn spawn_daemon_with(dir: &Path, config: &str, envs: &[(&str, &Path)]) -> DaemonProcess {
    let sock = format!("unix://{}", dir.join("d.sock").display());
    spawn_daemon_on(dir, config, envs, &sock)
}

/// [`spawn_daemon_with`] listening on `listen` (a unix socket or TCP address).
pub fn spawn_daemon_on(
    dir: &Path,
    config: &str,
    envs: &[(&str, &Path)],
    listen: &str,
) -> DaemonProcess {
    let cfg = dir.join("cuzk.toml");
    std::fs::write(&cfg, config).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .envs(envs.iter().map(|(k, v)| (*k, *v)))
        .arg("daemon")
        .arg("--config")
        .arg(&cfg)
        .arg("--listen")
        .arg(listen)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn cuzk daemon");
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let first = lines
        .next()
        .expect("daemon printed a line")
        .expect("readable");
    let addr = first
        .strip_prefix("cuzk daemon listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {first}"))
        .to_string();
    // Keep draining stdout so the daemon never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    DaemonProcess { child, addr }
}

pub fn sigterm(pid: u32) {
    let ok = Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status()
        .expect("run kill");
    assert!(ok.success());
}

pub fn wait_exit(child: &mut Child, within: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "daemon did not exit in {within:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub fn synthetic(spec: &str, id: &str) -> ProveRequest {
    ProveRequest {
        submit: Some(SubmitProofRequest {
            request_id: id.into(),
            proof_kind: ProofKind::Synthetic as i32,
            vanilla_proof: spec.as_bytes().to_vec(),
            ..Default::default()
        }),
    }
}

pub fn verify(spec: &str, proof: &[u8]) {
    let r = parse_request(spec).unwrap();
    let srs = SyntheticPlanner::default()
        .load_srs(&circuit_id(&r.spec))
        .unwrap();
    let pvk = PreparedVerifyingKey::from(srs.vk());
    assert_eq!(proof.len(), r.partitions * PROOF_BYTES);
    for c in proof.chunks(PROOF_BYTES) {
        let p = Proof::from_bytes(c).unwrap();
        assert!(verify_proof(&pvk, &p, &r.spec.public_inputs()).unwrap());
    }
}

/// Waits (at most two minutes) until the daemon behind `c` has a partition in progress.
pub async fn until_running(c: &cuzk_server::client::Client) {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut c = c.clone();
    loop {
        let s = c
            .get_status(cuzk_server::proto::GetStatusRequest {})
            .await
            .expect("GetStatus")
            .into_inner();
        if s.queues.iter().any(|q| q.in_progress >= 1) {
            return;
        }
        assert!(Instant::now() < deadline, "no job started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
