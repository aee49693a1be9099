//! `cuzk bench pipeline`: runs synthetic jobs through an in-process engine (no gRPC) and prints
//! s/proof, the prover-busy fraction, peak RSS and the peak reserved bytes by category.
use anyhow::Context;
use clap::Args;
use cuzk_core::bench::{bench_pipeline, BenchOptions};
use cuzk_core::config::parse_size;
use cuzk_core::Config;

/// Arguments of `cuzk bench pipeline`.
#[derive(Args)]
pub struct PipelineArgs {
    /// Synthetic request spec, e.g. `synthetic:constraints=2^14,partitions=4`.
    #[arg(long, default_value = "synthetic:constraints=2^14,partitions=4")]
    pub synthetic: String,
    /// Jobs in total.
    #[arg(short = 'j', long, default_value_t = 16)]
    pub jobs: usize,
    /// Jobs in flight at once.
    #[arg(short = 'c', long, default_value_t = 8)]
    pub concurrency: usize,
    /// Memory budget (e.g. `256MiB`); default: derived from the machine.
    #[arg(long)]
    pub budget: Option<String>,
    /// Engine config file (`cuzk.toml`); `--budget` overrides its budget.
    #[arg(long)]
    pub config: Option<std::path::PathBuf>,
}

/// Runs `cuzk bench pipeline`.
pub fn run(args: PipelineArgs) -> anyhow::Result<()> {
    let mut config = match &args.config {
        Some(path) => Config::load(path).context("reading the config")?,
        None => Config::default_for_machine(),
    };
    if let Some(b) = &args.budget {
        config.set_budget(parse_size(b).map_err(|e| anyhow::anyhow!("--budget {b}: {e}"))?);
    }
    config.validate().context("config")?;
    let rt = tokio::runtime::Runtime::new().context("starting tokio")?;
    rt.block_on(async move {
        let engine = crate::daemon::build_engine(config)?;
        let opts = BenchOptions::synthetic(&args.synthetic, args.jobs, args.concurrency);
        let report = bench_pipeline(&engine, &opts)
            .await
            .context("benchmark run")?;
        println!("{report}");
        engine.shutdown(std::time::Duration::from_secs(30)).await;
        Ok(())
    })
}
