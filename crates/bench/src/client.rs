//! The client side of a running daemon: the load generator behind `cuzk bench single|batch`
//! and `cuzk demo` (requests round-robin from templates, a bounded number in flight, the
//! daemon's status polled for peaks, an optional timeline), and the admin calls behind
//! `cuzk bench status|preload|evict` and `cuzk status`.
use crate::error::{invalid, Result, Step};
use crate::report::{DeadlineTally, Report, Row};
use crate::request_file::Template;
use crate::timeline;
use cuzk_server::client::{self, Client, Dial};
use cuzk_server::proto::{
    await_proof_response, EvictSrsRequest, GetStatusRequest, GetTimelineRequest, PreloadSrsRequest,
    ProveRequest,
};
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A prefix for this run's request ids: `what`, the process and the time, so that two runs
/// never share an id.
pub(crate) fn run_tag(what: &str) -> String {
    format!(
        "{what}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0)
    )
}

pub(crate) async fn connect(d: &Dial) -> Result<Client> {
    client::dial(d).await.with_step(|| {
        format!(
            "connecting to the daemon at {} (is `cuzk daemon` running?)",
            d.addr
        )
    })
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
    /// Stop at this time after the start: requests not sent by then are not sent, and those
    /// still running are reported as unfinished at the deadline (not as failures; the daemon
    /// keeps them). `None`: wait for all.
    pub deadline: Option<Duration>,
}

/// Sends `opts.jobs` requests (templates round-robin), `opts.concurrency` at a time, through
/// the daemon at `addr`, and collects the report.
pub async fn run_load(addr: &Dial, templates: Vec<Template>, opts: &LoadOptions) -> Result<Report> {
    if templates.is_empty() {
        return Err(invalid!("nothing to send"));
    }
    if templates.iter().any(|t| t.timing_only) {
        eprintln!(
            "WARNING: TIMING-ONLY requests: their proofs DO NOT VERIFY{}",
            if opts.verify {
                "; --verify reports them as not checkable (timing-only), not as failed"
            } else {
                ""
            }
        );
    }
    let client = connect(addr).await?;
    let templates = Arc::new(templates);
    let run_tag = run_tag("bench");
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

    let status_before = client
        .clone()
        .get_status(GetStatusRequest {})
        .await?
        .into_inner();
    let sem = Arc::new(tokio::sync::Semaphore::new(opts.concurrency.max(1)));
    let start = Instant::now();
    let deadline = opts
        .deadline
        .map(|d| tokio::time::Instant::from_std(start) + d);
    let mut tasks = tokio::task::JoinSet::new();
    let mut not_sent = 0;
    for i in 0..opts.jobs {
        let acquire = sem.clone().acquire_owned();
        let permit = match deadline {
            None => acquire.await,
            Some(d) => match tokio::time::timeout_at(d, acquire).await {
                Ok(p) => p,
                Err(_) => {
                    not_sent = opts.jobs - i;
                    break;
                }
            },
        }
        .step("the request semaphore")?;
        let mut c = client.clone();
        let templates = templates.clone();
        let bar = bar.clone();
        let verify = opts.verify;
        let request_id = format!("{run_tag}-{i}");
        tasks.spawn(async move {
            let t = &templates[i % templates.len()];
            let row = prove_one(&mut c, t, request_id, verify, start, Some(permit)).await;
            bar.inc(1);
            row
        });
    }
    let mut rows = Vec::with_capacity(opts.jobs);
    let mut unfinished = 0;
    loop {
        let next = match deadline {
            None => tasks.join_next().await,
            Some(d) => match tokio::time::timeout_at(d, tasks.join_next()).await {
                Ok(next) => next,
                Err(_) => {
                    unfinished = tasks.len();
                    tasks.abort_all();
                    break;
                }
            },
        };
        let Some(r) = next else { break };
        rows.push(r.step("a request task panicked")?);
    }
    let wall = start.elapsed();
    let last_done = rows.iter().map(|r| r.done_at).max().unwrap_or_default();
    bar.finish_and_clear();
    let _ = stop_tx.send(true);
    let (sampled_peak_reserved, sampled_peak_rss) = poller.await.unwrap_or((0, 0));
    let mut c = client.clone();
    let status = c.get_status(GetStatusRequest {}).await?.into_inner();

    let timeline_path = match &opts.timeline {
        None => None,
        Some(path) => {
            let tl = c.get_timeline(GetTimelineRequest {}).await?.into_inner();
            let jobs: HashSet<String> = rows.iter().map(|r| r.job_id.clone()).collect();
            let svg = timeline::render(&tl, &jobs);
            std::fs::write(path, svg)
                .with_step(|| format!("writing the timeline to {}", path.display()))?;
            Some(path.clone())
        }
    };

    let (not_completed, rejected, not_checked) = crate::report::tally(&rows);
    Ok(Report {
        rows,
        failed: not_completed + rejected,
        not_completed,
        rejected,
        not_checked,
        timing_only: templates.iter().any(|t| t.timing_only),
        wall,
        concurrency: opts.concurrency,
        status,
        sampled_peak_reserved,
        sampled_peak_rss,
        timeline: timeline_path,
        status_before,
        deadline: opts.deadline.map(|d| DeadlineTally {
            deadline: d,
            unfinished,
            not_sent,
            last_done,
        }),
    })
}

/// Sends one request of `t` as `request_id` and makes its row: the daemon's answer and
/// timings, `done_at` from `start`, and the client-side check when `verify`. `permit` (a slot
/// of the caller's concurrency) is given back when the answer comes, before the check.
pub(crate) async fn prove_one(
    c: &mut Client,
    t: &Template,
    request_id: String,
    verify: bool,
    start: Instant,
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
) -> Row {
    let mut req = t.request.clone();
    req.request_id = request_id;
    let resp = c.prove(ProveRequest { submit: Some(req) }).await;
    drop(permit);
    let done_at = start.elapsed();
    match resp {
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
            done_at,
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
                done_at,
            }
        }
    }
}

/// Sends `opts.jobs` requests of `template` through the daemon at `addr`, prints the report,
/// and fails when some did not complete (`cuzk bench single|batch`).
pub async fn run_batch(addr: &Dial, template: Template, opts: &LoadOptions) -> Result<()> {
    let report = run_load(addr, vec![template], opts).await?;
    report.print();
    failures(&report)
}

/// `Err` when some proofs did not complete or were rejected by the client-side check, saying
/// how many of each; proofs that completed but could not be checked are not failures.
pub fn failures(report: &Report) -> Result<()> {
    let n = report.rows.len();
    match (report.not_completed, report.rejected) {
        (0, 0) => Ok(()),
        (c, 0) => Err(invalid!("{c} of {n} proofs did not complete")),
        (0, r) => Err(invalid!(
            "{r} of {n} proofs completed but were rejected by the client-side check"
        )),
        (c, r) => Err(invalid!(
            "{c} of {n} proofs did not complete, and {r} completed but were rejected by the \
             client-side check"
        )),
    }
}

/// Loads `circuit_id`'s SRS in the daemon at `addr` ahead of use, and prints what happened.
pub async fn preload(addr: &Dial, circuit_id: &str) -> Result<()> {
    let mut c = connect(addr).await?;
    let r = c
        .preload_srs(PreloadSrsRequest {
            circuit_id: circuit_id.to_string(),
        })
        .await?
        .into_inner();
    println!(
        "{}: {} (load time {} ms)",
        circuit_id,
        if r.already_loaded {
            "already loaded"
        } else {
            "loaded"
        },
        r.load_time_ms
    );
    Ok(())
}

/// Drops `circuit_id`'s SRS from the daemon at `addr`, and prints what was freed.
pub async fn evict(addr: &Dial, circuit_id: &str) -> Result<()> {
    let mut c = connect(addr).await?;
    let r = c
        .evict_srs(EvictSrsRequest {
            circuit_id: circuit_id.to_string(),
        })
        .await?
        .into_inner();
    if r.was_loaded {
        println!(
            "{}: evicted, freed {}",
            circuit_id,
            timeline::human_bytes(r.freed_bytes)
        );
    } else {
        println!("{}: was not loaded", circuit_id);
    }
    Ok(())
}

/// Prints `GetStatus` for people.
pub async fn print_status(addr: &Dial) -> Result<()> {
    let mut c = connect(addr).await?;
    let s = c.get_status(GetStatusRequest {}).await?.into_inner();
    println!("daemon at {}: up {} s", addr.addr, s.uptime_seconds);
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
    for m in &s.partition_memory {
        println!(
            "  per partition  {:<14} reserved {}, measured {}",
            m.circuit_id,
            timeline::human_bytes(m.reserved_bytes),
            timeline::human_bytes(m.measured_bytes)
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
        let mut notes = String::new();
        if x.host_copy_released {
            notes.push_str("  host copy released (held in VRAM)");
        }
        for (i, &b) in x.device_bytes.iter().enumerate() {
            if b > 0 {
                notes.push_str(&format!(
                    "  device {i}: {} resident",
                    timeline::human_bytes(b)
                ));
            }
            match x.matrices_device_bytes.get(i) {
                Some(&m) if m > 0 => {
                    notes.push_str(&format!(" + {} of matrices", timeline::human_bytes(m)))
                }
                _ => {}
            }
        }
        if x.timing_only {
            notes.push_str("  TIMING-ONLY: proofs DO NOT VERIFY");
        }
        println!(
            "  {:<16} {:<5} {:>12}  in use by {}{notes}",
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
        let busy = if g.busy_window_ms > 0 {
            format!(
                ", busy {:.1}% over the last {} s",
                g.busy_fraction_last_minute * 100.0,
                g.busy_window_ms / 1000
            )
        } else {
            String::new()
        };
        let errors = if g.quarantined {
            format!(", {} errors, QUARANTINED", g.errors)
        } else if g.errors > 0 {
            format!(", {} errors", g.errors)
        } else {
            String::new()
        };
        println!(
            "  {} {}: {job}{vram}{busy}, {} partitions{errors}",
            g.ordinal, g.name, g.partitions
        );
    }
    if !s.kind_stats.is_empty() {
        println!("latency of completed proofs (p50 / p99 of the last 1,024, seconds):");
        println!(
            "  {:<22} {:>9} {:>6} {:>9} {:>15} {:>15} {:>15} {:>15}",
            "kind", "completed", "failed", "cancelled", "queue", "synthesis", "prover", "total"
        );
    }
    for k in &s.kind_stats {
        let mut cells = String::new();
        for p in &k.phases {
            cells.push_str(&format!(
                " {:>15}",
                format!(
                    "{:.2} / {:.2}",
                    p.p50_ms as f64 / 1e3,
                    p.p99_ms as f64 / 1e3
                )
            ));
        }
        println!(
            "  {:<22} {:>9} {:>6} {:>9} {cells}",
            k.proof_kind, k.completed, k.failed, k.cancelled
        );
    }
    Ok(())
}
