//! A real daemon on a unix socket in `dir` with a fake prover behind it (one device, one
//! partition a proof, `prove_ms` each; synthetic requests allowed, spec `bad` refused), for the
//! load generator's tests.
#[path = "../../../core/tests/common/mod.rs"]
mod common;

use common::{fake_srs, sim_config, FakeBackend, FakePlanner};
use cuzk_core::{Engine, WorkingSetEstimate};
use cuzk_server::{Daemon, ListenAddr, ServeOptions};
use std::sync::Arc;
use std::time::Duration;

pub async fn start(dir: &std::path::Path, prove_ms: u64) -> Daemon {
    let planner = FakePlanner {
        partitions: 1,
        constraints: 1024,
        synth: Duration::from_millis(1),
        srs_points: 100,
        live: Default::default(),
    };
    let (c, i, a) = planner.shape();
    let per = WorkingSetEstimate::from_shape(c, i, a)
        .admission_bytes()
        .max(
            WorkingSetEstimate::from_synthesized(&FakePlanner::synthesized(planner.shape()))
                .admission_bytes(),
        );
    let mut config = sim_config(16 * per + fake_srs(planner.srs_points).size_bytes());
    config.allow_synthetic = true;
    let engine = Engine::new(
        config,
        vec![Arc::new(FakeBackend::new(prove_ms, 0))],
        Arc::new(planner),
    )
    .unwrap();
    Daemon::start(
        Arc::new(engine),
        ServeOptions::new(ListenAddr::Unix(dir.join("cuzk.sock"))),
    )
    .await
    .unwrap()
}
