//! The server's options and their `[server]` table in `cuzk.toml`: listen address, metrics
//! port, message limit and drain timeout, parsed and validated here (the CLI only hands the
//! table over).
use crate::listen::ListenAddr;
use crate::{ServerError, DEFAULT_MAX_MESSAGE_BYTES};
use serde::Deserialize;
use std::time::Duration;

/// The gRPC address served when none is configured (and the one clients dial by default).
pub const DEFAULT_ADDR: &str = "127.0.0.1:9820";

/// Where and how to serve.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServeOptions {
    /// The gRPC listen address.
    pub listen: ListenAddr,
    /// `host:port` of the HTTP `/metrics` + `/healthz` server; `None` = off (the default).
    pub metrics_listen: Option<String>,
    /// Largest gRPC message accepted or sent, in bytes (the protocol says 256 MiB).
    pub max_message_bytes: usize,
    /// On shutdown, how long in-flight jobs may run before they are cancelled.
    pub drain_timeout: Duration,
}

impl ServeOptions {
    /// Options for `listen` with the protocol's defaults: 256 MiB messages, metrics off,
    /// a 5-minute drain.
    pub fn new(listen: ListenAddr) -> Self {
        Self {
            listen,
            metrics_listen: None,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            drain_timeout: Duration::from_secs(300),
        }
    }
}

/// The `[server]` table as written; every key optional.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawServer {
    listen: Option<String>,
    metrics_listen: Option<String>,
    drain_timeout: Option<String>,
    max_message_size: Option<String>,
}

impl ServeOptions {
    /// The options of a `[server]` table (`listen = "unix:///path.sock"` or `"host:port"`,
    /// default [`DEFAULT_ADDR`]; `metrics_listen = "host:port"`, off when unset or empty;
    /// `drain_timeout = "5m"`; `max_message_size = "256MiB"`). Unknown keys are errors.
    pub fn from_toml(table: toml::Value) -> Result<ServeOptions, ServerError> {
        let raw: RawServer = table.try_into().map_err(ServerError::ConfigTable)?;
        let listen: ListenAddr = raw.listen.as_deref().unwrap_or(DEFAULT_ADDR).parse()?;
        let mut serve = ServeOptions::new(listen);
        serve.metrics_listen = raw.metrics_listen.filter(|s| !s.trim().is_empty());
        if let Some(d) = raw.drain_timeout {
            serve.drain_timeout =
                humantime::parse_duration(d.trim()).map_err(|e| ServerError::ConfigValue {
                    field: "drain_timeout",
                    reason: format!("\"{d}\": {e} (write e.g. \"5m\")"),
                })?;
        }
        if let Some(m) = raw.max_message_size {
            let bad = |reason: String| ServerError::ConfigValue {
                field: "max_message_size",
                reason,
            };
            let n = cuzk_core::config::parse_size(&m).map_err(bad)?;
            serve.max_message_bytes = usize::try_from(n).map_err(|e| bad(e.to_string()))?;
        }
        Ok(serve)
    }
}

impl Default for ServeOptions {
    /// [`DEFAULT_ADDR`] with the protocol's defaults (see [`ServeOptions::new`]).
    fn default() -> Self {
        ServeOptions::new(ListenAddr::Tcp(DEFAULT_ADDR.to_string()))
    }
}
