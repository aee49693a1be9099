//! The real thing, small: the CPU prover and synthetic circuits, 32 concurrent jobs under a
//! budget far below what they would need unthrottled. Peak RSS stays within the budget plus
//! 10% plus a measured fixed baseline, and every proof verifies.
//!
//! Alone in its own test binary so no other test's allocations show in the RSS, and run in a
//! child process with glibc's allocator in the regime production sizes put it in: buffers of
//! 128 KiB and more are mmapped and returned on free (`MALLOC_MMAP_THRESHOLD_`), as a real
//! partition's multi-GiB vectors always are, and two arenas (`MALLOC_ARENA_MAX`). Without
//! that, glibc's per-thread arenas keep freed test-sized (256 KiB) buffers and the RSS
//! measures allocator retention rather than the engine (measured: VmHWM 41.6 MB against a
//! 19.1 MB budget with default settings, 16.5 MB with these).
use cuzk_core::kinds::synthetic::{circuit_id, parse_request, SyntheticPlanner};
use cuzk_core::{current_rss_bytes, peak_rss_bytes};
use cuzk_core::{Config, Engine, JobState, Planner, Priority, ProofRequest, WorkingSetEstimate};
use cuzk_groth16::proof::{Proof, PROOF_BYTES};
use cuzk_groth16::verifier::{verify_proof, PreparedVerifyingKey};
use cuzk_groth16::CpuProver;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SPEC: &str = "synthetic:constraints=2^13,inputs=4,seed=11,partitions=2";
const JOBS: usize = 32;

/// Resets VmHWM to the current RSS (Linux `clear_refs` value 5).
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

const TEST_NAME: &str = "thirty_two_cpu_jobs_stay_within_budget_and_verify";

#[test]
fn thirty_two_cpu_jobs_stay_within_budget_and_verify() {
    if std::env::var_os("CUZK_RSS_CHILD").is_some() {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
            .block_on(run());
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", TEST_NAME, "--nocapture", "--test-threads=1"])
        .env("CUZK_RSS_CHILD", "1")
        .env("MALLOC_ARENA_MAX", "2")
        .env("MALLOC_MMAP_THRESHOLD_", "131072")
        .env("MALLOC_TRIM_THRESHOLD_", "131072")
        .output()
        .expect("re-run this test in a child process");
    print!("{}", String::from_utf8_lossy(&out.stdout));
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "child failed: {:?}", out.status);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("VmHWM"), "the child ran the measurement");
}

async fn run() {
    let planner = Arc::new(SyntheticPlanner::default());
    let r = parse_request(SPEC).unwrap();
    let id = circuit_id(&r.spec);
    let (c, i, a) = SyntheticPlanner::shape(&r.spec).unwrap();
    let per_partition = WorkingSetEstimate::from_shape(c, i, a).admission_bytes();
    let srs_bound = planner.srs_size_hint(&id).unwrap();
    let unthrottled = srs_bound + (JOBS * r.partitions) as u64 * per_partition;

    let mut config = Config::default_for_machine();
    config.request_buffer_bytes = 1 << 20;
    // Room for the SRS and four partitions: a sixth of what 64 partitions would take at once.
    config.budget_bytes = srs_bound + 4 * per_partition + config.request_buffer_bytes;
    config.synthesis_concurrency = 2;
    assert!(config.budget_bytes * 4 < unthrottled);
    let budget = config.budget_bytes;
    let engine = Engine::new(config, vec![Arc::new(CpuProver::new())], planner.clone()).unwrap();

    // Generating the test SRS allocates temporaries outside any reservation; do it first,
    // then take the baseline: RSS not covered by reservations, and reset the peak.
    let t = Instant::now();
    engine.preload_srs(&id).await.unwrap();
    println!("SRS generated in {:.2} s", t.elapsed().as_secs_f64());
    tokio::time::sleep(Duration::from_millis(50)).await;
    let rss = current_rss_bytes().expect("VmRSS");
    let reserved = engine.budget().reserved();
    let baseline = rss.saturating_sub(reserved);
    let reset = reset_peak_rss();

    let t = Instant::now();
    let mut handles = Vec::new();
    for j in 0..JOBS {
        let e = engine.clone();
        handles.push(tokio::spawn(async move {
            let sub = e
                .submit(ProofRequest {
                    request_id: format!("real-{j}"),
                    priority: Priority::Normal,
                    ..ProofRequest::synthetic(SPEC)
                })
                .unwrap();
            e.wait(&sub.job_id, None).await.unwrap()
        }));
    }
    let mut proofs = Vec::new();
    for h in handles {
        let o = h.await.unwrap();
        match o.state {
            JobState::Completed { proof } => proofs.push(proof),
            other => panic!("{}: {other:?}", o.job_id),
        }
    }
    let wall = t.elapsed();
    let hwm = peak_rss_bytes().expect("VmHWM");
    let status = engine.status();
    let allowed = budget + budget / 10 + baseline;
    println!(
        "{JOBS} jobs x {} partitions in {:.2} s ({:.3} s/proof); budget {budget} B, peak reserved {} B, \
         unthrottled need {unthrottled} B; baseline {baseline} B (RSS {rss} B - reserved {reserved} B); \
         VmHWM {hwm} B (reset: {reset}), allowed {allowed} B",
        r.partitions,
        wall.as_secs_f64(),
        wall.as_secs_f64() / JOBS as f64,
        status.budget.peak,
    );
    assert!(status.budget.peak <= budget);
    if reset {
        assert!(hwm <= allowed, "VmHWM {hwm} > {allowed}");
    }

    // Every proof verifies, independently of the engine's own self-check.
    let srs = planner.load_srs(&id).unwrap();
    let pvk = PreparedVerifyingKey::from(srs.vk());
    let inputs = r.spec.public_inputs();
    assert_eq!(proofs.len(), JOBS);
    let mut seen = std::collections::HashSet::new();
    for p in &proofs {
        assert_eq!(p.len(), r.partitions * PROOF_BYTES);
        for chunk in p.chunks(PROOF_BYTES) {
            let proof = Proof::from_bytes(chunk).unwrap();
            assert!(verify_proof(&pvk, &proof, &inputs).unwrap());
            assert!(seen.insert(chunk.to_vec()), "proofs are randomized");
        }
    }
    // A tampered proof does not verify (the check can fail).
    let mut bad = Proof::from_bytes(&proofs[0][..PROOF_BYTES]).unwrap();
    bad.a = Proof::from_bytes(&proofs[1][..PROOF_BYTES]).unwrap().a;
    assert!(!verify_proof(&pvk, &bad, &inputs).unwrap());
    engine.shutdown(Duration::from_secs(10)).await;
    assert_eq!(engine.budget().reserved(), 0);
}
