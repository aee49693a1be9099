//! The SRS cache: proving parameters loaded on demand under a reservation, ref-counted,
//! evicted least-recently-used when idle and memory is short, with explicit preload/evict.
//!
//! Eviction under pressure ([`SrsCache::reclaim`]): an entry idle for at least `keep_idle`
//! goes for the waiters' whole backlog; one used more recently goes only for what waiting
//! cannot bring ([`Pressure::unavoidable`]). Reloading a 32 GiB SRS costs minutes (the
//! compile of its matrices, the upload), while the partitions in flight free their working
//! sets within tens of seconds.
//!
//! Tiers: *hot* entries are loaded in memory, ready for a backend; *warm* entries were loaded
//! before and evicted (their file is likely still in the page cache, which the kernel may
//! reclaim, so it is not reserved); *cold* entries are known ids never loaded.
use crate::budget::{MemoryBudget, Pressure, Reservation};
use crate::cpu::CpuPools;
use crate::error::EngineError;
use crate::planner::Planner;
use crate::request::Priority;
use crate::verify::PreparedVk;
use cuzk_groth16::Srs;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Where an SRS lives now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SrsTier {
    /// Loaded and ready for a backend.
    Hot,
    /// Loaded before and evicted; probably still in the page cache.
    Warm,
    /// Known but never loaded.
    Cold,
}

impl SrsTier {
    /// Upper-case name (`HOT`, `WARM`, `COLD`).
    pub fn name(self) -> &'static str {
        match self {
            SrsTier::Hot => "HOT",
            SrsTier::Warm => "WARM",
            SrsTier::Cold => "COLD",
        }
    }
}

/// One SRS as shown in status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SrsEntryStatus {
    /// The circuit id.
    pub circuit_id: String,
    /// Where it lives.
    pub tier: SrsTier,
    /// Bytes it occupies when loaded (known once loaded or sized).
    pub size_bytes: u64,
    /// Partitions (and preloads) using it now.
    pub ref_count: u32,
    /// Loaded TIMING-ONLY parameters (allowed by `[allow] timing_only`): proofs made with
    /// them do not verify.
    pub timing_only: bool,
    /// The host copy of the points was released: the backends hold the SRS in device memory
    /// (`size_bytes` is then what the host still holds).
    pub host_released: bool,
    /// Device bytes each prover backend holds for it (its resident copy; in the engine's
    /// device order), empty where the cache alone is asked (see [`SrsCache::status_with`]).
    pub device_bytes: Vec<u64>,
    /// Device bytes each prover backend holds for the compiled constraint matrices of this
    /// circuit (resident beside the SRS for a/b/c made on the device), in the same order.
    pub matrices_device_bytes: Vec<u64>,
}

/// Makes an SRS resident in every backend's own memory, pinned while it lives; true when all
/// of them did, so its host copy may be released (see `ProverBackend::make_resident`).
pub type MakeResident = Arc<dyn Fn(&Srs) -> bool + Send + Sync>;

/// Makes a compiled circuit's matrices resident in every backend's own memory beside its SRS,
/// pinned while the circuit lives; true when all of them did, so their host copy may be
/// dropped (see `ProverBackend::make_matrices_resident`).
pub type MakeMatricesResident =
    Arc<dyn Fn(&Srs, &cuzk_groth16::CompiledCircuit) -> bool + Send + Sync>;

/// Streams an SRS's points from its file into every backend's own memory (see
/// [`SrsCache::set_stream_residency`]); true when all of them hold it, an error when the file
/// is bad.
pub type StreamResident = Arc<dyn Fn(&str, &Srs) -> Result<bool, EngineError> + Send + Sync>;

/// A loaded SRS with what is derived from it once.
pub struct LoadedSrs {
    /// The circuit id.
    pub circuit_id: String,
    /// The parameters.
    pub srs: Srs,
    /// TIMING-ONLY parameters (see `Config::allow_timing_only`): the self-check and the job's
    /// verification are skipped, and results say the proof does not verify.
    pub timing_only: bool,
    /// Bytes of host points released after every backend made the SRS resident (0 when the
    /// host copy is kept; see `Config::release_host_srs`).
    pub host_released_bytes: u64,
    /// The verifying key prepared for pairings, computed on first use.
    pvk: OnceLock<PreparedVk>,
    /// What the planner derived for this circuit id after loading (see
    /// [`Planner::prepare`]); covered by the entry's reservation.
    pub prepared: Option<crate::planner::PreparedData>,
}

impl fmt::Debug for LoadedSrs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadedSrs")
            .field("circuit_id", &self.circuit_id)
            .field("size_bytes", &self.srs.size_bytes())
            .finish()
    }
}

impl LoadedSrs {
    /// The prepared verifying key.
    pub fn pvk(&self) -> &PreparedVk {
        self.pvk.get_or_init(|| PreparedVk::new(self.srs.vk()))
    }
}

struct Entry {
    loaded: Arc<LoadedSrs>,
    /// Covers the loaded SRS; dropped with the entry.
    reservation: Reservation,
    refs: u32,
    last_used: Instant,
    /// Evict as soon as the last user lets go (an explicit evict arrived while in use).
    evict_when_idle: bool,
}

/// A released SRS (its points on the devices) that holds less host memory than this is not
/// evicted under memory pressure: freeing it cannot help a waiter, and its next use would read
/// the file and upload it to the devices again (seen on the H200: a WinningPoSt SRS of 12.5 KiB
/// evicted 3.5 s after its load by a PoRep load waiting for gigabytes).
const KEEP_RELEASED_BELOW: u64 = 64 << 20;

impl Entry {
    fn keep_under_pressure(&self) -> bool {
        self.loaded.host_released_bytes > 0 && self.reservation.bytes() < KEEP_RELEASED_BELOW
    }
}

struct State {
    hot: HashMap<String, Entry>,
    /// Ids seen before but not loaded now: (tier, last known size).
    known: HashMap<String, (SrsTier, u64)>,
    /// One async lock per circuit id so only one load of an id runs at a time.
    load_locks: HashMap<String, Arc<tokio::sync::Mutex<()>>>,
}

struct Inner {
    budget: MemoryBudget,
    planner: Arc<dyn Planner>,
    /// Whether TIMING-ONLY parameters may be loaded.
    allow_timing_only: bool,
    /// Set when loaded SRSs should leave host memory once the backends hold them.
    make_resident: Option<MakeResident>,
    /// Whether every backend is expected to say yes (each has a device of its own): then an
    /// SRS not yet loaded is expected to hold only its prepared data once loaded.
    expect_release: bool,
    /// Set when a loaded SRS's compiled matrices should leave host memory once the backends
    /// hold them (and its host copy was released): the backends make a/b/c themselves.
    make_matrices_resident: OnceLock<MakeMatricesResident>,
    /// Set when an SRS with a parameter file should stream into the backends' memory
    /// instead of being read into the host's.
    /// With the number of backends it streams into (each holds windows of its own).
    stream_resident: OnceLock<(StreamResident, usize)>,
    /// Loads for urgent work run on the urgent CPU pools.
    cpu: Arc<CpuPools>,
    /// How long an idle entry is kept against the backlog ([`SrsCache::reclaim`]).
    keep_idle: Duration,
    /// A `parking_lot` mutex: held for map updates only, never across an await or a load.
    state: Mutex<State>,
}

/// The cache. Cheap to clone.
#[derive(Clone)]
pub struct SrsCache {
    inner: Arc<Inner>,
}

/// A counted reference to a loaded SRS; while one exists the entry is never evicted.
pub struct SrsHandle {
    loaded: Arc<LoadedSrs>,
    cache: SrsCache,
}

impl fmt::Debug for SrsHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.loaded.fmt(f)
    }
}

impl std::ops::Deref for SrsHandle {
    type Target = LoadedSrs;
    fn deref(&self) -> &LoadedSrs {
        &self.loaded
    }
}

impl Drop for SrsHandle {
    fn drop(&mut self) {
        self.cache.release(&self.loaded.circuit_id);
    }
}

/// What a get did.
#[derive(Debug)]
pub struct Acquired {
    /// The reference.
    pub handle: SrsHandle,
    /// True when it was already loaded.
    pub was_loaded: bool,
    /// Time spent loading (zero if it was loaded).
    pub load_time: Duration,
}

impl SrsCache {
    /// A cache that loads through `planner` under reservations from `budget`; TIMING-ONLY
    /// parameter files are refused unless `allow_timing_only`. With `make_resident`, each
    /// loaded SRS that it makes resident everywhere has its host copy released (and its
    /// reservation shrunk to what the host still holds); `expect_release` (every backend has
    /// a device of its own) says that it will, for an SRS not loaded yet
    /// ([`SrsCache::held_hint`]). A load for HIGH or CRITICAL work parses on `cpu`'s pool for
    /// its priority. An entry idle for less than `keep_idle` is evicted under pressure only
    /// for what waiting cannot bring ([`SrsCache::reclaim`]).
    pub fn new(
        budget: MemoryBudget,
        planner: Arc<dyn Planner>,
        allow_timing_only: bool,
        make_resident: Option<MakeResident>,
        expect_release: bool,
        cpu: Arc<CpuPools>,
        keep_idle: Duration,
    ) -> SrsCache {
        SrsCache {
            inner: Arc::new(Inner {
                budget,
                planner,
                allow_timing_only,
                expect_release: expect_release && make_resident.is_some(),
                make_resident,
                make_matrices_resident: OnceLock::new(),
                stream_resident: OnceLock::new(),
                cpu,
                keep_idle,
                state: Mutex::new(State {
                    hot: HashMap::new(),
                    known: HashMap::new(),
                    load_locks: HashMap::new(),
                }),
            }),
        }
    }

    /// A reclaimer for the budget that evicts idle entries of this cache (holding it weakly,
    /// so budget and cache do not keep each other alive).
    pub fn reclaimer(&self) -> crate::budget::Reclaimer {
        let weak = Arc::downgrade(&self.inner);
        Arc::new(move |pressure| {
            if let Some(inner) = weak.upgrade() {
                SrsCache { inner }.reclaim(pressure);
            }
        })
    }

    fn try_hot(&self, circuit_id: &str) -> Option<SrsHandle> {
        let mut st = self.inner.state.lock();
        let e = st.hot.get_mut(circuit_id)?;
        e.refs += 1;
        e.last_used = Instant::now();
        Some(SrsHandle {
            loaded: e.loaded.clone(),
            cache: self.clone(),
        })
    }

    /// Bytes an SRS holds beside partitions once loaded, if known without loading: a loaded
    /// entry's reservation; for one not loaded, when its host copy is expected to be released
    /// to the devices, what stays on the host (the planner's prepared data), else its size.
    /// A lower bound where the release may not happen: admission checks again after the load.
    pub fn held_hint(&self, circuit_id: &str) -> Option<u64> {
        if let Some(e) = self.inner.state.lock().hot.get(circuit_id) {
            return Some(e.reservation.bytes());
        }
        if self.inner.expect_release {
            return Some(self.inner.planner.prepare_hints(circuit_id).held);
        }
        self.size_hint(circuit_id)
    }

    /// Bytes an SRS occupies or will occupy, if known without loading.
    pub fn size_hint(&self, circuit_id: &str) -> Option<u64> {
        let st = self.inner.state.lock();
        if let Some(e) = st.hot.get(circuit_id) {
            return Some(e.reservation.bytes());
        }
        if let Some(&(_, s)) = st.known.get(circuit_id) {
            if s > 0 {
                return Some(s);
            }
        }
        drop(st);
        self.inner.planner.srs_size_hint(circuit_id).ok()
    }

    /// Returns a reference to the SRS, loading it (under a reservation of its size, waiting
    /// for memory at `priority`) if it is not hot.
    pub async fn get(&self, circuit_id: &str, priority: Priority) -> Result<Acquired, EngineError> {
        if let Some(handle) = self.try_hot(circuit_id) {
            return Ok(Acquired {
                handle,
                was_loaded: true,
                load_time: Duration::ZERO,
            });
        }
        // The id is checked before anything is stored under it: a client's arbitrary string
        // must not leave an entry behind.
        self.inner.planner.srs_size_hint(circuit_id)?;
        let lock = {
            let mut st = self.inner.state.lock();
            st.load_locks
                .entry(circuit_id.to_string())
                .or_default()
                .clone()
        };
        let _unlock = LoadLockEntry {
            cache: self,
            circuit_id,
            lock: &lock,
        };
        let _loading = lock.lock().await;
        if let Some(handle) = self.try_hot(circuit_id) {
            return Ok(Acquired {
                handle,
                was_loaded: true,
                load_time: Duration::ZERO,
            });
        }
        self.load(circuit_id, priority).await
    }

    fn release(&self, circuit_id: &str) {
        let evicted = {
            let mut st = self.inner.state.lock();
            let Some(e) = st.hot.get_mut(circuit_id) else {
                return;
            };
            e.refs = e.refs.saturating_sub(1);
            e.last_used = Instant::now();
            if e.refs == 0 && e.evict_when_idle {
                Self::remove_locked(&mut st, circuit_id)
            } else {
                None
            }
        };
        // Its last user let go of an SRS marked for eviction: freed off the runtime.
        crate::reaper::free(evicted);
        // Memory may be short and this entry just became evictable.
        self.reclaim(self.inner.budget.pressure());
    }

    fn remove_locked(st: &mut State, circuit_id: &str) -> Option<Entry> {
        let e = st.hot.remove(circuit_id)?;
        st.known.insert(
            circuit_id.to_string(),
            (SrsTier::Warm, e.reservation.bytes()),
        );
        Some(e)
    }

    /// Evicts idle entries, least recently used first: those idle for `keep_idle` or longer
    /// until the backlog is covered, the rest only until what waiting cannot bring is.
    /// Released SRSs that hold almost nothing stay ([`KEEP_RELEASED_BELOW`]). Returns the
    /// bytes freed.
    pub fn reclaim(&self, pressure: Pressure) -> u64 {
        if pressure.is_none() {
            return 0;
        }
        let evicted = self.take_idle(Some(pressure));
        let bytes = evicted.iter().map(|e| e.reservation.bytes()).sum();
        // A waiter asking for memory runs this, on the runtime: the points are freed on
        // `cuzk-free`, each entry's before its reservation (see `crate::reaper`).
        crate::reaper::free(evicted);
        bytes
    }

    /// Takes idle entries out of the cache, least recently used first: under `pressure` (a
    /// waiter needs memory) as [`SrsCache::reclaim`] says, without it (shutdown) all of them.
    fn take_idle(&self, pressure: Option<Pressure>) -> Vec<Entry> {
        let mut st = self.inner.state.lock();
        let mut idle: Vec<(Instant, String)> = st
            .hot
            .iter()
            .filter(|(_, e)| e.refs == 0 && !(pressure.is_some() && e.keep_under_pressure()))
            .map(|(k, e)| (e.last_used, k.clone()))
            .collect();
        idle.sort();
        let mut freed = 0;
        let mut out = Vec::new();
        for (last_used, id) in idle {
            let idle_for = last_used.elapsed();
            let stale = idle_for >= self.inner.keep_idle;
            if let Some(p) = pressure {
                // Least recently used first: once one is recent, so are the rest.
                let covers = if stale {
                    p.backlog.max(p.unavoidable)
                } else {
                    p.unavoidable
                };
                if freed >= covers {
                    break;
                }
            }
            if let Some(e) = Self::remove_locked(&mut st, &id) {
                freed += e.reservation.bytes();
                if pressure.is_some() {
                    let why = if stale {
                        "idle for keep_idle or longer"
                    } else {
                        "waiting for the partitions in flight cannot free enough"
                    };
                    tracing::info!(circuit = %id, bytes = e.reservation.bytes(), idle_s = idle_for.as_secs(), why, "SRS evicted under memory pressure");
                }
                out.push(e);
            }
        }
        out
    }

    /// Explicit eviction. Returns (was_loaded, freed_bytes); an entry in use is marked to be
    /// evicted when its last user lets go and reports 0 bytes freed now.
    pub fn evict(&self, circuit_id: &str) -> (bool, u64) {
        let e = {
            let mut st = self.inner.state.lock();
            match st.hot.get_mut(circuit_id) {
                None => return (false, 0),
                Some(e) if e.refs > 0 => {
                    e.evict_when_idle = true;
                    return (true, 0);
                }
                Some(_) => Self::remove_locked(&mut st, circuit_id),
            }
        };
        let freed = e.as_ref().map_or(0, |e| e.reservation.bytes());
        (true, freed)
    }

    /// Evicts every idle entry (shutdown). Returns bytes freed.
    pub fn evict_all_idle(&self) -> u64 {
        let evicted = self.take_idle(None);
        evicted.iter().map(|e| e.reservation.bytes()).sum()
    }

    /// Notes a circuit id as known (cold) for status, e.g. from the preload list.
    pub fn note_known(&self, circuit_id: &str) {
        let mut st = self.inner.state.lock();
        if !st.hot.contains_key(circuit_id) {
            st.known
                .entry(circuit_id.to_string())
                .or_insert((SrsTier::Cold, 0));
        }
    }

    /// Every known entry, hot first, then by id.
    #[cfg(test)]
    pub fn status(&self) -> Vec<SrsEntryStatus> {
        self.status_with(|_| (Vec::new(), Vec::new()))
    }

    /// Every known entry, hot first, then by id, with each loaded one's device bytes (of the
    /// SRS, of its matrices) as `device_bytes` gives them for its SRS (called under the
    /// cache's lock: it must not call back into the cache).
    pub fn status_with(
        &self,
        device_bytes: impl Fn(&Srs) -> (Vec<u64>, Vec<u64>),
    ) -> Vec<SrsEntryStatus> {
        let st = self.inner.state.lock();
        let mut v: Vec<SrsEntryStatus> = st
            .hot
            .iter()
            .map(|(k, e)| {
                let (device_bytes, matrices_device_bytes) = device_bytes(&e.loaded.srs);
                SrsEntryStatus {
                    circuit_id: k.clone(),
                    tier: SrsTier::Hot,
                    size_bytes: e.reservation.bytes(),
                    ref_count: e.refs,
                    timing_only: e.loaded.timing_only,
                    host_released: e.loaded.host_released_bytes > 0,
                    device_bytes,
                    matrices_device_bytes,
                }
            })
            .chain(st.known.iter().map(|(k, &(tier, size))| SrsEntryStatus {
                circuit_id: k.clone(),
                tier,
                size_bytes: size,
                ref_count: 0,
                timing_only: false,
                host_released: false,
                device_bytes: Vec::new(),
                matrices_device_bytes: Vec::new(),
            }))
            .collect();
        v.sort_by(|a, b| (a.tier as u8, &a.circuit_id).cmp(&(b.tier as u8, &b.circuit_id)));
        v
    }
}

/// Removes a circuit id's load lock from the map once the last load that used it is done, so
/// the map holds only ids being loaded now.
struct LoadLockEntry<'a> {
    cache: &'a SrsCache,
    circuit_id: &'a str,
    lock: &'a Arc<tokio::sync::Mutex<()>>,
}

impl Drop for LoadLockEntry<'_> {
    fn drop(&mut self) {
        let mut st = self.cache.inner.state.lock();
        let ours = st
            .load_locks
            .get(self.circuit_id)
            .is_some_and(|l| Arc::ptr_eq(l, self.lock));
        // The map's reference and ours: nobody else waits on it.
        if ours && Arc::strong_count(self.lock) == 2 {
            st.load_locks.remove(self.circuit_id);
        }
    }
}

mod load;
mod release;
mod stream;
pub(crate) use stream::stream_to_backends;
#[cfg(test)]
mod tests;
