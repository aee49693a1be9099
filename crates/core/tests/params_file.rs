//! The default SRS path: a planner that only names a `.params` file; the engine reads it,
//! proves with the CPU backend and self-checks every partition against the file's key.
mod common;

use common::own_copy::{points_with_key, read_header, small_config, OwnCopy};
use cuzk_core::kinds::synthetic::{parse_request, SyntheticPlanner};
use cuzk_core::{
    Config, Engine, EngineError, JobPlan, JobState, Planner, Priority, ProofRequest, SrsTier,
};
use cuzk_groth16::{CpuProver, ProverBackend};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

const SPEC: &str = "synthetic:constraints=512,inputs=2,seed=5,partitions=3";

/// Plans like the synthetic planner but names its parameters `small-test` in a directory.
/// With `stream`, its SRS may be loaded header-first and streamed into the backends.
struct FilePlanner {
    dir: PathBuf,
    stream: bool,
}

/// [`FilePlanner`] whose prepared circuit says `bounded` of its aux values are 0 or 1 in every
/// satisfying witness (as a compiled circuit does, `CompiledCircuit::bounded_aux`).
struct BoundedPlanner {
    files: FilePlanner,
    bounded: usize,
}

impl Planner for BoundedPlanner {
    fn plan(&self, req: ProofRequest) -> Result<JobPlan, EngineError> {
        self.files.plan(req)
    }

    fn params_path(&self, circuit_id: &str) -> Result<PathBuf, EngineError> {
        self.files.params_path(circuit_id)
    }

    fn load_srs_header(&self, circuit_id: &str) -> Result<Option<cuzk_groth16::Srs>, EngineError> {
        self.files.load_srs_header(circuit_id)
    }

    /// (The load's first stream always runs without it: the bound is recorded once this
    /// returns.)
    fn prepare(&self, _circuit_id: &str) -> Result<Option<cuzk_core::Prepared>, EngineError> {
        Ok(Some(cuzk_core::Prepared {
            data: Arc::new(()),
            bytes: 0,
            bounded_aux: Some(self.bounded),
        }))
    }
}

impl Planner for FilePlanner {
    fn plan(&self, req: ProofRequest) -> Result<JobPlan, EngineError> {
        let mut plan = SyntheticPlanner::default().plan(req)?;
        for p in &mut plan.partitions {
            p.circuit_id = "small-test".into();
        }
        Ok(plan)
    }

    fn params_path(&self, circuit_id: &str) -> Result<PathBuf, EngineError> {
        match circuit_id {
            "small-test" => Ok(self.dir.join("small-test.params")),
            _ => Err(EngineError::UnknownCircuit(circuit_id.into())),
        }
    }

    fn load_srs_header(&self, circuit_id: &str) -> Result<Option<cuzk_groth16::Srs>, EngineError> {
        if !self.stream {
            return Ok(None);
        }
        read_header(circuit_id, &self.params_path(circuit_id)?)
    }
}

/// A temporary directory holding `small-test.params` for [`SPEC`]'s circuit (setup seeded
/// with `seed`): the directory, the parameters and the file's path.
fn params_file(seed: u64) -> (tempfile::TempDir, cuzk_groth16::Srs, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let spec = parse_request(SPEC).unwrap().spec;
    let srs =
        cuzk_groth16::setup::generate_params(spec, &mut ChaCha8Rng::seed_from_u64(seed)).unwrap();
    let path = dir.path().join("small-test.params");
    cuzk_groth16::params::write_params(&path, &srs).unwrap();
    (dir, srs, path)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn params_file_is_loaded_and_partitions_self_verify() {
    let (dir, srs, path) = params_file(99);
    let spec = parse_request(SPEC).unwrap().spec;

    let mut config = Config::default_for_machine();
    config.budget_bytes = 256 << 20;
    config.request_buffer_bytes = 1 << 20;
    assert!(config.self_verify, "self-check is on by default");
    let planner = Arc::new(FilePlanner {
        dir: dir.path().to_path_buf(),
        stream: false,
    });
    let e = Engine::new(config, vec![Arc::new(CpuProver::new())], planner).unwrap();
    let req = ProofRequest {
        request_id: "file-1".into(),
        priority: Priority::High,
        ..ProofRequest::synthetic(SPEC)
    };
    let id = e.submit(req).unwrap().job_id;
    let o = e.wait(&id, None).await.unwrap();
    match &o.state {
        JobState::Completed { proof } => assert_eq!(proof.len(), 3 * 192),
        other => panic!("{other:?}"),
    }
    assert!(o.timings.srs_load > Duration::ZERO);
    let s = e.status();
    assert_eq!(s.srs.len(), 1);
    assert_eq!(s.srs[0].tier, SrsTier::Hot);
    assert_eq!(s.srs[0].size_bytes, srs.size_bytes());

    // A file whose verifying key belongs to another setup than its proving key: proofs are
    // made but fail the self-check, and the job reports it instead of returning them.
    assert!(e.evict_srs("small-test").unwrap().was_loaded);
    let other =
        cuzk_groth16::setup::generate_params(spec, &mut ChaCha8Rng::seed_from_u64(100)).unwrap();
    let mixed = points_with_key(&srs, other.vk());
    cuzk_groth16::params::write_params(&path, &mixed).unwrap();
    let req = ProofRequest {
        request_id: "file-2".into(),
        ..ProofRequest::synthetic(SPEC)
    };
    let id = e.submit(req).unwrap().job_id;
    match e.wait(&id, None).await.unwrap().state {
        JobState::Failed { error } => assert!(error.contains("self-check"), "{error}"),
        other => panic!("{other:?}"),
    }
    assert!(e.evict_srs("small-test").unwrap().was_loaded);
    std::fs::write(&path, b"not a params file").unwrap();
    let req = ProofRequest {
        request_id: "file-3".into(),
        ..ProofRequest::synthetic(SPEC)
    };
    let id = e.submit(req).unwrap().job_id;
    match e.wait(&id, None).await.unwrap().state {
        JobState::Failed { error } => assert!(error.contains("small-test"), "{error}"),
        other => panic!("{other:?}"),
    }
    e.shutdown(Duration::from_secs(5)).await;
    assert_eq!(e.budget().reserved(), 0);
}

/// A request for [`SPEC`]'s job under `id`.
fn spec_request(id: &str) -> ProofRequest {
    ProofRequest {
        request_id: id.into(),
        ..ProofRequest::synthetic(SPEC)
    }
}

/// Issue 13 item 3: no budgeted host copy of an SRS a device holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_copy_is_released_once_every_backend_holds_the_srs() {
    let (dir, srs, _) = params_file(99);
    let planner = || {
        Arc::new(FilePlanner {
            dir: dir.path().to_path_buf(),
            stream: false,
        })
    };
    let config = || {
        let mut c = Config::default_for_machine();
        c.budget_bytes = 256 << 20;
        c.request_buffer_bytes = 1 << 20;
        c
    };
    let prove = |e: Engine, n: usize| async move {
        for i in 0..n {
            let id = e
                .submit(ProofRequest {
                    request_id: format!("own-{i}"),
                    ..ProofRequest::synthetic(SPEC)
                })
                .unwrap()
                .job_id;
            // Completed means every partition passed the self-check against the file's key.
            match e.wait(&id, None).await.unwrap().state {
                JobState::Completed { proof } => assert_eq!(proof.len(), 3 * 192),
                other => panic!("{other:?}"),
            }
        }
        e
    };
    let vk_bytes = 96 * srs.vk().ic.len() as u64;

    // Released: the entry and the budget hold the verifying key only.
    let own = Arc::new(OwnCopy::default());
    let e = Engine::new(config(), vec![own.clone()], planner()).unwrap();
    let e = prove(e, 2).await;
    let s = e.status();
    assert_eq!(s.srs.len(), 1);
    assert!(s.srs[0].host_released);
    assert_eq!(s.srs[0].size_bytes, vk_bytes);
    // Status (and GetStatus, /metrics) report the device's copy.
    assert_eq!(s.srs[0].device_bytes, vec![srs.size_bytes()]);
    assert!(e.prometheus().contains(&format!(
        "cuzk_srs_device_bytes{{circuit_id=\"small-test\",device=\"own-copy\",index=\"0\"}} {}",
        srs.size_bytes()
    )));
    assert!(vk_bytes < srs.size_bytes() / 10);
    assert_eq!(own.calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    // Both jobs' three partitions each were proved from the backend's copy.
    assert_eq!(
        own.released_starts
            .load(std::sync::atomic::Ordering::SeqCst),
        6
    );
    e.shutdown(Duration::from_secs(5)).await;
    assert_eq!(e.budget().reserved(), 0);

    // Turned off: kept, and the backend is not asked.
    let own = Arc::new(OwnCopy::default());
    let mut c = config();
    c.release_host_srs = false;
    let e = Engine::new(c, vec![own.clone()], planner()).unwrap();
    let e = prove(e, 1).await;
    assert_kept(&e, &own, srs.size_bytes(), 0).await;

    // Beside a backend that needs the host copy (the CPU prover): kept.
    let e = Engine::new(
        config(),
        vec![
            Arc::new(CpuProver::new()) as Arc<dyn ProverBackend>,
            own.clone(),
        ],
        planner(),
    )
    .unwrap();
    let e = prove(e, 1).await;
    // Asked (every backend is), but the CPU prover said no, so nothing was released.
    assert_kept(&e, &own, srs.size_bytes(), 1).await;
}

/// The SRS kept its host copy (all of it reserved), `own` was asked `calls` times and proved
/// nothing from a copy of its own; then the engine stops.
async fn assert_kept(e: &Engine, own: &OwnCopy, points: u64, calls: usize) {
    use std::sync::atomic::Ordering::SeqCst;
    let s = e.status();
    assert!(!s.srs[0].host_released);
    assert_eq!(s.srs[0].size_bytes, points);
    assert_eq!(own.calls.load(SeqCst), calls);
    assert_eq!(own.released_starts.load(SeqCst), 0);
    e.shutdown(Duration::from_secs(5)).await;
}

/// A 64 GiB box refused a porep-32g job at submit unless its SRS had been preloaded: the check
/// added the whole 44 GiB parameter file to the partition's working set, though a GPU daemon
/// keeps none of the points on the host once the SRS is loaded. Beside devices, a job whose
/// working set fits beside what stays of its SRS is now admitted and proved; beside the CPU
/// prover (which keeps the host copy) it is still refused at submit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_srs_not_yet_loaded_counts_only_what_stays_on_the_host_beside_devices() {
    let (dir, srs, path) = params_file(98);
    let file = std::fs::metadata(&path).unwrap().len();
    let planner = || {
        Arc::new(FilePlanner {
            dir: dir.path().to_path_buf(),
            stream: false,
        })
    };
    let config = small_config;
    let req = spec_request;
    // What a partition needs, as the engine counts it: the refusal names working set + file.
    let probe = Engine::new(
        config(file + 1),
        vec![Arc::new(CpuProver::new())],
        planner(),
    )
    .unwrap();
    let need = match probe.submit(req("probe")) {
        Err(EngineError::TooLarge { needed, .. }) => needed - file,
        other => panic!("{other:?}"),
    };
    let vk = 96 * srs.vk().ic.len() as u64;
    // Room for the partition beside what stays of the SRS, not beside the whole file.
    let budget = need + file * 3 / 4;
    assert!(
        budget >= need + vk + (16 << 10) + file / 8,
        "file {file}, need {need}"
    );

    let cpu = Engine::new(config(budget), vec![Arc::new(CpuProver::new())], planner()).unwrap();
    assert!(matches!(
        cpu.submit(req("cpu")),
        Err(EngineError::TooLarge { .. })
    ));

    let own = Arc::new(OwnCopy::default());
    let e = Engine::new(config(budget), vec![own.clone()], planner()).unwrap();
    let id = e.submit(req("own")).unwrap().job_id;
    match e.wait(&id, None).await.unwrap().state {
        JobState::Completed { proof } => assert_eq!(proof.len(), 3 * 192),
        other => panic!("{other:?}"),
    }
    assert!(e.status().srs[0].host_released);
    let s = e.status().budget;
    assert!(s.peak <= s.total, "{s:?}");
    e.shutdown(Duration::from_secs(5)).await;
}

/// Issue 13: beside devices, an SRS in a file is streamed into them a window at a time and the
/// host never reserves (or holds) the whole of it, only a window; a backend that cannot hold it gets the host copy after all; a bad point in the file
/// fails that load alone with a typed error, and the next load after the file is mended works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_srs_streams_from_its_file_into_the_backends_without_a_host_copy() {
    use std::sync::atomic::Ordering::SeqCst;
    let (dir, srs, path) = params_file(97);
    let file = std::fs::metadata(&path).unwrap().len();
    let planner = |stream| {
        Arc::new(FilePlanner {
            dir: dir.path().to_path_buf(),
            stream,
        })
    };
    let config = small_config;
    let req = spec_request;
    let prove = |e: &Engine, id: &str| {
        let id = e.submit(req(id)).unwrap().job_id;
        let e = e.clone();
        async move { e.wait(&id, None).await.unwrap().state }
    };
    let budget = 64 << 20;
    let vk = 96 * srs.vk().ic.len() as u64;
    let srs_peak = |e: &Engine| {
        let b = e.budget().snapshot();
        b.peak_by_category
            .iter()
            .find(|(c, _)| *c == cuzk_core::Category::Srs)
            .unwrap()
            .1
    };
    // The windows read ahead and the one backend's own, each the largest section's bytes
    // (the default window, 32 MiB, is larger than any section here, so at this size that is
    // more than the file; for porep-32g it is 160 MiB of a 47 GB file): all the load holds.
    let c = srs.counts();
    let largest = 96
        * [c.h, c.l, c.a, c.b_g1, 2 * c.b_g2]
            .into_iter()
            .max()
            .unwrap() as u64;
    use cuzk_groth16::params::{WIRE_READ_WINDOWS, WIRE_UPLOAD_WINDOWS};
    let window = (WIRE_READ_WINDOWS + WIRE_UPLOAD_WINDOWS) * largest;

    let own = Arc::new(OwnCopy::default());
    let e = Engine::new(config(budget), vec![own.clone()], planner(true)).unwrap();
    for i in 0..2 {
        // Completed means every partition passed the self-check against the file's key.
        match prove(&e, &format!("stream-{i}")).await {
            JobState::Completed { proof } => assert_eq!(proof.len(), 3 * 192),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(own.streams.load(SeqCst), 1, "streamed once");
    assert_eq!(
        own.calls.load(SeqCst),
        0,
        "never read into the host to be copied"
    );
    assert!(own.windows.load(SeqCst) >= 5);
    assert_eq!(own.released_starts.load(SeqCst), 6);
    let s = e.status();
    assert!(s.srs[0].host_released);
    assert_eq!(s.srs[0].size_bytes, vk);
    assert_eq!(s.srs[0].device_bytes, vec![srs.size_bytes()]);
    // The load reserved its windows, never the file's points.
    assert_eq!(srs_peak(&e), window);
    e.shutdown(Duration::from_secs(5)).await;
    assert_eq!(e.budget().reserved(), 0);

    // Without streaming the load reserves the whole file.
    let own = Arc::new(OwnCopy::default());
    let e = Engine::new(config(budget), vec![own.clone()], planner(false)).unwrap();
    assert!(matches!(
        prove(&e, "whole").await,
        JobState::Completed { .. }
    ));
    assert_eq!(own.calls.load(SeqCst), 1);
    assert_eq!(srs_peak(&e), file);
    e.shutdown(Duration::from_secs(5)).await;

    // A backend that cannot hold it: the points come into host memory, under a reservation of
    // their size, and it proves from them.
    let declines = Arc::new(OwnCopy {
        decline_stream: true,
        ..Default::default()
    });
    let e = Engine::new(config(budget), vec![declines.clone()], planner(true)).unwrap();
    match prove(&e, "declined").await {
        JobState::Completed { proof } => assert_eq!(proof.len(), 3 * 192),
        other => panic!("{other:?}"),
    }
    assert_eq!(declines.streams.load(SeqCst), 1);
    assert_eq!(declines.released_starts.load(SeqCst), 0);
    let s = e.status();
    assert!(!s.srs[0].host_released);
    assert_eq!(s.srs[0].size_bytes, srs.size_bytes());
    // The windows to stream, then grown to the file's size (as a load read whole reserves)
    // where that is more.
    assert_eq!(srs_peak(&e), window.max(file));
    e.shutdown(Duration::from_secs(5)).await;
    assert_eq!(e.budget().reserved(), 0);

    // A bad point in the middle of `l`: that load fails with a typed error naming the circuit
    // and the point; nothing stays reserved; once the file is mended the next load works.
    let good = std::fs::read(&path).unwrap();
    let mut bad = good.clone();
    let l_point = 3 * 96 + 3 * 192 + 4 + 96 * srs.vk().ic.len() + 4 + 96 * srs.h().len() + 4;
    bad[l_point + 96 * (srs.l().len() / 2) + 20] ^= 0x10;
    std::fs::write(&path, &bad).unwrap();
    let own = Arc::new(OwnCopy::default());
    let e = Engine::new(config(budget), vec![own.clone()], planner(true)).unwrap();
    match prove(&e, "bad").await {
        JobState::Failed { error } => {
            assert!(
                error.contains("small-test") && error.contains("invalid point in section `l`"),
                "{error}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(
        own.copies.lock().is_empty(),
        "the partial copy was abandoned"
    );
    assert_eq!(e.budget().reserved(), 16 << 10, "only the request buffer");
    std::fs::write(&path, &good).unwrap();
    match prove(&e, "mended").await {
        JobState::Completed { proof } => assert_eq!(proof.len(), 3 * 192),
        other => panic!("{other:?}"),
    }
    assert_eq!(own.streams.load(SeqCst), 2);
    e.shutdown(Duration::from_secs(5)).await;
    assert_eq!(e.budget().reserved(), 0);
}

/// An 80 GB card and porep-32g: a device declines an SRS while it must size a proof's buffers
/// for every base as a full scalar, and takes it once the compiled circuit's bound on a
/// witness's full scalars is known. The load streams it again with that bound (no host copy,
/// never read into host memory); a load read whole offers the host copy with the bound set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_srs_declined_without_the_witness_bound_is_streamed_again_with_it() {
    use std::sync::atomic::Ordering::SeqCst;
    let (dir, srs, _) = params_file(95);
    let bounded = srs.counts().l - 3;
    // the inputs (ONE among them) and the aux values not held to 0 or 1
    let free = srs.vk().ic.len() + 3;
    let planner = |stream| {
        Arc::new(BoundedPlanner {
            files: FilePlanner {
                dir: dir.path().to_path_buf(),
                stream,
            },
            bounded,
        })
    };
    let prove = |e: &Engine, id: &str| {
        let id = e.submit(spec_request(id)).unwrap().job_id;
        let e = e.clone();
        async move { e.wait(&id, None).await.unwrap().state }
    };

    let own = Arc::new(OwnCopy {
        needs_bound: true,
        ..Default::default()
    });
    let e = Engine::new(small_config(64 << 20), vec![own.clone()], planner(true)).unwrap();
    match prove(&e, "bounded").await {
        JobState::Completed { proof } => assert_eq!(proof.len(), 3 * 192),
        other => panic!("{other:?}"),
    }
    assert_eq!(*own.bounds_seen.lock(), vec![None, Some(free)]);
    assert_eq!(
        own.streams.load(SeqCst),
        2,
        "declined, then streamed with the bound"
    );
    assert_eq!(own.calls.load(SeqCst), 0, "never read into the host");
    assert_eq!(own.released_starts.load(SeqCst), 3);
    assert!(e.status().srs[0].host_released);
    e.shutdown(Duration::from_secs(5)).await;
    assert_eq!(e.budget().reserved(), 0);

    // Read whole (no streaming): the host copy is offered with the bound already known.
    let own = Arc::new(OwnCopy::default());
    let e = Engine::new(small_config(64 << 20), vec![own.clone()], planner(false)).unwrap();
    assert!(matches!(
        prove(&e, "whole").await,
        JobState::Completed { .. }
    ));
    assert_eq!(*own.bounds_seen.lock(), vec![Some(free)]);
    assert!(e.status().srs[0].host_released);
    e.shutdown(Duration::from_secs(5)).await;
}
