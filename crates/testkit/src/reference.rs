//! The synthesis benchmark's reference: bellperson's own prover-side synthesis of a
//! partition's real circuit, planned as [`Bellperson`] work (production plans never carry it).
//!
//! The fair reference is what bellperson 0.26 does inside `create_proof` before any FFT or
//! MSM: its private `ProvingAssignment` constraint system records assignments, a/b/c and
//! densities, then converts the assignments to their byte representation. We reach exactly
//! that code through the public `create_proof` by handing it a [`bellperson`] parameter
//! source that refuses to give out the verifying key — the first thing bellperson asks for
//! *after* synthesis — so the call returns right when synthesis is done.
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use bellperson::groth16::{ParameterSource, VerifyingKey};
use bellperson::SynthesisError;
use blstrs::{Bls12, G1Affine, G2Affine, Scalar};
use ff::Field;

use cuzk_filecoin::error::{FilecoinError, Result};
use cuzk_filecoin::partition::{MemoryEstimate, ProofPlan, Synthesis};
use cuzk_filecoin::request::ProofRequest;

/// Builds a partition's circuit and synthesizes it with bellperson (see [`Bellperson`]).
pub(crate) type ReferenceFn = Box<dyn FnOnce() -> Result<()> + Send>;

/// Plans `req` with bellperson's synthesis as every job's work.
pub(crate) fn plan(req: &ProofRequest) -> Result<ProofPlan<ReferenceFn>> {
    cuzk_filecoin::plan::plan_with::<Bellperson>(req)
}

/// Jobs that build their circuit and run bellperson's synthesis on it (benchmarks only).
pub(crate) struct Bellperson;

impl Synthesis for Bellperson {
    type Work = ReferenceFn;

    fn work<C, F>(partition: usize, _: MemoryEstimate, build: F) -> ReferenceFn
    where
        C: bellpepper_core::Circuit<Scalar> + Send,
        F: Fn() -> Result<C> + Send + Sync + 'static,
    {
        Box::new(move || reference_guarded(partition, build))
    }
}

/// Builds the circuit and synthesizes it with bellperson's prover (`create_proof` with a
/// parameter source that refuses to hand out parameters, so it stops right after synthesis).
fn reference_guarded<C, F>(partition: usize, build: F) -> Result<()>
where
    C: bellpepper_core::Circuit<Scalar> + Send,
    F: FnOnce() -> Result<C>,
{
    let run = || -> Result<()> {
        let circuit = build()?;
        bellperson_synthesize(circuit).map_err(|e| FilecoinError::Synthesis {
            partition,
            message: e.to_string(),
        })
    };
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|_| {
        Err(FilecoinError::Synthesis {
            partition,
            message: "panic in bellperson synthesis".into(),
        })
    })
}

/// A bellperson parameter source that stops `create_proof` right after synthesis.
struct StopAfterSynthesis;

const STOP: SynthesisError = SynthesisError::MalformedVerifyingKey;

impl ParameterSource<Bls12> for StopAfterSynthesis {
    type G1Builder = (Arc<Vec<G1Affine>>, usize);
    type G2Builder = (Arc<Vec<G2Affine>>, usize);

    fn get_vk(&self, _: usize) -> std::result::Result<&VerifyingKey<Bls12>, SynthesisError> {
        Err(STOP)
    }
    fn get_h(&self, _: usize) -> std::result::Result<Self::G1Builder, SynthesisError> {
        Err(STOP)
    }
    fn get_l(&self, _: usize) -> std::result::Result<Self::G1Builder, SynthesisError> {
        Err(STOP)
    }
    fn get_a(
        &self,
        _: usize,
        _: usize,
    ) -> std::result::Result<(Self::G1Builder, Self::G1Builder), SynthesisError> {
        Err(STOP)
    }
    fn get_b_g1(
        &self,
        _: usize,
        _: usize,
    ) -> std::result::Result<(Self::G1Builder, Self::G1Builder), SynthesisError> {
        Err(STOP)
    }
    fn get_b_g2(
        &self,
        _: usize,
        _: usize,
    ) -> std::result::Result<(Self::G2Builder, Self::G2Builder), SynthesisError> {
        Err(STOP)
    }
}

/// Runs bellperson's prover-side synthesis of `circuit` and nothing else.
fn bellperson_synthesize<C>(circuit: C) -> std::result::Result<(), SynthesisError>
where
    C: bellpepper_core::Circuit<Scalar> + Send,
{
    match bellperson::groth16::create_proof::<Bls12, _, _>(
        circuit,
        StopAfterSynthesis,
        Scalar::ZERO,
        Scalar::ZERO,
    ) {
        Err(SynthesisError::MalformedVerifyingKey) => Ok(()),
        Err(e) => Err(e),
        Ok(_) => Err(SynthesisError::Unsatisfiable),
    }
}
