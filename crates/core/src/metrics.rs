//! Observability: stage gauges, per-partition stage timestamps (the bench's timeline), the
//! sampled reserved-bytes curve, counters, and this process's resident set (VmRSS, VmHWM).
use crate::budget::Category;
use crate::request::Priority;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where a device's busy time comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BusySource {
    /// The backend's own timing of its device-exclusive phase (the CUDA prover's kernels,
    /// under its device lock).
    Backend,
    /// The engine's timing of its device interlock, held with a partition in hand until its
    /// `start` returns (one `start` per device at a time).
    Interlock,
    /// Not measured: the backend has no figure of its own and the interlock is off, so the
    /// device's workers may overlap and their time in `start` is no busy time.
    NotMeasured,
}

impl BusySource {
    /// A short name for metrics and the wire (`backend`, `interlock`, `not_measured`).
    pub fn name(self) -> &'static str {
        match self {
            BusySource::Backend => "backend",
            BusySource::Interlock => "interlock",
            BusySource::NotMeasured => "not_measured",
        }
    }

    /// The source named `name` (see [`BusySource::name`]).
    pub fn from_name(name: &str) -> Option<BusySource> {
        [
            BusySource::Backend,
            BusySource::Interlock,
            BusySource::NotMeasured,
        ]
        .into_iter()
        .find(|s| s.name() == name)
    }

    /// What the figure is, for people.
    pub fn describe(self) -> &'static str {
        match self {
            BusySource::Backend => "the device's exclusive phase, timed by the backend",
            BusySource::Interlock => "the engine's device interlock, held per partition",
            BusySource::NotMeasured => {
                "not measured (no device timing from the backend, and the interlock is off)"
            }
        }
    }
}

impl std::fmt::Display for BusySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a partition is in the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// In the scheduler's queue, or waiting for its SRS and memory.
    Queued,
    /// Being synthesized.
    Synthesizing,
    /// Synthesized, in (or waiting to enter) the channel to the provers.
    WaitingForProver,
    /// Inside a backend's `start`, or holding the device interlock for it.
    Proving,
    /// `finish` and the self-check.
    Finalizing,
}

impl Stage {
    /// Every stage, in pipeline order.
    pub const ALL: [Stage; 5] = [
        Stage::Queued,
        Stage::Synthesizing,
        Stage::WaitingForProver,
        Stage::Proving,
        Stage::Finalizing,
    ];

    /// A lowercase name for metrics labels.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Queued => "queued",
            Stage::Synthesizing => "synthesizing",
            Stage::WaitingForProver => "waiting_for_prover",
            Stage::Proving => "proving",
            Stage::Finalizing => "finalizing",
        }
    }

    fn idx(self) -> usize {
        self as usize
    }
}

/// Partitions in each stage now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageGauges {
    /// Queued or waiting for SRS/memory.
    pub queued: u64,
    /// Synthesizing.
    pub synthesizing: u64,
    /// Synthesized, waiting for a prover.
    pub waiting_for_prover: u64,
    /// In a prover's `start`.
    pub proving: u64,
    /// In `finish` or the self-check.
    pub finalizing: u64,
}

/// Stage timestamps of one partition, as offsets from the engine's start.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartitionTimeline {
    /// The job.
    pub job_id: String,
    /// The partition's index in its job.
    pub partition: usize,
    /// Its circuit id.
    pub circuit_id: String,
    /// The job's priority.
    pub priority: Priority,
    /// Entered the queue.
    pub queued: Duration,
    /// Got its SRS and memory reservation.
    pub admitted: Option<Duration>,
    /// Synthesis began.
    pub synth_start: Option<Duration>,
    /// Synthesis ended.
    pub synth_end: Option<Duration>,
    /// The provers' channel accepted it.
    pub sent: Option<Duration>,
    /// A prover's `start` began (device interlock held).
    pub prove_start: Option<Duration>,
    /// `start` returned.
    pub prove_end: Option<Duration>,
    /// `finish` and the self-check done.
    pub finished: Option<Duration>,
    /// Name of the backend that proved it.
    pub device: Option<String>,
    /// `completed`, `failed`, `cancelled`, or empty while running.
    pub outcome: String,
}

/// One sample of the reserved-bytes curve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemorySample {
    /// Offset from the engine's start.
    pub at: Duration,
    /// Reserved bytes in total.
    pub reserved: u64,
    /// Reserved bytes per category.
    pub by_category: Vec<(Category, u64)>,
}

/// A shared, updatable timeline row.
pub type TimelineRow = Arc<Mutex<PartitionTimeline>>;

/// The engine's metrics store.
#[derive(Debug)]
pub struct Metrics {
    /// The engine's start; timestamps are offsets from it.
    pub start: Instant,
    stages: [AtomicI64; 5],
    /// Partitions proved.
    pub partitions_proved: AtomicU64,
    /// Jobs ended per proof kind and outcome, and completed jobs' latency (the status's
    /// totals are their sums).
    pub latency: crate::latency::LatencyBook,
    /// Timeline rows, oldest first; capacity-bounded so a long-lived daemon does not grow.
    rows: Mutex<VecDeque<TimelineRow>>,
    row_cap: usize,
    /// Reserved-bytes samples, capacity-bounded like the rows.
    samples: Mutex<VecDeque<MemorySample>>,
    sample_cap: usize,
    /// Each device's busy time, read once a second (the sampler), the last two minutes.
    busy_readings: Mutex<VecDeque<BusyReading>>,
}

/// The devices' busy times at one moment (`None`: not measured), for busy fractions over
/// a recent window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BusyReading {
    /// Offset from the engine's start.
    pub at: Duration,
    /// Per device, in the engine's order.
    pub busy: Vec<Option<Duration>>,
}

/// Busy readings kept: two minutes at one a second.
const BUSY_READINGS: usize = 120;

impl Metrics {
    /// A store keeping at most `rows` timeline rows and `samples` memory samples.
    pub fn new(rows: usize, samples: usize) -> Metrics {
        Metrics {
            start: Instant::now(),
            stages: Default::default(),
            partitions_proved: AtomicU64::new(0),
            latency: Default::default(),
            rows: Mutex::new(VecDeque::new()),
            row_cap: rows.max(1),
            samples: Mutex::new(VecDeque::new()),
            sample_cap: samples.max(1),
            busy_readings: Mutex::new(VecDeque::new()),
        }
    }

    /// Time since start.
    pub fn now(&self) -> Duration {
        self.start.elapsed()
    }

    /// Moves one partition from stage `from` (if any) to `to` (if any).
    pub fn move_stage(&self, from: Option<Stage>, to: Option<Stage>) {
        if let Some(f) = from {
            self.stages[f.idx()].fetch_sub(1, Ordering::Relaxed);
        }
        if let Some(t) = to {
            self.stages[t.idx()].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Partitions per stage now.
    pub fn gauges(&self) -> StageGauges {
        let g = |s: Stage| self.stages[s.idx()].load(Ordering::Relaxed).max(0) as u64;
        StageGauges {
            queued: g(Stage::Queued),
            synthesizing: g(Stage::Synthesizing),
            waiting_for_prover: g(Stage::WaitingForProver),
            proving: g(Stage::Proving),
            finalizing: g(Stage::Finalizing),
        }
    }

    /// Adds a timeline row.
    pub fn add_row(&self, row: PartitionTimeline) -> TimelineRow {
        let row = Arc::new(Mutex::new(row));
        let mut rows = self.rows.lock();
        if rows.len() >= self.row_cap {
            rows.pop_front();
        }
        rows.push_back(row.clone());
        row
    }

    /// A copy of the timeline.
    pub fn timeline(&self) -> Vec<PartitionTimeline> {
        self.rows.lock().iter().map(|r| r.lock().clone()).collect()
    }

    /// Records a memory sample.
    pub fn add_sample(&self, s: MemorySample) {
        let mut v = self.samples.lock();
        if v.len() >= self.sample_cap {
            v.pop_front();
        }
        v.push_back(s);
    }

    /// Records the devices' busy times (the sampler, once a second).
    pub fn add_busy_reading(&self, r: BusyReading) {
        let mut v = self.busy_readings.lock();
        if v.len() >= BUSY_READINGS {
            v.pop_front();
        }
        v.push_back(r);
    }

    /// The oldest busy reading taken within `window` before `now` (the start of a busy
    /// fraction over about that window), if any.
    pub fn busy_reading_within(&self, now: Duration, window: Duration) -> Option<BusyReading> {
        let since = now.saturating_sub(window);
        self.busy_readings
            .lock()
            .iter()
            .find(|r| r.at >= since)
            .cloned()
    }

    /// A copy of the memory samples.
    pub fn samples(&self) -> Vec<MemorySample> {
        self.samples.lock().iter().cloned().collect()
    }
}

/// Peak resident set size of this process (VmHWM), in bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    proc_status_kib("VmHWM:").map(|k| k * 1024)
}

/// Current resident set size of this process (VmRSS), in bytes.
pub fn current_rss_bytes() -> Option<u64> {
    proc_status_kib("VmRSS:").map(|k| k * 1024)
}

fn proc_status_kib(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
