//! Engine configuration: `cuzk.toml` → a validated [`Config`], with defaults derived from the
//! machine (memory limit incl. cgroups, CPU count).
//!
//! ```toml
//! [memory]
//! budget = "64GiB"          # default: min(MemTotal, cgroup limits) - margin
//! margin = "2GiB"           # default: 10% of the limit, at least 512MiB
//! request_buffer = "1GiB"   # default: budget/16, at most 4GiB
//! urgent_reserve = "1GiB"   # for HIGH/CRITICAL only; default: budget/16, at most 1GiB
//!
//! [pipeline]
//! synthesis_concurrency = 2 # default: CPU count / 8, from 2 to 8
//! urgent_threads = 8        # CPU pools of HIGH and of CRITICAL work (0: none); default: CPUs
//! prover_workers_per_device = 2
//! prover_interlock = true
//! quarantine_after = 3      # device errors in a row before a device is benched
//! channel_capacity = 2      # default: prover_workers_per_device
//! reuse_buffers = 4         # finished partitions' buffers kept for the next synthesis
//! finalizers = 2
//! self_verify = true
//! max_queued_jobs = 1024
//! result_retention = "10m"
//!
//! [srs]
//! params_dir = "/var/tmp/filecoin-proof-parameters"
//! preload = ["porep-32g"]
//! release_host_copy = true  # drop an SRS's host copy (and its matrices') once every device holds it in VRAM
//! keep_idle = "10m"         # an idle SRS used within this is evicted only when waiting can't help
//! device_abc = true         # GPU provers make a/b/c from the compiled matrices in VRAM
//! compile_window_post = true   # WindowPoSt through compiled matrices and the native witness
//! compiled_cache = true     # keep compiled matrices on disk between starts
//! compiled_cache_dir = "/var/tmp/filecoin-proof-parameters/cuzk-compiled"  # default: params_dir/cuzk-compiled
//!
//! [metrics]
//! sample_interval = "10ms"
//! timeline_capacity = 100000
//!
//! [allow]
//! synthetic = false         # synthetic circuits (benchmarks, tests): off in a daemon
//! timing_only = false       # TIMING-ONLY parameters (benchmarks): refused unless true
//! ```
use crate::error::EngineError;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The validated engine configuration. Build it with [`Config::default_for_machine`],
/// [`Config::from_toml_str`] or [`Config::load`]; fields may be adjusted before
/// [`crate::Engine::new`], which validates again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The memory budget in bytes: every SRS, working set and queued payload is reserved from
    /// it. Default: the machine's real limit (min of MemTotal, cgroup v2 `memory.max`,
    /// cgroup v1 limit) minus `margin_bytes`.
    pub budget_bytes: u64,
    /// Memory left outside the budget for code, allocator slack and small allocations; only
    /// used to derive the default budget. Default: 10% of the limit, at least 512 MiB.
    pub margin_bytes: u64,
    /// Bytes of the budget set aside for request payloads, queued and arriving (twice while
    /// they arrive); a message that does not fit now waits for room (its sender held back),
    /// one larger than all of it fails with `QueueFull`. Default: budget/16, at most
    /// [`MAX_DEFAULT_REQUEST_BUFFER`] (4 GiB): inside an 8 GiB cgroup ~0.45 GiB, room for
    /// three 32 GiB PoRep C1 outputs (~52 MB each) arriving at once, or eight queued, while
    /// the GPU needs a new one every ~18 s (`bench/RESULTS.md`, "Lean start").
    pub request_buffer_bytes: u64,
    /// The last bytes of the budget, which only HIGH and CRITICAL work may reserve: a
    /// WinningPoSt (its SRS load ≈ 0.2 GB and working set ≈ 0.1 GB at 32 GiB) finds memory at
    /// once while bulk partitions fill the rest. `None` (the default): budget/16, at most
    /// [`MAX_DEFAULT_URGENT_RESERVE`] (1 GiB), of whatever the budget is at engine start
    /// ([`Config::urgent_reserve`]).
    pub urgent_reserve_bytes: Option<u64>,
    /// Partitions synthesized at once, independent of memory; guards against memory-bandwidth
    /// thrash. Each partition's witness runs on every core (its challenges or sectors in
    /// parallel), so more partitions at once only finish later together: at 32 GiB PoRep on
    /// the H200's 16 cores, 2 kept the GPU busy 93.5 % of a c=2 j=4 run, 4 89.9 %, 16 82.6 %
    /// (`bench/RESULTS.md`). Default: the CPU count / 8, from 2 to 8
    /// ([`default_synthesis_concurrency`]).
    pub synthesis_concurrency: usize,
    /// Threads of each of the two CPU pools that HIGH and CRITICAL work runs on (their
    /// partitions' synthesis and the SRS loads they wait for), apart from rayon's global pool
    /// where bulk work runs its parallel witnesses: a WinningPoSt's parallel code never queues
    /// behind a PoRep partition's tasks, nor behind a WindowPoSt's. The threads sleep while no
    /// urgent work runs. 0: urgent work shares the global pool. Default: the CPU count.
    pub urgent_threads: usize,
    /// Prover workers per backend (device); two let one's host-side preparation overlap the
    /// other's heavy phase. Default 2.
    pub prover_workers_per_device: usize,
    /// Hold a per-device lock for the whole of `start`, so one worker's heavy phase runs while
    /// the device's other worker waits with its partition already in hand. Turn off only for
    /// a backend that locks the device itself around its kernels (its host-side preparation
    /// inside `start` then overlaps the other partition's kernels). Default true.
    pub prover_interlock: bool,
    /// Device errors in a row (failed `start` or `finish`, a panicking backend; not
    /// self-check failures) after which a device is quarantined: it takes no more work while
    /// another device is healthy, and GetStatus and `/healthz` say so. A partition that meets
    /// a device error is synthesized again and retried once, on another device when there is
    /// one. Default 3.
    pub quarantine_after: u32,
    /// Synthesized partitions below HIGH priority that may wait for a prover at once (the
    /// provers' queue; HIGH and CRITICAL ones always enter it, ahead of the rest). A
    /// synthesis worker keeps its permit and reservation until the queue accepts its
    /// partition. Default: the number of prover workers per device.
    pub channel_capacity: usize,
    /// Finished partitions whose buffers (a/b/c, assignments) are kept for the next
    /// synthesis of the same circuit id when the backend hands them back
    /// (`ProverBackend::start_reusing`), so a new partition does not fault in and later unmap
    /// gigabytes. Each kept set stays reserved in the budget, and the budget frees them first
    /// when memory is short. 0 turns reuse off. Default 4.
    pub reuse_buffers: usize,
    /// Threads running `finish` and the self-check, off the provers' path. Default 2.
    pub finalizers: usize,
    /// Verify every partition proof against the SRS's verifying key before returning it.
    /// Default true.
    pub self_verify: bool,
    /// Jobs queued or running at once; more fail with `QueueFull`. Default 1024.
    pub max_queued_jobs: usize,
    /// How long a finished job's outcome stays available to `wait` and idempotent resubmits.
    /// Default 10 minutes.
    pub result_retention: Duration,
    /// Where parameter files live. Default: `$FIL_PROOFS_PARAMETER_CACHE` or
    /// `/var/tmp/filecoin-proof-parameters`.
    pub params_dir: PathBuf,
    /// Circuit ids to load at start, one after the other in this order, so that where the
    /// devices cannot hold them all the first listed take the room (a request's own load does
    /// not wait for them).
    pub preload: Vec<String>,
    /// Once every prover backend holds a loaded SRS in memory of its own (a GPU's VRAM, pinned
    /// there while the SRS is loaded; `ProverBackend::make_resident`), drop the host copy of its
    /// points and give its bytes back to the budget; the few points the host still needs are
    /// read from the parameter file. Needs parameters read from a file and backends that can
    /// (the CPU prover cannot, so nothing is released beside one). Where every backend has
    /// memory of its own and the planner streams its file (`Planner::load_srs_header`), the
    /// points go from the file into the backends a window at a time
    /// (`ProverBackend::begin_resident`) and the host never holds them all, not even while
    /// loading. With `device_abc` in force,
    /// the circuit's compiled matrices follow (`ProverBackend::make_matrices_resident`).
    /// Default true.
    pub release_host_srs: bool,
    /// When every prover backend makes a/b/c itself from the compiled constraint matrices
    /// (`ProverBackend::evaluates_abc`: the CUDA backend, which keeps them in VRAM beside the
    /// SRS), synthesis defers a/b/c to it: the host holds only the witness. Off: a/b/c are
    /// evaluated on the host and uploaded (for comparisons). Default true.
    pub device_abc: bool,
    /// Compile WindowPoSt's constraint matrices when its SRS loads, like the other kinds', so
    /// its partitions are synthesized witness-only (natively, every sector on every core) and
    /// a/b/c come from the matrices (on the GPU with `device_abc`). Costs the matrices' bytes
    /// (9.98 GiB at 32 GiB: on the host during the load, then in VRAM beside a GPU) and their
    /// compile at load time (41 s on the H200); a 32 GiB partition's witness then takes 1.72 s
    /// on its 16 cores instead of 44 s recorded in full (bench/RESULTS.md). Default true.
    pub compile_window_post: bool,
    /// Keep each circuit's compiled matrices on disk (`cuzk_filecoin::compiled::
    /// open_or_compile`), so a start or a reload opens them (and streams them to the devices)
    /// instead of compiling the blank circuit again (PoRep is compiled from one challenge
    /// straight into this cache, porep-32g in seconds; the other kinds walk their whole blank
    /// circuit). A stale, short or damaged file is compiled again with one log line, never
    /// used; a directory that cannot be written costs only the next load's compile (PoRep's
    /// then in host memory, its whole matrices reserved). Default true.
    pub compiled_cache: bool,
    /// Where [`Config::compiled_cache`] keeps them. Default: `params_dir/cuzk-compiled`.
    pub compiled_cache_dir: Option<PathBuf>,
    /// How long an idle SRS is kept against memory pressure: one used within it is evicted
    /// only when the partitions in flight, once finished, would still not free what the first
    /// waiter needs (its reload at 32 GiB costs minutes: the compile of its matrices, the
    /// upload); one idle longer goes for the whole backlog of waiters. Default 10 minutes.
    pub srs_keep_idle: Duration,
    /// How often the reserved-bytes curve is sampled for the timeline. Default 10 ms.
    pub sample_interval: Duration,
    /// Partitions kept in the timeline (oldest dropped first). Default 100 000.
    pub timeline_capacity: usize,
    /// Accept `ProofKind::Synthetic` requests and synthetic circuit ids (`synthetic:…`,
    /// `sha256:…`). They exist for benchmarks and tests: their SRS comes from an insecure
    /// setup generated on first use, and a spec string chooses the work's size. Off by
    /// default, so a daemon's clients cannot make it generate parameters or allocate by
    /// spec. Default false.
    pub allow_synthetic: bool,
    /// Whether TIMING-ONLY parameter files (γ = δ = the G2 generator; see
    /// `cuzk_groth16::VerifyingKey::is_timing_only`) may be loaded (`[allow] timing_only`).
    /// Off by default: such a file is refused at load (FAILED_PRECONDITION). When on, proofs
    /// made with one skip the self-check and the job's verification, and each such result,
    /// the log and the SRS's status say that it does not verify.
    pub allow_timing_only: bool,
}

/// The default request buffer's cap. A 32 GiB PoRep C1 request is about 52 MB of JSON
/// (51,589,313 bytes for the shape-true one `cuzk gen testdata --sector-size 32GiB
/// --timing-only` writes), and a message counts twice while it arrives (the transport's buffer
/// and the decoded copy): the seeds' load of 30 at once needs about 3.1 GB. At 1 GiB, the cap
/// until issue 12's H200 run, 10 of 30 such submissions were refused.
pub const MAX_DEFAULT_REQUEST_BUFFER: u64 = 4 * GIB;

/// The default request buffer is the budget over this (at most [`MAX_DEFAULT_REQUEST_BUFFER`]).
/// At 8 (until session 22) the requests waiting in an 8 GiB cgroup at c=30 took the daemon's
/// peak RSS to 2.34 GB; at 16 it was 1.98 GB with the GPU still 96.5 % busy (H200).
pub const REQUEST_BUFFER_SHARE: u64 = 16;

/// The default urgent reserve's cap: a WinningPoSt 32 GiB needs ≈ 0.3 GB while its SRS loads.
pub const MAX_DEFAULT_URGENT_RESERVE: u64 = GIB;

/// The most threads `pipeline.urgent_threads` may ask for.
const MAX_URGENT_THREADS: usize = 1024;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// What the machine offers, as detected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MachineLimits {
    /// `MemTotal` from `/proc/meminfo`, if readable.
    pub mem_total: Option<u64>,
    /// The cgroup (v2 or v1) memory limit, if one is set.
    pub cgroup_limit: Option<u64>,
    /// Logical CPUs.
    pub cpus: usize,
}

impl MachineLimits {
    /// Reads `/proc` and `/sys/fs/cgroup`.
    pub fn detect() -> MachineLimits {
        MachineLimits {
            mem_total: read_mem_total(),
            cgroup_limit: read_cgroup_limit(),
            cpus: num_cpus::get().max(1),
        }
    }

    /// The memory the process may really use: the minimum of what is known (8 GiB if nothing is).
    pub fn memory_limit(&self) -> u64 {
        match (self.mem_total, self.cgroup_limit) {
            (Some(m), Some(c)) => m.min(c),
            (Some(m), None) => m,
            (None, Some(c)) => c,
            (None, None) => 8 * GIB,
        }
    }
}

fn read_mem_total() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * KIB)
}

fn parse_limit(s: &str) -> Option<u64> {
    let s = s.trim();
    if s == "max" {
        return None;
    }
    let v: u64 = s.parse().ok()?;
    // cgroup v1 reports "no limit" as a huge page-aligned number.
    (v < (1u64 << 62)).then_some(v)
}

fn read_cgroup_limit() -> Option<u64> {
    let mut limits = Vec::new();
    // The process's own cgroup (v2 `0::/path`, v1 `N:memory:/path`), then the root mounts.
    if let Ok(cg) = std::fs::read_to_string("/proc/self/cgroup") {
        for line in cg.lines() {
            let mut f = line.splitn(3, ':');
            let (controllers, path) = match (f.next(), f.next(), f.next()) {
                (Some(_), Some(b), Some(c)) => (b, c.trim_start_matches('/')),
                _ => continue,
            };
            let file = if controllers.is_empty() {
                Path::new("/sys/fs/cgroup").join(path).join("memory.max")
            } else if controllers.split(',').any(|c| c == "memory") {
                Path::new("/sys/fs/cgroup/memory")
                    .join(path)
                    .join("memory.limit_in_bytes")
            } else {
                continue;
            };
            if let Some(v) = std::fs::read_to_string(file)
                .ok()
                .and_then(|s| parse_limit(&s))
            {
                limits.push(v);
            }
        }
    }
    for p in [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ] {
        if let Some(v) = std::fs::read_to_string(p)
            .ok()
            .and_then(|s| parse_limit(&s))
        {
            limits.push(v);
        }
    }
    limits.into_iter().min()
}

/// Parses a size: `"64GiB"`, `"512 MiB"`, `"1.5GiB"`, `"4KB"` (decimal), `"1000"` (bytes).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit = unit.trim();
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kib" | "k" => KIB,
        "mib" | "m" => MIB,
        "gib" | "g" => GIB,
        "tib" | "t" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        _ => {
            return Err(format!(
                "`{s}`: unknown size unit `{unit}` (use B, KiB, MiB, GiB, TiB)"
            ))
        }
    };
    if num.is_empty() {
        return Err(format!("`{s}`: expected a number, e.g. \"64GiB\""));
    }
    if let Ok(v) = num.parse::<u64>() {
        return v
            .checked_mul(mult)
            .ok_or_else(|| format!("`{s}`: too large"));
    }
    let f: f64 = num
        .parse()
        .map_err(|_| format!("`{s}`: `{num}` is not a number"))?;
    let v = f * mult as f64;
    if !v.is_finite() || v < 0.0 || v >= u64::MAX as f64 {
        return Err(format!("`{s}`: out of range"));
    }
    Ok(v as u64)
}

/// Formats bytes with a binary unit (`1.50 GiB`).
pub fn format_size(bytes: u64) -> String {
    let b = bytes as f64;
    if bytes >= GIB {
        format!("{:.2} GiB", b / GIB as f64)
    } else if bytes >= MIB {
        format!("{:.2} MiB", b / MIB as f64)
    } else if bytes >= KIB {
        format!("{:.2} KiB", b / KIB as f64)
    } else {
        format!("{bytes} B")
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    memory: RawMemory,
    #[serde(default)]
    pipeline: RawPipeline,
    #[serde(default)]
    srs: RawSrs,
    #[serde(default)]
    metrics: RawMetrics,
    #[serde(default)]
    allow: RawAllow,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawMemory {
    budget: Option<String>,
    margin: Option<String>,
    request_buffer: Option<String>,
    urgent_reserve: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawPipeline {
    synthesis_concurrency: Option<usize>,
    urgent_threads: Option<usize>,
    prover_workers_per_device: Option<usize>,
    prover_interlock: Option<bool>,
    quarantine_after: Option<u32>,
    channel_capacity: Option<usize>,
    reuse_buffers: Option<usize>,
    finalizers: Option<usize>,
    self_verify: Option<bool>,
    max_queued_jobs: Option<usize>,
    result_retention: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSrs {
    params_dir: Option<PathBuf>,
    preload: Option<Vec<String>>,
    release_host_copy: Option<bool>,
    keep_idle: Option<String>,
    device_abc: Option<bool>,
    compile_window_post: Option<bool>,
    compiled_cache: Option<bool>,
    compiled_cache_dir: Option<PathBuf>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawAllow {
    synthetic: Option<bool>,
    timing_only: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawMetrics {
    sample_interval: Option<String>,
    timeline_capacity: Option<usize>,
}

fn parse_duration(field: &str, s: &str) -> Result<Duration, EngineError> {
    humantime::parse_duration(s.trim())
        .map_err(|e| EngineError::Config(format!("{field} = \"{s}\": {e} (write e.g. \"5m\")")))
}

fn size_field(field: &str, s: &str) -> Result<u64, EngineError> {
    parse_size(s).map_err(|e| EngineError::Config(format!("{field}: {e}")))
}

/// The default `synthesis_concurrency` for `cpus` cores: a couple of partitions keep the
/// cores busy while one waits on its serial parts, and a GPU fed; many cores (several GPUs'
/// worth) get up to 8.
pub fn default_synthesis_concurrency(cpus: usize) -> usize {
    (cpus / 8).clamp(2, 8)
}

impl Config {
    /// Where compiled circuits are kept, or `None` when [`Config::compiled_cache`] is off.
    pub fn compiled_cache_path(&self) -> Option<PathBuf> {
        self.compiled_cache.then(|| {
            self.compiled_cache_dir
                .clone()
                .unwrap_or_else(|| self.params_dir.join("cuzk-compiled"))
        })
    }

    /// Defaults derived from this machine.
    pub fn default_for_machine() -> Config {
        Config::defaults_for(&MachineLimits::detect(), None, None)
    }

    /// Defaults for given machine limits, with an optional budget/margin override.
    pub fn defaults_for(m: &MachineLimits, budget: Option<u64>, margin: Option<u64>) -> Config {
        let limit = m.memory_limit();
        let margin_bytes = margin.unwrap_or_else(|| (limit / 10).max(512 * MIB));
        let budget_bytes =
            budget.unwrap_or_else(|| limit.saturating_sub(margin_bytes).max(64 * MIB));
        let params_dir = std::env::var_os("FIL_PROOFS_PARAMETER_CACHE")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/var/tmp/filecoin-proof-parameters"));
        Config {
            budget_bytes,
            margin_bytes,
            request_buffer_bytes: (budget_bytes / REQUEST_BUFFER_SHARE)
                .min(MAX_DEFAULT_REQUEST_BUFFER),
            urgent_reserve_bytes: None,
            synthesis_concurrency: default_synthesis_concurrency(m.cpus),
            urgent_threads: m.cpus,
            prover_workers_per_device: 2,
            prover_interlock: true,
            quarantine_after: 3,
            channel_capacity: 2,
            reuse_buffers: 4,
            finalizers: 2,
            self_verify: true,
            max_queued_jobs: 1024,
            result_retention: Duration::from_secs(600),
            params_dir,
            preload: Vec::new(),
            release_host_srs: true,
            device_abc: true,
            compile_window_post: true,
            compiled_cache: true,
            compiled_cache_dir: None,
            srs_keep_idle: Duration::from_secs(600),
            sample_interval: Duration::from_millis(10),
            timeline_capacity: 100_000,
            allow_synthetic: false,
            allow_timing_only: false,
        }
    }

    /// Parses and validates TOML; unset fields take machine-derived defaults.
    pub fn from_toml_str(s: &str) -> Result<Config, EngineError> {
        let raw: RawConfig = toml::from_str(s).map_err(|e| EngineError::Config(e.to_string()))?;
        let budget = raw
            .memory
            .budget
            .as_deref()
            .map(|s| size_field("memory.budget", s))
            .transpose()?;
        let margin = raw
            .memory
            .margin
            .as_deref()
            .map(|s| size_field("memory.margin", s))
            .transpose()?;
        let mut c = Config::defaults_for(&MachineLimits::detect(), budget, margin);
        if let Some(s) = raw.memory.request_buffer.as_deref() {
            c.request_buffer_bytes = size_field("memory.request_buffer", s)?;
        }
        if let Some(s) = raw.memory.urgent_reserve.as_deref() {
            c.urgent_reserve_bytes = Some(size_field("memory.urgent_reserve", s)?);
        }
        let p = raw.pipeline;
        if let Some(v) = p.synthesis_concurrency {
            c.synthesis_concurrency = v;
        }
        if let Some(v) = p.urgent_threads {
            c.urgent_threads = v;
        }
        if let Some(v) = p.prover_workers_per_device {
            c.prover_workers_per_device = v;
            c.channel_capacity = v;
        }
        if let Some(v) = p.prover_interlock {
            c.prover_interlock = v;
        }
        if let Some(v) = p.quarantine_after {
            c.quarantine_after = v;
        }
        if let Some(v) = p.channel_capacity {
            c.channel_capacity = v;
        }
        if let Some(v) = p.reuse_buffers {
            c.reuse_buffers = v;
        }
        if let Some(v) = p.finalizers {
            c.finalizers = v;
        }
        if let Some(v) = p.self_verify {
            c.self_verify = v;
        }
        if let Some(v) = p.max_queued_jobs {
            c.max_queued_jobs = v;
        }
        if let Some(s) = p.result_retention.as_deref() {
            c.result_retention = parse_duration("pipeline.result_retention", s)?;
        }
        if let Some(d) = raw.srs.params_dir {
            c.params_dir = d;
        }
        if let Some(v) = raw.srs.preload {
            c.preload = v;
        }
        if let Some(v) = raw.srs.release_host_copy {
            c.release_host_srs = v;
        }
        if let Some(v) = raw.srs.device_abc {
            c.device_abc = v;
        }
        if let Some(v) = raw.srs.compile_window_post {
            c.compile_window_post = v;
        }
        if let Some(v) = raw.srs.compiled_cache {
            c.compiled_cache = v;
        }
        if let Some(d) = raw.srs.compiled_cache_dir {
            c.compiled_cache_dir = Some(d);
        }
        if let Some(s) = raw.srs.keep_idle.as_deref() {
            c.srs_keep_idle = parse_duration("srs.keep_idle", s)?;
        }
        if let Some(s) = raw.metrics.sample_interval.as_deref() {
            c.sample_interval = parse_duration("metrics.sample_interval", s)?;
        }
        if let Some(v) = raw.metrics.timeline_capacity {
            c.timeline_capacity = v;
        }
        if let Some(v) = raw.allow.synthetic {
            c.allow_synthetic = v;
        }
        if let Some(v) = raw.allow.timing_only {
            c.allow_timing_only = v;
        }
        c.validate()?;
        Ok(c)
    }

    /// Reads and validates a TOML file.
    pub fn load(path: &Path) -> Result<Config, EngineError> {
        let s = std::fs::read_to_string(path)
            .map_err(|e| EngineError::Config(format!("{}: {e}", path.display())))?;
        Config::from_toml_str(&s).map_err(|e| match e {
            EngineError::Config(m) => EngineError::Config(format!("{}: {m}", path.display())),
            other => other,
        })
    }

    /// Sets the budget and keeps the request carve-out within its default share (budget/16,
    /// at most what it was), so a smaller budget does not leave a carve-out larger than itself.
    pub fn set_budget(&mut self, budget_bytes: u64) {
        self.budget_bytes = budget_bytes;
        self.request_buffer_bytes = self
            .request_buffer_bytes
            .min(budget_bytes / REQUEST_BUFFER_SHARE);
    }

    /// The urgent reserve in bytes: as configured, else budget/16 (at most 1 GiB).
    pub fn urgent_reserve(&self) -> u64 {
        self.urgent_reserve_bytes
            .unwrap_or((self.budget_bytes / 16).min(MAX_DEFAULT_URGENT_RESERVE))
    }

    /// Checks the fields are usable.
    pub fn validate(&self) -> Result<(), EngineError> {
        let bad = |m: &str| Err(EngineError::Config(m.to_string()));
        if self.budget_bytes == 0 {
            return bad("memory.budget must be > 0");
        }
        if self.request_buffer_bytes >= self.budget_bytes {
            return bad("memory.request_buffer must be smaller than memory.budget");
        }
        if self
            .request_buffer_bytes
            .saturating_add(self.urgent_reserve())
            >= self.budget_bytes
        {
            return bad(
                "memory.request_buffer and memory.urgent_reserve together must be smaller \
                 than memory.budget",
            );
        }
        if self.synthesis_concurrency == 0 {
            return bad("pipeline.synthesis_concurrency must be >= 1");
        }
        if self.urgent_threads > MAX_URGENT_THREADS {
            return bad("pipeline.urgent_threads must be at most 1024");
        }
        if self.prover_workers_per_device == 0 {
            return bad("pipeline.prover_workers_per_device must be >= 1");
        }
        if self.channel_capacity == 0 {
            return bad("pipeline.channel_capacity must be >= 1");
        }
        if self.quarantine_after == 0 {
            return bad("pipeline.quarantine_after must be >= 1");
        }
        if self.finalizers == 0 {
            return bad("pipeline.finalizers must be >= 1");
        }
        if self.max_queued_jobs == 0 {
            return bad("pipeline.max_queued_jobs must be >= 1");
        }
        if self.sample_interval.is_zero() {
            return bad("metrics.sample_interval must be > 0");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
