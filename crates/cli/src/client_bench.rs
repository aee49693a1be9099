//! `cuzk bench single|batch|status|preload|evict` and `cuzk status`: the load generator and
//! admin client that talks to a running daemon over gRPC, and the report it prints.
use crate::request_file::{self, Template};
use crate::timeline;
use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use cuzk_server::client::{self, Client};
use cuzk_server::proto::{
    await_proof_response, EvictSrsRequest, GetStatusRequest, GetStatusResponse, GetTimelineRequest,
    PreloadSrsRequest, ProveRequest,
};
use cuzk_server::DEFAULT_ADDR;
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    /// Proof kind: porep, snap, wpost, winning or synthetic.
    #[arg(long, short = 'k')]
    kind: String,
    /// Request file (JSON, see `request_file.rs`: the format `cuzk gen testdata` writes).
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
}

/// Runs a client bench subcommand.
pub fn run(cmd: ClientBenchCmd) -> anyhow::Result<()> {
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
            ClientBenchCmd::Status(a) => print_status(&a.addr).await,
            ClientBenchCmd::Preload(a) => {
                let mut c = connect(&a.addr.addr).await?;
                let r = c
                    .preload_srs(PreloadSrsRequest {
                        circuit_id: a.circuit_id.clone(),
                    })
                    .await
                    .map_err(status_err)?
                    .into_inner();
                println!(
                    "{}: {} (load time {} ms)",
                    a.circuit_id,
                    if r.already_loaded {
                        "already loaded"
                    } else {
                        "loaded"
                    },
                    r.load_time_ms
                );
                Ok(())
            }
            ClientBenchCmd::Evict(a) => {
                let mut c = connect(&a.addr.addr).await?;
                let r = c
                    .evict_srs(EvictSrsRequest {
                        circuit_id: a.circuit_id.clone(),
                    })
                    .await
                    .map_err(status_err)?
                    .into_inner();
                if r.was_loaded {
                    println!(
                        "{}: evicted, freed {}",
                        a.circuit_id,
                        timeline::human_bytes(r.freed_bytes)
                    );
                } else {
                    println!("{}: was not loaded", a.circuit_id);
                }
                Ok(())
            }
        }
    })
}

/// `cuzk status`.
pub fn run_status(a: AddrArgs) -> anyhow::Result<()> {
    run(ClientBenchCmd::Status(a))
}

async fn connect(addr: &str) -> anyhow::Result<Client> {
    client::connect(addr)
        .await
        .with_context(|| format!("connecting to the daemon at {addr} (is `cuzk daemon` running?)"))
}

fn status_err(s: tonic::Status) -> anyhow::Error {
    anyhow::anyhow!("daemon answered {:?}: {}", s.code(), s.message())
}

async fn load(a: LoadArgs) -> anyhow::Result<()> {
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
    };
    let report = run_load(&a.addr.addr, vec![template], &opts).await?;
    report.print();
    if report.failed > 0 {
        bail!(
            "{} of {} proofs did not complete",
            report.failed,
            report.rows.len()
        );
    }
    Ok(())
}

/// How to run a load.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Requests in total.
    pub jobs: usize,
    /// Verify every returned proof on the client side.
    pub verify: bool,
    /// Write the run's timeline SVG here.
    pub timeline: Option<PathBuf>,
    /// Show a progress bar.
    pub progress: bool,
}

/// One request's result.
#[derive(Clone, Debug)]
pub struct Row {
    /// Which template it came from.
    pub label: String,
    /// The daemon's job id.
    pub job_id: String,
    /// COMPLETED, FAILED, ...
    pub status: String,
    /// Error text, if any.
    pub error: String,
    /// The daemon's timings, ms.
    pub queue_ms: u64,
    /// SRS load ms.
    pub srs_ms: u64,
    /// Synthesis ms (summed over partitions).
    pub synthesis_ms: u64,
    /// Prover ms (summed over partitions).
    pub prover_ms: u64,
    /// Submit to done, ms, as the daemon measured it.
    pub total_ms: u64,
    /// Proof length in bytes.
    pub proof_bytes: usize,
    /// Client-side check: None = not checked.
    pub verified: Option<Result<(), String>>,
}

/// What a load run measured.
#[derive(Debug)]
pub struct Report {
    /// Per request, in completion order.
    pub rows: Vec<Row>,
    /// Requests that did not complete or whose proof failed the client-side check.
    pub failed: usize,
    /// Wall time of the whole run.
    pub wall: Duration,
    /// The concurrency used.
    pub concurrency: usize,
    /// Daemon status after the run.
    pub status: GetStatusResponse,
    /// Highest reserved bytes and RSS seen by polling during the run.
    pub sampled_peak_reserved: u64,
    /// Highest RSS seen by polling during the run.
    pub sampled_peak_rss: u64,
    /// Where the timeline was written.
    pub timeline: Option<PathBuf>,
}

/// Sends `opts.jobs` requests (templates round-robin), `opts.concurrency` at a time, through
/// the daemon at `addr`, and collects the report.
pub async fn run_load(
    addr: &str,
    templates: Vec<Template>,
    opts: &LoadOptions,
) -> anyhow::Result<Report> {
    if templates.is_empty() {
        bail!("nothing to send");
    }
    let client = connect(addr).await?;
    let templates = Arc::new(templates);
    let run_tag = format!(
        "bench-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0)
    );
    let bar = if opts.progress {
        let b = ProgressBar::new(opts.jobs as u64);
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:40.cyan/blue} {pos}/{len} proofs {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b.enable_steady_tick(Duration::from_millis(200));
        b
    } else {
        ProgressBar::hidden()
    };

    // Poll the daemon's status for the peaks during the run.
    let (stop_tx, mut stop_rx) = tokio::sync::watch::channel(false);
    let mut poller_client = client.clone();
    let poller = tokio::spawn(async move {
        let (mut reserved, mut rss) = (0u64, 0u64);
        loop {
            if let Ok(s) = poller_client.get_status(GetStatusRequest {}).await {
                let s = s.into_inner();
                reserved = reserved.max(s.pinned_memory_bytes);
                rss = rss.max(s.rss_bytes);
            }
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                _ = stop_rx.changed() => break,
            }
        }
        (reserved, rss)
    });

    let sem = Arc::new(tokio::sync::Semaphore::new(opts.concurrency.max(1)));
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..opts.jobs {
        let permit = sem.clone().acquire_owned().await?;
        let mut c = client.clone();
        let templates = templates.clone();
        let bar = bar.clone();
        let verify = opts.verify;
        let request_id = format!("{run_tag}-{i}");
        tasks.spawn(async move {
            let t = &templates[i % templates.len()];
            let mut req = t.request.clone();
            req.request_id = request_id;
            let resp = c.prove(ProveRequest { submit: Some(req) }).await;
            drop(permit);
            let row = match resp {
                Err(s) => Row {
                    label: t.label.clone(),
                    job_id: String::new(),
                    status: format!("{:?}", s.code()),
                    error: s.message().to_string(),
                    queue_ms: 0,
                    srs_ms: 0,
                    synthesis_ms: 0,
                    prover_ms: 0,
                    total_ms: 0,
                    proof_bytes: 0,
                    verified: None,
                },
                Ok(r) => {
                    let r = r.into_inner().result.unwrap_or_default();
                    let status = await_proof_response::Status::try_from(r.status)
                        .map(|s| s.as_str_name().to_string())
                        .unwrap_or_else(|_| format!("status {}", r.status));
                    let completed = r.status == await_proof_response::Status::Completed as i32;
                    let verified = (verify && completed).then(|| t.verify(&r.proof));
                    Row {
                        label: t.label.clone(),
                        job_id: r.job_id,
                        status,
                        error: r.error_message,
                        queue_ms: r.queue_wait_ms,
                        srs_ms: r.srs_load_ms,
                        synthesis_ms: r.synthesis_ms,
                        prover_ms: r.gpu_compute_ms,
                        total_ms: r.total_ms,
                        proof_bytes: r.proof.len(),
                        verified,
                    }
                }
            };
            bar.inc(1);
            row
        });
    }
    let mut rows = Vec::with_capacity(opts.jobs);
    while let Some(r) = tasks.join_next().await {
        rows.push(r.context("a request task panicked")?);
    }
    let wall = start.elapsed();
    bar.finish_and_clear();
    let _ = stop_tx.send(true);
    let (sampled_peak_reserved, sampled_peak_rss) = poller.await.unwrap_or((0, 0));
    let mut c = client.clone();
    let status = c
        .get_status(GetStatusRequest {})
        .await
        .map_err(status_err)?
        .into_inner();

    let timeline_path = match &opts.timeline {
        None => None,
        Some(path) => {
            let tl = c
                .get_timeline(GetTimelineRequest {})
                .await
                .map_err(status_err)?
                .into_inner();
            let jobs: HashSet<String> = rows.iter().map(|r| r.job_id.clone()).collect();
            let svg = timeline::render(&tl, &jobs);
            std::fs::write(path, svg)
                .with_context(|| format!("writing the timeline to {}", path.display()))?;
            Some(path.clone())
        }
    };

    let failed = rows
        .iter()
        .filter(|r| r.status != "COMPLETED" || matches!(r.verified, Some(Err(_))))
        .count();
    Ok(Report {
        rows,
        failed,
        wall,
        concurrency: opts.concurrency,
        status,
        sampled_peak_reserved,
        sampled_peak_rss,
        timeline: timeline_path,
    })
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let idx = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

impl Report {
    /// Prints the per-proof table, the latency summary, throughput and daemon memory.
    pub fn print(&self) {
        let show_rows = self.rows.len() <= 40;
        println!();
        if show_rows {
            println!(
                "{:<4} {:<18} {:<10} {:>9} {:>9} {:>11} {:>10} {:>10} {:>7}  verified",
                "#",
                "kind",
                "status",
                "queue ms",
                "srs ms",
                "synth ms",
                "prover ms",
                "total ms",
                "bytes"
            );
            for (i, r) in self.rows.iter().enumerate() {
                let v = match &r.verified {
                    None => "-".to_string(),
                    Some(Ok(())) => "ok".to_string(),
                    Some(Err(e)) => format!("FAILED: {e}"),
                };
                println!(
                    "{:<4} {:<18} {:<10} {:>9} {:>9} {:>11} {:>10} {:>10} {:>7}  {}",
                    i + 1,
                    r.label,
                    r.status,
                    r.queue_ms,
                    r.srs_ms,
                    r.synthesis_ms,
                    r.prover_ms,
                    r.total_ms,
                    r.proof_bytes,
                    v
                );
                if !r.error.is_empty() && r.status != "COMPLETED" {
                    println!("     error: {}", r.error);
                }
            }
            println!();
        }
        let ok: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| r.status == "COMPLETED")
            .collect();
        println!(
            "{:<12} {:>9} {:>9} {:>9} {:>9} {:>9}",
            "latency ms", "mean", "p50", "p95", "max", "min"
        );
        type Field = fn(&Row) -> u64;
        let cols: [(&str, Field); 4] = [
            ("queue", |r| r.queue_ms),
            ("synthesis", |r| r.synthesis_ms),
            ("prover", |r| r.prover_ms),
            ("total", |r| r.total_ms),
        ];
        for (name, f) in cols {
            let mut v: Vec<u64> = ok.iter().map(|r| f(r)).collect();
            v.sort_unstable();
            let mean = if v.is_empty() {
                0
            } else {
                v.iter().sum::<u64>() / v.len() as u64
            };
            println!(
                "{:<12} {:>9} {:>9} {:>9} {:>9} {:>9}",
                name,
                mean,
                percentile(&v, 0.5),
                percentile(&v, 0.95),
                v.last().copied().unwrap_or(0),
                v.first().copied().unwrap_or(0)
            );
        }
        println!();
        let secs = self.wall.as_secs_f64();
        let verified = self
            .rows
            .iter()
            .filter(|r| matches!(r.verified, Some(Ok(()))))
            .count();
        println!(
            "proofs: {} completed, {} failed, {} verified on the client; concurrency {}",
            ok.len(),
            self.failed,
            verified,
            self.concurrency
        );
        if !ok.is_empty() {
            println!(
                "throughput: {:.3} s/proof ({:.1} proofs/min) over {:.2} s wall",
                secs / ok.len() as f64,
                60.0 * ok.len() as f64 / secs.max(1e-9),
                secs
            );
        }
        let s = &self.status;
        println!(
            "daemon: peak RSS {} (now {}), peak reserved {} of budget {} (sampled during run: {})",
            timeline::human_bytes(s.peak_rss_bytes.max(self.sampled_peak_rss)),
            timeline::human_bytes(s.rss_bytes),
            timeline::human_bytes(s.peak_reserved_bytes.max(self.sampled_peak_reserved)),
            timeline::human_bytes(s.pinned_memory_limit_bytes),
            timeline::human_bytes(self.sampled_peak_reserved),
        );
        if !s.peak_reserved_by_category.is_empty() {
            let cats: Vec<String> = s
                .peak_reserved_by_category
                .iter()
                .map(|c| format!("{} {}", c.category, timeline::human_bytes(c.bytes)))
                .collect();
            println!("daemon: peak reserved by category: {}", cats.join(", "));
        }
        if let Some(p) = &self.timeline {
            println!("timeline written to {}", p.display());
        }
    }
}

/// Prints `GetStatus` for people.
pub async fn print_status(addr: &str) -> anyhow::Result<()> {
    let mut c = connect(addr).await?;
    let s = c
        .get_status(GetStatusRequest {})
        .await
        .map_err(status_err)?
        .into_inner();
    println!("daemon at {addr}: up {} s", s.uptime_seconds);
    println!(
        "proofs: {} completed, {} failed, {} cancelled",
        s.total_proofs_completed, s.total_proofs_failed, s.total_proofs_cancelled
    );
    println!(
        "memory: reserved {} of budget {} (peak {}); RSS {} (peak {})",
        timeline::human_bytes(s.pinned_memory_bytes),
        timeline::human_bytes(s.pinned_memory_limit_bytes),
        timeline::human_bytes(s.peak_reserved_bytes),
        timeline::human_bytes(s.rss_bytes),
        timeline::human_bytes(s.peak_rss_bytes)
    );
    for r in &s.reserved_by_category {
        println!(
            "  reserved {:<14} {}",
            r.category,
            timeline::human_bytes(r.bytes)
        );
    }
    if !s.stages.is_empty() {
        let st: Vec<String> = s
            .stages
            .iter()
            .map(|x| format!("{} {}", x.stage, x.partitions))
            .collect();
        println!("partitions: {}", st.join(", "));
    }
    println!("queues:");
    for q in &s.queues {
        println!(
            "  {:<24} pending {:>4}  in progress {:>4}",
            q.proof_kind, q.pending, q.in_progress
        );
    }
    println!("SRS:");
    if s.loaded_srs.is_empty() {
        println!("  (none loaded)");
    }
    for x in &s.loaded_srs {
        let tier = cuzk_server::proto::srs_status::Tier::try_from(x.tier)
            .map(|t| t.as_str_name())
            .unwrap_or("?");
        println!(
            "  {:<16} {:<5} {:>12}  in use by {}",
            x.circuit_id,
            tier,
            timeline::human_bytes(x.size_bytes),
            x.ref_count
        );
    }
    println!("provers:");
    for g in &s.gpus {
        let vram = if g.vram_total_bytes > 0 {
            format!(
                ", VRAM {} free of {}",
                timeline::human_bytes(g.vram_free_bytes),
                timeline::human_bytes(g.vram_total_bytes)
            )
        } else {
            String::new()
        };
        let job = if g.current_job_id.is_empty() {
            "idle".to_string()
        } else {
            format!("proving {} ({})", g.current_job_id, g.current_proof_kind)
        };
        println!("  {} {}: {job}{vram}", g.ordinal, g.name);
    }
    Ok(())
}
