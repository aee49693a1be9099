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
//! - [`setup`]: INSECURE parameters of any Filecoin circuit, streamed to disk.
//! - [`testdata`]: a seeded 2 KiB sector sealed on the CPU, with requests for every kind.
//! - [`shaped`]: TIMING-ONLY requests of the real 32 GiB / 64 GiB shapes (random vanilla
//!   proofs; their proofs do not verify), and constraint counting without a witness.
//! - [`sparse`]: requests of a synthetic sparse sector at any size (32 GiB and 64 GiB
//!   included) that satisfy the real circuits: their proofs verify, without sealing.
//! - [`compiled`]: pre-compiled constraint matrices (witness-only synthesis + sparse
//!   matrix–vector products).
//! - [`mod@bench`]: synthesis speed of our recorder against bellperson's (the reference
//!   synthesis is planned by `reference`, so production jobs do not carry it).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

/// Calls `$f::<Tree>(args)` with the Merkle tree shape of a [`SectorSize`] (2 KiB, 8 MiB and
/// 512 MiB share one shape).
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
pub(crate) use with_tree;

pub mod bench;
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
mod reference;
pub mod registry;
pub mod request;
pub mod setup;
pub mod shaped;
mod snap;
pub mod sparse;
pub mod testdata;

pub use error::{FilecoinError, Result};
pub use partition::{MemoryEstimate, PartitionJob, ProofPlan};
pub use plan::{assemble, plan};
pub use registry::{CircuitId, CircuitKind, ProofKind, RegisteredProof, SectorSize};
pub use request::{C1Envelope, C1Input, ProofRequest};
