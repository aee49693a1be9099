//! Errors of the server crate, and the one place where a request's failure becomes a
//! `tonic::Status` (the gRPC code a client sees).
use cuzk_core::EngineError;
use std::path::PathBuf;
use tonic::{Code, Status};

/// Errors of starting, running and stopping the server, or of dialing it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// A listen address could not be parsed.
    #[error("bad listen address `{addr}`: {reason}")]
    BadAddress {
        /// The address as given.
        addr: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Binding the socket failed.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address as given.
        addr: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Another process is listening on the unix socket.
    #[error("another process is listening on {}; refusing to replace a live socket", path.display())]
    SocketInUse {
        /// The socket path.
        path: PathBuf,
    },
    /// The socket path exists and is not a socket; it is left alone.
    #[error("{} exists and is not a socket; not removing it", path.display())]
    NotASocket {
        /// The path.
        path: PathBuf,
    },
    /// The unix socket's directory does not exist and could not be created.
    #[error(
        "cannot create the socket directory {} for {}: {source}; create it (mode 0750, e.g. \
         systemd's RuntimeDirectory=cuzk) or choose another address with --listen \
         (server.listen), e.g. --listen unix:///tmp/cuzk/cuzk.sock or --listen 127.0.0.1:9820",
        dir.display(), socket.display()
    )]
    SocketDir {
        /// The directory.
        dir: PathBuf,
        /// The socket path asked for.
        socket: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A TCP listener on a non-loopback address was asked for with no token configured.
    #[error(
        "refusing to serve {listener} on {addr}: it is not a loopback address and no \
         server.auth_token_file is set; set one (clients then send `authorization: Bearer \
         <token>`), or listen on the unix socket or on 127.0.0.1"
    )]
    TokenRequired {
        /// The address bound.
        addr: String,
        /// Which listener: "gRPC" or "HTTP metrics".
        listener: &'static str,
    },
    /// `server.auth_token_file` is unusable.
    #[error("server.auth_token_file {}: {reason}", path.display())]
    TokenFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// An I/O error (socket permissions, local address...).
    #[error("I/O: {0}")]
    Io(std::io::Error),
    /// The gRPC transport failed (serve or connect).
    #[error("gRPC transport: {0}")]
    Transport(tonic::transport::Error),
    /// The engine refused to stop cleanly.
    #[error("engine: {0}")]
    Engine(EngineError),
    /// The `[server]` table has an unknown key or a value of the wrong type.
    #[error("[server]: {0}")]
    ConfigTable(toml::de::Error),
    /// A `[server]` value does not parse.
    #[error("server.{field}: {reason}")]
    ConfigValue {
        /// The key.
        field: &'static str,
        /// What is wrong with its value.
        reason: String,
    },
}

/// Why one RPC failed: the engine refused it, or it never reached the engine because a proto
/// field was unusable.
#[derive(Debug)]
pub(crate) enum ApiError {
    /// The engine's answer.
    Engine(EngineError),
    /// A proto-level problem found before calling the engine (e.g. an enum value the
    /// daemon does not know).
    InvalidArgument(String),
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> Self {
        ApiError::Engine(e)
    }
}

impl From<ApiError> for Status {
    /// The single mapping from failures to gRPC codes. The message is the error's `Display`,
    /// which names what was wrong in words an operator can act on.
    fn from(err: ApiError) -> Status {
        let (code, message) = match err {
            ApiError::InvalidArgument(m) => (Code::InvalidArgument, m),
            ApiError::Engine(e) => {
                let code = match &e {
                    EngineError::InvalidRequest(_) => Code::InvalidArgument,
                    EngineError::UnknownCircuit(_) => Code::InvalidArgument,
                    EngineError::NotFound(_) => Code::NotFound,
                    EngineError::QueueFull(_) => Code::ResourceExhausted,
                    EngineError::TooLarge { .. } => Code::ResourceExhausted,
                    EngineError::ShuttingDown => Code::Unavailable,
                    EngineError::Timeout(_) => Code::DeadlineExceeded,
                    EngineError::Srs { .. } => Code::FailedPrecondition,
                    EngineError::Config(_) => Code::FailedPrecondition,
                    EngineError::Disabled(_) => Code::FailedPrecondition,
                    EngineError::RequestIdConflict(_) => Code::AlreadyExists,
                    EngineError::Internal(_) => Code::Internal,
                    _ => Code::Internal,
                };
                (code, e.to_string())
            }
        };
        if code == Code::Internal {
            tracing::error!(%message, "request failed with an internal error");
        } else {
            tracing::debug!(?code, %message, "request refused");
        }
        Status::new(code, clip_message(message))
    }
}

/// The most bytes of an error message a client gets back: messages name what was wrong and
/// may echo some of the input, never all of it.
pub(crate) const MAX_MESSAGE_BYTES: usize = 1000;

/// `message`, cut at a character boundary to at most [`MAX_MESSAGE_BYTES`] (with `…`).
fn clip_message(mut message: String) -> String {
    if message.len() <= MAX_MESSAGE_BYTES {
        return message;
    }
    let mut end = MAX_MESSAGE_BYTES - '…'.len_utf8();
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    message.truncate(end);
    message.push('…');
    message
}

/// tonic refuses a message over the size limit with OUT_OF_RANGE; gRPC's own status-code
/// table (and grpc-go, which Curio uses) says RESOURCE_EXHAUSTED. This rewrites that one
/// transport answer so every over-limit request gets the conventional code; the message
/// ("decoded message length too large: found N bytes, the limit is: M bytes") is kept.
pub(crate) fn oversize_is_resource_exhausted<B>(mut res: http::Response<B>) -> http::Response<B> {
    let oversize = res.extensions().get::<Status>().is_some_and(|s| {
        s.code() == Code::OutOfRange && s.message().contains("message length too large")
    });
    if oversize {
        let code = Code::ResourceExhausted as i32;
        if let Ok(v) = http::HeaderValue::from_str(&code.to_string()) {
            res.headers_mut().insert("grpc-status", v);
        }
        let status = res
            .extensions_mut()
            .remove::<Status>()
            .map(|s| Status::new(Code::ResourceExhausted, s.message().to_string()));
        if let Some(s) = status {
            res.extensions_mut().insert(s);
        }
    }
    res
}

#[cfg(test)]
mod message_tests {
    use super::*;

    /// Issue 15 item 5: errors echoed input back unbounded (a 1 MB circuit id came back whole).
    #[test]
    fn error_messages_are_cut_to_1000_bytes() {
        let long = format!("unknown circuit id `{}`", "é".repeat(100_000));
        let status: Status = ApiError::Engine(EngineError::UnknownCircuit(long)).into();
        assert!(
            status.message().len() <= MAX_MESSAGE_BYTES,
            "{}",
            status.message().len()
        );
        assert!(status.message().ends_with('…'));
        let short: Status = ApiError::InvalidArgument("job_id is empty".into()).into();
        assert_eq!(short.message(), "job_id is empty");
    }
}
