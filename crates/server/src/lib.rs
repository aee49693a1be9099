//! The daemon's network face: the gRPC service `cuzk.v1.ProvingEngine` (tonic, wire-compatible
//! with Curio's cuzk client) on a unix socket or TCP, the HTTP `/metrics` + `/healthz` port,
//! and a client helper that dials either kind of address.
//!
//! - [`proto`]: the generated protobuf types, server and client (`proto/cuzk/v1/cuzk.proto`).
//! - [`Daemon`]: binds, serves an [`cuzk_core::Engine`], drains on shutdown.
//! - [`ServeOptions`]: how to serve, from `cuzk.toml`'s `[server]` table.
//! - [`client::connect`]: a tonic client with the protocol's 256 MiB limits.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod admission;
mod auth;
mod authority;
pub mod client;
mod codec;
mod convert;
mod daemon;
mod error;
mod intake;
pub mod listen;
mod metrics_http;
mod options;
mod service;
mod wrap;

/// Generated from `proto/cuzk/v1/cuzk.proto` (package `cuzk.v1`); see the proto file for what
/// each field carries.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod proto {
    tonic::include_proto!("cuzk.v1");
}

pub use admission::ConnectionStats;
pub use auth::AuthToken;
pub use daemon::Daemon;
pub use error::ServerError;
pub use listen::{BoundAddr, ListenAddr};
pub use options::{ServeOptions, DEFAULT_ADDR};
pub use service::ProvingService;

/// The protocol's message limit, both ways: 256 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 256 * 1024 * 1024;
