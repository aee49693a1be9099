//! A tonic client for the daemon that dials `unix:///path.sock` or `host:port` with the
//! protocol's 256 MiB message limits, and sends the bearer token a TCP listener may ask for;
//! used by the CLI (bench, status, demo) and the tests.
use crate::auth::AuthToken;
use crate::listen::{BoundAddr, ListenAddr};
use crate::proto::proving_engine_client::ProvingEngineClient;
use crate::{ServerError, DEFAULT_MAX_MESSAGE_BYTES};
use hyper_util::rt::TokioIo;
use std::path::PathBuf;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint, Uri};

/// The generated client over a tonic channel, adding the bearer token (if any) to every call.
pub type Client = ProvingEngineClient<InterceptedService<Channel, Bearer>>;

/// Adds `authorization: Bearer <token>` to every request when it holds a token.
#[derive(Clone, Default)]
pub struct Bearer(Option<MetadataValue<Ascii>>);

impl tonic::service::Interceptor for Bearer {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(v) = &self.0 {
            req.metadata_mut().insert("authorization", v.clone());
        }
        Ok(req)
    }
}

/// Where a daemon is, and the token its TCP listener wants (`server.auth_token_file`).
#[derive(Clone, Debug)]
pub struct Dial {
    /// `unix:///path.sock` or `host:port`.
    pub addr: String,
    /// Sent as `authorization: Bearer <token>` when set (the unix socket never asks).
    pub token: Option<AuthToken>,
    /// The largest message sent or received: the protocol's 256 MiB
    /// ([`DEFAULT_MAX_MESSAGE_BYTES`], as Curio's client), or more for a daemon whose
    /// `[server] max_message_size` allows it (a 32 GiB NI-PoRep C1 output is 620 MiB).
    pub max_message_bytes: usize,
}

impl Dial {
    /// `addr` with no token and the protocol's message limit.
    pub fn new(addr: impl Into<String>) -> Dial {
        Dial {
            addr: addr.into(),
            token: None,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}

pub use crate::convert::submit_request;

/// Connects to a daemon at `addr` (`unix:///path.sock` or `host:port`), sending no token.
pub async fn connect(addr: &str) -> Result<Client, ServerError> {
    dial(&Dial::new(addr)).await
}

/// Connects as `d` says (address and token).
pub async fn dial(d: &Dial) -> Result<Client, ServerError> {
    let addr = d.addr.as_str();
    let addr: ListenAddr = addr.parse()?;
    let channel = match addr {
        ListenAddr::Tcp(hostport) => Endpoint::from_shared(format!("http://{hostport}"))
            .map_err(ServerError::Transport)?
            .connect()
            .await
            .map_err(ServerError::Transport)?,
        ListenAddr::Unix(path) => connect_unix(path).await?,
    };
    let bearer = match &d.token {
        Some(t) => Bearer(Some(format!("Bearer {}", t.reveal()).parse().map_err(
            |_| ServerError::ConfigValue {
                field: "token",
                reason: "not a valid header value".into(),
            },
        )?)),
        None => Bearer(None),
    };
    Ok(ProvingEngineClient::with_interceptor(channel, bearer)
        .max_decoding_message_size(d.max_message_bytes)
        .max_encoding_message_size(d.max_message_bytes))
}

/// Connects to the address a [`crate::Daemon`] reports.
pub async fn connect_bound(addr: &BoundAddr) -> Result<Client, ServerError> {
    connect(&addr.to_string()).await
}

async fn connect_unix(path: PathBuf) -> Result<Channel, ServerError> {
    // The URI is required by the HTTP/2 layer but never resolved: the connector below dials
    // the socket path instead.
    Endpoint::from_static("http://localhost")
        .connect_with_connector(tower::service_fn(move |_: Uri| {
            let path = path.clone();
            async move {
                let stream = tokio::net::UnixStream::connect(path).await?;
                Ok::<_, std::io::Error>(TokioIo::new(stream))
            }
        }))
        .await
        .map_err(ServerError::Transport)
}
