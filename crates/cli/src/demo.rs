//! `cuzk demo` (README command 1): prepares test inputs (cached after the first run), starts
//! an embedded daemon on a temporary unix socket, proves a mixed batch through the real gRPC
//! client, verifies every proof on the client side and prints the bench table. The batch and
//! the run are `cuzk_bench::demo`; this file sets up the engine and the process.
use anyhow::Context;
use clap::Args;
use cuzk_bench::demo::{self, DemoOptions};
use cuzk_core::Config;
use std::path::PathBuf;

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
    // The demo's daemon proves with insecure test parameters anyway; the synthetic batch it
    // suggests at the end runs against it.
    config.allow_synthetic = true;
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
    let templates = demo::filecoin_batch(&args.cache)?;
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

    let opts = DemoOptions {
        concurrency: args.concurrency,
        jobs: args.jobs,
        timeline: args.cache.join("demo-timeline.svg"),
        serve: args.serve,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    rt.block_on(async move {
        let engine = crate::daemon::build_engine(config, &cuzk_cuda::CudaOptions::default())?;
        demo::run(engine, templates, &opts).await?;
        anyhow::Ok(())
    })
}
