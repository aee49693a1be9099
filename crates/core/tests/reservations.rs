//! Reservations from what is known, not from the worst case (issue 29 item 3): a prover that
//! counts its `start` bytes gets exactly those reserved; after a restart, a circuit's first
//! partitions reserve what a partition was measured to hold by an earlier run (kept where the
//! planner keeps its compiled circuits), not the shape's worst case, so a budget that fits the
//! real need, but not the worst case, proves at once. A request that really does not fit is
//! still refused.
mod common;

use common::{fake_srs, partition_worth, sim_config, FakeBackend, FakePlanner};
use cuzk_core::{
    Category, Engine, EngineError, JobPlan, JobState, Planner, Priority, ProofRequest,
    WorkingSetEstimate,
};
use cuzk_groth16::Srs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// [`FakePlanner`] keeping its measurements in `dir`; with `counted`, its shape hints are
/// counted (exact and preallocated), as the Filecoin planner's are.
struct Kept {
    inner: FakePlanner,
    dir: PathBuf,
    counted: bool,
}

impl Planner for Kept {
    fn plan(&self, req: ProofRequest) -> Result<JobPlan, EngineError> {
        let mut plan = self.inner.plan(req)?;
        for p in &mut plan.partitions {
            p.shape_counted = self.counted;
        }
        Ok(plan)
    }
    fn params_path(&self, id: &str) -> Result<PathBuf, EngineError> {
        self.inner.params_path(id)
    }
    fn srs_size_hint(&self, id: &str) -> Result<u64, EngineError> {
        self.inner.srs_size_hint(id)
    }
    fn load_srs(&self, id: &str) -> Result<Srs, EngineError> {
        self.inner.load_srs(id)
    }
    fn measurement_dir(&self, _id: &str) -> Option<PathBuf> {
        Some(self.dir.clone())
    }
}

/// The fake planner's circuit, on a prover that counts the host bytes its `start` holds (as
/// the CUDA prover does): there the measured partition is far below the shape's worst case
/// (a/b/c padded to the domain on the host, as if nothing were counted).
fn planner(dir: &Path) -> Arc<Kept> {
    Arc::new(Kept {
        inner: FakePlanner {
            partitions: 2,
            constraints: 1 << 16,
            synth: Duration::from_millis(1),
            srs_points: 1000,
            live: Default::default(),
        },
        dir: dir.to_path_buf(),
        counted: false,
    })
}

fn req(id: &str, payload: &str) -> ProofRequest {
    ProofRequest {
        request_id: id.into(),
        priority: Priority::Normal,
        ..ProofRequest::synthetic(payload)
    }
}

async fn proves(e: &Engine, id: &str) {
    let job = e.submit(req(id, "")).expect("accepted").job_id;
    let o = e.wait(&job, Some(Duration::from_secs(30))).await.unwrap();
    assert!(matches!(o.state, JobState::Completed { .. }), "{o:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_reserves_the_earlier_run_s_measurement_not_the_worst_case() {
    let kept = tempfile::tempdir().unwrap();
    let p = planner(kept.path());
    let (c, i, a) = p.inner.shape();
    let worst = WorkingSetEstimate::from_shape(c, i, a).admission_bytes();
    let srs = fake_srs(p.inner.srs_points).size_bytes();

    // A first run with room for the worst case measures a partition and keeps it.
    let first = Engine::new(
        sim_config(srs + 4 * worst),
        vec![Arc::new(FakeBackend::new(1, 0).with_start_host(1 << 20))],
        p.clone(),
    )
    .unwrap();
    proves(&first, "first").await;
    let measured = first.estimates()[0].1;
    assert!(measured.calibrated);
    let need = measured.admission_bytes();
    assert!(need < worst, "{need} vs {worst}: nothing to show");
    assert!(kept.path().join("fake.working-set").exists());
    first.shutdown(Duration::from_secs(5)).await;

    // A budget between the measured need and the worst case (the request buffer within it).
    let between = |budget: u64| {
        let mut c = sim_config(0);
        c.request_buffer_bytes = 64 << 10;
        c.budget_bytes = budget;
        c
    };
    let budget = srs + (need + worst) / 2;
    println!("measured need {need}, worst case {worst}, SRS {srs}, budget {budget}");
    assert!(srs + need + (64 << 10) < budget && budget < srs + worst);
    let restarted = Engine::new(
        between(budget),
        vec![Arc::new(FakeBackend::new(1, 0).with_start_host(1 << 20))],
        p.clone(),
    )
    .unwrap();
    proves(&restarted, "after-restart").await;
    let shown = restarted.status().partition_memory;
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].reserved, need);

    // Without the kept measurement the same budget refuses the same request: the worst
    // case does not fit (so the kept measurement is what made the difference).
    let elsewhere = tempfile::tempdir().unwrap();
    let cold = Engine::new(
        between(budget),
        vec![Arc::new(FakeBackend::new(1, 0).with_start_host(1 << 20))],
        planner(elsewhere.path()),
    )
    .unwrap();
    match cold.submit(req("cold", "")) {
        Err(EngineError::TooLarge { .. }) => {}
        other => panic!("the worst case fitted: {:?}", other.map(|s| s.job_id)),
    }

    // A request whose real need exceeds the whole budget is still refused, clearly.
    match restarted.submit(req("huge", "huge")) {
        Err(e @ EngineError::TooLarge { .. }) => {
            let m = e.to_string();
            assert!(m.contains("huge") && m.contains("budget"), "{m}");
        }
        other => panic!("a request over the budget: {:?}", other.map(|s| s.job_id)),
    }
    restarted.shutdown(Duration::from_secs(5)).await;
    cold.shutdown(Duration::from_secs(5)).await;
}

/// Issue 13 item 4: a prover that says what its `start` holds beyond a partition (the CUDA
/// prover's MSM plans) gets exactly that reserved beside the partition while it proves, and
/// new partitions of the circuit are admitted with that (plus an eighth), not with the CPU
/// prover's padded a/b/c and converted assignments.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prover_that_counts_its_start_bytes_gets_them_reserved_exactly() {
    let planner = FakePlanner {
        partitions: 1,
        constraints: 3000,
        synth: Duration::from_millis(1),
        srs_points: 100,
        live: Default::default(),
    };
    let shape = FakePlanner::synthesized(planner.shape());
    let resident = cuzk_core::resident_bytes(&shape);
    let extra = 40_000;
    let backend = Arc::new(FakeBackend::new(400, 0).with_start_host(extra));
    let e = Engine::new(
        sim_config(8 * partition_worth(&planner) + fake_srs(100).size_bytes()),
        vec![backend],
        Arc::new(planner),
    )
    .unwrap();
    let id = e.submit(req("counted", "")).unwrap().job_id;
    let t0 = Instant::now();
    while e.status().stages.proving == 0 {
        assert!(t0.elapsed() < Duration::from_secs(10), "never proving");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert_eq!(
        e.budget().reserved_in(Category::WorkingSet),
        resident + extra
    );
    let o = e.wait(&id, Some(Duration::from_secs(30))).await.unwrap();
    assert!(matches!(o.state, JobState::Completed { .. }), "{o:?}");
    let counted = cuzk_core::WorkingSetEstimate::from_measured(&shape, Some(extra));
    let cpu = cuzk_core::WorkingSetEstimate::from_synthesized(&shape);
    assert_eq!(
        e.status().partition_memory[0].reserved,
        counted.admission_bytes()
    );
    assert!(counted.admission_bytes() < cpu.admission_bytes());
    e.shutdown(Duration::from_secs(5)).await;
}

/// Before any measurement, a counted partition on a prover that plans its MSMs on the host
/// (the CUDA prover with a/b/c on the host) is admitted with that prover's `start` bytes
/// bounded, not the CPU prover's layout, which fell short for winning-32g on the H100
/// (75.5 MB reserved, 93.1 MB held); on the CPU prover it keeps the CPU layout's figure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_counted_partition_on_a_host_planning_prover_reserves_its_plans() {
    let fake = || FakePlanner {
        partitions: 1,
        constraints: 3000,
        synth: Duration::from_millis(400),
        srs_points: 100,
        live: Default::default(),
    };
    let (c, i, a) = fake().shape();
    let plans = WorkingSetEstimate::from_counted_shape_with_plans(c, i, a, 0).admission_bytes();
    let cpu = WorkingSetEstimate::from_counted_shape(c, i, a).admission_bytes();
    assert!(plans > cpu, "{plans} vs {cpu}: nothing to show");
    for (start_host, want) in [(Some(40_000), plans), (None, cpu)] {
        let kept = tempfile::tempdir().unwrap();
        let mut backend = FakeBackend::new(1, 0);
        if let Some(extra) = start_host {
            backend = backend.with_start_host(extra);
        }
        let e = Engine::new(
            sim_config(4 * plans + fake_srs(100).size_bytes()),
            vec![Arc::new(backend)],
            Arc::new(Kept {
                inner: fake(),
                dir: kept.path().to_path_buf(),
                counted: true,
            }),
        )
        .unwrap();
        let id = e.submit(req("first", "")).unwrap().job_id;
        let t0 = Instant::now();
        while e.status().stages.synthesizing == 0 {
            assert!(t0.elapsed() < Duration::from_secs(10), "never synthesizing");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        assert_eq!(
            e.budget().reserved_in(Category::WorkingSet),
            want,
            "start_host {start_host:?}"
        );
        let o = e.wait(&id, Some(Duration::from_secs(30))).await.unwrap();
        assert!(matches!(o.state, JobState::Completed { .. }), "{o:?}");
        e.shutdown(Duration::from_secs(5)).await;
    }
}
