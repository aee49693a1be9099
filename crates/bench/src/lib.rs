//! Benchmarks and tools behind the `cuzk` binary, as a library where tests can reach them
//! (the binary only parses arguments and calls in here).
//!
//! - [`client`]: the load generator and admin client for a running daemon
//!   (`cuzk bench single|batch|status|preload|evict`, `cuzk status`); [`report`]: what a
//!   load run measured and the table it prints; [`timeline`]: the run's SVG timeline.
//! - [`request_file`]: proof-request files and the kind names people type; [`verify`]: the
//!   client-side check of returned proofs.
//! - [`pipeline`]: jobs through an in-process engine (`cuzk bench pipeline`).
//! - [`cpu`]: the CPU prover on synthetic circuits (`cuzk bench cpu`); [`prove`]: one
//!   circuit proved and timed per phase (`cuzk prove`).
//! - [`gpus`]: multi-GPU scaling of the engine (`cuzk bench gpus`; real GPUs need the `cuda`
//!   feature).
//! - [`demo`]: the mixed Filecoin batch through an embedded daemon (`cuzk demo`).
//! - [`selftest`]: proofs of a synthetic sparse sector of every kind and size through a running
//!   daemon, checked with filecoin-proofs' verifier (`cuzk selftest`).
//! - [`soak`]: a mixed load held for a set time against a running daemon (`cuzk bench soak`).
//! - [`synth`]: real-size synthesis, the daemon's path against bellperson's (`cuzk bench synth`).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod client;
pub mod cpu;
pub mod demo;
mod error;
pub mod gpus;
pub mod pipeline;
pub mod prove;
pub mod report;
pub mod request_file;
pub mod selftest;
pub mod soak;
pub mod synth;
pub mod timeline;
pub mod verify;

pub use error::{BenchError, Result};
