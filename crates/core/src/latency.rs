//! Per proof kind: jobs ended by outcome, and the latency of completed ones split into queue,
//! synthesis, proving and total. Each phase keeps a cumulative histogram since start (for
//! `/metrics`, where `histogram_quantile` makes any percentile over any window) and its last
//! [`RECENT`] values (for `cuzk status`'s exact p50 and p99 of recent work).
use crate::request::{JobTimings, ProofKind};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::time::Duration;

/// The phases of a job's latency, as `/metrics` labels them.
pub const PHASES: [&str; 4] = ["queue", "synthesis", "prover", "total"];

/// Histogram bucket bounds in seconds (`le`), for proofs from a 2 KiB WinningPoSt (~10 ms)
/// to a backlogged 32 GiB PoRep (minutes).
pub const BUCKETS: [f64; 16] = [
    0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0,
];

/// Completed jobs per kind whose values make the status's percentiles.
pub const RECENT: usize = 1024;

/// How a job ended, for the counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It completed: its latency is recorded.
    Completed,
    /// It failed.
    Failed,
    /// It was cancelled (or timed out).
    Cancelled,
}

#[derive(Debug, Default)]
struct PhaseRecord {
    /// Values at or below each bound of [`BUCKETS`] (not cumulative here).
    buckets: [u64; BUCKETS.len()],
    count: u64,
    sum: Duration,
    recent: VecDeque<Duration>,
}

impl PhaseRecord {
    fn add(&mut self, d: Duration) {
        let s = d.as_secs_f64();
        if let Some(i) = BUCKETS.iter().position(|&b| s <= b) {
            self.buckets[i] += 1;
        }
        self.count += 1;
        self.sum += d;
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(d);
    }

    fn snapshot(&self, phase: &'static str) -> PhaseLatency {
        let mut sorted: Vec<Duration> = self.recent.iter().copied().collect();
        sorted.sort_unstable();
        let mut acc = 0;
        PhaseLatency {
            phase,
            p50: nearest_rank(&sorted, 50),
            p99: nearest_rank(&sorted, 99),
            recent: sorted.len(),
            count: self.count,
            sum: self.sum,
            cumulative: self
                .buckets
                .iter()
                .map(|n| {
                    acc += n;
                    acc
                })
                .collect(),
        }
    }
}

/// The `p`th percentile of `sorted` by nearest rank (zero when empty).
fn nearest_rank(sorted: &[Duration], p: usize) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted[rank - 1]
}

#[derive(Debug, Default)]
struct KindRecord {
    completed: u64,
    failed: u64,
    cancelled: u64,
    phases: [PhaseRecord; 4],
}

/// One phase of one kind's latency.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseLatency {
    /// One of [`PHASES`].
    pub phase: &'static str,
    /// Median of the last [`RECENT`] completed jobs (`recent` of them).
    pub p50: Duration,
    /// 99th percentile of the same.
    pub p99: Duration,
    /// How many values the percentiles come from.
    pub recent: usize,
    /// Completed jobs recorded since start.
    pub count: u64,
    /// Their summed latency.
    pub sum: Duration,
    /// Values at or below each bound of [`BUCKETS`], in its order.
    pub cumulative: Vec<u64>,
}

/// One proof kind's jobs and latency.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindLatency {
    /// The kind.
    pub kind: ProofKind,
    /// Jobs completed since start.
    pub completed: u64,
    /// Jobs failed since start.
    pub failed: u64,
    /// Jobs cancelled (or timed out) since start.
    pub cancelled: u64,
    /// Completed jobs' latency, one entry per [`PHASES`] in that order.
    pub phases: Vec<PhaseLatency>,
}

/// The store: one record per kind seen, in [`ProofKind`] order.
#[derive(Debug, Default)]
pub struct LatencyBook {
    kinds: Mutex<Vec<(ProofKind, KindRecord)>>,
}

impl LatencyBook {
    /// Records a job of `kind` that ended with `outcome` after `t` (its latency counts only
    /// when it completed: a failed job's phases are partial).
    pub fn record(&self, kind: ProofKind, outcome: Outcome, t: &JobTimings) {
        let mut kinds = self.kinds.lock();
        let i = match kinds.binary_search_by(|(k, _)| k.cmp(&kind)) {
            Ok(i) => i,
            Err(i) => {
                kinds.insert(i, (kind, KindRecord::default()));
                i
            }
        };
        let r = &mut kinds[i].1;
        match outcome {
            Outcome::Completed => {
                r.completed += 1;
                for (p, d) in
                    r.phases
                        .iter_mut()
                        .zip([t.queue_wait, t.synthesis, t.prover, t.total])
                {
                    p.add(d);
                }
            }
            Outcome::Failed => r.failed += 1,
            Outcome::Cancelled => r.cancelled += 1,
        }
    }

    /// Every kind seen so far.
    pub fn snapshot(&self) -> Vec<KindLatency> {
        self.kinds
            .lock()
            .iter()
            .map(|(kind, r)| KindLatency {
                kind: *kind,
                completed: r.completed,
                failed: r.failed,
                cancelled: r.cancelled,
                phases: r
                    .phases
                    .iter()
                    .zip(PHASES)
                    .map(|(p, name)| p.snapshot(name))
                    .collect(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timings(ms: u64) -> JobTimings {
        JobTimings {
            queue_wait: Duration::from_millis(ms / 10),
            synthesis: Duration::from_millis(ms / 2),
            prover: Duration::from_millis(ms / 3),
            total: Duration::from_millis(ms),
            ..JobTimings::default()
        }
    }

    /// Percentiles by nearest rank over the last RECENT completed jobs, histograms and
    /// counters since start, each kind on its own, failed and cancelled jobs counted but
    /// kept out of the latency.
    #[test]
    fn kinds_are_counted_apart_and_percentiles_follow_the_recent_jobs() {
        let book = LatencyBook::default();
        for ms in 1..=100 {
            book.record(ProofKind::WINNING_POST, Outcome::Completed, &timings(ms));
        }
        book.record(ProofKind::WINNING_POST, Outcome::Failed, &timings(999_999));
        book.record(ProofKind::POREP, Outcome::Cancelled, &timings(5));
        book.record(ProofKind::POREP, Outcome::Completed, &timings(20_000));
        let s = book.snapshot();
        assert_eq!(s.len(), 2);
        let (porep, winning) = (&s[0], &s[1]);
        assert_eq!(porep.kind, ProofKind::POREP);
        assert_eq!((porep.completed, porep.failed, porep.cancelled), (1, 0, 1));
        assert_eq!((winning.completed, winning.failed), (100, 1));
        let total = &winning.phases[3];
        assert_eq!(total.phase, "total");
        assert_eq!(total.p50, Duration::from_millis(50));
        assert_eq!(total.p99, Duration::from_millis(99));
        assert_eq!(total.count, 100);
        assert_eq!(total.sum, Duration::from_millis(5050));
        // 1..=10 ms at or below 0.01 s, 1..=25 at 0.025, all 100 at 0.1 s and beyond.
        assert_eq!((BUCKETS[0], total.cumulative[0]), (0.01, 10));
        assert_eq!((BUCKETS[1], total.cumulative[1]), (0.025, 25));
        assert_eq!((BUCKETS[3], total.cumulative[3]), (0.1, 100));
        assert_eq!(total.cumulative.last(), Some(&100));
        assert_eq!((BUCKETS[9], porep.phases[3].cumulative[9]), (10.0, 0));
        assert_eq!((BUCKETS[10], porep.phases[3].cumulative[10]), (20.0, 1));
        assert_eq!(porep.phases[1].p50, Duration::from_millis(10_000));

        // Only the last RECENT values make the percentiles; the histogram keeps them all.
        for _ in 0..RECENT {
            book.record(ProofKind::WINNING_POST, Outcome::Completed, &timings(7));
        }
        let w = &book.snapshot()[1].phases[3];
        assert_eq!(
            (w.p50, w.p99),
            (Duration::from_millis(7), Duration::from_millis(7))
        );
        assert_eq!((w.recent, w.count), (RECENT, 100 + RECENT as u64));
        assert_eq!(nearest_rank(&[], 50), Duration::ZERO);
    }
}
