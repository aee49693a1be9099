//! The SRS cache's unit tests (`srs.rs`).
use super::*;
use crate::planner::JobPlan;
use crate::request::ProofRequest;
use cuzk_groth16::{G1Affine, G2Affine, VerifyingKey};
use group::prime::PrimeCurveAffine;
use std::path::PathBuf;

/// The keep-idle window of most tests: longer than any test runs.
const KEEP: Duration = Duration::from_secs(600);

/// Pressure that asks for everything.
const ALL: Pressure = Pressure {
    backlog: u64::MAX,
    unavoidable: u64::MAX,
};

/// Knows one circuit, `ok`, with a one-point SRS.
struct OneCircuit;

impl Planner for OneCircuit {
    fn plan(&self, _: ProofRequest) -> Result<JobPlan, EngineError> {
        Err(EngineError::InvalidRequest("no plans here".into()))
    }
    fn params_path(&self, id: &str) -> Result<PathBuf, EngineError> {
        self.srs_size_hint(id)
            .map(|_| PathBuf::from("/nonexistent"))
    }
    fn srs_size_hint(&self, id: &str) -> Result<u64, EngineError> {
        match id {
            "ok" => Ok(1 << 10),
            _ => Err(EngineError::UnknownCircuit(id.chars().take(64).collect())),
        }
    }
    fn load_srs(&self, _: &str) -> Result<Srs, EngineError> {
        let (g1, g2) = (G1Affine::generator(), G2Affine::generator());
        let vk = VerifyingKey {
            alpha_g1: g1,
            beta_g1: g1,
            beta_g2: g2,
            gamma_g2: g2,
            delta_g1: g1,
            delta_g2: g2,
            ic: vec![g1],
        };
        Ok(Srs::new(vk, vec![g1], vec![], vec![], vec![], vec![]))
    }
}

/// A cache of [`OneCircuit`] (its TIMING-ONLY SRS allowed) under a 1 GiB budget, host copies
/// kept, keeping idle entries for `keep_idle`.
fn one_circuit(keep_idle: Duration) -> SrsCache {
    SrsCache::new(
        MemoryBudget::new(1 << 30),
        Arc::new(OneCircuit),
        true,
        None,
        false,
        Default::default(),
        keep_idle,
    )
}

/// [`OneCircuit`], recording the thread each load ran on.
#[derive(Default)]
struct WhereLoaded(parking_lot::Mutex<Vec<String>>);

impl Planner for WhereLoaded {
    fn plan(&self, r: ProofRequest) -> Result<JobPlan, EngineError> {
        OneCircuit.plan(r)
    }
    fn params_path(&self, id: &str) -> Result<PathBuf, EngineError> {
        OneCircuit.params_path(id)
    }
    fn srs_size_hint(&self, id: &str) -> Result<u64, EngineError> {
        OneCircuit.srs_size_hint(id)
    }
    fn load_srs(&self, id: &str) -> Result<Srs, EngineError> {
        let name = std::thread::current().name().unwrap_or("").to_string();
        self.0.lock().push(name);
        OneCircuit.load_srs(id)
    }
}

/// An SRS that a CRITICAL (or HIGH) partition waits for loads on its urgent CPU pool, so
/// its parse does not queue behind bulk work's rayon tasks (11.4 s for winning-32g's
/// 192 MB on the H200 under a PoRep load); a bulk partition's load does not.
#[tokio::test]
async fn loads_for_urgent_work_run_on_the_urgent_pool() {
    for (prio, urgent) in [(Priority::Normal, false), (Priority::Critical, true)] {
        let planner = Arc::new(WhereLoaded::default());
        let cache = SrsCache::new(
            MemoryBudget::new(1 << 30),
            planner.clone(),
            true,
            None,
            false,
            Arc::new(CpuPools::new(1).unwrap()),
            KEEP,
        );
        drop(cache.get("ok", prio).await.unwrap());
        let names = planner.0.lock().clone();
        assert_eq!(names.len(), 1);
        assert_eq!(
            names[0].starts_with(crate::cpu::URGENT_THREAD_PREFIX),
            urgent,
            "{prio:?}: {names:?}"
        );
    }
}

/// Issue 15 item 5: PreloadSRS stored any string a client sent in `load_locks` before
/// checking it, and kept it forever.
#[tokio::test]
async fn unknown_ids_leave_nothing_behind_and_loads_clean_up() {
    // Its one SRS is made of generators: TIMING-ONLY, allowed here.
    let cache = one_circuit(KEEP);
    for i in 0..1000 {
        let id = format!("{i}-{}", "x".repeat(1000));
        assert!(matches!(
            cache.get(&id, Priority::Normal).await,
            Err(EngineError::UnknownCircuit(_))
        ));
    }
    assert!(cache.inner.state.lock().load_locks.is_empty());
    let a = cache.get("ok", Priority::Normal).await.unwrap();
    assert!(!a.was_loaded);
    assert!(cache.inner.state.lock().load_locks.is_empty(), "load done");
    drop(a);
}

/// `ok` as [`OneCircuit`] knows it, read from a file (so its host copy can be released).
struct OnFile(PathBuf);

impl Planner for OnFile {
    fn plan(&self, _: ProofRequest) -> Result<JobPlan, EngineError> {
        Err(EngineError::InvalidRequest("no plans here".into()))
    }
    fn params_path(&self, id: &str) -> Result<PathBuf, EngineError> {
        OneCircuit.srs_size_hint(id).map(|_| self.0.clone())
    }
}

/// Seen on the H200: a WinningPoSt SRS whose host copy was released (12.5 KiB left) was
/// evicted under pressure 3.5 s after its load, freeing nothing useful.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_released_srs_holding_almost_nothing_is_kept_under_pressure() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ok.params");
    cuzk_groth16::params::write_params(&path, &OneCircuit.load_srs("ok").unwrap()).unwrap();
    let everywhere: MakeResident = Arc::new(|_: &Srs| true);
    let budget = || MemoryBudget::new(1 << 30);
    let released = SrsCache::new(
        budget(),
        Arc::new(OnFile(path.clone())),
        true,
        Some(everywhere),
        false,
        Default::default(),
        KEEP,
    );
    drop(released.get("ok", Priority::Normal).await.unwrap());
    assert!(released.status()[0].host_released);
    assert_eq!(released.reclaim(ALL), 0);
    assert_eq!(released.status()[0].tier, SrsTier::Hot);
    // Evicting everything idle (shutdown) still takes it.
    assert!(released.evict_all_idle() > 0);
    assert_eq!(released.status()[0].tier, SrsTier::Warm);
    // Its host copy kept: evicted as before.
    let kept = SrsCache::new(
        budget(),
        Arc::new(OnFile(path)),
        true,
        None,
        false,
        Default::default(),
        KEEP,
    );
    drop(kept.get("ok", Priority::Normal).await.unwrap());
    assert!(!kept.status()[0].host_released);
    assert!(kept.reclaim(ALL) > 0);
    assert_eq!(kept.status()[0].tier, SrsTier::Warm);
}

/// Seen on the H200 (budget 84 GiB, porep-32g and snap-32g preloaded): a SnapDeals proof's
/// backlog evicted the PoRep SRS idle for 2 s, and the next PoRep proof waited 151 s for its
/// reload. A recently used SRS goes only for what waiting cannot bring; one idle for
/// `keep_idle` goes for the backlog.
#[tokio::test]
async fn a_recently_used_srs_goes_only_when_waiting_cannot_help() {
    for (keep_idle, backlog_evicts) in [(KEEP, false), (Duration::ZERO, true)] {
        let cache = one_circuit(keep_idle);
        drop(cache.get("ok", Priority::Normal).await.unwrap());
        let backlog = Pressure {
            backlog: 1 << 30,
            unavoidable: 0,
        };
        let freed = cache.reclaim(backlog);
        assert_eq!(freed > 0, backlog_evicts, "keep_idle {keep_idle:?}");
        if !backlog_evicts {
            assert_eq!(cache.status()[0].tier, SrsTier::Hot);
            let unavoidable = Pressure {
                backlog: 1 << 30,
                unavoidable: 1,
            };
            assert!(cache.reclaim(unavoidable) > 0);
        }
        assert_eq!(cache.status()[0].tier, SrsTier::Warm);
    }
}
