//! Which connections the gRPC server takes, and how long a silent one keeps its place.
//!
//! [`accept_loop`] accepts from the listener itself (tonic's own loop retries a failed
//! `accept` at once, which spins a core while the process is out of file descriptors) and
//! hands connections on as [`Admitted`]:
//! - at most `max_connections` are open; one more is closed as soon as it is accepted (the
//!   client sees the connection reset, never a hang), counted and logged;
//! - a connection that has sent no byte within `handshake_timeout` is closed: a socket that
//!   connects and says nothing holds no place for long;
//! - a failed `accept` (EMFILE, say) is logged and retried after a pause.
//!
//! Peers that vanish mid-call are found by the HTTP/2 keepalive pings (`daemon.rs`), and a
//! request body that trickles in by the intake's arrival timeout (`intake.rs`).
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;

/// The pause after a failed `accept` before the next one.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);
/// At most one log line per this interval for refused connections and failed accepts.
const LOG_EVERY: Duration = Duration::from_secs(10);

/// Connection counts, for `/metrics` and the tests.
#[derive(Debug, Default)]
pub struct ConnectionStats {
    open: AtomicUsize,
    accepted: AtomicU64,
    refused: AtomicU64,
    handshake_timeouts: AtomicU64,
}

impl ConnectionStats {
    /// Connections open now.
    pub fn open(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    /// Connections closed at once because `max_connections` were open.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Connections closed because they sent nothing within the handshake timeout.
    pub fn handshake_timeouts(&self) -> u64 {
        self.handshake_timeouts.load(Ordering::Relaxed)
    }

    /// The Prometheus text of these counts.
    pub fn prometheus(&self) -> String {
        format!(
            "# HELP cuzk_connections_open gRPC connections open now.\n\
             # TYPE cuzk_connections_open gauge\n\
             cuzk_connections_open {}\n\
             # HELP cuzk_connections_accepted_total gRPC connections accepted since start.\n\
             # TYPE cuzk_connections_accepted_total counter\n\
             cuzk_connections_accepted_total {}\n\
             # HELP cuzk_connections_refused_total gRPC connections closed on arrival because server.max_connections were open.\n\
             # TYPE cuzk_connections_refused_total counter\n\
             cuzk_connections_refused_total {}\n\
             # HELP cuzk_connections_handshake_timeouts_total gRPC connections closed because they sent nothing within server.handshake_timeout.\n\
             # TYPE cuzk_connections_handshake_timeouts_total counter\n\
             cuzk_connections_handshake_timeouts_total {}\n",
            self.open(),
            self.accepted.load(Ordering::Relaxed),
            self.refused(),
            self.handshake_timeouts(),
        )
    }
}

/// The process's soft limit on open files (`Max open files` in `/proc/self/limits`), if it
/// can be read and is not unlimited.
pub(crate) fn open_file_limit() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The bounds [`accept_loop`] applies.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub(crate) max_connections: usize,
    pub(crate) handshake_timeout: Duration,
}

/// A listener [`accept_loop`] can take connections from.
pub(crate) trait Accept: Send + 'static {
    type Io: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    fn accept(&self) -> impl std::future::Future<Output = io::Result<Self::Io>> + Send;
}

impl Accept for tokio::net::TcpListener {
    type Io = tokio::net::TcpStream;
    async fn accept(&self) -> io::Result<Self::Io> {
        let (io, _) = tokio::net::TcpListener::accept(self).await?;
        // Replies go out at once (tonic's own loop sets this on the connections it accepts).
        let _ = io.set_nodelay(true);
        Ok(io)
    }
}

impl Accept for tokio::net::UnixListener {
    type Io = tokio::net::UnixStream;
    async fn accept(&self) -> io::Result<Self::Io> {
        Ok(tokio::net::UnixListener::accept(self).await?.0)
    }
}

/// Accepts from `listener` until the receiver is dropped (the server stopped: the listener
/// is closed then, so new clients are refused by the kernel), sending each admitted
/// connection on `tx`.
pub(crate) async fn accept_loop<L: Accept>(
    listener: L,
    limits: Limits,
    stats: Arc<ConnectionStats>,
    tx: mpsc::Sender<io::Result<Admitted<L::Io>>>,
) {
    let mut last_log: Option<Instant> = None;
    let mut quiet = |what: &str, detail: String| {
        if last_log.is_none_or(|t| t.elapsed() >= LOG_EVERY) {
            last_log = Some(Instant::now());
            tracing::warn!(detail, "{what}");
        }
    };
    loop {
        let accepted = tokio::select! {
            _ = tx.closed() => return,
            a = listener.accept() => a,
        };
        match accepted {
            Ok(io) => {
                stats.accepted.fetch_add(1, Ordering::Relaxed);
                if stats.open() >= limits.max_connections {
                    stats.refused.fetch_add(1, Ordering::Relaxed);
                    quiet(
                        "connection refused: server.max_connections are open",
                        format!(
                            "{} open, {} refused since start",
                            stats.open(),
                            stats.refused()
                        ),
                    );
                    drop(io);
                    continue;
                }
                let admitted = Admitted::new(io, limits.handshake_timeout, stats.clone());
                if tx.send(Ok(admitted)).await.is_err() {
                    return;
                }
            }
            Err(e) => {
                quiet("accept failed; retrying shortly", e.to_string());
                tokio::select! {
                    _ = tx.closed() => return,
                    _ = tokio::time::sleep(ACCEPT_RETRY) => {}
                }
            }
        }
    }
}

/// An admitted connection: holds its place among `max_connections` until dropped, and fails
/// its reads if nothing arrives within the handshake timeout.
pub(crate) struct Admitted<IO> {
    io: IO,
    stats: Arc<ConnectionStats>,
    /// Until the first byte arrives: when the connection gives up waiting for it.
    handshake: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<IO> Admitted<IO> {
    fn new(io: IO, timeout: Duration, stats: Arc<ConnectionStats>) -> Admitted<IO> {
        stats.open.fetch_add(1, Ordering::Relaxed);
        Admitted {
            io,
            stats,
            handshake: Some(Box::pin(tokio::time::sleep(timeout))),
        }
    }
}

impl<IO> Drop for Admitted<IO> {
    fn drop(&mut self) {
        self.stats.open.fetch_sub(1, Ordering::Relaxed);
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Admitted<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        let r = Pin::new(&mut this.io).poll_read(cx, buf);
        if let Some(deadline) = this.handshake.as_mut() {
            match &r {
                Poll::Ready(Ok(())) if buf.filled().len() > before => this.handshake = None,
                Poll::Pending if deadline.as_mut().poll(cx).is_ready() => {
                    this.handshake = None;
                    this.stats
                        .handshake_timeouts
                        .fetch_add(1, Ordering::Relaxed);
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "nothing sent within server.handshake_timeout",
                    )));
                }
                _ => {}
            }
        }
        r
    }
}

crate::wrap::write_and_connect_through!(Admitted, io);

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[test]
    fn the_open_file_limit_is_read_from_proc() {
        let n = open_file_limit().expect("Max open files in /proc/self/limits");
        assert!(n >= 64, "{n}");
    }

    /// A connection that says nothing fails its read at the handshake timeout and counts
    /// as one; one that speaks in time is never timed out.
    #[tokio::test]
    async fn a_silent_connection_times_out_and_a_talking_one_does_not() {
        let stats = Arc::new(ConnectionStats::default());
        let (silent, _peer) = tokio::io::duplex(64);
        let mut a = Admitted::new(silent, Duration::from_millis(50), stats.clone());
        assert_eq!(stats.open(), 1);
        let mut byte = [0u8; 1];
        let e = a.read(&mut byte).await.expect_err("timed out");
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert_eq!(stats.handshake_timeouts(), 1);
        drop(a);
        assert_eq!(stats.open(), 0);

        let (talking, mut peer) = tokio::io::duplex(64);
        let mut b = Admitted::new(talking, Duration::from_millis(50), stats.clone());
        tokio::io::AsyncWriteExt::write_all(&mut peer, b"P")
            .await
            .unwrap();
        assert_eq!(b.read(&mut byte).await.unwrap(), 1);
        tokio::time::sleep(Duration::from_millis(100)).await;
        tokio::io::AsyncWriteExt::write_all(&mut peer, b"R")
            .await
            .unwrap();
        assert_eq!(b.read(&mut byte).await.unwrap(), 1);
        assert_eq!(stats.handshake_timeouts(), 1);
    }
}
