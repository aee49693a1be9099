//! Synthetic circuits as a proof kind: `ProofKind::Synthetic` requests carry a spec string
//! (on the wire in `vanilla_proof`), e.g. `synthetic:constraints=4096,inputs=4,partitions=3` or
//! `sha256:blocks=2,partitions=2`. The SRS of a spec is generated with the (insecure) test
//! setup on first use and cached as a `.params` file in the temp directory; every partition of
//! a request proves the same circuit.
use crate::error::EngineError;
use crate::planner::{JobPlan, PartitionPlan, Planner, SynthesisContext};
use crate::request::{ProofRequest, Work};
use cuzk_groth16::synthetic::CircuitSpec;
use cuzk_groth16::{Recorder, RecorderMode, Srs};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::path::PathBuf;

/// The planner for synthetic circuits.
#[derive(Clone, Debug)]
pub struct SyntheticPlanner {
    /// Largest constraint count accepted (bigger specs are bad input).
    pub max_constraints: usize,
    /// Most partitions one request may ask for.
    pub max_partitions: usize,
    /// Most public inputs a spec may ask for (each partition carries a copy, planned before
    /// any reservation, so this bounds what a request allocates up front).
    pub max_inputs: usize,
    /// Most aux (private) variables a spec may ask for.
    pub max_aux: usize,
    /// Seed of the test setup's toxic waste (tests only: anyone who knows it can forge).
    pub setup_seed: u64,
}

impl Default for SyntheticPlanner {
    fn default() -> Self {
        SyntheticPlanner {
            max_constraints: 1 << 24,
            max_partitions: 64,
            max_inputs: 1 << 15,
            max_aux: 1 << 26,
            setup_seed: 0x5eed_c0de,
        }
    }
}

/// A parsed synthetic request: the circuit and how many partitions.
#[derive(Clone, Copy, Debug)]
pub struct SyntheticRequest {
    /// The circuit every partition proves.
    pub spec: CircuitSpec,
    /// Number of partitions.
    pub partitions: usize,
}

/// Parses `spec[,partitions=N]`.
pub fn parse_request(s: &str) -> Result<SyntheticRequest, String> {
    let mut partitions = 1usize;
    let (kind, rest) = s.split_once(':').unwrap_or((s, ""));
    let mut kept = Vec::new();
    for item in rest.split(',').filter(|i| !i.trim().is_empty()) {
        match item.split_once('=') {
            Some((k, v)) if k.trim() == "partitions" => {
                partitions = v
                    .trim()
                    .parse()
                    .map_err(|_| format!("bad partitions value `{v}`"))?;
            }
            _ => kept.push(item),
        }
    }
    let spec_str = format!("{kind}:{}", kept.join(","));
    let spec: CircuitSpec = spec_str.parse().map_err(|e| format!("{e}"))?;
    if partitions == 0 {
        return Err("partitions must be >= 1".into());
    }
    Ok(SyntheticRequest { spec, partitions })
}

/// The circuit id of a spec: its canonical string.
pub fn circuit_id(spec: &CircuitSpec) -> String {
    spec.to_string()
}

impl SyntheticPlanner {
    fn spec_of(&self, circuit_id: &str) -> Result<CircuitSpec, EngineError> {
        let spec = circuit_id
            .parse::<CircuitSpec>()
            .map_err(|_| EngineError::UnknownCircuit(circuit_id.to_string()))?;
        self.check(&spec)?;
        Ok(spec)
    }

    /// Bounds every size a spec chooses, before anything is allocated for it: a request (or
    /// a circuit id to preload) names its own work, so each dimension has a ceiling.
    fn check(&self, spec: &CircuitSpec) -> Result<(), EngineError> {
        let over = |what: &str, asked: usize, most: usize| {
            Err(EngineError::InvalidRequest(format!(
                "synthetic spec asks for {asked} {what}, at most {most} allowed"
            )))
        };
        if spec.approx_constraints() > self.max_constraints {
            return over(
                "constraints",
                spec.approx_constraints(),
                self.max_constraints,
            );
        }
        if let CircuitSpec::Synthetic(s) = spec {
            if s.inputs > self.max_inputs {
                return over("public inputs", s.inputs, self.max_inputs);
            }
            if s.num_aux() > self.max_aux {
                return over("aux variables", s.num_aux(), self.max_aux);
            }
        }
        Ok(())
    }

    /// (constraints, inputs with ONE, aux) of a spec, when known exactly.
    pub fn shape(spec: &CircuitSpec) -> Option<(usize, usize, usize)> {
        match spec {
            CircuitSpec::Synthetic(s) => Some((s.constraints, s.inputs + 1, s.num_aux())),
            _ => None,
        }
    }
}

impl Planner for SyntheticPlanner {
    fn plan(&self, req: ProofRequest) -> Result<JobPlan, EngineError> {
        let Work::Synthetic(s) = &req.work else {
            return Err(EngineError::InvalidRequest(format!(
                "proof kind {} is not supported by the synthetic planner",
                req.kind()
            )));
        };
        if s.trim().is_empty() {
            return Err(EngineError::InvalidRequest(
                "synthetic request needs a spec string in vanilla_proof".into(),
            ));
        }
        let r = parse_request(s.trim())
            .map_err(|e| EngineError::InvalidRequest(format!("synthetic spec `{s}`: {e}")))?;
        self.check(&r.spec)?;
        if r.partitions > self.max_partitions {
            return Err(EngineError::InvalidRequest(format!(
                "{} partitions requested, at most {} allowed",
                r.partitions, self.max_partitions
            )));
        }
        let id = circuit_id(&r.spec);
        let hint = Self::shape(&r.spec);
        let inputs = r.spec.public_inputs();
        let partitions = (0..r.partitions)
            .map(|index| {
                let spec = r.spec;
                PartitionPlan {
                    circuit_id: id.clone(),
                    index,
                    public_inputs: inputs.clone(),
                    shape_hint: hint,
                    shape_counted: false,
                    synthesize: std::sync::Arc::new(move |ctx: SynthesisContext| {
                        let rec = match (Self::shape(&spec), ctx.reuse) {
                            (Some((c, i, a)), Some(spent)) => {
                                Recorder::reusing(RecorderMode::Full, spent, c, i, a)
                            }
                            (Some((c, i, a)), None) => {
                                Recorder::with_hints(RecorderMode::Full, c, i, a)
                            }
                            (None, _) => Recorder::new(RecorderMode::Full),
                        };
                        Recorder::synthesize_into(rec, spec).map_err(|e| e.to_string())
                    }),
                }
            })
            .collect();
        Ok(JobPlan {
            partitions,
            verify: None,
            finish: None,
        })
    }

    fn params_path(&self, circuit_id: &str) -> Result<PathBuf, EngineError> {
        self.spec_of(circuit_id)?;
        let name: String = circuit_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        Ok(std::env::temp_dir().join(format!("cuzk-{name}-setup{:x}.params", self.setup_seed)))
    }

    /// An upper bound from the shape: every query as large as it can be.
    fn srs_size_hint(&self, circuit_id: &str) -> Result<u64, EngineError> {
        let spec = self.spec_of(circuit_id)?;
        let (c, i, a) = Self::shape(&spec).unwrap_or_else(|| {
            let c = spec.approx_constraints();
            (c, 2, c)
        });
        let domain = (c + i).max(1).next_power_of_two() as u64;
        let (i, a) = (i as u64, a as u64);
        let g1 = std::mem::size_of::<cuzk_groth16::G1Affine>() as u64;
        let g2 = std::mem::size_of::<cuzk_groth16::G2Affine>() as u64;
        Ok(g1 * (domain + i + a + (i + a) + (i + a)) + g2 * (i + a))
    }

    /// Reads the cached file from an earlier run if there is one, else generates the
    /// parameters and caches them (best effort; the write is atomic).
    fn load_srs(&self, circuit_id: &str) -> Result<Srs, EngineError> {
        let spec = self.spec_of(circuit_id)?;
        let path = self.params_path(circuit_id)?;
        if path.exists() {
            match crate::params::read_params(&path) {
                Ok(srs) => return Ok(srs),
                Err(e) => {
                    tracing::warn!(path = %path.display(), cause = %e, "cached synthetic params unreadable; regenerating")
                }
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(self.setup_seed);
        let srs =
            cuzk_groth16::setup::generate_params(spec, &mut rng).map_err(|e| EngineError::Srs {
                circuit_id: circuit_id.to_string(),
                message: e.to_string(),
            })?;
        if let Err(e) = cuzk_groth16::params::write_params(&path, &srs) {
            tracing::debug!(path = %path.display(), cause = %e, "could not cache synthetic params");
        }
        Ok(srs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_partitions_and_rejects_garbage() {
        let r = parse_request("synthetic:constraints=1024,inputs=2,partitions=3").unwrap();
        assert_eq!(r.partitions, 3);
        assert_eq!(SyntheticPlanner::shape(&r.spec).map(|s| s.0), Some(1024));
        assert!(parse_request("synthetic:constraints=1024,partitions=0").is_err());
        assert!(parse_request("bogus:constraints=1").is_err());
        let p = SyntheticPlanner::default();
        let bad = ProofRequest::synthetic("synthetic:colour=blue");
        assert!(matches!(p.plan(bad), Err(EngineError::InvalidRequest(_))));
        assert!(matches!(
            p.params_path("porep-32g"),
            Err(EngineError::UnknownCircuit(_))
        ));
    }

    /// Issue 15 item 1: `inputs=2^40` planned `(0..inputs).collect()` per partition with no
    /// reservation, and the allocation failure aborted the whole process.
    #[test]
    fn synthetic_spec_with_huge_inputs_is_refused_not_allocated() {
        let p = SyntheticPlanner::default();
        for spec in [
            "synthetic:constraints=1,inputs=1099511627776",
            "synthetic:constraints=1024,inputs=40000",
            "synthetic:constraints=2^24,aux=16",
            "synthetic:constraints=2^25",
            "sha256:blocks=1048576",
        ] {
            let req = ProofRequest::synthetic(spec);
            match p.plan(req) {
                Err(EngineError::InvalidRequest(m)) => assert!(m.contains("at most"), "{m}"),
                other => panic!("{spec}: {:?}", other.map(|j| j.partitions.len())),
            }
        }
        // A circuit id names its size too: preloading one must not generate a 2^30 SRS.
        for id in [
            "synthetic:constraints=2^30",
            "synthetic:constraints=1,inputs=1099511627776",
        ] {
            let refused = |r: Result<(), EngineError>| {
                matches!(
                    r,
                    Err(EngineError::InvalidRequest(_) | EngineError::UnknownCircuit(_))
                )
            };
            assert!(refused(p.srs_size_hint(id).map(drop)), "{id}");
            assert!(refused(p.load_srs(id).map(drop)), "{id}");
        }
    }
}
