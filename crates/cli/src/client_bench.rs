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
    /// Hold a mixed load for a set time (`--load porep=2 --load snap=1 --every winning=60s
    /// --duration 20m`): per minute, the proofs of each kind, failures, the daemon's RSS and
    /// each device's busy fraction; at the end, proofs per minute, latencies, and whether the
    /// RSS stayed flat. Fails when any request failed.
    Soak(SoakArgs),
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

/// `bench soak`.
#[derive(Args)]
pub struct SoakArgs {
    #[command(flatten)]
    addr: AddrArgs,
    /// Request file, or a test-data manifest (`cuzk gen testdata`) holding every kind named.
    #[arg(long, short = 'i')]
    input: PathBuf,
    /// Keep N requests of KIND in flight at all times (repeatable): `--load porep=2`.
    #[arg(long = "load", value_name = "KIND=N")]
    load: Vec<String>,
    /// Send a request of KIND every PERIOD, whether or not the last has come back
    /// (repeatable): `--every winning=60s`.
    #[arg(long = "every", value_name = "KIND=PERIOD")]
    every: Vec<String>,
    /// How long requests are sent (`20m`, `1h`).
    #[arg(long, default_value = "20m")]
    duration: String,
    /// One table row per interval.
    #[arg(long, default_value = "60s")]
    interval: String,
    /// How often the daemon's status is read.
    #[arg(long, default_value = "5s")]
    sample_every: String,
    /// How long requests still running at the end are waited for before they count as
    /// failed (Curio's own deadline is 30 minutes).
    #[arg(long, default_value = "30m")]
    drain: String,
    /// Verify every returned proof on the client side too.
    #[arg(long)]
    verify: bool,
}

/// Runs a client bench subcommand.
pub fn run(cmd: ClientBenchCmd) -> anyhow::Result<()> {
    match &cmd {
        ClientBenchCmd::Single(a) | ClientBenchCmd::Batch(a) => {
            verify_with_manifest_params(a.verify, a.input.as_deref())
        }
        ClientBenchCmd::Soak(a) => verify_with_manifest_params(a.verify, Some(&a.input)),
        _ => {}
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
            ClientBenchCmd::Soak(a) => soak(a).await,
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
fn verify_with_manifest_params(verify: bool, input: Option<&std::path::Path>) {
    let (true, Some(input)) = (verify, input) else {
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

/// `KIND=VALUE` of `--load`/`--every`.
fn kind_value<'a>(flag: &str, s: &'a str) -> cuzk_bench::Result<(&'a str, &'a str)> {
    s.split_once('=')
        .filter(|(k, v)| !k.trim().is_empty() && !v.trim().is_empty())
        .map(|(k, v)| (k.trim(), v.trim()))
        .ok_or_else(|| cuzk_bench::BenchError::Invalid(format!("{flag} {s}: expected KIND=VALUE")))
}

fn duration(flag: &str, s: &str) -> cuzk_bench::Result<Duration> {
    humantime::parse_duration(s.trim()).map_err(|e| {
        cuzk_bench::BenchError::Invalid(format!("{flag} {s}: {e} (write e.g. 60s or 20m)"))
    })
}

async fn soak(a: SoakArgs) -> cuzk_bench::Result<()> {
    use cuzk_bench::soak::{run_soak, soak_failures, Periodic, SoakOptions, Steady};
    let mut steady = Vec::new();
    for l in &a.load {
        let (kind, n) = kind_value("--load", l)?;
        let in_flight = n.parse::<usize>().ok().filter(|&n| n > 0).ok_or_else(|| {
            cuzk_bench::BenchError::Invalid(format!("--load {l}: expected a count above 0"))
        })?;
        steady.push(Steady {
            template: request_file::load(&a.input, Some(kind))?,
            in_flight,
        });
    }
    let mut periodic = Vec::new();
    for e in &a.every {
        let (kind, period) = kind_value("--every", e)?;
        periodic.push(Periodic {
            template: request_file::load(&a.input, Some(kind))?,
            every: duration("--every", period)?,
        });
    }
    let opts = SoakOptions {
        duration: duration("--duration", &a.duration)?,
        steady,
        periodic,
        interval: duration("--interval", &a.interval)?,
        sample_every: duration("--sample-every", &a.sample_every)?,
        drain: duration("--drain", &a.drain)?,
        verify: a.verify,
        print: true,
    };
    let report = run_soak(&a.addr.dial()?, &opts).await?;
    report.print();
    soak_failures(&report)
}
