//! The pipeline benchmark behind `cuzk bench pipeline`: runs many jobs through an engine and
//! reports s/proof, each device's busy fraction (from the device's own timing, never a sum
//! over workers), peak RSS and peak reserved bytes by category.
use cuzk_core::config::format_size;
use cuzk_core::peak_rss_bytes;
use cuzk_core::{
    BusySource, Category, DeviceStatus, Engine, EngineError, JobState, PartitionTimeline, Priority,
    ProofRequest, Work,
};
use std::fmt;
use std::time::{Duration, Instant};

/// What to run.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// What every job proves.
    pub work: Work,
    /// Jobs in total.
    pub jobs: usize,
    /// Jobs in flight at once.
    pub concurrency: usize,
    /// Priority of every job.
    pub priority: Priority,
}

impl BenchOptions {
    /// Synthetic jobs of `spec` (e.g. `synthetic:constraints=2^14,partitions=2`).
    pub fn synthetic(spec: &str, jobs: usize, concurrency: usize) -> BenchOptions {
        BenchOptions {
            work: Work::Synthetic(spec.to_string()),
            jobs,
            concurrency,
            priority: Priority::Normal,
        }
    }
}

/// What a run measured.
#[derive(Clone, Debug, Default)]
pub struct BenchReport {
    /// Jobs that completed.
    pub completed: usize,
    /// Jobs that did not (failed or cancelled), with the first error seen.
    pub failed: usize,
    /// The first failure's message.
    pub first_error: Option<String>,
    /// Wall time of the run.
    pub wall: Duration,
    /// Wall time per completed job.
    pub secs_per_proof: f64,
    /// Partitions proved.
    pub partitions: u64,
    /// Each device's busy fraction over the run.
    pub devices: Vec<DeviceBusy>,
    /// Mean latency per stage over completed jobs: queue, SRS, synthesis, prover, total.
    pub mean_latency: [Duration; 5],
    /// Peak resident set of this process (VmHWM), if readable.
    pub peak_rss: Option<u64>,
    /// The budget.
    pub budget: u64,
    /// Peak reserved total.
    pub peak_reserved: u64,
    /// Peak reserved bytes per category.
    pub peak_by_category: Vec<(Category, u64)>,
}

/// One device's busy figure over a run: the difference of two readings of its busy time
/// (see [`DeviceStatus::busy`]) over the wall time between them.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceBusy {
    /// The backend's name (`cuda:0`).
    pub name: String,
    /// Where the figure comes from.
    pub source: BusySource,
    /// Busy time / wall time of the run; `None` when not measured.
    pub fraction: Option<f64>,
    /// Busy time / the span from the device's first `start` to its last `start` end (the
    /// steady state); `None` when not measured or nothing ran on it.
    pub steady: Option<f64>,
}

impl DeviceBusy {
    /// The busy figures of each device between the readings `before` and `after`, `wall`
    /// apart, with `timeline` (the run's partitions) for the steady-state span.
    pub fn between(
        before: &[DeviceStatus],
        after: &[DeviceStatus],
        wall: Duration,
        timeline: &[PartitionTimeline],
    ) -> Vec<DeviceBusy> {
        after
            .iter()
            .map(|d| {
                let b0 = before.iter().find(|b| b.index == d.index);
                let delta = match (d.busy, b0.and_then(|b| b.busy)) {
                    (Some(b), Some(b0)) => Some(b.saturating_sub(b0)),
                    (Some(b), None) if b0.is_none() => Some(b),
                    _ => None,
                };
                let mine = timeline
                    .iter()
                    .filter(|r| r.device.as_deref() == Some(d.name.as_str()));
                let first = mine.clone().filter_map(|r| r.prove_start).min();
                let last = mine.filter_map(|r| r.prove_end).max();
                let steady = match (delta, first, last) {
                    (Some(busy), Some(a), Some(b)) if b > a => {
                        Some((busy.as_secs_f64() / (b - a).as_secs_f64()).min(1.0))
                    }
                    _ => None,
                };
                DeviceBusy {
                    name: d.name.clone(),
                    source: d.busy_source,
                    fraction: delta.map(|b| b.as_secs_f64() / wall.as_secs_f64().max(1e-9)),
                    steady,
                }
            })
            .collect()
    }
}

impl fmt::Display for DeviceBusy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.fraction {
            None => write!(f, "{}: {}", self.name, self.source.describe()),
            Some(x) => {
                write!(f, "{}: {:.1}% of wall", self.name, x * 100.0)?;
                if let Some(s) = self.steady {
                    write!(f, ", {:.1}% between its first and last start", s * 100.0)?;
                }
                write!(f, " ({})", self.source.describe())
            }
        }
    }
}

/// Runs `opts.jobs` jobs through `engine`, `opts.concurrency` at a time, and measures.
pub async fn bench_pipeline(
    engine: &Engine,
    opts: &BenchOptions,
) -> Result<BenchReport, EngineError> {
    let start = Instant::now();
    // Timeline offsets are from the engine's start; rows before this run are not ours.
    let run_from = engine.status().uptime;
    let run_tag = format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let status0 = engine.status();
    let parts0: u64 = status0.devices.iter().map(|d| d.partitions).sum();
    let sem = std::sync::Arc::new(tokio::sync::Semaphore::new(opts.concurrency.max(1)));
    let mut handles = Vec::new();
    for i in 0..opts.jobs {
        let permit = sem
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| EngineError::Internal(e.to_string()))?;
        let engine = engine.clone();
        let req = ProofRequest {
            request_id: format!("bench-{run_tag}-{i}"),
            priority: opts.priority,
            work: opts.work.clone(),
        };
        handles.push(tokio::spawn(async move {
            let _permit = permit;
            let sub = engine.submit(req)?;
            engine.wait(&sub.job_id, None).await
        }));
    }
    let mut report = BenchReport::default();
    let mut sums = [Duration::ZERO; 5];
    for h in handles {
        let out = h.await.map_err(|e| EngineError::Internal(e.to_string()))?;
        match out {
            Ok(o) => match &o.state {
                JobState::Completed { .. } => {
                    report.completed += 1;
                    let t = o.timings;
                    for (s, d) in sums.iter_mut().zip([
                        t.queue_wait,
                        t.srs_load,
                        t.synthesis,
                        t.prover,
                        t.total,
                    ]) {
                        *s += d;
                    }
                }
                other => {
                    report.failed += 1;
                    report
                        .first_error
                        .get_or_insert_with(|| format!("{}: {other:?}", o.job_id));
                }
            },
            Err(e) => {
                report.failed += 1;
                report.first_error.get_or_insert_with(|| e.to_string());
            }
        }
    }
    report.wall = start.elapsed();
    let status = engine.status();
    let tl: Vec<_> = engine
        .timeline()
        .into_iter()
        .filter(|r| r.queued >= run_from)
        .collect();
    report.devices = DeviceBusy::between(&status0.devices, &status.devices, report.wall, &tl);
    report.partitions = status.devices.iter().map(|d| d.partitions).sum::<u64>() - parts0;
    report.secs_per_proof = report.wall.as_secs_f64() / report.completed.max(1) as f64;
    if report.completed > 0 {
        for (m, s) in report.mean_latency.iter_mut().zip(sums) {
            *m = s / report.completed as u32;
        }
    }
    report.peak_rss = peak_rss_bytes();
    report.budget = status.budget.total;
    report.peak_reserved = status.budget.peak;
    report.peak_by_category = status.budget.peak_by_category;
    Ok(report)
}

impl fmt::Display for BenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        writeln!(
            f,
            "jobs: {} completed, {} failed; {} partitions in {:.2} s",
            self.completed,
            self.failed,
            self.partitions,
            self.wall.as_secs_f64()
        )?;
        if let Some(e) = &self.first_error {
            writeln!(f, "first error: {e}")?;
        }
        writeln!(f, "throughput: {:.3} s/proof", self.secs_per_proof)?;
        for d in &self.devices {
            writeln!(f, "device busy: {d}")?;
        }
        let [q, s, y, p, t] = self.mean_latency;
        writeln!(
            f,
            "mean latency: queue {:.1} ms, srs {:.1} ms, synthesis {:.1} ms, prover {:.1} ms, total {:.1} ms",
            ms(q),
            ms(s),
            ms(y),
            ms(p),
            ms(t)
        )?;
        writeln!(
            f,
            "peak RSS: {}",
            self.peak_rss.map_or("unknown".into(), format_size)
        )?;
        write!(
            f,
            "peak reserved: {} of {} budget (",
            format_size(self.peak_reserved),
            format_size(self.budget)
        )?;
        for (i, (c, v)) in self.peak_by_category.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{c} {}", format_size(*v))?;
        }
        writeln!(f, ")")
    }
}
