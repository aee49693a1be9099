//! Where the daemon listens: parsing `unix:///path.sock` or `host:port`, binding the socket
//! (mode 0660 in a directory created 0750 if missing, a stale socket file replaced, a live one
//! refused) and removing it on exit.
use crate::ServerError;
use std::fmt;
use std::net::SocketAddr;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use tokio::net::{TcpListener, UnixListener};

/// Permissions of the unix socket file: owner and group may connect, nobody else.
const SOCKET_MODE: u32 = 0o660;
/// Permissions of a socket directory the daemon creates itself.
const SOCKET_DIR_MODE: u32 = 0o750;

/// A listen address as written in config and on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListenAddr {
    /// `unix:///run/cuzk/cuzk.sock` (also accepted: `unix:/path`, `unix:path`).
    Unix(PathBuf),
    /// `host:port`, e.g. `127.0.0.1:9820` or `[::1]:0`.
    Tcp(String),
}

impl FromStr for ListenAddr {
    type Err = ServerError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if let Some(rest) = s.strip_prefix("unix:") {
            let path = rest.strip_prefix("//").unwrap_or(rest);
            if path.is_empty() {
                return Err(ServerError::BadAddress {
                    addr: s.to_string(),
                    reason: "empty socket path".into(),
                });
            }
            return Ok(ListenAddr::Unix(PathBuf::from(path)));
        }
        let s = s.strip_prefix("http://").unwrap_or(s);
        if s.is_empty() || !s.contains(':') {
            return Err(ServerError::BadAddress {
                addr: s.to_string(),
                reason: "expected unix:///path.sock or host:port".into(),
            });
        }
        Ok(ListenAddr::Tcp(s.to_string()))
    }
}

impl fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListenAddr::Unix(p) => write!(f, "unix://{}", p.display()),
            ListenAddr::Tcp(a) => f.write_str(a),
        }
    }
}

/// The address actually bound (a TCP port 0 resolved to the real port).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BoundAddr {
    /// A unix socket at this path.
    Unix(PathBuf),
    /// A TCP socket.
    Tcp(SocketAddr),
}

impl fmt::Display for BoundAddr {
    /// Written so that [`ListenAddr::from_str`] and the CLI's `--addr` accept it back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoundAddr::Unix(p) => write!(f, "unix://{}", p.display()),
            BoundAddr::Tcp(a) => write!(f, "{a}"),
        }
    }
}

/// A bound, listening socket.
#[derive(Debug)]
pub(crate) enum Bound {
    Unix(UnixListener, SocketFileGuard),
    Tcp(TcpListener),
}

impl Bound {
    pub(crate) fn addr(&self) -> Result<BoundAddr, ServerError> {
        match self {
            Bound::Unix(_, guard) => Ok(BoundAddr::Unix(guard.path.clone())),
            Bound::Tcp(l) => Ok(BoundAddr::Tcp(l.local_addr().map_err(ServerError::Io)?)),
        }
    }
}

/// Removes the socket file when the server stops, so the next start finds no stale file.
#[derive(Debug)]
pub(crate) struct SocketFileGuard {
    path: PathBuf,
}

impl Drop for SocketFileGuard {
    fn drop(&mut self) {
        if let Err(err) = std::fs::remove_file(&self.path) {
            if err.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(path = %self.path.display(), cause = %err, "could not remove socket file");
            }
        }
    }
}

/// Binds `addr`.
pub(crate) async fn bind(addr: &ListenAddr) -> Result<Bound, ServerError> {
    match addr {
        ListenAddr::Tcp(a) => {
            let l = TcpListener::bind(a.as_str())
                .await
                .map_err(|source| ServerError::Bind {
                    addr: addr.to_string(),
                    source,
                })?;
            Ok(Bound::Tcp(l))
        }
        ListenAddr::Unix(path) => bind_unix(path),
    }
}

fn bind_unix(path: &Path) -> Result<Bound, ServerError> {
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() && !dir.exists() {
            // Owner and group may enter, as systemd's RuntimeDirectoryMode=0750 would make it.
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(SOCKET_DIR_MODE)
                .create(dir)
                .and_then(|()| {
                    // The umask may have narrowed it; the group needs to enter.
                    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(SOCKET_DIR_MODE))
                })
                .map_err(|source| ServerError::SocketDir {
                    dir: dir.to_path_buf(),
                    socket: path.to_path_buf(),
                    source,
                })?;
        }
    }
    remove_stale_socket(path)?;
    let listener = UnixListener::bind(path).map_err(|source| ServerError::Bind {
        addr: format!("unix://{}", path.display()),
        source,
    })?;
    let guard = SocketFileGuard {
        path: path.to_path_buf(),
    };
    // Between bind and chmod the file has the umask's mode; nothing is accepted before the
    // server starts, so no connection can slip in with looser permissions.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(SOCKET_MODE))
        .map_err(ServerError::Io)?;
    Ok(Bound::Unix(listener, guard))
}

/// If `path` is a socket with nobody listening, removes it. A live socket, or a file that is
/// not a socket, is an error: we never delete what another process or the operator owns.
fn remove_stale_socket(path: &Path) -> Result<(), ServerError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(ServerError::Io(e)),
    };
    if !meta.file_type().is_socket() {
        return Err(ServerError::NotASocket {
            path: path.to_path_buf(),
        });
    }
    match std::os::unix::net::UnixStream::connect(path) {
        Ok(_) => Err(ServerError::SocketInUse {
            path: path.to_path_buf(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            tracing::info!(path = %path.display(), "removing stale socket file");
            std::fs::remove_file(path).map_err(ServerError::Io)
        }
        Err(e) => Err(ServerError::Io(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_addresses() {
        assert_eq!(
            "unix:///run/cuzk.sock".parse::<ListenAddr>().unwrap(),
            ListenAddr::Unix("/run/cuzk.sock".into())
        );
        assert_eq!(
            "unix:rel.sock".parse::<ListenAddr>().unwrap(),
            ListenAddr::Unix("rel.sock".into())
        );
        assert_eq!(
            "127.0.0.1:0".parse::<ListenAddr>().unwrap(),
            ListenAddr::Tcp("127.0.0.1:0".into())
        );
        assert!("unix://".parse::<ListenAddr>().is_err());
        assert!("nonsense".parse::<ListenAddr>().is_err());
    }

    #[tokio::test]
    async fn missing_socket_dir_is_created_0750_or_named_in_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("run/cuzk/cuzk.sock");
        let bound = bind(&ListenAddr::Unix(sock.clone()))
            .await
            .expect("dir created");
        let mode = std::fs::metadata(sock.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, SOCKET_DIR_MODE);
        drop(bound);
        // A parent that cannot be a directory (a regular file is in the way).
        std::fs::write(dir.path().join("file"), b"x").unwrap();
        let bad = dir.path().join("file/cuzk/cuzk.sock");
        let err = bind(&ListenAddr::Unix(bad)).await.unwrap_err();
        assert!(matches!(err, ServerError::SocketDir { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(
            msg.contains("file/cuzk") && msg.contains("--listen"),
            "{msg}"
        );
    }

    #[tokio::test]
    async fn stale_socket_is_replaced_live_one_refused_file_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.sock");
        // A stale socket: bound by a std listener that is then dropped (the file stays).
        drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
        assert!(path.exists());
        let addr = ListenAddr::Unix(path.clone());
        let live = bind(&addr).await.expect("stale socket replaced");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, SOCKET_MODE);
        // Live: a second bind must fail and leave the first alone.
        match bind(&addr).await {
            Err(ServerError::SocketInUse { .. }) => {}
            other => panic!("expected SocketInUse, got {other:?}"),
        }
        drop(live);
        assert!(!path.exists(), "guard removes the socket file");
        // A regular file is never deleted.
        std::fs::write(&path, b"precious").unwrap();
        match bind(&addr).await {
            Err(ServerError::NotASocket { .. }) => {}
            other => panic!("expected NotASocket, got {other:?}"),
        }
        assert_eq!(std::fs::read(&path).unwrap(), b"precious");
    }
}
