//! `cuzk bench pipeline`: runs synthetic jobs through an in-process engine (no gRPC) and prints
//! s/proof, the prover-busy fraction, peak RSS and the peak reserved bytes by category.
use anyhow::Context;
use clap::Args;
use cuzk_bench::pipeline::{bench_pipeline, BenchOptions};
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
    // The daemon's config file (`[server]` is ignored here, `[gpu]` applies).
    let (mut config, gpu) = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let c = crate::daemon::parse_config(&text)
                .with_context(|| format!("config {}", path.display()))?;
            (c.engine, c.gpu)
        }
        None => (
            Config::default_for_machine(),
            cuzk_cuda::CudaOptions::default(),
        ),
    };
    if let Some(b) = &args.budget {
        config.set_budget(parse_size(b).map_err(|e| anyhow::anyhow!("--budget {b}: {e}"))?);
    }
    // The bench's jobs are synthetic circuits: its in-process engine accepts them.
    config.allow_synthetic = true;
    config.validate().context("config")?;
    let rt = tokio::runtime::Runtime::new().context("starting tokio")?;
    rt.block_on(async move {
        let engine = crate::daemon::build_engine(config, &gpu)?;
        let opts = BenchOptions::synthetic(&args.synthetic, args.jobs, args.concurrency);
        let report = bench_pipeline(&engine, &opts)
            .await
            .context("benchmark run")?;
        println!("{report}");
        engine.shutdown(std::time::Duration::from_secs(30)).await;
        Ok(())
    })
}
