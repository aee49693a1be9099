//! Filecoin proof kinds (PoRep C2, SnapDeals, WindowPoSt, WinningPoSt) turned into Groth16
//! partition circuits for cuzk, using the real `storage-proofs-*` circuits.
//!
//! - [`request`]: the request as the engine hands it over, and the C1 envelope.
//! - [`registry`]: proof kinds, sector sizes, Go-side registered-proof numbers, circuit ids.
//! - [`mod@plan`]: a request → [`ProofPlan`], dispatched to the kind's planner (`porep`,
//!   `snap`, `post`).
//! - [`partition`]: what a plan is made of: partition jobs (circuit id, public inputs, memory
//!   estimate, lazy synthesis into our recorder) and a verifier for the result.
//! - [`params`]: circuit id ↔ Filecoin parameter file names (`v28-….params`/`.vk`/`.meta`),
//!   blank circuits, test-parameter generation.
//! - [`compiled`]: pre-compiled constraint matrices (witness-only synthesis + sparse
//!   matrix–vector products).
//!
//! Test data, INSECURE and TIMING-ONLY parameters and requests, and the synthesis benchmark
//! live in `cuzk-testkit`, which the daemon does not link.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

/// Calls `$f::<Tree>(args)` with the Merkle tree shape of a [`SectorSize`] (2 KiB, 8 MiB and
/// 512 MiB share one shape). The caller's crate needs `filecoin_proofs` among its
/// dependencies.
#[macro_export]
macro_rules! with_tree {
    ($size:expr, $f:ident $(<$($g:ty),*>)? ( $($args:expr),* $(,)? )) => {
        match $size {
            $crate::registry::SectorSize::S2KiB
            | $crate::registry::SectorSize::S8MiB
            | $crate::registry::SectorSize::S512MiB => {
                $f::<filecoin_proofs::SectorShape2KiB $($(, $g)*)?>($($args),*)
            }
            $crate::registry::SectorSize::S32GiB => {
                $f::<filecoin_proofs::SectorShape32GiB $($(, $g)*)?>($($args),*)
            }
            $crate::registry::SectorSize::S64GiB => {
                $f::<filecoin_proofs::SectorShape64GiB $($(, $g)*)?>($($args),*)
            }
        }
    };
}

pub mod commcid;
pub mod compiled;
pub mod error;
mod native;
pub mod params;
pub mod partition;
pub mod plan;
mod porep;
mod porep_witness;
mod post;
pub mod registry;
pub mod request;
mod snap;

pub use error::{FilecoinError, Result};
pub use partition::{MemoryEstimate, PartitionJob, ProofPlan};
pub use plan::{assemble, plan};
pub use registry::{CircuitId, CircuitKind, ProofKind, RegisteredProof, SectorSize};
pub use request::{C1Envelope, C1Input, ProofRequest};
