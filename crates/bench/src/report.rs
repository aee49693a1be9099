//! What a load run measured, per request and in sum, and the table `cuzk bench` and
//! `cuzk demo` print from it.
use crate::timeline;
use crate::verify::Check;
use cuzk_core::BusySource;
use cuzk_server::proto::GetStatusResponse;
use std::path::PathBuf;
use std::time::Duration;

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
    /// Client-side check of a completed proof: None = not asked for (or not completed).
    pub verified: Option<Check>,
    /// When the answer came, from the start of the run.
    pub done_at: Duration,
}

/// What a run with a deadline left undone.
#[derive(Clone, Copy, Debug)]
pub struct DeadlineTally {
    /// The deadline, from the start of the run.
    pub deadline: Duration,
    /// Requests sent and still running at the deadline (not failures: the daemon keeps
    /// them).
    pub unfinished: usize,
    /// Requests not sent because the deadline came first.
    pub not_sent: usize,
    /// When the last answer before the deadline came.
    pub last_done: Duration,
}

/// What a load run measured.
#[derive(Debug)]
pub struct Report {
    /// Per request, in completion order.
    pub rows: Vec<Row>,
    /// Requests that did not complete or whose proof the client-side check rejected.
    pub failed: usize,
    /// Requests that did not complete.
    pub not_completed: usize,
    /// Completed proofs the client-side check rejected.
    pub rejected: usize,
    /// Completed proofs that could not be checked (`verified` says why).
    pub not_checked: usize,
    /// Some requests are TIMING-ONLY: their proofs DO NOT VERIFY.
    pub timing_only: bool,
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
    /// Daemon status just before the run (for the busy deltas).
    pub status_before: GetStatusResponse,
    /// Set when the run had a deadline.
    pub deadline: Option<DeadlineTally>,
}

/// (not completed, rejected, completed but not checked) among `rows`.
pub fn tally(rows: &[Row]) -> (usize, usize, usize) {
    let not_completed = rows.iter().filter(|r| r.status != "COMPLETED").count();
    let of = |f: fn(&Check) -> bool| {
        rows.iter()
            .filter(|r| r.status == "COMPLETED" && r.verified.as_ref().is_some_and(f))
            .count()
    };
    (
        not_completed,
        of(|c| matches!(c, Check::Rejected(_))),
        of(|c| matches!(c, Check::NotChecked(_))),
    )
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
                let v = r
                    .verified
                    .as_ref()
                    .map_or("-".to_string(), Check::to_string);
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
            .filter(|r| r.verified == Some(Check::Verified))
            .count();
        println!(
            "proofs: {} completed, {} did not complete; on the client: {} verified, {} rejected, \
             {} completed but not checked; concurrency {}",
            ok.len(),
            self.not_completed,
            verified,
            self.rejected,
            self.not_checked,
            self.concurrency
        );
        if let Some(why) = self.rows.iter().find_map(|r| match &r.verified {
            Some(Check::NotChecked(why)) => Some(why),
            _ => None,
        }) {
            println!("not checked: {why}");
        }
        if self.timing_only {
            println!(
                "WARNING: TIMING-ONLY requests: their proofs DO NOT VERIFY (time and memory \
                 figures only)"
            );
        }
        if let Some(d) = &self.deadline {
            println!(
                "deadline {:.0} s: {} completed within it (the last at {:.1} s), {} still running \
                 at the deadline, {} not sent (neither counts as failed)",
                d.deadline.as_secs_f64(),
                ok.len(),
                d.last_done.as_secs_f64(),
                d.unfinished,
                d.not_sent
            );
        }
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
        for line in device_busy_lines(&self.status_before, s, self.wall) {
            println!("daemon: {line}");
        }
        if let Some(p) = &self.timeline {
            println!("timeline written to {}", p.display());
        }
    }
}

/// Each device's busy fraction between two `GetStatus` readings `wall` apart (the busy-time
/// delta over the wall time), with where the figure comes from; a daemon too old to report it
/// gets one line saying so.
pub fn device_busy_lines(
    before: &GetStatusResponse,
    after: &GetStatusResponse,
    wall: Duration,
) -> Vec<String> {
    after
        .gpus
        .iter()
        .map(|g| {
            let b0 = before
                .gpus
                .iter()
                .find(|b| b.ordinal == g.ordinal)
                .map_or(0, |b| b.busy_ms);
            match BusySource::from_name(&g.busy_source) {
                None => format!(
                    "device {} {}: busy not reported (source `{}`: the daemon predates the \
                     busy figure)",
                    g.ordinal, g.name, g.busy_source
                ),
                Some(s @ BusySource::NotMeasured) => {
                    format!("device {} {}: busy {}", g.ordinal, g.name, s.describe())
                }
                Some(s) => {
                    let ms = g.busy_ms.saturating_sub(b0) as f64;
                    format!(
                        "device {} {}: busy {:.1}% of wall ({:.2} s of {:.2} s; {})",
                        g.ordinal,
                        g.name,
                        100.0 * ms / 1e3 / wall.as_secs_f64().max(1e-9),
                        ms / 1e3,
                        wall.as_secs_f64(),
                        s.describe()
                    )
                }
            }
        })
        .collect()
}
