//! `[srs] preload` on devices that cannot hold every listed SRS (porep-32g and snap-32g on an
//! 80 GB card): the SRSs are loaded in the order listed, so the first takes the device's room
//! even when its load reaches the device last (porep-32g's first stream is declined until its
//! compiled circuit bounds a witness's full scalars), and the next is read into host memory and
//! proves from there.
mod common;

use common::own_copy::{read_header, small_config, OwnCopy};
use cuzk_core::kinds::synthetic::{parse_request, SyntheticPlanner};
use cuzk_core::{Engine, EngineError, JobPlan, JobState, Planner, ProofRequest, SrsTier};
use cuzk_groth16::Srs;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SPEC: &str = "synthetic:constraints=512,inputs=2,seed=5,partitions=2";

/// Two parameter files of [`SPEC`]'s circuit, `first.params` and `second.params`, streamed
/// header-first; each is prepared with a bound on a witness's full scalars (`bounded_aux`,
/// as a compiled circuit has), `first`'s after `compile` (porep-32g's compile), `second`'s at
/// once. A request proves with the circuit its id begins with.
struct TwoFiles {
    dir: PathBuf,
    compile: Duration,
}

impl Planner for TwoFiles {
    fn plan(&self, req: ProofRequest) -> Result<JobPlan, EngineError> {
        let id = match req.request_id.starts_with("first") {
            true => "first",
            false => "second",
        };
        let mut plan = SyntheticPlanner::default().plan(req)?;
        for p in &mut plan.partitions {
            p.circuit_id = id.into();
        }
        Ok(plan)
    }

    fn params_path(&self, circuit_id: &str) -> Result<PathBuf, EngineError> {
        match circuit_id {
            "first" | "second" => Ok(self.dir.join(format!("{circuit_id}.params"))),
            _ => Err(EngineError::UnknownCircuit(circuit_id.into())),
        }
    }

    fn load_srs_header(&self, circuit_id: &str) -> Result<Option<Srs>, EngineError> {
        read_header(circuit_id, &self.params_path(circuit_id)?)
    }

    fn prepare(&self, circuit_id: &str) -> Result<Option<cuzk_core::Prepared>, EngineError> {
        if circuit_id == "first" {
            std::thread::sleep(self.compile);
        }
        Ok(Some(cuzk_core::Prepared {
            data: Arc::new(()),
            bytes: 0,
            bounded_aux: Some(0),
        }))
    }
}

/// Writes `<name>.params` for [`SPEC`]'s circuit into `dir`, set up with `seed`.
fn params_file(dir: &std::path::Path, name: &str, seed: u64) -> Srs {
    let spec = parse_request(SPEC).unwrap().spec;
    let srs =
        cuzk_groth16::setup::generate_params(spec, &mut ChaCha8Rng::seed_from_u64(seed)).unwrap();
    cuzk_groth16::params::write_params(&dir.join(format!("{name}.params")), &srs).unwrap();
    srs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_preloaded_srs_takes_the_device_even_when_its_load_reaches_it_last() {
    let dir = tempfile::tempdir().unwrap();
    let first = params_file(dir.path(), "first", 61);
    let second = params_file(dir.path(), "second", 62);
    let size = first.size_bytes();
    assert_eq!(size, second.size_bytes());
    // Room for one of them, and none for either until it knows its bound (as an 80 GB card
    // and porep-32g).
    let dev = Arc::new(OwnCopy {
        needs_bound: true,
        room: Some(size + size / 2),
        ..Default::default()
    });
    let mut config = small_config(64 << 20);
    config.preload = vec!["first".into(), "second".into()];
    let planner = Arc::new(TwoFiles {
        dir: dir.path().to_path_buf(),
        // Loaded at once, `second` would stream in again, with its bound, long before
        // `first`'s retry.
        compile: Duration::from_millis(400),
    });
    let e = Engine::new(config, vec![dev.clone()], planner).unwrap();
    let t0 = Instant::now();
    let loaded = loop {
        let s = e.status().srs;
        if s.len() == 2 && s.iter().all(|x| x.tier == SrsTier::Hot) {
            break s;
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "preloads: {s:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let of = |id: &str| loaded.iter().find(|x| x.circuit_id == id).unwrap().clone();
    let (a, b) = (of("first"), of("second"));
    assert!(a.host_released, "the first listed holds the device: {a:?}");
    assert_eq!(a.device_bytes, vec![size]);
    assert!(
        !b.host_released,
        "the second is read into host memory: {b:?}"
    );
    assert_eq!(b.device_bytes, vec![0]);
    assert_eq!(b.size_bytes, size);

    // Both prove (each partition self-checked against its own file's key).
    for id in ["first-1", "second-1"] {
        let req = ProofRequest {
            request_id: id.into(),
            ..ProofRequest::synthetic(SPEC)
        };
        let job = e.submit(req).unwrap().job_id;
        match e.wait(&job, None).await.unwrap().state {
            JobState::Completed { proof } => assert_eq!(proof.len(), 2 * 192, "{id}"),
            other => panic!("{id}: {other:?}"),
        }
    }
    e.shutdown(Duration::from_secs(5)).await;
    assert_eq!(e.budget().reserved(), 0);
}
