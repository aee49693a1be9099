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
/// [`ServeOptions::max_connections`]'s default.
const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// File descriptors kept for everything but connections (parameter files, caches, logs)
/// when `max_connections` is fitted under the process's open-file limit.
const FD_RESERVE: u64 = 64;

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
    /// gRPC connections open at once; one more is closed as soon as it is accepted. Default
    /// 1024, lowered to fit the open-file limit (see [`ServeOptions::fit_to_fd_limit`]).
    pub max_connections: usize,
    /// A connection that sends no byte within this is closed. Default 10 s.
    pub handshake_timeout: Duration,
    /// How often an HTTP/2 PING goes to each connection's peer, and how long its answer may
    /// take before the connection is closed and its calls cancelled: a client that vanishes
    /// without closing its socket is found within the sum. Default 30 s and 20 s.
    pub keepalive_interval: Duration,
    /// See [`ServeOptions::keepalive_interval`].
    pub keepalive_timeout: Duration,
    /// Largest header list (metadata) a request may carry, in bytes, as HTTP/2's
    /// SETTINGS_MAX_HEADER_LIST_SIZE. Default 16 KiB.
    pub max_header_list_bytes: u32,
    /// A request's message must have arrived whole within this of its headers, or the call
    /// fails with DEADLINE_EXCEEDED and its buffered bytes are freed. Default 5 min (a
    /// 256 MiB message at 10 Mbit/s takes under 4).
    pub request_arrival_timeout: Duration,
    /// How long a message that does not fit the request buffer now waits for room (no more
    /// of it is read meanwhile; HTTP/2 flow control holds its sender) before it fails with
    /// RESOURCE_EXHAUSTED. The wait does not count against `request_arrival_timeout`.
    /// Default 10 min (at 32 GiB PoRep's ~18 s a proof, a queue of thirty drains in 9).
    pub request_buffer_wait: Duration,
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
            max_connections: DEFAULT_MAX_CONNECTIONS,
            handshake_timeout: Duration::from_secs(10),
            keepalive_interval: Duration::from_secs(30),
            keepalive_timeout: Duration::from_secs(20),
            max_header_list_bytes: 16 << 10,
            request_arrival_timeout: Duration::from_secs(300),
            request_buffer_wait: Duration::from_secs(600),
        }
    }

    /// The HTTP/2 connection window: every stream's ([`cuzk_core::STREAM_WINDOW`]) at once
    /// (at most HTTP/2's largest, 2^31 − 1), so streams whose messages wait for room in the
    /// request buffer, unread, never exhaust the window of the others on their connection.
    pub fn connection_window_bytes(&self) -> u32 {
        (u64::from(cuzk_core::STREAM_WINDOW) * u64::from(self.max_streams_per_connection))
            .min((1 << 31) - 1) as u32
    }

    /// Lowers `max_connections` to fit `open_files` (the process's open-file limit) less a
    /// reserve for the daemon's own files, so a connection flood fills the daemon's limit,
    /// never the process's (where `accept` fails and nothing can open a file). Returns the
    /// old value when it was lowered.
    pub fn fit_to_fd_limit(&mut self, open_files: u64) -> Option<usize> {
        let fits = open_files.saturating_sub(FD_RESERVE).max(1);
        if self.max_connections as u64 > fits {
            let old = self.max_connections;
            self.max_connections = fits as usize;
            Some(old)
        } else {
            None
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
    max_connections: Option<usize>,
    handshake_timeout: Option<String>,
    keepalive_interval: Option<String>,
    keepalive_timeout: Option<String>,
    max_header_list_size: Option<String>,
    request_arrival_timeout: Option<String>,
    request_buffer_wait: Option<String>,
}

/// A duration key of the `[server]` table ("10s", "5m").
fn any_duration(field: &'static str, text: &str) -> Result<Duration, ServerError> {
    humantime::parse_duration(text.trim()).map_err(|e| ServerError::ConfigValue {
        field,
        reason: format!("\"{text}\": {e} (write e.g. \"5m\")"),
    })
}

/// [`any_duration`], zero refused.
fn duration(field: &'static str, text: &str) -> Result<Duration, ServerError> {
    let d = any_duration(field, text)?;
    if d.is_zero() {
        return Err(ServerError::ConfigValue {
            field,
            reason: "0 would close every connection or call at once".into(),
        });
    }
    Ok(d)
}

/// A size key of the `[server]` table ("256MiB"), at least `least` bytes and within `T`.
fn size<T: TryFrom<u64>>(field: &'static str, text: &str, least: u64) -> Result<T, ServerError> {
    let bad = |reason: String| ServerError::ConfigValue { field, reason };
    let n = cuzk_core::config::parse_size(text).map_err(bad)?;
    Some(n)
        .filter(|&n| n >= least)
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| bad(format!("{n} bytes: out of range (at least {least})")))
}

impl ServeOptions {
    /// The options of a `[server]` table (`listen = "unix:///path.sock"` or `"host:port"`,
    /// default [`DEFAULT_ADDR`]; `metrics_listen = "host:port"`, off when unset or empty;
    /// `drain_timeout = "5m"`; `max_message_size = "256MiB"`; `auth_token_file = "/path"`, read
    /// here, see [`AuthToken::from_file`]; `admin_rpcs = true`; `max_streams_per_connection =
    /// 1024`; `max_connections = 1024`; `handshake_timeout = "10s"`; `keepalive_interval =
    /// "30s"`; `keepalive_timeout = "20s"`; `max_header_list_size = "16KiB"`;
    /// `request_arrival_timeout = "5m"`; `request_buffer_wait = "10m"`). Unknown keys are
    /// errors.
    pub fn from_toml(table: toml::Value) -> Result<ServeOptions, ServerError> {
        let raw: RawServer = table.try_into().map_err(ServerError::ConfigTable)?;
        let mut serve = ServeOptions::default();
        if let Some(l) = raw.listen {
            serve.listen = l.parse()?;
        }
        serve.metrics_listen = raw.metrics_listen.filter(|s| !s.trim().is_empty());
        if let Some(d) = raw.drain_timeout {
            serve.drain_timeout = any_duration("drain_timeout", &d)?;
        }
        if let Some(m) = raw.max_message_size {
            serve.max_message_bytes = size("max_message_size", &m, 0)?;
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
        if let Some(n) = raw.max_connections {
            if n == 0 {
                return Err(ServerError::ConfigValue {
                    field: "max_connections",
                    reason: "0 would refuse every client; write at least 1".into(),
                });
            }
            serve.max_connections = n;
        }
        if let Some(d) = raw.handshake_timeout {
            serve.handshake_timeout = duration("handshake_timeout", &d)?;
        }
        if let Some(d) = raw.keepalive_interval {
            serve.keepalive_interval = duration("keepalive_interval", &d)?;
        }
        if let Some(d) = raw.keepalive_timeout {
            serve.keepalive_timeout = duration("keepalive_timeout", &d)?;
        }
        if let Some(d) = raw.request_arrival_timeout {
            serve.request_arrival_timeout = duration("request_arrival_timeout", &d)?;
        }
        if let Some(d) = raw.request_buffer_wait {
            serve.request_buffer_wait = any_duration("request_buffer_wait", &d)?;
        }
        if let Some(m) = raw.max_header_list_size {
            serve.max_header_list_bytes = size("max_header_list_size", &m, 1024)?;
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

    #[test]
    fn abuse_bounds_are_read_checked_and_fitted_to_the_fd_limit() {
        let text = "max_connections = 5000\nhandshake_timeout = \"3s\"\n\
                    keepalive_interval = \"1m\"\nkeepalive_timeout = \"5s\"\n\
                    max_header_list_size = \"8KiB\"\nrequest_arrival_timeout = \"90s\"\n\
                    request_buffer_wait = \"0s\"";
        let mut o = ServeOptions::from_toml(toml::from_str(text).unwrap()).unwrap();
        assert_eq!(o.max_connections, 5000);
        assert_eq!(o.handshake_timeout, Duration::from_secs(3));
        assert_eq!(o.keepalive_interval, Duration::from_secs(60));
        assert_eq!(o.keepalive_timeout, Duration::from_secs(5));
        assert_eq!(o.max_header_list_bytes, 8192);
        assert_eq!(o.request_arrival_timeout, Duration::from_secs(90));
        assert_eq!(o.request_buffer_wait, Duration::ZERO);
        assert_eq!(
            o.connection_window_bytes(),
            (64 << 10) * o.max_streams_per_connection
        );
        assert_eq!(o.fit_to_fd_limit(1024), Some(5000));
        assert_eq!(o.max_connections, 1024 - FD_RESERVE as usize);
        assert_eq!(o.fit_to_fd_limit(65536), None);
        for bad in [
            "max_connections = 0",
            "handshake_timeout = \"0s\"",
            "keepalive_timeout = \"soon\"",
            "max_header_list_size = \"10\"",
        ] {
            let e = ServeOptions::from_toml(toml::from_str(bad).unwrap());
            assert!(e.is_err(), "{bad} accepted");
        }
    }
}
