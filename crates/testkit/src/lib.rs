//! What cuzk's tests, benchmarks and tools use and the daemon never runs. The daemon's
//! libraries (`cuzk-core`, `cuzk-server` and below) do not depend on this crate; `cuzk-bench`
//! and the `cuzk` binary's tools do, and the other crates' tests.
//!
//! - [`testdata`]: a seeded 2 KiB sector sealed on the CPU, with requests for every kind and
//!   INSECURE test parameters.
//! - [`setup`]: INSECURE parameters of any Filecoin circuit (known toxic waste), streamed to
//!   disk.
//! - [`sparse`]: requests of a synthetic sparse sector at any size (32 GiB and 64 GiB
//!   included) that satisfy the real circuits: their proofs verify, without sealing.
//! - [`shaped`]: TIMING-ONLY requests of the real 32 GiB / 64 GiB shapes (random vanilla
//!   proofs; their proofs DO NOT VERIFY), and constraint counting without a witness.
//! - [`timing`]: TIMING-ONLY parameters and PoRep-shaped partitions at 2^20–2^27 constraints
//!   for the GPU benchmarks (`cuzk-gpu-bench`, `cuzk bench gpus`); DO NOT VERIFY.
//! - [`synth_bench`]: synthesis speed of our recorder against bellperson's own (the reference
//!   synthesis is planned by `reference`).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod reference;
pub mod setup;
pub mod shaped;
pub mod sparse;
pub mod synth_bench;
pub mod testdata;
pub mod timing;
