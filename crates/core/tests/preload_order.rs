//! `[srs] preload` on devices that cannot hold every listed SRS (porep-32g and snap-32g on an
//! 80 GB card): the SRSs are loaded in the order listed, so the first takes the device's room
//! even when its load reaches the device last (porep-32g's first stream is declined until its
//! compiled circuit bounds a witness's full scalars), and the next is read into host memory and
//! proves from there.
use cuzk_core::kinds::synthetic::{parse_request, SyntheticPlanner};
use cuzk_core::{Config, Engine, EngineError, JobPlan, JobState, Planner, ProofRequest, SrsTier};
use cuzk_groth16::{CpuProver, ProveError, ProverBackend, Srs};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SPEC: &str = "synthetic:constraints=512,inputs=2,seed=5,partitions=2";

/// Two parameter files of [`SPEC`]'s circuit, `first.params` and `second.params`, streamed
/// header-first. `first`'s compiled circuit bounds a witness's full scalars (its prepare
/// returns `bounded_aux`, as porep-32g's compile does) after `compile`; `second` has none.
/// A request proves with the circuit its id begins with.
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
        let path = self.params_path(circuit_id)?;
        let (srs, _) = cuzk_groth16::params::read_params_header(&path, &Default::default())
            .map_err(|e| EngineError::Srs {
                circuit_id: circuit_id.into(),
                message: e.to_string(),
            })?;
        Ok(Some(srs))
    }

    fn prepare(&self, circuit_id: &str) -> Result<Option<cuzk_core::Prepared>, EngineError> {
        if circuit_id != "first" {
            return Ok(None);
        }
        std::thread::sleep(self.compile);
        Ok(Some(cuzk_core::Prepared {
            data: Arc::new(()),
            bytes: 0,
            bounded_aux: Some(0),
        }))
    }
}

/// A device with room for one SRS of [`SPEC`]'s size: it takes a streamed SRS while it has
/// room, and one with no bound on a witness's full scalars not at all (as an 80 GB card
/// declines porep-32g until the bound is known). It proves an SRS whose host copy is gone
/// from its own copy, and any other from the host's points, on the CPU.
struct OneRoom {
    room: u64,
    /// `first.params`'s verifying key's α (the two files are one circuit's, set up apart).
    first: cuzk_groth16::G1Affine,
    copies: parking_lot::Mutex<std::collections::HashMap<u64, Arc<Srs>>>,
    cpu: CpuProver,
}

impl OneRoom {
    fn held(&self) -> u64 {
        self.copies.lock().values().map(|c| c.size_bytes()).sum()
    }

    /// Its own copy of a released SRS.
    fn own(&self, srs: &Srs) -> Result<Arc<Srs>, ProveError> {
        self.copies
            .lock()
            .get(&srs.id())
            .cloned()
            .ok_or_else(|| ProveError::Unavailable("released SRS without a device copy".into()))
    }
}

fn copy_of(srs: &Srs) -> Srs {
    Srs::new(
        srs.vk().clone(),
        srs.h().to_vec(),
        srs.l().to_vec(),
        srs.a().to_vec(),
        srs.b_g1().to_vec(),
        srs.b_g2().to_vec(),
    )
}

impl ProverBackend for OneRoom {
    fn name(&self) -> String {
        "one-room".into()
    }
    fn device_memory(&self) -> Option<(u64, u64)> {
        Some((self.room, self.room))
    }
    fn make_resident(&self, srs: &Srs) -> Result<bool, ProveError> {
        if self.held() + srs.size_bytes() > self.room {
            return Ok(false);
        }
        self.copies.lock().insert(srs.id(), Arc::new(copy_of(srs)));
        Ok(true)
    }
    fn begin_resident<'a>(
        &'a self,
        srs: &'a Srs,
    ) -> Result<Option<Box<dyn cuzk_groth16::ResidentUpload + 'a>>, ProveError> {
        if srs.vk().alpha_g1 == self.first && srs.free_values_bound().is_none() {
            return Ok(None);
        }
        if self.held() + srs.size_bytes() > self.room {
            return Ok(None);
        }
        Ok(Some(Box::new(Upload {
            dev: self,
            srs,
            g1: Default::default(),
            b_g2: Vec::new(),
        })))
    }
    fn resident_bytes(&self, srs_id: u64) -> u64 {
        self.copies
            .lock()
            .get(&srs_id)
            .map_or(0, |c| c.size_bytes())
    }
    fn start(
        &self,
        srs: &Srs,
        circuit: cuzk_groth16::Synthesized,
        r: cuzk_groth16::Scalar,
        s: cuzk_groth16::Scalar,
    ) -> Result<cuzk_groth16::Pending, ProveError> {
        match srs.host_points_released() {
            true => ProverBackend::start(&self.cpu, &*self.own(srs)?, circuit, r, s),
            false => ProverBackend::start(&self.cpu, srs, circuit, r, s),
        }
    }
    fn finish(
        &self,
        srs: &Srs,
        pending: cuzk_groth16::Pending,
    ) -> Result<cuzk_groth16::Proof, ProveError> {
        match srs.host_points_released() {
            true => ProverBackend::finish(&self.cpu, &*self.own(srs)?, pending),
            false => ProverBackend::finish(&self.cpu, srs, pending),
        }
    }
}

/// [`OneRoom`]'s copy being filled a window at a time.
struct Upload<'a> {
    dev: &'a OneRoom,
    srs: &'a Srs,
    g1: [Vec<cuzk_groth16::G1Affine>; 4],
    b_g2: Vec<cuzk_groth16::G2Affine>,
}

impl cuzk_groth16::ResidentUpload for Upload<'_> {
    fn put(&mut self, window: cuzk_groth16::params::PointsWindow<'_>) -> Result<(), ProveError> {
        use cuzk_groth16::params::PointsWindow;
        match window {
            PointsWindow::G1 {
                section, points, ..
            } => self.g1[section as usize].extend_from_slice(points),
            PointsWindow::G2 { points, .. } => self.b_g2.extend_from_slice(points),
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<bool, ProveError> {
        let [h, l, a, b_g1] = self.g1;
        let copy = Srs::new(self.srs.vk().clone(), h, l, a, b_g1, self.b_g2);
        if self.dev.held() + copy.size_bytes() > self.dev.room {
            return Ok(false);
        }
        self.dev.copies.lock().insert(self.srs.id(), Arc::new(copy));
        Ok(true)
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
    let dev = Arc::new(OneRoom {
        room: size + size / 2,
        first: first.vk().alpha_g1,
        copies: Default::default(),
        cpu: CpuProver::default(),
    });
    let mut config = Config::default_for_machine();
    config.budget_bytes = 64 << 20;
    config.request_buffer_bytes = 16 << 10;
    config.urgent_reserve_bytes = Some(0);
    config.preload = vec!["first".into(), "second".into()];
    let planner = Arc::new(TwoFiles {
        dir: dir.path().to_path_buf(),
        // `second` alone would have streamed in long before `first`'s retry.
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
