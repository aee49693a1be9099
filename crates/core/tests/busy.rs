//! The device busy figure in the engine's status: with two workers whose `start` calls
//! overlap, the busy fraction comes from the device's own timing (or the interlock's) and stays
//! at most 100 %, where the sum of the workers' time in `start` (the old figure) exceeds it.
mod common;

use common::{fake_srs, sim_config, FakeBackend, FakePlanner};
use cuzk_core::{BusySource, Engine, JobState, Priority, ProofRequest};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn planner() -> FakePlanner {
    FakePlanner {
        partitions: 4,
        constraints: 1024,
        synth: Duration::from_millis(1),
        srs_points: 100,
        live: Default::default(),
    }
}

fn engine(backend: Arc<FakeBackend>, interlock: bool) -> Engine {
    let planner = planner();
    let mut config = sim_config(fake_srs(planner.srs_points).size_bytes() + (1 << 30));
    config.prover_interlock = interlock;
    Engine::new(config, vec![backend], Arc::new(planner)).expect("engine")
}

/// Runs `jobs` jobs; returns the wall time between the two status readings, and the busy
/// time and `start` time (summed over workers) the status reported between them.
async fn run(e: &Engine, jobs: usize) -> (Duration, Option<Duration>, Duration, BusySource) {
    let s0 = e.status().devices[0].clone();
    let t0 = Instant::now();
    let ids: Vec<String> = (0..jobs)
        .map(|i| {
            e.submit(ProofRequest {
                request_id: format!("busy-{i}"),
                priority: Priority::Normal,
                ..ProofRequest::synthetic("fake")
            })
            .unwrap()
            .job_id
        })
        .collect();
    for id in &ids {
        let o = e.wait(id, None).await.unwrap();
        assert!(matches!(o.state, JobState::Completed { .. }), "{o:?}");
    }
    let s1 = e.status().devices[0].clone();
    let wall = t0.elapsed();
    let busy = match (s1.busy, s0.busy) {
        (Some(b1), Some(b0)) => Some(b1 - b0),
        _ => None,
    };
    (wall, busy, s1.start_time - s0.start_time, s1.busy_source)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn overlapping_workers_keep_device_busy_at_most_100_percent() {
    // Like the CUDA prover: half of `start` is host work outside the device lock, so the
    // second worker's host half overlaps the first one's device half; the engine's interlock
    // is off.
    let backend = Arc::new(FakeBackend::new(20, 0).own_lock());
    let e = engine(backend.clone(), false);
    let (wall, busy, in_start, source) = run(&e, 8).await;
    assert_eq!(backend.max_concurrent(), 2, "the two workers overlap");
    let summed = in_start.as_secs_f64() / wall.as_secs_f64();
    let busy = busy
        .expect("the backend reports its device time")
        .as_secs_f64()
        / wall.as_secs_f64();
    println!(
        "busy {:.1}%, summed start {:.1}%",
        busy * 100.0,
        summed * 100.0
    );
    assert_eq!(source, BusySource::Backend);
    assert!(
        summed > 1.0,
        "the old figure (time in start summed over workers) exceeds wall: {summed}"
    );
    assert!(busy <= 1.0, "device busy {busy} over 100%");
    assert!(
        busy > 0.5,
        "the device lock is held most of the run: {busy}"
    );
    let m = e.prometheus();
    assert!(
        m.contains(
            "cuzk_device_busy_milliseconds_total{device=\"fake\",index=\"0\",source=\"backend\"}"
        ),
        "{m}"
    );
    e.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_device_timing_the_interlock_is_timed_or_busy_is_not_measured() {
    // Interlock on: the engine times it, one `start` at a time, at most 100 %.
    let backend = Arc::new(FakeBackend::new(10, 0));
    let e = engine(backend.clone(), true);
    let (wall, busy, _, source) = run(&e, 6).await;
    assert_eq!(source, BusySource::Interlock);
    let busy = busy.expect("interlock timed").as_secs_f64() / wall.as_secs_f64();
    assert!(busy > 0.0 && busy <= 1.0, "{busy}");
    e.shutdown(Duration::from_secs(5)).await;

    // Interlock off and no device timing: the two workers overlap, and the status says the
    // busy time is not measured instead of summing them.
    let backend = Arc::new(FakeBackend::new(10, 0));
    let e = engine(backend.clone(), false);
    let (_, busy, in_start, source) = run(&e, 6).await;
    assert_eq!(source, BusySource::NotMeasured);
    assert_eq!(busy, None);
    assert!(in_start > Duration::ZERO);
    let m = e.prometheus();
    assert!(
        m.contains(
            "cuzk_device_busy_measured{device=\"fake\",index=\"0\",source=\"not_measured\"} 0"
        ),
        "{m}"
    );
    e.shutdown(Duration::from_secs(5)).await;
}
