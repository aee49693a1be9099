//! `cuzk demo` (README command 1): prepares test inputs (cached after the first run), starts
//! an embedded daemon on a temporary unix socket, proves a mixed batch through the real gRPC
//! client, verifies every proof on the client side and prints the bench table.
use crate::client_bench::{run_load, LoadOptions};
use crate::request_file::{self, Template};
use anyhow::{bail, Context};
use clap::Args;
use cuzk_core::Config;
use cuzk_server::{Daemon, ListenAddr, ServeOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Arguments of `cuzk demo`.
#[derive(Args)]
pub struct DemoArgs {
    /// Where generated test data, parameters and the timeline go (kept between runs).
    #[arg(long, default_value = "cuzk-testdata")]
    cache: PathBuf,
    /// Requests in flight at once.
    #[arg(short = 'c', long, default_value_t = 2)]
    concurrency: usize,
    /// Requests in total (the mixed batch is repeated round-robin).
    #[arg(short = 'j', long, default_value_t = 4)]
    jobs: usize,
    /// Memory budget of the embedded engine (default: derived from the machine).
    #[arg(long)]
    budget: Option<String>,
    /// After the batch, keep the daemon running (until Ctrl-C) so `cuzk bench` can use it.
    #[arg(long)]
    serve: bool,
}

/// Seed of the demo's test sector (and its insecure parameters).
const TESTDATA_SEED: u64 = 1;

/// The mixed batch the demo proves: one request of each Filecoin kind (PoRep C2, SnapDeals,
/// WindowPoSt, WinningPoSt) on the cached 2 KiB test sector (generated on the first run:
/// sealing plus insecure parameters), each checked on the client with Filecoin's verifier.
fn filecoin_batch(cache: &Path) -> anyhow::Result<Vec<Template>> {
    use cuzk_filecoin::testdata::{ensure, TestdataOptions};
    println!(
        "  test data: {} (first run: seals a 2 KiB sector and writes insecure parameters)",
        cache.display()
    );
    let opts = TestdataOptions {
        out: cache.to_path_buf(),
        sector_size: cuzk_filecoin::SectorSize::S2KiB,
        seed: TESTDATA_SEED,
        params: true,
    };
    let manifest = ensure(&opts).context("generating the test sector and parameters")?;
    let mut out = Vec::new();
    // NI-PoRep (13 partitions, then aggregated) is left out of the demo's batch to keep it
    // quick on a CPU; its end-to-end test is in crates/filecoin/tests/kinds.rs.
    for spec in manifest.requests.iter().filter(|s| s.kind != "porep-ni") {
        let mut t = request_file::filecoin_template(spec, cache)?;
        t.label = format!("{}-2k", spec.kind);
        out.push(t);
    }
    if out.is_empty() {
        bail!(
            "the test-data manifest in {} lists no requests",
            cache.display()
        );
    }
    Ok(out)
}

/// Runs `cuzk demo`.
pub fn run(args: DemoArgs) -> anyhow::Result<()> {
    crate::daemon::init_logging_with_default(crate::daemon::LogFormat::Text, "warn");
    std::fs::create_dir_all(&args.cache)
        .with_context(|| format!("creating {}", args.cache.display()))?;
    let mut config = Config::default_for_machine();
    if let Some(b) = &args.budget {
        config.budget_bytes =
            cuzk_core::config::parse_size(b).map_err(|e| anyhow::anyhow!("--budget: {e}"))?;
        config.request_buffer_bytes = (config.budget_bytes / 32).min(1 << 30);
    }
    // The engine and Filecoin's verifier read the test parameters from the cache.
    config.params_dir = args.cache.clone();
    // Before any thread starts: filecoin-proofs reads it once, at first use.
    cuzk_filecoin::params::set_parameter_dir(&config.params_dir);
    // Sealing the test sector writes its graph caches here, not under /var/tmp.
    cuzk_filecoin::params::set_cache_dir(&args.cache);
    println!("cuzk demo");
    println!(
        "  engine: budget {}, {} synthesis workers",
        cuzk_core::config::format_size(config.budget_bytes),
        config.synthesis_concurrency
    );
    let templates = filecoin_batch(&args.cache)?;
    println!(
        "  batch: {} requests, {} at a time, kinds: {}",
        args.jobs,
        args.concurrency,
        templates
            .iter()
            .map(|t| t.label.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );

    let sock_dir = tempfile::Builder::new()
        .prefix("cuzk-demo-")
        .tempdir()
        .context("creating a temporary directory for the socket")?;
    let listen = ListenAddr::Unix(sock_dir.path().join("cuzk.sock"));
    let timeline = args.cache.join("demo-timeline.svg");

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    rt.block_on(async move {
        let engine = crate::daemon::build_engine(config, &cuzk_cuda::CudaOptions::default())?;
        let mut serve = ServeOptions::new(listen);
        serve.drain_timeout = Duration::from_secs(30);
        let daemon = Daemon::start(engine, serve).await?;
        let addr = daemon.addr().to_string();
        println!("  daemon: listening on {addr}");
        println!("  proving (the first request of each circuit also runs its test setup)...");
        let opts = LoadOptions {
            concurrency: args.concurrency,
            jobs: args.jobs,
            verify: true,
            timeline: Some(timeline),
            progress: true,
        };
        let report = run_load(&addr, templates, &opts).await;
        let report = match report {
            Ok(r) => r,
            Err(e) => {
                let _ = daemon.shutdown().await;
                return Err(e);
            }
        };
        report.print();
        if args.serve {
            println!();
            println!("daemon still running at {addr}; try:");
            println!(
                "  cuzk bench batch --addr {addr} --kind synthetic -c 4 -j 12 --verify --timeline out.svg"
            );
            println!("Ctrl-C stops it.");
            tokio::signal::ctrl_c().await.context("waiting for Ctrl-C")?;
        }
        daemon.shutdown().await?;
        if report.failed > 0 {
            bail!(
                "{} of {} proofs failed or did not verify",
                report.failed,
                report.rows.len()
            );
        }
        println!("demo: all {} proofs verified", report.rows.len());
        anyhow::Ok(())
    })
}
