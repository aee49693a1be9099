//! The SRS cache under memory pressure, through the engine with a fake backend: which idle
//! SRS is evicted for waiting partitions, and which is kept.
mod common;

use common::{fake_srs, partition_worth, sim_config, FakeBackend, FakePlanner};
use cuzk_core::{Engine, JobState, Priority, ProofRequest, SrsTier};
use std::sync::Arc;
use std::time::Duration;

fn req(i: usize, payload: &str) -> ProofRequest {
    ProofRequest {
        request_id: format!("req-{i}"),
        priority: Priority::Normal,
        ..ProofRequest::synthetic(payload)
    }
}

fn tiers(e: &Engine) -> Vec<(String, SrsTier)> {
    let mut t: Vec<_> = e
        .status()
        .srs
        .into_iter()
        .map(|x| (x.circuit_id, x.tier))
        .collect();
    t.sort_by(|a, b| a.0.cmp(&b.0));
    t
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn idle_srs_is_evicted_lru_when_another_needs_the_room() {
    let planner = FakePlanner {
        partitions: 3,
        constraints: 1024,
        synth: Duration::from_millis(1),
        srs_points: 60_000,
        live: Default::default(),
    };
    let srs = fake_srs(planner.srs_points).size_bytes();
    let worth = partition_worth(&planner);
    // Room for one SRS and a half, plus two partitions: two SRSs never fit together.
    assert!(srs / 2 > 2 * worth);
    let budget = srs + srs / 2 + 2 * worth;
    let e = Engine::new(
        sim_config(budget),
        vec![Arc::new(FakeBackend::new(2, 0))],
        Arc::new(planner),
    )
    .unwrap();
    let mut ids = Vec::new();
    for i in 0..6 {
        let payload = if i % 2 == 1 { "other" } else { "fake" };
        ids.push(e.submit(req(i, payload)).unwrap().job_id);
    }
    for id in &ids {
        let o = e.wait(id, Some(Duration::from_secs(30))).await.unwrap();
        assert!(matches!(o.state, JobState::Completed { .. }), "{o:?}");
    }
    let s = e.status();
    assert!(s.budget.peak <= s.budget.total);
    let tiers: Vec<(String, cuzk_core::SrsTier)> = s
        .srs
        .iter()
        .map(|x| (x.circuit_id.clone(), x.tier))
        .collect();
    println!("{tiers:?}");
    assert_eq!(
        s.srs.iter().filter(|x| x.tier == SrsTier::Hot).count(),
        1,
        "{tiers:?}"
    );
    assert_eq!(
        s.srs.iter().filter(|x| x.tier == SrsTier::Warm).count(),
        1,
        "{tiers:?}"
    );
    e.shutdown(Duration::from_secs(5)).await;
    assert_eq!(e.budget().reserved(), 0);
}

/// Seen on the H200 (budget 84 GiB, porep-32g and snap-32g preloaded, both resident): a
/// SnapDeals proof's 16 partitions, four in flight, evicted the PoRep SRS idle for 2 s; the
/// next PoRep proof then waited 151 s for its reload. Both SRSs fit beside two partitions
/// here, and the second job's backlog of partitions waits for its own partitions instead.
/// An SRS idle for `srs.keep_idle` or longer goes for that backlog.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_recently_used_srs_is_kept_while_the_partitions_in_flight_can_make_room() {
    for (keep_idle, fake_after) in [
        (Duration::from_secs(600), SrsTier::Hot),
        (Duration::ZERO, SrsTier::Warm),
    ] {
        let planner = FakePlanner {
            partitions: 8,
            constraints: 1024,
            synth: Duration::from_millis(20),
            srs_points: 60_000,
            live: Default::default(),
        };
        let srs = fake_srs(planner.srs_points).size_bytes();
        let mut config = sim_config(2 * srs + 2 * partition_worth(&planner));
        config.srs_keep_idle = keep_idle;
        let e = Engine::new(
            config,
            vec![Arc::new(FakeBackend::new(2, 0))],
            Arc::new(planner),
        )
        .unwrap();
        for (i, payload) in ["fake", "other"].into_iter().enumerate() {
            let id = e.submit(req(i, payload)).unwrap().job_id;
            let o = e.wait(&id, Some(Duration::from_secs(30))).await.unwrap();
            assert!(matches!(o.state, JobState::Completed { .. }), "{o:?}");
        }
        let s = e.status();
        assert!(s.budget.peak <= s.budget.total);
        assert_eq!(
            tiers(&e),
            vec![("fake".into(), fake_after), ("other".into(), SrsTier::Hot)],
            "keep_idle {keep_idle:?}"
        );
        e.shutdown(Duration::from_secs(5)).await;
        assert_eq!(e.budget().reserved(), 0);
    }
}
