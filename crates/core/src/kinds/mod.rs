//! Proof kinds: planners that turn requests into partition plans.
//!
//! - [`filecoin`]: the Filecoin proof kinds (PoRep C2, SnapDeals, WindowPoSt, WinningPoSt).
//! - [`synthetic`]: configurable synthetic circuits for tests and benchmarks.
//! - [`Router`]: one planner for the engine that sends synthetic requests and circuit ids to
//!   the synthetic planner and everything else to another (the Filecoin planner).
use crate::error::EngineError;
use crate::planner::{JobPlan, Planner, PrepareHints, Prepared};
use crate::request::{ProofKind, ProofRequest};
use cuzk_groth16::Srs;
use std::path::PathBuf;
use std::sync::Arc;

pub mod filecoin;
pub mod synthetic;

/// Routes by proof kind (for `plan`) and by circuit id (for parameters): `Synthetic` requests
/// and ids starting with `synthetic:` or `sha256:` go to the synthetic planner.
pub struct Router {
    /// The synthetic planner; `None` refuses synthetic requests and ids with
    /// [`EngineError::Disabled`] (a daemon's default: see `Config::allow_synthetic`).
    pub synthetic: Option<synthetic::SyntheticPlanner>,
    /// Every other kind; `None` rejects them as unsupported.
    pub other: Option<Arc<dyn Planner>>,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router")
            .field("synthetic", &self.synthetic)
            .field("other", &self.other.is_some())
            .finish()
    }
}

fn is_synthetic_id(circuit_id: &str) -> bool {
    circuit_id.starts_with("synthetic:") || circuit_id.starts_with("sha256:")
}

const SYNTHETIC_DISABLED: &str = "synthetic circuits are turned off in this daemon (they are \
     for benchmarks and tests; `[allow] synthetic = true` in cuzk.toml turns them on)";

impl Router {
    fn synthetic(&self) -> Result<&synthetic::SyntheticPlanner, EngineError> {
        self.synthetic
            .as_ref()
            .ok_or_else(|| EngineError::Disabled(SYNTHETIC_DISABLED.into()))
    }

    fn for_id(&self, circuit_id: &str) -> Result<&dyn Planner, EngineError> {
        if is_synthetic_id(circuit_id) {
            return Ok(self.synthetic()?);
        }
        self.other
            .as_deref()
            .ok_or_else(|| EngineError::UnknownCircuit(circuit_id.to_string()))
    }
}

impl Planner for Router {
    fn plan(&self, req: ProofRequest) -> Result<JobPlan, EngineError> {
        if req.kind() == ProofKind::Synthetic {
            return self.synthetic()?.plan(req);
        }
        match &self.other {
            Some(p) => p.plan(req),
            None => Err(EngineError::InvalidRequest(format!(
                "proof kind {} is not supported by this build",
                req.kind()
            ))),
        }
    }

    fn params_path(&self, circuit_id: &str) -> Result<PathBuf, EngineError> {
        self.for_id(circuit_id)?.params_path(circuit_id)
    }

    fn srs_size_hint(&self, circuit_id: &str) -> Result<u64, EngineError> {
        self.for_id(circuit_id)?.srs_size_hint(circuit_id)
    }

    fn load_srs(&self, circuit_id: &str) -> Result<Srs, EngineError> {
        self.for_id(circuit_id)?.load_srs(circuit_id)
    }

    fn load_srs_header(&self, circuit_id: &str) -> Result<Option<Srs>, EngineError> {
        self.for_id(circuit_id)?.load_srs_header(circuit_id)
    }

    fn prepare_hints(&self, circuit_id: &str) -> PrepareHints {
        self.for_id(circuit_id)
            .map_or(PrepareHints::default(), |p| p.prepare_hints(circuit_id))
    }

    fn prepare_load_hint(&self, circuit_id: &str) -> u64 {
        self.for_id(circuit_id)
            .map_or(0, |p| p.prepare_load_hint(circuit_id))
    }

    fn prepare(&self, circuit_id: &str) -> Result<Option<Prepared>, EngineError> {
        self.for_id(circuit_id)?.prepare(circuit_id)
    }

    fn settle_on_host(&self, circuit_id: &str, prepared: &mut Prepared) -> Result<(), EngineError> {
        self.for_id(circuit_id)?
            .settle_on_host(circuit_id, prepared)
    }

    fn measurement_dir(&self, circuit_id: &str) -> Option<PathBuf> {
        self.for_id(circuit_id).ok()?.measurement_dir(circuit_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_by_kind_and_id() {
        let r = Router {
            synthetic: Some(synthetic::SyntheticPlanner::default()),
            other: None,
        };
        let mut porep =
            cuzk_filecoin::ProofRequest::new(cuzk_filecoin::ProofKind::PoRepSealCommit, 2048, 5)
                .unwrap();
        porep.vanilla_proof = b"{}".to_vec();
        let porep = ProofRequest::filecoin(porep);
        assert!(matches!(r.plan(porep), Err(EngineError::InvalidRequest(_))));
        assert!(matches!(
            r.params_path("porep-32g"),
            Err(EngineError::UnknownCircuit(_))
        ));
        let syn = ProofRequest::synthetic("synthetic:constraints=64,partitions=2");
        let plan = r.plan(syn).unwrap();
        assert_eq!(plan.partitions.len(), 2);
        assert!(r.srs_size_hint(&plan.partitions[0].circuit_id).unwrap() > 0);
    }

    /// Issue 15 item 1: a daemon planned any synthetic spec a client sent.
    #[test]
    fn synthetic_requests_and_ids_are_refused_when_disabled() {
        let r = Router {
            synthetic: None,
            other: None,
        };
        let syn = ProofRequest::synthetic("synthetic:constraints=64,partitions=2");
        assert!(matches!(r.plan(syn), Err(EngineError::Disabled(_))));
        for id in ["synthetic:constraints=64", "sha256:blocks=1"] {
            assert!(matches!(r.load_srs(id), Err(EngineError::Disabled(_))));
            assert!(matches!(r.srs_size_hint(id), Err(EngineError::Disabled(_))));
        }
        assert_eq!(
            r.prepare_hints("synthetic:constraints=64"),
            PrepareHints::default()
        );
    }
}
