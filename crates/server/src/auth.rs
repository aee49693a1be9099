//! Who may talk to the daemon over TCP: the bearer token read from `server.auth_token_file`,
//! the rule that a non-loopback TCP listener needs one, and the checks of
//! `authorization: Bearer <token>` on gRPC (an interceptor) and on HTTP `/metrics`.
//! The unix socket is guarded by its file mode (0660) and never asks for the token.
use crate::ServerError;
use std::fmt;
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use tonic::{Request, Status};

/// Shortest token accepted: 16 bytes (e.g. `openssl rand -hex 32` writes 64).
const MIN_TOKEN_BYTES: usize = 16;
/// Longest token accepted, so a misconfigured path (a big file) is refused early.
const MAX_TOKEN_BYTES: usize = 4096;

/// The shared secret TCP clients present as `authorization: Bearer <token>`. Its `Debug`
/// never prints the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthToken(Arc<[u8]>);

impl fmt::Debug for AuthToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AuthToken(<redacted>)")
    }
}

impl AuthToken {
    /// A token from its text (surrounding whitespace dropped). It must be 16 to 4096 bytes of
    /// visible ASCII, so it fits an HTTP header unchanged.
    pub fn new(text: &str) -> Result<Self, String> {
        let t = text.trim();
        if t.len() < MIN_TOKEN_BYTES || t.len() > MAX_TOKEN_BYTES {
            return Err(format!(
                "the token is {} bytes; it must be {MIN_TOKEN_BYTES} to {MAX_TOKEN_BYTES} \
                 (e.g. `openssl rand -hex 32`)",
                t.len()
            ));
        }
        if !t.bytes().all(|b| b.is_ascii_graphic()) {
            return Err("the token must be visible ASCII with no spaces".into());
        }
        Ok(Self(t.as_bytes().into()))
    }

    /// The token's text (visible ASCII, checked at construction), for a client's header.
    pub(crate) fn reveal(&self) -> &str {
        // Only visible ASCII gets in (see `new`).
        std::str::from_utf8(&self.0).unwrap_or_default()
    }

    /// Reads the token from `path`. A file that others (not owner, not group) may read or
    /// write is refused: the secret would not be one.
    pub fn from_file(path: &Path) -> Result<Self, ServerError> {
        let bad = |reason: String| ServerError::TokenFile {
            path: path.to_path_buf(),
            reason,
        };
        let meta = std::fs::metadata(path).map_err(|e| bad(e.to_string()))?;
        let mode = meta.permissions().mode();
        if mode & 0o007 != 0 {
            return Err(bad(format!(
                "mode {:04o} lets other users read or write it; run `chmod 0640` (or 0600)",
                mode & 0o7777
            )));
        }
        if meta.len() > MAX_TOKEN_BYTES as u64 + 64 {
            return Err(bad(format!("{} bytes is too long for a token", meta.len())));
        }
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        Self::new(&text).map_err(bad)
    }

    /// Whether an `authorization` header value is `Bearer <this token>`; the token bytes are
    /// compared in constant time.
    fn accepts(&self, header: Option<&[u8]>) -> bool {
        let Some(h) = header else { return false };
        let Some(given) = h
            .strip_prefix(b"Bearer ")
            .or_else(|| h.strip_prefix(b"bearer "))
        else {
            return false;
        };
        constant_time_eq(given, &self.0)
    }
}

/// Equal lengths and equal bytes, without an early exit on the first differing byte.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

/// Refuses a TCP listener on a non-loopback address when no token is configured.
/// `listener` names which one ("gRPC" or "HTTP metrics") in the error.
pub(crate) fn check_exposure(
    addr: SocketAddr,
    token: Option<&AuthToken>,
    listener: &'static str,
) -> Result<(), ServerError> {
    if token.is_none() && !addr.ip().is_loopback() {
        return Err(ServerError::TokenRequired {
            addr: addr.to_string(),
            listener,
        });
    }
    Ok(())
}

/// The gRPC interceptor: with a token, every request must carry it; without, all pass.
#[derive(Clone)]
pub(crate) struct BearerCheck(pub(crate) Option<AuthToken>);

impl tonic::service::Interceptor for BearerCheck {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        let Some(token) = &self.0 else {
            return Ok(request);
        };
        let header = request
            .metadata()
            .get("authorization")
            .map(|v| v.as_bytes());
        if token.accepts(header) {
            Ok(request)
        } else {
            Err(Status::unauthenticated(
                "missing or wrong bearer token (send `authorization: Bearer <token>`)",
            ))
        }
    }
}

/// The HTTP check of `/metrics`: true when no token is configured or the request carries it.
pub(crate) fn http_allows(token: Option<&AuthToken>, headers: &http::HeaderMap) -> bool {
    match token {
        None => true,
        Some(t) => t.accepts(
            headers
                .get(http::header::AUTHORIZATION)
                .map(|v| v.as_bytes()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_header_must_match_exactly() {
        let t = AuthToken::new("0123456789abcdef0123\n").unwrap();
        assert!(t.accepts(Some(b"Bearer 0123456789abcdef0123")));
        assert!(!t.accepts(Some(b"Bearer 0123456789abcdef012")));
        assert!(!t.accepts(Some(b"Bearer 0123456789abcdef01234")));
        assert!(!t.accepts(Some(b"0123456789abcdef0123")));
        assert!(!t.accepts(None));
        assert!(AuthToken::new("short").is_err());
        assert!(AuthToken::new("has a space in the middle").is_err());
        assert_eq!(format!("{t:?}"), "AuthToken(<redacted>)");
    }

    #[test]
    fn world_readable_token_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("token");
        std::fs::write(&p, "0123456789abcdef0123\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = AuthToken::from_file(&p).unwrap_err().to_string();
        assert!(err.contains("chmod"), "{err}");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert!(AuthToken::from_file(&p).is_ok());
    }

    #[test]
    fn non_loopback_needs_a_token() {
        let t = AuthToken::new("0123456789abcdef0123").unwrap();
        let any: SocketAddr = "0.0.0.0:9820".parse().unwrap();
        let lo: SocketAddr = "[::1]:9820".parse().unwrap();
        assert!(check_exposure(any, None, "gRPC").is_err());
        assert!(check_exposure(any, Some(&t), "gRPC").is_ok());
        assert!(check_exposure(lo, None, "gRPC").is_ok());
    }
}
