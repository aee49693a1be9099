//! The arguments of `cuzk bench single|batch|status|preload|evict` and `cuzk status`; the
//! load generator and admin client they run are `cuzk_bench::client`.
use anyhow::Context;
use clap::{Args, Subcommand};
use cuzk_bench::client::{self, LoadOptions};
use cuzk_bench::request_file;
use cuzk_server::DEFAULT_ADDR;
use std::path::PathBuf;
use std::time::Duration;

/// Client subcommands of `cuzk bench` that talk to a running daemon.
#[derive(Subcommand)]
pub enum ClientBenchCmd {
    /// Prove one request and print its latency breakdown.
    Single(LoadArgs),
    /// Prove `-j` requests with `-c` in flight at once; print latency and throughput.
    Batch(LoadArgs),
    /// Print the daemon's status (queues, SRS, memory).
    Status(AddrArgs),
    /// Load a circuit's SRS ahead of use.
    Preload(SrsArgs),
    /// Drop a circuit's SRS from memory.
    Evict(SrsArgs),
}

/// Where the daemon is.
#[derive(Args, Clone)]
pub struct AddrArgs {
    /// Daemon address: `unix:///path.sock` or `host:port`.
    #[arg(long, short = 'a', env = "CUZK_ADDR", default_value = DEFAULT_ADDR)]
    pub addr: String,
    /// File holding the daemon's bearer token (its `server.auth_token_file`), for a TCP
    /// listener that asks for one; the same permission rules apply (not world-readable).
    #[arg(long, env = "CUZK_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
    /// The largest message sent or received (`256MiB`, the protocol's and Curio's). Raise it
    /// together with the daemon's `[server] max_message_size` for larger requests (a 32 GiB
    /// NI-PoRep C1 output is 620 MiB).
    #[arg(long, default_value = "256MiB")]
    pub max_message_size: String,
}

impl AddrArgs {
    /// The address, and the token read from `--token-file`.
    pub fn dial(&self) -> cuzk_bench::Result<cuzk_server::client::Dial> {
        let token = match &self.token_file {
            Some(p) => Some(
                cuzk_server::AuthToken::from_file(p)
                    .map_err(|e| cuzk_bench::BenchError::Invalid(format!("--token-file: {e}")))?,
            ),
            None => None,
        };
        let max = cuzk_core::config::parse_size(&self.max_message_size)
            .ok()
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| n > 0)
            .ok_or_else(|| {
                cuzk_bench::BenchError::Invalid(format!(
                    "--max-message-size {}: expected a size such as 256MiB or 1GiB",
                    self.max_message_size
                ))
            })?;
        Ok(cuzk_server::client::Dial {
            addr: self.addr.clone(),
            token,
            max_message_bytes: max,
        })
    }
}

/// `bench preload|evict`.
#[derive(Args)]
pub struct SrsArgs {
    #[command(flatten)]
    addr: AddrArgs,
    /// Circuit id, e.g. `porep-32g`, `porep-2k`.
    circuit_id: String,
}

/// `bench single|batch`.
#[derive(Args)]
pub struct LoadArgs {
    #[command(flatten)]
    addr: AddrArgs,
    /// Proof kind: porep, snap, wpost, winning or synthetic; with a manifest (`--input`),
    /// also one of its request names (`porep-ni`).
    #[arg(long, short = 'k')]
    kind: String,
    /// Request file (JSON, see `cuzk_bench::request_file`: the format `cuzk gen testdata` writes).
    /// Optional for `--kind synthetic` (then `--spec` is used).
    #[arg(long, short = 'i')]
    input: Option<PathBuf>,
    /// Synthetic circuit spec (only with `--kind synthetic` and no `--input`).
    #[arg(long, default_value = "synthetic:constraints=4096,inputs=4")]
    spec: String,
    /// Requests in flight at once.
    #[arg(short = 'c', long, default_value_t = 1)]
    concurrency: usize,
    /// Requests in total (`single` always sends one).
    #[arg(short = 'j', long, default_value_t = 1)]
    jobs: usize,
    /// Priority: low, normal, high, critical (default: the request file's, else the kind's).
    #[arg(long)]
    priority: Option<String>,
    /// Verify every returned proof on the client side.
    #[arg(long)]
    verify: bool,
    /// Write the run's timeline (per-partition stages, reserved memory) as SVG.
    #[arg(long)]
    timeline: Option<PathBuf>,
    /// Stop after this many seconds: report the proofs completed within them; requests still
    /// running are "unfinished at the deadline", not failures ("as many as finish in 10
    /// minutes": `-c 30 -j 30 --deadline 600`).
    #[arg(long)]
    deadline: Option<u64>,
}

/// Runs a client bench subcommand.
pub fn run(cmd: ClientBenchCmd) -> anyhow::Result<()> {
    if let ClientBenchCmd::Single(a) | ClientBenchCmd::Batch(a) = &cmd {
        verify_with_manifest_params(a);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    rt.block_on(async move {
        match cmd {
            ClientBenchCmd::Single(mut a) => {
                a.jobs = 1;
                a.concurrency = 1;
                load(a).await
            }
            ClientBenchCmd::Batch(a) => load(a).await,
            ClientBenchCmd::Status(a) => client::print_status(&a.dial()?).await,
            ClientBenchCmd::Preload(a) => client::preload(&a.addr.dial()?, &a.circuit_id).await,
            ClientBenchCmd::Evict(a) => client::evict(&a.addr.dial()?, &a.circuit_id).await,
        }
    })?;
    Ok(())
}

/// With `--verify` and a test-data manifest that lists parameters, points Filecoin's verifier
/// at the manifest's directory (it reads verifying keys from `FIL_PROOFS_PARAMETER_CACHE`,
/// once per process: so here, before the runtime's threads start).
fn verify_with_manifest_params(a: &LoadArgs) {
    let (true, Some(input)) = (a.verify, &a.input) else {
        return;
    };
    if let Some(dir) = request_file::manifest_parameter_dir(input) {
        let before = cuzk_filecoin::params::parameter_cache_dir();
        if before != dir {
            eprintln!(
                "verifying with the manifest's parameters in {} (not {})",
                dir.display(),
                before.display()
            );
        }
        cuzk_filecoin::params::set_parameter_dir(&dir);
    }
}

/// `cuzk status`.
pub fn run_status(a: AddrArgs) -> anyhow::Result<()> {
    run(ClientBenchCmd::Status(a))
}

async fn load(a: LoadArgs) -> cuzk_bench::Result<()> {
    let mut template = match &a.input {
        Some(path) => request_file::load(path, Some(&a.kind))?,
        None => request_file::synthetic(&a.kind, &a.spec)?,
    };
    if let Some(p) = &a.priority {
        template.request.priority = request_file::parse_priority(p)? as i32;
    }
    let opts = LoadOptions {
        concurrency: a.concurrency,
        jobs: a.jobs,
        verify: a.verify,
        timeline: a.timeline.clone(),
        progress: true,
        deadline: a.deadline.map(Duration::from_secs),
    };
    client::run_batch(&a.addr.dial()?, template, &opts).await
}
