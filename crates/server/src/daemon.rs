//! Starting and stopping the daemon's servers around an engine: the gRPC service on its
//! socket, the optional HTTP metrics port, who may reach them (see auth.rs), and the ordered
//! drain on shutdown.
use crate::admission::{self, ConnectionStats};
use crate::auth::BearerCheck;
use crate::listen::{self, Bound, BoundAddr};
use crate::metrics_http::{self, HttpState};
use crate::options::ServeOptions;
use crate::proto::proving_engine_server::ProvingEngineServer;
use crate::service::ProvingService;
use crate::ServerError;
use cuzk_core::Engine;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt as _;
use tonic::service::interceptor::InterceptedService;

/// How long the gRPC server may take to close its connections once the engine has drained
/// (every waiting RPC has its answer by then; this only covers writing it out).
const CLOSE_GRACE: Duration = Duration::from_secs(5);
/// Accepted connections waiting for the server to take them.
const ACCEPT_QUEUE: usize = 64;

/// A running daemon: the engine plus its servers. Stop it with [`Daemon::shutdown`].
pub struct Daemon {
    engine: Arc<Engine>,
    connections: Arc<ConnectionStats>,
    addr: BoundAddr,
    metrics_addr: Option<SocketAddr>,
    drain_timeout: Duration,
    /// Flipped to `true` once to tell both servers to stop accepting.
    stop: watch::Sender<bool>,
    /// Read by `/healthz`; set when draining starts.
    draining: Arc<AtomicBool>,
    grpc: JoinHandle<Result<(), tonic::transport::Error>>,
    http: Option<JoinHandle<std::io::Result<()>>>,
}

impl Daemon {
    /// Binds the sockets and starts serving `engine`. Returns once the sockets are bound, so
    /// a client may connect right away.
    pub async fn start(engine: Arc<Engine>, mut opts: ServeOptions) -> Result<Self, ServerError> {
        if let Some(limit) = admission::open_file_limit() {
            if let Some(asked) = opts.fit_to_fd_limit(limit) {
                tracing::warn!(
                    asked,
                    open_file_limit = limit,
                    max_connections = opts.max_connections,
                    "server.max_connections lowered to fit the open-file limit \
                     (raise it with `ulimit -n` or LimitNOFILE=)"
                );
            }
        }
        let connections = Arc::new(ConnectionStats::default());
        let bound = listen::bind(&opts.listen).await?;
        let addr = bound.addr()?;
        // Nothing has been accepted yet: a refused listener is dropped unused.
        if let BoundAddr::Tcp(a) = addr {
            crate::auth::check_exposure(a, opts.auth_token.as_ref(), "gRPC")?;
        }
        let (stop, stop_rx) = watch::channel(false);
        let draining = Arc::new(AtomicBool::new(false));

        let (metrics_addr, http) = match &opts.metrics_listen {
            None => (None, None),
            Some(a) => {
                let l = tokio::net::TcpListener::bind(a.as_str())
                    .await
                    .map_err(|source| ServerError::Bind {
                        addr: a.clone(),
                        source,
                    })?;
                let local = l.local_addr().map_err(ServerError::Io)?;
                crate::auth::check_exposure(local, opts.auth_token.as_ref(), "HTTP metrics")?;
                let app = metrics_http::router(HttpState {
                    engine: engine.clone(),
                    connections: connections.clone(),
                    draining: draining.clone(),
                    token: opts.auth_token.clone(),
                });
                let mut rx = stop_rx.clone();
                let task = tokio::spawn(async move {
                    axum::serve(l, app)
                        .with_graceful_shutdown(async move {
                            let _ = rx.wait_for(|s| *s).await;
                        })
                        .await
                });
                tracing::info!(addr = %local, "HTTP /metrics and /healthz listening");
                (Some(local), Some(task))
            }
        };

        let service = ProvingService::new(engine.clone())
            .admin_rpcs(opts.admin_rpcs)
            .connections(connections.clone());
        let svc = ProvingEngineServer::new(service)
            .max_decoding_message_size(opts.max_message_bytes)
            .max_encoding_message_size(opts.max_message_bytes);
        // TCP requests must carry the token when one is configured; the unix socket is
        // guarded by its file mode and never asks for it.
        let check = BearerCheck(match bound {
            Bound::Tcp(_) => opts.auth_token.clone(),
            Bound::Unix(..) => None,
        });
        let mut rx = stop_rx;
        let signal = async move {
            let _ = rx.wait_for(|s| *s).await;
        };
        let router = tonic::transport::Server::builder()
            .max_concurrent_streams(opts.max_streams_per_connection)
            // Flow control: a stream may have STREAM_WINDOW bytes unread (a message waiting
            // for room in the request buffer: the buffer sets aside a window for each, see
            // intake.rs), and the connection's window holds all of its streams' at once, so a
            // waiting message never holds back one that has room.
            .initial_stream_window_size(cuzk_core::STREAM_WINDOW)
            .initial_connection_window_size(opts.connection_window_bytes())
            .http2_adaptive_window(Some(false))
            .http2_keepalive_interval(Some(opts.keepalive_interval))
            .http2_keepalive_timeout(Some(opts.keepalive_timeout))
            .http2_max_header_list_size(opts.max_header_list_bytes)
            .layer(tower::util::MapResponseLayer::new(
                crate::error::oversize_is_resource_exhausted::<tonic::body::Body>,
            ))
            .layer(crate::intake::IntakeLayer::new(
                engine.clone(),
                opts.request_arrival_timeout,
                opts.request_buffer_wait,
            ))
            .add_service(InterceptedService::new(svc, check));
        let limits = admission::Limits {
            max_connections: opts.max_connections,
            handshake_timeout: opts.handshake_timeout,
        };
        let accepted = connections.clone();
        let grpc = match bound {
            Bound::Tcp(l) => tokio::spawn(async move {
                let (tx, rx) = tokio::sync::mpsc::channel(ACCEPT_QUEUE);
                tokio::spawn(admission::accept_loop(l, limits, accepted, tx));
                let incoming = ReceiverStream::new(rx);
                router.serve_with_incoming_shutdown(incoming, signal).await
            }),
            Bound::Unix(l, guard) => tokio::spawn(async move {
                let (tx, rx) = tokio::sync::mpsc::channel(ACCEPT_QUEUE);
                tokio::spawn(admission::accept_loop(l, limits, accepted, tx));
                let incoming = ReceiverStream::new(rx);
                // Clients that send the socket path as `:authority` (grpc-core, grpc-java,
                // grpcurl) are served as if they had sent `localhost`: see authority.rs.
                let incoming = incoming.map(|conn| conn.map(crate::authority::AuthorityFix::new));
                let r = router.serve_with_incoming_shutdown(incoming, signal).await;
                drop(guard);
                r
            }),
        };
        tracing::info!(addr = %addr, "gRPC cuzk.v1.ProvingEngine listening");
        Ok(Self {
            engine,
            connections,
            addr,
            metrics_addr,
            drain_timeout: opts.drain_timeout,
            stop,
            draining,
            grpc,
            http,
        })
    }

    /// The gRPC address actually bound (TCP port 0 resolved).
    pub fn addr(&self) -> &BoundAddr {
        &self.addr
    }

    /// The HTTP metrics address, if enabled.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_addr
    }

    /// The gRPC connections' counts.
    pub fn connections(&self) -> &ConnectionStats {
        &self.connections
    }

    /// The engine being served.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Stops accepting work, lets in-flight jobs finish (for at most the drain timeout, then
    /// cancels them, so waiting clients get CANCELLED), closes the sockets and returns.
    pub async fn shutdown(self) -> Result<(), ServerError> {
        tracing::info!(
            drain_timeout = ?self.drain_timeout,
            "shutting down: refusing new work, draining in-flight jobs"
        );
        self.draining.store(true, Ordering::Relaxed);
        // New connections stop now; open connections get GOAWAY but their in-flight RPCs
        // (Prove, AwaitProof) keep running until the engine answers them.
        let _ = self.stop.send(true);
        self.engine.shutdown(self.drain_timeout).await;
        let mut grpc = self.grpc;
        let result = match tokio::time::timeout(CLOSE_GRACE, &mut grpc).await {
            Ok(Ok(r)) => r.map_err(ServerError::Transport),
            Ok(Err(join)) => {
                tracing::error!(cause = %join, "gRPC server task failed");
                Ok(())
            }
            Err(_) => {
                tracing::warn!("gRPC connections did not close in time; dropping them");
                grpc.abort();
                Ok(())
            }
        };
        if let Some(mut http) = self.http {
            if tokio::time::timeout(CLOSE_GRACE, &mut http).await.is_err() {
                http.abort();
            }
        }
        tracing::info!("daemon stopped");
        result
    }
}
