//! Regression tests for the engine's front door (issue 15): request-id idempotency that a
//! retry or another client could misuse, guessable job ids, and a planner panic that used to
//! reach the caller as a reset stream.
mod common;

use common::{fake_srs, sim_config, FakeBackend, FakePlanner};
use cuzk_core::{Engine, EngineError, JobPlan, JobState, Planner, Priority, ProofRequest};
use cuzk_groth16::Srs;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

fn req(id: &str, payload: &str) -> ProofRequest {
    ProofRequest {
        request_id: id.into(),
        priority: Priority::Normal,
        ..ProofRequest::synthetic(payload)
    }
}

/// Where each `whereami` partition's parallel synthesis ran: (its priority, thread names).
static WHERE: std::sync::Mutex<Vec<(Priority, Vec<String>)>> = std::sync::Mutex::new(Vec::new());

/// [`FakePlanner`], except that payload `whereami` plans partitions that record which
/// threads their synthesis ran on, payload `fail` plans partitions whose synthesis fails and
/// payload `panic` panics inside `plan`, as a proof kind's code meeting unexpected input would.
struct Tricky(FakePlanner);

impl Planner for Tricky {
    fn plan(&self, req: ProofRequest) -> Result<JobPlan, EngineError> {
        match common::spec(&req) {
            "panic" => panic!("field element is not canonical"),
            "fail" => {
                let mut plan = self.0.plan(req)?;
                for p in &mut plan.partitions {
                    p.synthesize =
                        std::sync::Arc::new(|_| Err("synthesis failed on purpose".into()));
                }
                Ok(plan)
            }
            "whereami" => {
                // Records where the synthesis and its parallel work ran, per priority.
                let prio = req.priority;
                let shape = self.0.shape();
                let mut plan = self.0.plan(req)?;
                for p in &mut plan.partitions {
                    p.synthesize = std::sync::Arc::new(move |_| {
                        use rayon::prelude::*;
                        let names: Vec<String> = (0..16)
                            .into_par_iter()
                            .map(|_| std::thread::current().name().unwrap_or("").to_string())
                            .collect();
                        WHERE.lock().unwrap().push((prio, names));
                        Ok(FakePlanner::synthesized(shape))
                    });
                }
                Ok(plan)
            }
            _ => self.0.plan(req),
        }
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

fn engine(synth: Duration) -> Engine {
    let planner = FakePlanner {
        partitions: 2,
        constraints: 1024,
        synth,
        srs_points: 100,
        live: Default::default(),
    };
    let budget = (1 << 26) + fake_srs(100).size_bytes();
    Engine::new(
        sim_config(budget),
        vec![Arc::new(FakeBackend::new(1, 0))],
        Arc::new(Tricky(planner)),
    )
    .expect("engine")
}

/// A retry after a cancel or a failure got the old CANCELLED / FAILED outcome back for the
/// whole retention time; it must start a new job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_id_retry_after_cancel_or_failure_starts_a_new_job() {
    let e = engine(Duration::from_millis(200));
    let a = e.submit(req("retry-1", "ok")).unwrap();
    e.cancel(&a.job_id).unwrap();
    assert!(matches!(
        e.wait(&a.job_id, None).await.unwrap().state,
        JobState::Cancelled
    ));
    let b = e.submit(req("retry-1", "ok")).unwrap();
    assert!(!b.duplicate, "a cancelled job is not the retry's answer");
    assert_ne!(a.job_id, b.job_id);
    assert!(matches!(
        e.wait(&b.job_id, None).await.unwrap().state,
        JobState::Completed { .. }
    ));
    // Now completed: the same request is idempotent again.
    let c = e.submit(req("retry-1", "ok")).unwrap();
    assert!(c.duplicate);
    assert_eq!(c.job_id, b.job_id);
    // The cancelled job's own outcome stays readable by its id.
    assert!(matches!(
        e.wait(&a.job_id, None).await.unwrap().state,
        JobState::Cancelled
    ));

    let f = e.submit(req("retry-2", "fail")).unwrap();
    assert!(matches!(
        e.wait(&f.job_id, None).await.unwrap().state,
        JobState::Failed { .. }
    ));
    let g = e.submit(req("retry-2", "fail")).unwrap();
    assert!(!g.duplicate, "a failed job is not the retry's answer");
    assert_ne!(f.job_id, g.job_id);
}

/// Any client could pre-claim a predictable request id with another payload and have the
/// real request answered with the wrong job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_id_of_another_request_is_a_conflict() {
    let e = engine(Duration::from_millis(1));
    let a = e.submit(req("sector-1234", "ok")).unwrap();
    let other = req("sector-1234", "other");
    match e.submit(other) {
        Err(EngineError::RequestIdConflict(m)) => {
            assert!(m.contains("sector-1234") && m.contains(&a.job_id), "{m}")
        }
        r => panic!("expected a conflict, got {r:?}"),
    }
    // Another kind of work under the id is another request too (each field of a Filecoin
    // request counts: `request.rs`' digest test).
    let porep = cuzk_filecoin::ProofRequest::new(cuzk_filecoin::ProofKind::PoRepSealCommit, 0, 5);
    let other = ProofRequest::filecoin(porep.unwrap()).with_id("sector-1234");
    assert!(matches!(
        e.submit(other),
        Err(EngineError::RequestIdConflict(_))
    ));
    // The priority is not part of the request: a retry at another priority is the same job.
    let mut same = req("sector-1234", "ok");
    same.priority = Priority::High;
    assert_eq!(e.submit(same).unwrap().job_id, a.job_id);
    // An overlong id is cut in the message.
    let long = "x".repeat(10_000);
    e.submit(req(&long, "ok")).unwrap();
    match e.submit(req(&long, "other")) {
        Err(e) => assert!(e.to_string().len() < 1024, "{} bytes", e.to_string().len()),
        Ok(_) => panic!("conflict expected"),
    }
}

/// Job ids were `job-00000001`, `job-00000002`…: any client could wait on or cancel
/// another's jobs by counting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_ids_are_random_not_sequential() {
    let e = engine(Duration::from_millis(1));
    let ids: Vec<String> = (0..16)
        .map(|_| e.submit(req("", "ok")).unwrap().job_id)
        .collect();
    for id in &ids {
        let hex = id.strip_prefix("job-").expect("job- prefix");
        assert_eq!(hex.len(), 16, "{id}");
        assert!(hex.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
    }
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ids.len());
    assert!(
        ids.windows(2).any(|w| w[1] < w[0]),
        "ids must not ascend with submission: {ids:?}"
    );
    for id in ids {
        e.wait(&id, None).await.unwrap();
    }
}

/// A panic inside planning (non-canonical field elements hit an `.expect` in the Filecoin
/// crates) unwound through the gRPC handler: the client saw a reset stream, not an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_in_planning_is_an_invalid_request_and_the_engine_serves_on() {
    let e = engine(Duration::from_millis(1));
    match e.submit_async(req("p", "panic")).await {
        Err(EngineError::InvalidRequest(m)) => {
            assert!(m.contains("field element is not canonical"), "{m}")
        }
        r => panic!("expected InvalidRequest, got {r:?}"),
    }
    let ok = e.submit(req("q", "ok")).unwrap();
    assert!(matches!(
        e.wait(&ok.job_id, None).await.unwrap().state,
        JobState::Completed { .. }
    ));
}

/// Priority decided only who left the admission queue first: a CRITICAL partition then waited
/// behind a bulk partition parked for memory or a synthesis slot, and behind every
/// synthesized PoRep partition in the FIFO channel to the provers. Under a saturating NORMAL
/// load, a CRITICAL partition's wait for a prover (from submit to `start`, less its own
/// synthesis) must stay within one partition's prover time, a HIGH one's within two.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn critical_and_high_wait_at_most_one_and_two_prover_times_under_load() {
    const PROVE_MS: u64 = 150;
    let planner = FakePlanner {
        partitions: 4,
        constraints: 1024,
        synth: Duration::from_millis(20),
        srs_points: 100,
        live: Default::default(),
    };
    let mut config = sim_config((1 << 28) + fake_srs(100).size_bytes());
    config.synthesis_concurrency = 4;
    let e = Engine::new(
        config,
        vec![Arc::new(FakeBackend::new(PROVE_MS, 0))],
        Arc::new(planner),
    )
    .expect("engine");
    let bulk: Vec<String> = (0..12)
        .map(|i| e.submit(req(&format!("bulk-{i}"), "ok")).unwrap().job_id)
        .collect();
    // Let the bulk work fill every stage: slots, the provers' queue, the device.
    tokio::time::sleep(Duration::from_millis(4 * PROVE_MS)).await;
    // One urgent job at a time (a CRITICAL one waits behind another CRITICAL one's
    // partitions, as it should): HIGH first, then CRITICAL, the bulk load running throughout.
    let mut urgent = Vec::new();
    for (prio, id) in [(Priority::High, "high"), (Priority::Critical, "crit")] {
        let mut r = req(id, "ok");
        r.priority = prio;
        let job = e.submit(r).unwrap().job_id;
        assert!(matches!(
            e.wait(&job, None).await.unwrap().state,
            JobState::Completed { .. }
        ));
        urgent.push((prio, job));
    }
    let rows = e.timeline();
    let busy_bulk = rows
        .iter()
        .filter(|r| bulk.contains(&r.job_id) && r.prove_start.is_none())
        .count();
    assert!(
        busy_bulk > 8,
        "the bulk load still queued {busy_bulk} partitions: saturated"
    );
    for (prio, id) in &urgent {
        // The job's first partition to reach a prover.
        let first = rows
            .iter()
            .filter(|r| &r.job_id == id)
            .min_by_key(|r| r.prove_start.expect("proved"))
            .unwrap();
        let synth = first.synth_end.unwrap() - first.synth_start.unwrap();
        let wait = first.prove_start.unwrap() - first.queued - synth;
        let allowed =
            Duration::from_millis(PROVE_MS * if *prio == Priority::Critical { 1 } else { 2 });
        println!("{prio} waited {wait:?} for a prover (allowed {allowed:?})");
        assert!(
            wait <= allowed + Duration::from_millis(60),
            "{prio} waited {wait:?}, more than {allowed:?}"
        );
    }
    for id in bulk {
        e.cancel(&id).unwrap();
    }
    e.shutdown(Duration::from_secs(10)).await;
}

/// A backend that fails `start` with a device error: always, or only its first `n` calls.
struct Flaky {
    inner: FakeBackend,
    name: &'static str,
    fail_first: usize,
    calls: std::sync::atomic::AtomicUsize,
}

impl Flaky {
    fn new(name: &'static str, fail_first: usize) -> Flaky {
        Flaky {
            inner: FakeBackend::new(1, 0),
            name,
            fail_first,
            calls: Default::default(),
        }
    }
    fn calls(&self) -> usize {
        self.calls.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl cuzk_groth16::ProverBackend for Flaky {
    fn name(&self) -> String {
        self.name.into()
    }
    fn start(
        &self,
        srs: &Srs,
        circuit: cuzk_groth16::Synthesized,
        r: cuzk_groth16::Scalar,
        s: cuzk_groth16::Scalar,
    ) -> Result<cuzk_groth16::Pending, cuzk_groth16::ProveError> {
        let n = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if n < self.fail_first {
            return Err(cuzk_groth16::ProveError::Device(format!(
                "{}: illegal memory access (call {n})",
                self.name
            )));
        }
        self.inner.start(srs, circuit, r, s)
    }
    fn finish(
        &self,
        srs: &Srs,
        pending: cuzk_groth16::Pending,
    ) -> Result<cuzk_groth16::Proof, cuzk_groth16::ProveError> {
        self.inner.finish(srs, pending)
    }
}

fn flaky_engine(devices: Vec<Arc<Flaky>>, partitions: usize) -> Engine {
    let planner = FakePlanner {
        partitions,
        constraints: 1024,
        synth: Duration::from_millis(5),
        srs_points: 100,
        live: Default::default(),
    };
    let mut config = sim_config((1 << 28) + fake_srs(100).size_bytes());
    // One worker per device, so the count of calls to a failing device is exact.
    config.prover_workers_per_device = 1;
    config.channel_capacity = 1;
    config.quarantine_after = 3;
    let backends = devices
        .into_iter()
        .map(|d| d as Arc<dyn cuzk_groth16::ProverBackend>)
        .collect();
    Engine::new(config, backends, Arc::new(planner)).expect("engine")
}

async fn outcome(e: &Engine, job: &str) -> JobState {
    e.wait(job, Some(Duration::from_secs(30)))
        .await
        .expect("wait")
        .state
}

/// Issue 15 item 10: a device error failed the whole job, and a device that kept failing
/// kept taking work. Now the partition is retried (on the healthy device), the failing
/// device is quarantined after 3 errors in a row and takes nothing more, and status says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_device_is_retried_around_and_quarantined() {
    let bad = Arc::new(Flaky::new("bad", usize::MAX));
    let good = Arc::new(Flaky::new("good", 0));
    let e = flaky_engine(vec![bad.clone(), good.clone()], 2);
    let jobs: Vec<String> = (0..8)
        .map(|i| e.submit(req(&format!("j{i}"), "ok")).unwrap().job_id)
        .collect();
    for j in &jobs {
        let s = outcome(&e, j).await;
        assert!(matches!(s, JobState::Completed { .. }), "{j}: {s:?}");
    }
    assert_eq!(
        bad.calls(),
        3,
        "the bad device took work after its quarantine"
    );
    // Every partition started once on the good device: 13 first tries, 3 retries.
    assert_eq!(good.calls(), 16);
    let st = e.status();
    let (b, g) = (&st.devices[0], &st.devices[1]);
    assert!(b.quarantined && b.errors == 3, "{b:?}");
    assert!(!g.quarantined && g.errors == 0, "{g:?}");
    let text = e.prometheus();
    assert!(
        text.contains("cuzk_device_quarantined{device=\"bad\",index=\"0\"} 1"),
        "{text}"
    );
    e.shutdown(Duration::from_secs(5)).await;
}

/// With one device, a partition is retried once on it (another worker, a fresh synthesis);
/// a second error fails the job and says so, and one success clears the run of errors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_device_retries_once_then_fails_the_job() {
    let once = Arc::new(Flaky::new("once", 1));
    let e = flaky_engine(vec![once.clone()], 1);
    let j = e.submit(req("first", "ok")).unwrap().job_id;
    assert!(matches!(outcome(&e, &j).await, JobState::Completed { .. }));
    let d = &e.status().devices[0];
    assert!(d.errors == 1 && !d.quarantined, "{d:?}");
    e.shutdown(Duration::from_secs(5)).await;

    let always = Arc::new(Flaky::new("always", usize::MAX));
    let e = flaky_engine(vec![always.clone()], 1);
    let j = e.submit(req("doomed", "ok")).unwrap().job_id;
    match outcome(&e, &j).await {
        JobState::Failed { error } => {
            assert!(error.contains("illegal memory access"), "{error}");
            assert!(error.contains("on its retry"), "{error}");
        }
        s => panic!("{s:?}"),
    }
    assert_eq!(always.calls(), 2);
    // The only device keeps serving even once quarantined: a job still gets its attempt.
    let j = e.submit(req("after", "ok")).unwrap().job_id;
    assert!(matches!(outcome(&e, &j).await, JobState::Failed { .. }));
    let d = &e.status().devices[0];
    assert!(d.quarantined && d.errors == 4, "{d:?}");
    e.shutdown(Duration::from_secs(5)).await;
}

/// Issue 12 item 2: TIMING-ONLY parameters (γ = δ = the G2 generator, as `fake_srs` makes
/// them) are refused unless allowed; allowed, the job completes without the self-check even
/// with self_verify on, and its result, and the SRS's status, say the proof does not verify.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timing_only_parameters_are_refused_unless_allowed_and_then_said() {
    let planner = || FakePlanner {
        partitions: 2,
        constraints: 1024,
        synth: Duration::from_millis(1),
        srs_points: 100,
        live: Default::default(),
    };
    let mut config = sim_config((1 << 26) + fake_srs(100).size_bytes());
    config.allow_timing_only = false;
    let e = Engine::new(
        config.clone(),
        vec![Arc::new(FakeBackend::new(1, 0))],
        Arc::new(planner()),
    )
    .expect("engine");
    let job = e.submit(req("refused", "ok")).unwrap().job_id;
    match e.wait(&job, None).await.unwrap().state {
        JobState::Failed { error } => {
            assert!(error.contains("TIMING-ONLY"), "{error}");
            assert!(error.contains("[allow] timing_only"), "{error}");
        }
        s => panic!("{s:?}"),
    }
    assert!(matches!(
        e.preload_srs("fake").await,
        Err(EngineError::Srs { .. })
    ));
    e.shutdown(Duration::from_secs(5)).await;
    // A refused load's reservation is dropped on the reaper thread (`reaper::free`), off the
    // runtime: give it a moment rather than racing it.
    let t = std::time::Instant::now();
    while e.budget().reserved() != 0 && t.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        e.budget().reserved(),
        0,
        "the refused load left nothing reserved"
    );

    config.allow_timing_only = true;
    // On: the fake proofs would fail it, so passing shows it was skipped.
    config.self_verify = true;
    let e = Engine::new(
        config,
        vec![Arc::new(FakeBackend::new(1, 0))],
        Arc::new(planner()),
    )
    .expect("engine");
    let job = e.submit(req("allowed", "ok")).unwrap().job_id;
    let out = e.wait(&job, None).await.unwrap();
    assert!(matches!(out.state, JobState::Completed { .. }), "{out:?}");
    let note = out.note.expect("a timing-only note");
    assert!(note.contains("DOES NOT VERIFY"), "{note}");
    let srs = e.status().srs;
    assert!(
        srs.iter().any(|s| s.circuit_id == "fake" && s.timing_only),
        "{srs:?}"
    );
    e.shutdown(Duration::from_secs(5)).await;
}

/// A WinningPoSt's synthesis ran its sectors with rayon on the global pool, behind every
/// queued task of the PoRep partitions' parallel witnesses (on the H200 under a 32 GiB PoRep
/// load: 7.8 s instead of 1.3 s). HIGH and CRITICAL partitions now synthesize on the urgent
/// CPU pool, their rayon work included; NORMAL and LOW ones never do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn urgent_partitions_synthesize_on_their_own_cpu_pool() {
    let e = engine(Duration::ZERO);
    let mut jobs = Vec::new();
    for prio in [
        Priority::Low,
        Priority::Normal,
        Priority::High,
        Priority::Critical,
    ] {
        let mut r = req("", "whereami");
        r.priority = prio;
        jobs.push(e.submit(r).unwrap().job_id);
    }
    for j in &jobs {
        assert!(matches!(
            e.wait(j, None).await.unwrap().state,
            JobState::Completed { .. }
        ));
    }
    let seen = WHERE.lock().unwrap().clone();
    assert_eq!(seen.len(), 4 * 2, "two partitions a job");
    for (prio, names) in seen {
        let urgent = names
            .iter()
            .filter(|n| n.starts_with(cuzk_core::URGENT_THREAD_PREFIX))
            .count();
        if prio >= Priority::High {
            assert_eq!(urgent, names.len(), "{prio:?}: {names:?}");
        } else {
            assert_eq!(urgent, 0, "{prio:?}: {names:?}");
        }
    }
}
