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

/// `ConstraintSystem::enforce` with its bounds written once:
/// `enforce!(|self, annotation, a, b, c| { … });` (each of the four a pattern, `_` for unused;
/// attributes and doc comments before the `|` go on the method).
#[macro_export]
macro_rules! enforce {
    ($(#[$m:meta])* |$self:ident, $ann:pat_param, $a:pat_param, $b:pat_param, $c:pat_param| $body:block) => {
        $(#[$m])*
        fn enforce<A, AR, LA, LB, LC>(&mut $self, $ann: A, $a: LA, $b: LB, $c: LC)
        where
            A: FnOnce() -> AR,
            AR: Into<String>,
            LA: FnOnce(
                ::bellpepper_core::LinearCombination<::blstrs::Scalar>,
            ) -> ::bellpepper_core::LinearCombination<::blstrs::Scalar>,
            LB: FnOnce(
                ::bellpepper_core::LinearCombination<::blstrs::Scalar>,
            ) -> ::bellpepper_core::LinearCombination<::blstrs::Scalar>,
            LC: FnOnce(
                ::bellpepper_core::LinearCombination<::blstrs::Scalar>,
            ) -> ::bellpepper_core::LinearCombination<::blstrs::Scalar>,
        $body
    };
}

/// `alloc` and `alloc_input` of a constraint system that records shape only: each counts its
/// variable in the named field (`count_variables!(aux, inputs)`) and ignores the value, or,
/// with `evaluated` last, computes it and drops it (what a witness costs).
#[macro_export]
macro_rules! count_variables {
    ($aux:ident, $inputs:ident) => {
        $crate::count_variables!(@fn alloc, $aux, Aux, false);
        $crate::count_variables!(@fn alloc_input, $inputs, Input, false);
    };
    ($aux:ident, $inputs:ident, evaluated) => {
        $crate::count_variables!(@fn alloc, $aux, Aux, true);
        $crate::count_variables!(@fn alloc_input, $inputs, Input, true);
    };
    (@fn $name:ident, $field:ident, $index:ident, $evaluate:expr) => {
        fn $name<F, A, AR>(
            &mut self,
            _: A,
            f: F,
        ) -> ::std::result::Result<::bellpepper_core::Variable, ::bellpepper_core::SynthesisError>
        where
            F: FnOnce() -> ::std::result::Result<::blstrs::Scalar, ::bellpepper_core::SynthesisError>,
            A: FnOnce() -> AR,
            AR: Into<String>,
        {
            if $evaluate {
                let _ = f();
            }
            self.$field += 1;
            Ok(::bellpepper_core::Variable::new_unchecked(
                ::bellpepper_core::Index::$index(self.$field - 1),
            ))
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
