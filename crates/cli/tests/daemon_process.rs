//! The real `cuzk` binary as a process: `cuzk daemon` drains on SIGTERM and exits 0, and
//! `cuzk bench batch` / `cuzk status` work against it.
mod common;

use common::*;
use cuzk_groth16::proof::PROOF_BYTES;
use cuzk_server::proto::{await_proof_response, GetStatusRequest};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Proves `spec` in the background, SIGTERMs the daemon once the job runs, and returns the
/// in-flight result and the exit status.
fn prove_then_sigterm(
    config: &str,
    spec: &'static str,
) -> (
    cuzk_server::proto::AwaitProofResponse,
    std::process::ExitStatus,
) {
    let dir = tempfile::tempdir().unwrap();
    let mut d = spawn_daemon(dir.path(), config);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let addr = d.addr.clone();
    let pid = d.child.id();
    let result = rt.block_on(async move {
        let c = cuzk_server::client::connect(&addr).await.expect("connect");
        let mut c2 = c.clone();
        let inflight = tokio::spawn(async move { c2.prove(synthetic(spec, "sigterm")).await });
        until_running(&c).await;
        sigterm(pid);
        inflight
            .await
            .unwrap()
            .expect("in-flight Prove answered")
            .into_inner()
            .result
            .unwrap()
    });
    let status = wait_exit(&mut d.child, Duration::from_secs(180));
    assert!(!dir.path().join("d.sock").exists(), "socket removed");
    (result, status)
}

#[test]
fn sigterm_while_proving_completes_in_flight_and_exits_0() {
    let spec = "synthetic:constraints=4096,inputs=2,partitions=4";
    let (r, status) = prove_then_sigterm(
        "[server]\ndrain_timeout = \"3m\"\n[memory]\nbudget = \"2GiB\"\n[allow]\nsynthetic = true\n",
        spec,
    );
    assert_eq!(
        r.status,
        await_proof_response::Status::Completed as i32,
        "{}",
        r.error_message
    );
    verify(spec, &r.proof);
    assert!(status.success(), "exit status {status:?}");
}

#[test]
fn sigterm_past_the_drain_timeout_reports_cancelled_and_exits_0() {
    let spec = "synthetic:constraints=8192,inputs=2,partitions=24";
    let (r, status) = prove_then_sigterm(
        "[server]\ndrain_timeout = \"10ms\"\n[memory]\nbudget = \"2GiB\"\n\
         [pipeline]\nsynthesis_concurrency = 1\n[allow]\nsynthetic = true\n",
        spec,
    );
    assert_eq!(
        r.status,
        await_proof_response::Status::Cancelled as i32,
        "{}",
        r.error_message
    );
    assert!(status.success(), "exit status {status:?}");
}

#[test]
fn bench_batch_and_status_against_a_running_daemon() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = spawn_daemon(
        dir.path(),
        "[memory]\nbudget = \"2GiB\"\n[allow]\nsynthetic = true\n",
    );
    let svg = dir.path().join("timeline.svg");
    let out = Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(["bench", "batch", "--addr", &d.addr, "--kind", "synthetic"])
        .args(["--spec", "synthetic:constraints=1024,inputs=2,partitions=2"])
        .args(["-c", "2", "-j", "4", "--verify", "--timeline"])
        .arg(&svg)
        .output()
        .expect("run cuzk bench");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("4 completed, 0 did not complete; on the client: 4 verified, 0 rejected"),
        "{stdout}"
    );
    // The CPU prover has no device timing; the daemon's interlock gives the busy figure.
    assert!(
        stdout.contains("device 0 cpu: busy") && stdout.contains("device interlock"),
        "{stdout}"
    );
    assert!(stdout.contains("s/proof"), "{stdout}");
    assert!(stdout.contains("peak RSS"), "{stdout}");
    let picture = std::fs::read_to_string(&svg).expect("timeline written");
    assert!(picture.contains("8 partitions"), "4 jobs x 2 partitions");

    let out = Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(["status", "--addr", &d.addr])
        .output()
        .expect("run cuzk status");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(stdout.contains("4 completed"), "{stdout}");

    // Preload / evict through the bench client.
    let id = "synthetic:constraints=1024,inputs=2";
    let out = Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(["bench", "evict", "--addr", &d.addr, id])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(["bench", "preload", "--addr", &d.addr, "porep-1t"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("InvalidArgument"));

    sigterm(d.child.id());
    assert!(wait_exit(&mut d.child, Duration::from_secs(60)).success());
}

/// Issue 15 item 1: `cuzk daemon` planned any synthetic spec a client sent (one with
/// `inputs=2^40` aborted the process). By default it now refuses synthetic requests and
/// synthetic circuit ids with FAILED_PRECONDITION, and keeps serving.
#[test]
fn daemon_refuses_synthetic_requests_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = spawn_daemon(dir.path(), "[memory]\nbudget = \"2GiB\"\n");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let addr = d.addr.clone();
    rt.block_on(async move {
        let mut c = cuzk_server::client::connect(&addr).await.expect("connect");
        for spec in [
            "synthetic:constraints=1,inputs=1099511627776",
            "synthetic:constraints=1024,inputs=2",
        ] {
            let e = c.prove(synthetic(spec, spec)).await.unwrap_err();
            assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{spec}: {e:?}");
            assert!(e.message().contains("[allow] synthetic"), "{}", e.message());
        }
        let e = c
            .preload_srs(cuzk_server::proto::PreloadSrsRequest {
                circuit_id: "synthetic:constraints=2^30".into(),
            })
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e:?}");
        // Still serving.
        c.get_status(GetStatusRequest {}).await.expect("status");
    });
    sigterm(d.child.id());
    assert!(wait_exit(&mut d.child, Duration::from_secs(60)).success());
}

/// The 2 KiB data (parameters included) every test binary of the target dir shares, with
/// cuzk-filecoin's seed: generated on first use, under a file lock.
fn testdata_2k() -> std::path::PathBuf {
    cuzk_testkit::testdata::shared_2k(Path::new(env!("CARGO_TARGET_TMPDIR")))
        .expect("2 KiB test data")
        .0
}

/// Issue 15 item 8, the real daemon: `cuzk daemon` with the CPU prover and real 2 KiB
/// circuits, saturated with PoRep jobs (one 2.7 M-constraint partition each at 2 KiB). A
/// CRITICAL WinningPoSt must wait for a prover at most one PoRep partition's prover time, a
/// HIGH WindowPoSt at most two (plus 25% for this shared 2-core machine), measured from the
/// daemon's own timeline.
#[test]
fn critical_and_high_overtake_a_saturating_porep_load_in_the_real_daemon() {
    use cuzk_server::proto::{AwaitProofRequest, GetTimelineRequest, Priority};
    let data = testdata_2k();
    let manifest = data.join(cuzk_testkit::testdata::MANIFEST);
    let template = |kind: &str| {
        cuzk_bench::request_file::load(&manifest, Some(kind))
            .expect("request template")
            .request
    };
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "[memory]\nbudget = \"8GiB\"\n[srs]\nparams_dir = \"{}\"\n[pipeline]\nsynthesis_concurrency = 2\n",
        data.display()
    );
    let cache = format!("{}/", data.display());
    let d = spawn_daemon_with(
        dir.path(),
        &config,
        &[
            ("FIL_PROOFS_PARAMETER_CACHE", data.as_path()),
            ("FIL_PROOFS_CACHE_DIR", Path::new(&cache)),
        ],
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = cuzk_server::client::connect(&d.addr)
            .await
            .expect("connect");
        let mut bulk = Vec::new();
        for i in 0..12 {
            let mut r = template("porep");
            r.request_id = format!("bulk-{i}");
            r.priority = Priority::Normal as i32;
            bulk.push(c.submit_proof(r).await.expect("submit").into_inner().job_id);
        }
        // Saturated: PoRep partitions proving, more waiting.
        let timeline = |mut c: cuzk_server::client::Client| async move {
            c.get_timeline(GetTimelineRequest {})
                .await
                .expect("timeline")
                .into_inner()
                .partitions
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let rows = timeline(c.clone()).await;
            let proved = rows.iter().filter(|r| r.prove_start_us > 0).count();
            if proved >= 2 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the PoRep load never started proving"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let mut urgent = Vec::new();
        for (kind, prio, allowed) in [
            ("wpost", Priority::High, 2.0),
            ("winning", Priority::Critical, 1.0),
        ] {
            let mut r = template(kind);
            r.request_id = format!("urgent-{kind}");
            r.priority = prio as i32;
            let job = c.submit_proof(r).await.expect("submit").into_inner().job_id;
            let done = c
                .await_proof(AwaitProofRequest {
                    job_id: job.clone(),
                    timeout_ms: 300_000,
                })
                .await
                .expect("await")
                .into_inner();
            assert_eq!(
                done.status,
                await_proof_response::Status::Completed as i32,
                "{kind}: {}",
                done.error_message
            );
            urgent.push((kind, job, allowed));
        }
        let rows = timeline(c.clone()).await;
        let porep: Vec<f64> = rows
            .iter()
            .filter(|r| bulk.contains(&r.job_id) && r.prove_end_us > 0)
            .map(|r| (r.prove_end_us - r.prove_start_us) as f64 / 1e3)
            .collect();
        let prover_ms = porep.iter().sum::<f64>() / porep.len() as f64;
        for (kind, job, allowed) in urgent {
            let r = rows.iter().find(|r| r.job_id == job).expect("urgent row");
            let synth = r.synthesis_end_us - r.synthesis_start_us;
            let wait_ms = (r.prove_start_us - r.queued_us - synth) as f64 / 1e3;
            let limit = allowed * prover_ms * 1.25 + 20.0;
            // Saturated: PoRep partitions queued before it still waited when it went ahead.
            let overtaken = rows
                .iter()
                .filter(|b| {
                    bulk.contains(&b.job_id)
                        && b.queued_us < r.prove_start_us
                        && (b.prove_start_us == 0 || b.prove_start_us > r.prove_start_us)
                })
                .count();
            println!(
                "{kind}: waited {wait_ms:.0} ms for a prover, ahead of {overtaken} waiting PoRep \
                 partitions; a PoRep partition proves in {prover_ms:.0} ms (allowed {limit:.0} ms)"
            );
            assert!(
                overtaken >= 4,
                "{kind}: only {overtaken} PoRep partitions waited"
            );
            assert!(
                wait_ms <= limit,
                "{kind} waited {wait_ms:.0} ms, allowed {limit:.0}"
            );
        }
        for j in bulk {
            let _ = c
                .cancel_proof(cuzk_server::proto::CancelProofRequest { job_id: j })
                .await;
        }
    });
    let mut d = d;
    sigterm(d.child.id());
    assert!(wait_exit(&mut d.child, Duration::from_secs(120)).success());
}

/// Issue 12 item 2 at 2 KiB: `cuzk gen timing-params` writes a real circuit's TIMING-ONLY
/// parameters under Filecoin's names with its blank circuit's section counts; `cuzk daemon`
/// refuses them by default, and with `[allow] timing_only` proves with them and says in the
/// result that the proof does not verify.
#[test]
fn timing_only_parameters_are_refused_by_default_and_labelled_when_allowed() {
    use cuzk_server::proto::AwaitProofRequest;
    let data = testdata_2k();
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("timing-params");
    let out = Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(["gen", "timing-params", "--circuit", "wpost-2k", "--out"])
        .arg(&params)
        .output()
        .expect("run cuzk gen timing-params");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("DO NOT VERIFY"));
    let id: cuzk_filecoin::CircuitId = "wpost-2k".parse().unwrap();
    let files = id.param_files().unwrap();
    let (srs, _) = cuzk_groth16::params::read_params(
        &files.params_path(&params),
        &cuzk_groth16::params::ReadOptions::default(),
    )
    .expect("the written file reads back");
    assert!(srs.vk().is_timing_only());
    let s = cuzk_filecoin::params::param_sections(id).unwrap();
    assert_eq!(
        (
            srs.vk().ic.len(),
            srs.h().len(),
            srs.l().len(),
            srs.a().len(),
            srs.b_g1().len()
        ),
        (s.ic, s.h, s.l, s.a, s.b)
    );
    assert!(params
        .join("TIMING-ONLY-PARAMETERS-DO-NOT-VERIFY.txt")
        .exists());

    let manifest = data.join(cuzk_testkit::testdata::MANIFEST);
    let wpost = cuzk_bench::request_file::load(&manifest, Some("wpost"))
        .expect("wpost template")
        .request;
    let rt = tokio::runtime::Runtime::new().unwrap();
    for allow in [false, true] {
        let ddir = tempfile::tempdir().unwrap();
        let config = format!(
            "[memory]\nbudget = \"4GiB\"\n[srs]\nparams_dir = \"{}\"\n[allow]\ntiming_only = {allow}\n",
            params.display()
        );
        let cache = format!("{}/", params.display());
        let mut d = spawn_daemon_with(
            ddir.path(),
            &config,
            &[
                ("FIL_PROOFS_PARAMETER_CACHE", params.as_path()),
                ("FIL_PROOFS_CACHE_DIR", Path::new(&cache)),
            ],
        );
        let r = rt.block_on(async {
            let mut c = cuzk_server::client::connect(&d.addr)
                .await
                .expect("connect");
            let mut req = wpost.clone();
            req.request_id = format!("timing-{allow}");
            let job = c
                .submit_proof(req)
                .await
                .expect("submit")
                .into_inner()
                .job_id;
            c.await_proof(AwaitProofRequest {
                job_id: job,
                timeout_ms: 120_000,
            })
            .await
            .expect("await")
            .into_inner()
        });
        if allow {
            assert_eq!(
                r.status,
                await_proof_response::Status::Completed as i32,
                "{}",
                r.error_message
            );
            assert!(
                r.error_message.contains("DOES NOT VERIFY"),
                "{}",
                r.error_message
            );
            assert_eq!(r.proof.len(), PROOF_BYTES);
        } else {
            assert_eq!(r.status, await_proof_response::Status::Failed as i32);
            assert!(
                r.error_message.contains("TIMING-ONLY"),
                "{}",
                r.error_message
            );
            assert!(
                r.error_message.contains("[allow] timing_only"),
                "{}",
                r.error_message
            );
        }
        sigterm(d.child.id());
        assert!(wait_exit(&mut d.child, Duration::from_secs(60)).success());
    }
}

/// `cuzk status --token-file` against a daemon whose TCP listener wants a bearer token:
/// with the token it answers, without it the daemon refuses (UNAUTHENTICATED).
#[test]
fn client_commands_send_the_token_file_to_a_token_protected_tcp_listener() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "0123456789abcdef0123456789abcdef\n").unwrap();
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
    let config = format!(
        "[memory]\nbudget = \"2GiB\"\n[server]\nauth_token_file = \"{}\"\n",
        token.display()
    );
    let mut d = spawn_daemon_on(dir.path(), &config, &[], "127.0.0.1:0");
    let addr = d.addr.clone();
    let status = |with_token: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_cuzk"));
        c.args(["status", "--addr", &addr])
            .env_remove("CUZK_TOKEN_FILE");
        if with_token {
            c.arg("--token-file").arg(&token);
        }
        c.output().expect("run cuzk status")
    };
    let ok = status(true);
    assert!(
        ok.status.success(),
        "{}{}",
        String::from_utf8_lossy(&ok.stdout),
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(String::from_utf8_lossy(&ok.stdout).contains("up "));
    let refused = status(false);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("Unauthenticated") || err.contains("UNAUTHENTICATED"),
        "{err}"
    );
    sigterm(d.child.id());
    assert!(wait_exit(&mut d.child, Duration::from_secs(60)).success());
}
