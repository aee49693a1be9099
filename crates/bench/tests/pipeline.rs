//! The pipeline benchmark against the engine with the fake backend of core's simulation tests
//! (controlled durations, real allocations): it counts every job and partition and reports
//! throughput and memory.
#[path = "../../core/tests/common/mod.rs"]
mod common;

use common::{fake_srs, sim_config, FakeBackend, FakePlanner};
use cuzk_core::{Engine, Priority, WorkingSetEstimate};
use std::sync::Arc;
use std::time::Duration;

/// What one partition of `planner` reserves (as in core's simulation tests).
fn partition_worth(planner: &FakePlanner) -> u64 {
    let (c, i, a) = planner.shape();
    let hinted = WorkingSetEstimate::from_shape(c, i, a).admission_bytes();
    let measured = WorkingSetEstimate::from_synthesized(&FakePlanner::synthesized(planner.shape()))
        .admission_bytes();
    hinted.max(measured)
}

fn engine(planner: FakePlanner, backend: Arc<FakeBackend>, budget_partitions: u64) -> Engine {
    let srs = fake_srs(planner.srs_points).size_bytes();
    let budget = budget_partitions * partition_worth(&planner) + srs;
    Engine::new(sim_config(budget), vec![backend], Arc::new(planner)).expect("engine")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bench_reports_throughput_and_memory() {
    let planner = FakePlanner {
        partitions: 2,
        constraints: 1024,
        synth: Duration::from_millis(1),
        srs_points: 100,
        live: Default::default(),
    };
    let e = engine(planner, Arc::new(FakeBackend::new(3, 0)), 4);
    let mut opts = cuzk_bench::pipeline::BenchOptions::synthetic("fake", 12, 4);
    opts.priority = Priority::High;
    let r = cuzk_bench::pipeline::bench_pipeline(&e, &opts)
        .await
        .unwrap();
    println!("{r}");
    assert_eq!((r.completed, r.failed), (12, 0));
    assert_eq!(r.partitions, 24);
    assert!(r.secs_per_proof > 0.0);
    // The fake backend has no device timing; the engine's interlock (on in this config)
    // gives the figure.
    assert_eq!(r.devices.len(), 1);
    let d = &r.devices[0];
    assert_eq!(d.source, cuzk_core::BusySource::Interlock, "{d:?}");
    assert!(d.fraction.is_some_and(|x| x > 0.0 && x <= 1.0), "{d:?}");
    assert!(d.steady.is_some_and(|x| x <= 1.0), "{d:?}");
    assert!(r.peak_reserved <= r.budget);
    let text = r.to_string();
    assert!(
        text.contains("s/proof") && text.contains("working_set"),
        "{text}"
    );
    e.shutdown(Duration::from_secs(5)).await;
}
