//! Groth16 over BLS12-381, shaped for a proving daemon.
//!
//! - [`compiled`]: a circuit's A/B/C recorded once as sparse matrices; witness-only
//!   synthesis then evaluates against them (on the host, or deferred to the prover's device).
//! - [`recorder`]: a `bellpepper_core::ConstraintSystem` that records assignments, the
//!   A/B/C evaluations per constraint and the [`density`] bitmaps the MSMs need.
//! - [`params`]: Filecoin/bellperson `.params` and `.vk` files (read in parallel windows, written for tests).
//! - [`setup`]: an *insecure* test-parameter generator (random toxic waste).
//! - [`backend`]: the [`ProverBackend`] trait with a split `start`/`finish`, the joint the
//!   engine and every prover build against; [`prover`]: the multi-threaded CPU backend.
//! - [`proof`], [`verifier`]: bellperson-identical 192-byte proofs; (batch) verification.
//! - [`synthetic`]: configurable synthetic circuits for tests and benchmarks.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

/// The three `ConstraintSystem` methods of a root that keeps no namespaces: pushing and
/// popping one does nothing, and the system is its own root. Every constraint system in
/// cuzk is such a root: names would cost time and memory, and nothing reads them.
#[macro_export]
macro_rules! flat_namespaces {
    () => {
        fn push_namespace<NR, N>(&mut self, _: N)
        where
            NR: Into<String>,
            N: FnOnce() -> NR,
        {
        }

        fn pop_namespace(&mut self) {}

        fn get_root(&mut self) -> &mut Self::Root {
            self
        }
    };
}

pub mod atomic;
pub mod backend;
pub mod compiled;
pub mod density;
pub mod domain;
pub mod error;
pub mod msm;
pub mod params;
pub mod proof;
pub mod prover;
mod read_ahead;
pub mod recorder;
pub mod setup;
pub mod synthetic;
pub mod verifier;

pub use blstrs::{Bls12, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
pub use compiled::CompiledCircuit;
pub use error::{CompileError, Error, ParamsError, ProveError};
pub use params::{Srs, VerifyingKey};
pub use proof::{Proof, ProofDecodeError, PROOF_BYTES};
pub use prover::{CpuProver, Pending, PendingG2, ProverBackend, ResidentUpload, Timings};
pub use recorder::{CompactAux, Density, NativeWitness, Recorder, RecorderMode, Synthesized};
pub use synthetic::{CircuitSpec, Sha256Circuit, SyntheticCircuit, SyntheticSpec};
pub use verifier::{verify_proof, verify_proofs_batch, PreparedVerifyingKey, VerifyError};
