//! `cuzk bench soak`: a mixed load held against a running daemon for a set time, the way a
//! provider's box runs for days. Some kinds are kept in flight without a pause (closed loop:
//! `--load porep=2` keeps two PoRep proofs running), others are sent on a clock whether or not
//! the last one has come back (`--every winning=60s`: a WinningPoSt each minute, as the chain
//! asks). Each interval it prints the proofs each kind completed, the failures, the daemon's
//! RSS and reserved peaks and each device's busy fraction (the daemon's own busy time); at the
//! end, per kind, proofs per minute, failures and latencies, and whether the RSS stayed flat.
//! Requests still running when the time is up are waited for (`drain`); one still running
//! after that counts as a failure.
use crate::client::{connect, prove_one, run_tag};
use crate::error::{invalid, Result};
use crate::report::{device_busy_lines, tally, Row};
use crate::request_file::Template;
use crate::timeline::human_bytes;
use crate::verify::Check;
use cuzk_server::client::Dial;
use cuzk_server::proto::{GetStatusRequest, GetStatusResponse};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A kind kept in flight: `in_flight` requests of `template` at all times until the end.
#[derive(Clone)]
pub struct Steady {
    /// What to send.
    pub template: Template,
    /// How many at once.
    pub in_flight: usize,
}

/// A kind sent on a clock: one request of `template` every `every`, from the start.
#[derive(Clone)]
pub struct Periodic {
    /// What to send.
    pub template: Template,
    /// The period.
    pub every: Duration,
}

/// How to run a soak.
#[derive(Clone)]
pub struct SoakOptions {
    /// How long requests are sent.
    pub duration: Duration,
    /// Kinds kept in flight.
    pub steady: Vec<Steady>,
    /// Kinds sent on a clock.
    pub periodic: Vec<Periodic>,
    /// The table's rows: one per interval (a minute).
    pub interval: Duration,
    /// How often the daemon's status is read (RSS, reserved bytes, busy time).
    pub sample_every: Duration,
    /// How long requests still running at the end are waited for.
    pub drain: Duration,
    /// Check every proof on the client side too.
    pub verify: bool,
    /// Print each interval's row as it ends.
    pub print: bool,
}

/// One request: its row (`done_at` from the start) and when it was sent.
#[derive(Clone, Debug)]
pub struct Sent {
    /// The answer.
    pub row: Row,
    /// When it was sent, from the start.
    pub sent_at: Duration,
}

impl Sent {
    /// Completed, and not rejected by the client-side check.
    pub fn ok(&self) -> bool {
        self.row.status == "COMPLETED" && !matches!(self.row.verified, Some(Check::Rejected(_)))
    }
}

/// One reading of the daemon's status.
#[derive(Clone, Debug)]
pub struct Sample {
    /// When, from the start.
    pub at: Duration,
    /// The daemon's resident set.
    pub rss: u64,
    /// Bytes reserved in its memory budget.
    pub reserved: u64,
    /// (device ordinal, busy ms since the daemon started).
    pub busy_ms: Vec<(u32, u64)>,
}

/// What a soak measured.
pub struct SoakReport {
    /// The options' duration.
    pub duration: Duration,
    /// The options' interval.
    pub interval: Duration,
    /// The kinds, steady first, in the options' order.
    pub labels: Vec<String>,
    /// Every answered request, in answer order.
    pub sent: Vec<Sent>,
    /// The kinds of requests still running when the drain ended (cancelled; failures).
    pub unfinished: Vec<String>,
    /// Status readings, every `sample_every`.
    pub samples: Vec<Sample>,
    /// Status before the first request.
    pub before: GetStatusResponse,
    /// Status when the time was up.
    pub at_end: GetStatusResponse,
    /// Status after the drain.
    pub after: GetStatusResponse,
    /// Some request is TIMING-ONLY: its proofs do not verify.
    pub timing_only: bool,
}

type Shared<T> = Arc<Mutex<T>>;

/// How long a kept-in-flight kind waits after a failed request before the next.
const FAILED_PAUSE: Duration = Duration::from_millis(500);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

struct Sender {
    start: Instant,
    verify: bool,
    tag: String,
    next_id: AtomicUsize,
    sent: Shared<Vec<Sent>>,
    in_flight: Shared<HashMap<String, String>>,
}

impl Sender {
    /// Sends one request of `t` and records its answer; true when it completed.
    async fn one(&self, c: &mut cuzk_server::client::Client, t: &Template) -> bool {
        let id = format!(
            "{}-{}-{}",
            self.tag,
            t.label,
            self.next_id.fetch_add(1, Ordering::Relaxed)
        );
        lock(&self.in_flight).insert(id.clone(), t.label.clone());
        let sent_at = self.start.elapsed();
        let row = prove_one(c, t, id.clone(), self.verify, self.start, None).await;
        lock(&self.in_flight).remove(&id);
        let sent = Sent { row, sent_at };
        let ok = sent.ok();
        lock(&self.sent).push(sent);
        ok
    }
}

/// Runs the soak of `opts` against the daemon at `dial`.
pub async fn run_soak(dial: &Dial, opts: &SoakOptions) -> Result<SoakReport> {
    if opts.steady.is_empty() && opts.periodic.is_empty() {
        return Err(invalid!("nothing to send: give --load or --every"));
    }
    if opts.periodic.iter().any(|p| p.every.is_zero()) || opts.interval.is_zero() {
        return Err(invalid!("periods and the interval must be longer than 0"));
    }
    let client = connect(dial).await?;
    let labels: Vec<String> = opts
        .steady
        .iter()
        .map(|s| s.template.label.clone())
        .chain(opts.periodic.iter().map(|p| p.template.label.clone()))
        .collect();
    let timing_only = opts.steady.iter().any(|s| s.template.timing_only)
        || opts.periodic.iter().any(|p| p.template.timing_only);
    if timing_only {
        eprintln!("WARNING: TIMING-ONLY requests: their proofs DO NOT VERIFY");
    }
    let before = client
        .clone()
        .get_status(GetStatusRequest {})
        .await?
        .into_inner();
    let start = Instant::now();
    let sender = Arc::new(Sender {
        start,
        verify: opts.verify,
        tag: run_tag("soak"),
        next_id: AtomicUsize::new(0),
        sent: Default::default(),
        in_flight: Default::default(),
    });
    let samples: Shared<Vec<Sample>> = Default::default();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let sampler = tokio::spawn(sample_loop(
        client.clone(),
        opts.clone(),
        labels.clone(),
        start,
        sender.sent.clone(),
        samples.clone(),
        stop_rx,
    ));

    let end = tokio::time::Instant::from_std(start) + opts.duration;
    let mut tasks = tokio::task::JoinSet::new();
    for s in &opts.steady {
        for _ in 0..s.in_flight {
            let (sender, t, mut c) = (sender.clone(), s.template.clone(), client.clone());
            let duration = opts.duration;
            tasks.spawn(async move {
                while sender.start.elapsed() < duration {
                    // A failure is sent again after a pause: a daemon that refuses everything
                    // (or is gone) is not hammered.
                    if !sender.one(&mut c, &t).await {
                        tokio::time::sleep(FAILED_PAUSE).await;
                    }
                }
            });
        }
    }
    let t0 = tokio::time::Instant::from_std(start);
    let mut next: Vec<tokio::time::Instant> = vec![t0; opts.periodic.len()];
    while let Some(due) = next.iter().copied().min().filter(|&d| d < end) {
        tokio::select! {
            _ = tokio::time::sleep_until(due) => {
                for (p, n) in opts.periodic.iter().zip(next.iter_mut()) {
                    if *n <= due {
                        let (sender, t, mut c) = (sender.clone(), p.template.clone(), client.clone());
                        tasks.spawn(async move {
                            sender.one(&mut c, &t).await;
                        });
                        *n += p.every;
                    }
                }
            }
            Some(r) = tasks.join_next(), if !tasks.is_empty() => {
                r.map_err(|e| invalid!("a soak task failed: {e}"))?;
            }
        }
    }
    tokio::time::sleep_until(end).await;
    let at_end = client
        .clone()
        .get_status(GetStatusRequest {})
        .await?
        .into_inner();
    let drain_end = end + opts.drain;
    let mut unfinished = Vec::new();
    loop {
        match tokio::time::timeout_at(drain_end, tasks.join_next()).await {
            Ok(Some(r)) => r.map_err(|e| invalid!("a soak task failed: {e}"))?,
            Ok(None) => break,
            Err(_) => {
                unfinished = lock(&sender.in_flight).values().cloned().collect();
                tasks.abort_all();
                break;
            }
        }
    }
    let _ = stop_tx.send(true);
    let _ = sampler.await;
    let after = client
        .clone()
        .get_status(GetStatusRequest {})
        .await?
        .into_inner();
    let sent = std::mem::take(&mut *lock(&sender.sent));
    let samples = std::mem::take(&mut *lock(&samples));
    Ok(SoakReport {
        duration: opts.duration,
        interval: opts.interval,
        labels,
        sent,
        unfinished,
        samples,
        before,
        at_end,
        after,
        timing_only,
    })
}

/// Reads the daemon's status every `sample_every` until told to stop, and prints each interval's
/// row once it has ended (when `opts.print`).
async fn sample_loop(
    mut client: cuzk_server::client::Client,
    opts: SoakOptions,
    labels: Vec<String>,
    start: Instant,
    sent: Shared<Vec<Sent>>,
    samples: Shared<Vec<Sample>>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let mut printed = 0usize;
    let intervals = interval_count(opts.duration, opts.interval);
    if opts.print {
        println!("{}", table_header(&labels));
    }
    loop {
        if let Ok(s) = client.get_status(GetStatusRequest {}).await {
            let s = s.into_inner();
            lock(&samples).push(Sample {
                at: start.elapsed(),
                rss: s.rss_bytes,
                reserved: s.pinned_memory_bytes,
                busy_ms: s.gpus.iter().map(|g| (g.ordinal, g.busy_ms)).collect(),
            });
        }
        let now = start.elapsed();
        while opts.print
            && printed < intervals
            && now >= interval_bounds(printed, opts.interval, opts.duration).1
        {
            let row = {
                let (sent, samples) = (lock(&sent), lock(&samples));
                table_row(
                    &labels,
                    &sent,
                    &samples,
                    printed,
                    opts.interval,
                    opts.duration,
                )
            };
            println!("{row}");
            printed += 1;
        }
        tokio::select! {
            _ = tokio::time::sleep(opts.sample_every) => {}
            _ = stop.changed() => break,
        }
    }
}

fn interval_count(duration: Duration, interval: Duration) -> usize {
    (duration.as_nanos().div_ceil(interval.as_nanos().max(1))) as usize
}

/// Interval `k`'s start and end, the last one cut at the soak's end.
fn interval_bounds(k: usize, interval: Duration, duration: Duration) -> (Duration, Duration) {
    let a = interval * k as u32;
    (a, (a + interval).min(duration))
}

fn table_header(labels: &[String]) -> String {
    let mut h = format!("{:>11}", "seconds");
    for l in labels {
        h.push_str(&format!(" {:>9}", l));
    }
    h.push_str(&format!(
        " {:>7} {:>10} {:>10}  device busy (the daemon's busy time)",
        "failed", "RSS peak", "reserved"
    ));
    h
}

/// The proofs of each kind answered within interval `k` (completed; failures together), the
/// peaks of the samples taken in it, and each device's busy fraction between its first and
/// last samples.
fn table_row(
    labels: &[String],
    sent: &[Sent],
    samples: &[Sample],
    k: usize,
    interval: Duration,
    duration: Duration,
) -> String {
    let (a, b) = interval_bounds(k, interval, duration);
    let within = |d: Duration| d >= a && d < b;
    let mut row = format!("{:>5}-{:<5}", secs(a), secs(b));
    for l in labels {
        let n = sent
            .iter()
            .filter(|s| &s.row.label == l && s.ok() && within(s.row.done_at))
            .count();
        row.push_str(&format!(" {n:>9}"));
    }
    let failed = sent
        .iter()
        .filter(|s| !s.ok() && within(s.row.done_at))
        .count();
    let inside: Vec<&Sample> = samples.iter().filter(|s| within(s.at)).collect();
    let peak = |f: fn(&Sample) -> u64| inside.iter().map(|s| f(s)).max().unwrap_or(0);
    row.push_str(&format!(
        " {failed:>7} {:>10} {:>10} ",
        human_bytes(peak(|s| s.rss)),
        human_bytes(peak(|s| s.reserved))
    ));
    if let (Some(first), Some(last)) = (inside.first(), inside.last()) {
        let wall = last.at.saturating_sub(first.at).as_secs_f64();
        for &(dev, busy) in &last.busy_ms {
            let b0 = first.busy_ms.iter().find(|x| x.0 == dev).map_or(0, |x| x.1);
            if wall > 0.0 {
                // Busy time is credited as each hold of the device ends: a row can hold a
                // little more than its wall, as the daemon's own minute figure would before
                // its clamp.
                let pct = (100.0 * busy.saturating_sub(b0) as f64 / 1e3 / wall).min(100.0);
                row.push_str(&format!(" {dev}: {pct:.1} %"));
            }
        }
    }
    row
}

/// Whole seconds, or tenths when the time has a fraction.
fn secs(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        d.as_secs().to_string()
    } else {
        format!("{:.1}", d.as_secs_f64())
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[(((sorted.len() - 1) as f64) * p).round() as usize]
}

impl SoakReport {
    /// Requests that failed (did not complete, or were rejected by the client-side check).
    pub fn failed(&self) -> usize {
        self.sent.iter().filter(|s| !s.ok()).count()
    }

    /// The RSS peaks of the first interval under full load (the second, when there are three
    /// or more: the first holds the ramp) and of the last whole interval.
    pub fn rss_first_last(&self) -> Option<(u64, u64)> {
        let n = self.duration.as_nanos() / self.interval.as_nanos().max(1);
        let n = n as usize;
        if n == 0 {
            return None;
        }
        let first = usize::from(n >= 3);
        let peak = |k: usize| {
            let (a, b) = interval_bounds(k, self.interval, self.duration);
            self.samples
                .iter()
                .filter(|s| s.at >= a && s.at < b)
                .map(|s| s.rss)
                .max()
        };
        Some((peak(first)?, peak(n - 1)?))
    }

    /// Prints the per-interval table and the summary.
    pub fn print(&self) {
        let minutes = self.duration.as_secs_f64() / 60.0;
        println!();
        println!(
            "soak of {:.1} min, rows of {} s:",
            minutes,
            secs(self.interval)
        );
        println!("{}", table_header(&self.labels));
        for k in 0..interval_count(self.duration, self.interval) {
            println!(
                "{}",
                table_row(
                    &self.labels,
                    &self.sent,
                    &self.samples,
                    k,
                    self.interval,
                    self.duration
                )
            );
        }
        println!();
        println!(
            "{:<10} {:>5} {:>9} {:>8} {:>7} {:>7} {:>7}   {:<26} daemon p50 s (queue / synthesis / prover)",
            "kind", "sent", "completed", "per min", "drained", "failed", "", "latency s (p50 / p99 / max)"
        );
        for l in &self.labels {
            let of: Vec<&Sent> = self.sent.iter().filter(|s| &s.row.label == l).collect();
            let ok: Vec<&&Sent> = of.iter().filter(|s| s.ok()).collect();
            let within = ok.iter().filter(|s| s.row.done_at <= self.duration).count();
            let failed = of.len() - ok.len();
            let unfinished = self.unfinished.iter().filter(|u| *u == l).count();
            let mut lat: Vec<f64> = ok
                .iter()
                .map(|s| s.row.done_at.saturating_sub(s.sent_at).as_secs_f64())
                .collect();
            lat.sort_by(f64::total_cmp);
            let p50 = |f: fn(&Row) -> u64| {
                let mut v: Vec<f64> = ok.iter().map(|s| f(&s.row) as f64 / 1e3).collect();
                v.sort_by(f64::total_cmp);
                percentile(&v, 0.5)
            };
            println!(
                "{:<10} {:>5} {:>9} {:>8.2} {:>7} {:>7} {:>7}   {:<26} {:.2} / {:.2} / {:.2}",
                l,
                of.len() + unfinished,
                within,
                within as f64 / minutes.max(1e-9),
                ok.len() - within,
                failed + unfinished,
                "",
                format!(
                    "{:.2} / {:.2} / {:.2}",
                    percentile(&lat, 0.5),
                    percentile(&lat, 0.99),
                    lat.last().copied().unwrap_or(0.0)
                ),
                p50(|r| r.queue_ms),
                p50(|r| r.synthesis_ms),
                p50(|r| r.prover_ms),
            );
        }
        let (not_completed, rejected, not_checked) = tally(
            &self
                .sent
                .iter()
                .map(|s| s.row.clone())
                .collect::<Vec<Row>>(),
        );
        println!(
            "failures: {} did not complete, {} rejected by the client-side check, {} still \
             running after the drain (cancelled); {} completed but not checked on the client",
            not_completed,
            rejected,
            self.unfinished.len(),
            not_checked
        );
        for s in self.sent.iter().filter(|s| !s.ok()).take(10) {
            println!(
                "  {} at {:.1} s: {} {}{}",
                s.row.label,
                s.row.done_at.as_secs_f64(),
                s.row.status,
                s.row.error,
                match &s.row.verified {
                    Some(Check::Rejected(why)) => format!(" (rejected: {why})"),
                    _ => String::new(),
                }
            );
        }
        let rss = |s: &GetStatusResponse| human_bytes(s.rss_bytes);
        match self.rss_first_last() {
            Some((a, b)) => println!(
                "daemon RSS: {} before; peaks {} in the first interval under load, {} in the last \
                 ({:+.1} %{}); {} after the drain",
                rss(&self.before),
                human_bytes(a),
                human_bytes(b),
                100.0 * (b as f64 / a.max(1) as f64 - 1.0),
                if (b as f64) <= a as f64 * 1.05 {
                    ": flat within 5 %"
                } else {
                    ": GREW more than 5 %"
                },
                rss(&self.after)
            ),
            None => println!(
                "daemon RSS: {} before, {} after the drain (too short for a trend)",
                rss(&self.before),
                rss(&self.after)
            ),
        }
        println!(
            "daemon: peak RSS {}, peak reserved {} of budget {}",
            human_bytes(self.after.peak_rss_bytes),
            human_bytes(self.after.peak_reserved_bytes),
            human_bytes(self.after.pinned_memory_limit_bytes)
        );
        for line in device_busy_lines(&self.before, &self.at_end, self.duration) {
            println!("daemon over the soak: {line}");
        }
        if self.timing_only {
            println!("WARNING: TIMING-ONLY requests: their proofs DO NOT VERIFY");
        }
    }
}

/// `Err` when a request failed, was rejected, or was still running after the drain.
pub fn soak_failures(r: &SoakReport) -> Result<()> {
    let (failed, unfinished) = (r.failed(), r.unfinished.len());
    if failed + unfinished == 0 {
        return Ok(());
    }
    Err(invalid!(
        "{failed} of {} requests failed and {unfinished} were still running after the drain",
        r.sent.len() + unfinished
    ))
}
