//! A tonic client for the daemon that dials `unix:///path.sock` or `host:port` with the
//! protocol's 256 MiB message limits; used by the CLI (bench, status, demo) and the tests.
use crate::listen::{BoundAddr, ListenAddr};
use crate::proto::proving_engine_client::ProvingEngineClient;
use crate::{ServerError, DEFAULT_MAX_MESSAGE_BYTES};
use hyper_util::rt::TokioIo;
use std::path::PathBuf;
use tonic::transport::{Channel, Endpoint, Uri};

/// The generated client over a tonic channel.
pub type Client = ProvingEngineClient<Channel>;

/// Connects to a daemon at `addr` (`unix:///path.sock` or `host:port`).
pub async fn connect(addr: &str) -> Result<Client, ServerError> {
    let addr: ListenAddr = addr.parse()?;
    let channel = match addr {
        ListenAddr::Tcp(hostport) => Endpoint::from_shared(format!("http://{hostport}"))
            .map_err(ServerError::Transport)?
            .connect()
            .await
            .map_err(ServerError::Transport)?,
        ListenAddr::Unix(path) => connect_unix(path).await?,
    };
    Ok(with_limits(ProvingEngineClient::new(channel)))
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

fn with_limits(client: Client) -> Client {
    client
        .max_decoding_message_size(DEFAULT_MAX_MESSAGE_BYTES)
        .max_encoding_message_size(DEFAULT_MAX_MESSAGE_BYTES)
}
