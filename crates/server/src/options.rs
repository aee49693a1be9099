//! The server's options and their `[server]` table in `cuzk.toml`: listen address, metrics
//! port, message limit, drain timeout, the TCP bearer token and the admin-RPC switch, parsed
//! and validated here (the CLI only hands the table over).
use crate::auth::AuthToken;
use crate::listen::ListenAddr;
use crate::{ServerError, DEFAULT_MAX_MESSAGE_BYTES};
use serde::Deserialize;
use std::time::Duration;

/// The gRPC address served when none is configured (and the one clients dial by default):
/// the unix socket, mode 0660, so only the daemon's user and group can connect.
pub const DEFAULT_ADDR: &str = "unix:///run/cuzk/cuzk.sock";
/// The path of [`DEFAULT_ADDR`].
const DEFAULT_SOCKET: &str = "/run/cuzk/cuzk.sock";
/// [`ServeOptions::max_streams_per_connection`]'s default.
const DEFAULT_MAX_STREAMS: u32 = 1024;

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
    /// The bearer token every TCP request must carry (gRPC, and HTTP `/metrics`); `None` =
    /// no token, which only loopback TCP listeners allow. The unix socket never asks for it.
    pub auth_token: Option<AuthToken>,
    /// Whether PreloadSRS and EvictSRS are served (default true); when false they answer
    /// PERMISSION_DENIED.
    pub admin_rpcs: bool,
    /// Concurrent gRPC streams one HTTP/2 connection may open (the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS); clients queue the rest. Default 1024: grpc-go (and so
    /// Curio) multiplexes every call, long AwaitProof waits included, on one connection.
    pub max_streams_per_connection: u32,
}

impl ServeOptions {
    /// Options for `listen` with the protocol's defaults: 256 MiB messages, metrics off,
    /// a 5-minute drain, no token, admin RPCs on.
    pub fn new(listen: ListenAddr) -> Self {
        Self {
            listen,
            metrics_listen: None,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            drain_timeout: Duration::from_secs(300),
            auth_token: None,
            admin_rpcs: true,
            max_streams_per_connection: DEFAULT_MAX_STREAMS,
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
    auth_token_file: Option<String>,
    admin_rpcs: Option<bool>,
    max_streams_per_connection: Option<u32>,
}

impl ServeOptions {
    /// The options of a `[server]` table (`listen = "unix:///path.sock"` or `"host:port"`,
    /// default [`DEFAULT_ADDR`]; `metrics_listen = "host:port"`, off when unset or empty;
    /// `drain_timeout = "5m"`; `max_message_size = "256MiB"`; `auth_token_file = "/path"`, read
    /// here, see [`AuthToken::from_file`]; `admin_rpcs = true`; `max_streams_per_connection =
    /// 1024`). Unknown keys are errors.
    pub fn from_toml(table: toml::Value) -> Result<ServeOptions, ServerError> {
        let raw: RawServer = table.try_into().map_err(ServerError::ConfigTable)?;
        let mut serve = ServeOptions::default();
        if let Some(l) = raw.listen {
            serve.listen = l.parse()?;
        }
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
        if let Some(p) = raw.auth_token_file.filter(|s| !s.trim().is_empty()) {
            serve.auth_token = Some(AuthToken::from_file(std::path::Path::new(p.trim()))?);
        }
        if let Some(on) = raw.admin_rpcs {
            serve.admin_rpcs = on;
        }
        if let Some(n) = raw.max_streams_per_connection {
            if n == 0 {
                return Err(ServerError::ConfigValue {
                    field: "max_streams_per_connection",
                    reason: "0 would refuse every call; write at least 1".into(),
                });
            }
            serve.max_streams_per_connection = n;
        }
        Ok(serve)
    }
}

impl Default for ServeOptions {
    /// [`DEFAULT_ADDR`] with the protocol's defaults (see [`ServeOptions::new`]).
    fn default() -> Self {
        ServeOptions::new(ListenAddr::Unix(DEFAULT_SOCKET.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_listen_is_the_unix_socket_not_tcp() {
        let want = ListenAddr::Unix("/run/cuzk/cuzk.sock".into());
        assert_eq!(ServeOptions::default().listen, want);
        assert_eq!(DEFAULT_ADDR.parse::<ListenAddr>().unwrap(), want);
        let empty = ServeOptions::from_toml(toml::Value::Table(Default::default())).unwrap();
        assert_eq!(empty.listen, want);
        assert!(empty.auth_token.is_none() && empty.admin_rpcs);
    }

    #[test]
    fn server_table_reads_token_file_and_admin_switch() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("token");
        std::fs::write(&p, "0123456789abcdef0123\n").unwrap();
        std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
        let text = format!(
            "auth_token_file = \"{}\"\nadmin_rpcs = false\n",
            p.display()
        );
        let o = ServeOptions::from_toml(toml::from_str(&text).unwrap()).unwrap();
        assert_eq!(
            o.auth_token,
            Some(AuthToken::new("0123456789abcdef0123").unwrap())
        );
        assert!(!o.admin_rpcs);
        let missing = "auth_token_file = \"/nonexistent/cuzk-token\"";
        let err = ServeOptions::from_toml(toml::from_str(missing).unwrap()).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/cuzk-token"), "{err}");
    }
}
