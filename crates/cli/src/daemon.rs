//! `cuzk daemon`: reads `cuzk.toml` (or nothing: machine-derived defaults), builds the engine,
//! serves gRPC (and optionally HTTP metrics), and drains on SIGTERM/SIGINT before exiting 0.
use anyhow::Context;
use clap::{Args, ValueEnum};
use cuzk_core::{Config, Engine};
use cuzk_server::{Daemon, ServeOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `cuzk daemon`.
#[derive(Args)]
pub struct DaemonArgs {
    /// Config file (TOML; see cuzk.example.toml). Without it, every field takes its
    /// machine-derived default.
    #[arg(long, short = 'C', env = "CUZK_CONFIG")]
    config: Option<PathBuf>,
    /// gRPC listen address, `unix:///path.sock` or `host:port` (overrides server.listen).
    #[arg(long)]
    listen: Option<String>,
    /// HTTP /metrics + /healthz address `host:port` (overrides server.metrics_listen).
    #[arg(long)]
    metrics_listen: Option<String>,
    /// Log format.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
}

/// How logs are written to stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, for log shippers.
    Json,
}

/// The daemon's whole configuration.
pub struct DaemonConfig {
    /// The engine's part.
    pub engine: Config,
    /// The server's part.
    pub serve: ServeOptions,
    /// The CUDA backend's per-device options (`[gpu]`).
    pub gpu: cuzk_cuda::CudaOptions,
}

/// Splits `cuzk.toml` into the `[server]` table (the server's parser), the `[gpu]` table
/// and the engine's tables (core's parser, which rejects unknown keys).
pub fn parse_config(text: &str) -> anyhow::Result<DaemonConfig> {
    let mut table: toml::Table = toml::from_str(text).context("parsing TOML")?;
    let serve = match table.remove("server") {
        Some(v) => ServeOptions::from_toml(v)?,
        None => ServeOptions::default(),
    };
    let gpu = match table.remove("gpu") {
        Some(v) => cuzk_cuda::CudaOptions::from_toml(&v, cuzk_core::config::parse_size)?,
        None => cuzk_cuda::CudaOptions::default(),
    };
    let engine_text = toml::to_string(&table).context("re-encoding the engine tables")?;
    let engine = Config::from_toml_str(&engine_text)?;
    Ok(DaemonConfig { engine, serve, gpu })
}

fn load_config(path: Option<&Path>) -> anyhow::Result<DaemonConfig> {
    match path {
        None => parse_config(""),
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("reading config {}", p.display()))?;
            parse_config(&text).with_context(|| format!("config {}", p.display()))
        }
    }
}

/// Sets up `tracing` on stderr; `RUST_LOG` filters (default `info`).
pub fn init_logging(format: LogFormat) {
    init_logging_with_default(format, "info");
}

/// Sets up `tracing` on stderr; `RUST_LOG` filters (default `default_filter`).
pub fn init_logging_with_default(format: LogFormat, default_filter: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_filter));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

/// Builds the engine with this build's prover backends (`gpu`: the CUDA devices' options)
/// and every proof kind it knows.
pub fn build_engine(
    mut config: Config,
    gpu: &cuzk_cuda::CudaOptions,
) -> anyhow::Result<Arc<Engine>> {
    let backends = crate::engine_setup::backends(gpu)?;
    crate::engine_setup::tune_for_backends(&mut config, &backends);
    let planner = crate::engine_setup::planner(&config)?;
    let engine = Engine::new(config, backends, planner).context("starting the engine")?;
    Ok(Arc::new(engine))
}

/// Runs `cuzk daemon`.
pub fn run(args: DaemonArgs) -> anyhow::Result<()> {
    init_logging(args.log_format);
    let mut cfg = load_config(args.config.as_deref())?;
    if let Some(l) = &args.listen {
        cfg.serve.listen = l.parse()?;
    }
    if let Some(m) = &args.metrics_listen {
        cfg.serve.metrics_listen = Some(m.clone()).filter(|s| !s.trim().is_empty());
    }
    tracing::info!(
        budget = %cuzk_core::config::format_size(cfg.engine.budget_bytes),
        synthesis_concurrency = cfg.engine.synthesis_concurrency,
        urgent_threads = cfg.engine.urgent_threads,
        urgent_reserve = %cuzk_core::config::format_size(cfg.engine.urgent_reserve()),
        params_dir = %cfg.engine.params_dir.display(),
        "cuzk daemon starting"
    );
    // Before the runtime's threads start: filecoin-proofs reads it once, at first use. Its
    // verifiers (the engine's self-check and the clients' checks) read `.vk` files there.
    cuzk_filecoin::params::set_parameter_dir(&cfg.engine.params_dir);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    rt.block_on(async move {
        let engine = build_engine(cfg.engine, &cfg.gpu)?;
        let daemon = Daemon::start(engine, cfg.serve).await?;
        // Tests and scripts read this line to find the bound address (port 0 resolved).
        println!("cuzk daemon listening on {}", daemon.addr());
        if let Some(m) = daemon.metrics_addr() {
            println!("cuzk metrics on http://{m}/metrics");
        }
        wait_for_signal().await?;
        daemon.shutdown().await?;
        anyhow::Ok(())
    })?;
    // Leave a little time for the last log lines; the runtime is gone.
    std::thread::sleep(Duration::from_millis(10));
    Ok(())
}

async fn wait_for_signal() -> anyhow::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM received"),
        _ = int.recv() => tracing::info!("SIGINT received"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cuzk_server::ListenAddr;

    #[test]
    fn config_splits_server_and_engine_tables() {
        let c = parse_config(
            "[server]\nlisten = \"unix:///tmp/x.sock\"\nmetrics_listen = \"127.0.0.1:0\"\n\
             drain_timeout = \"30s\"\nmax_message_size = \"64MiB\"\n\
             [memory]\nbudget = \"2GiB\"\n",
        )
        .unwrap();
        assert_eq!(c.serve.listen, ListenAddr::Unix("/tmp/x.sock".into()));
        assert_eq!(c.serve.metrics_listen.as_deref(), Some("127.0.0.1:0"));
        assert_eq!(c.serve.drain_timeout, Duration::from_secs(30));
        assert_eq!(c.serve.max_message_bytes, 64 << 20);
        assert_eq!(c.engine.budget_bytes, 2 << 30);
        let d = parse_config("").unwrap();
        assert_eq!(d.serve.listen.to_string(), cuzk_server::DEFAULT_ADDR);
        assert_eq!(
            d.serve.listen,
            ListenAddr::Unix("/run/cuzk/cuzk.sock".into()),
            "no flags, no config: the unix socket, never TCP"
        );
        assert!(d.serve.admin_rpcs && d.serve.auth_token.is_none());
        assert!(
            !parse_config("[server]\nadmin_rpcs = false")
                .unwrap()
                .serve
                .admin_rpcs
        );
        assert!(d.serve.metrics_listen.is_none());
        assert!(parse_config("[server]\nlisten = \"nowhere\"").is_err());
        assert!(parse_config("[server]\nbogus = 1").is_err());
        assert!(parse_config("[memory]\nbogus = 1").is_err());
        assert_eq!(d.gpu, cuzk_cuda::CudaOptions::default());
        let g = parse_config(
            "[gpu]\nvram_budget = \"24GiB\"\nstream_chunk_bases = 8388608\nforce_streaming = true\n",
        )
        .unwrap()
        .gpu;
        assert_eq!(g.vram_budget, Some(24 << 30));
        assert_eq!(g.stream_chunk_bases, 1 << 23);
        assert!(g.force_streaming && g.page_lock_host);
        assert!(parse_config("[gpu]\nstream_chunk_bases = 10").is_err());
        assert!(parse_config("[gpu]\nvram_budget = \"lots\"").is_err());
        assert!(parse_config("[gpu]\nbogus = 1").is_err());
    }

    #[test]
    fn session_4_keys_parse() {
        let c = parse_config(
            "[server]\nmax_streams_per_connection = 8\n[pipeline]\nquarantine_after = 2\n\
             [allow]\ntiming_only = true\n",
        )
        .unwrap();
        assert_eq!(c.serve.max_streams_per_connection, 8);
        assert_eq!(c.engine.quarantine_after, 2);
        assert!(c.engine.allow_timing_only);
        let d = parse_config("").unwrap();
        assert!(!d.engine.allow_timing_only && d.engine.quarantine_after == 3);
        assert!(parse_config("[server]\nmax_streams_per_connection = 0").is_err());
        assert!(parse_config("[pipeline]\nquarantine_after = 0").is_err());
    }

    #[test]
    fn example_config_parses() {
        let text = include_str!("../../../cuzk.example.toml");
        parse_config(text).expect("cuzk.example.toml is valid");
    }
}
