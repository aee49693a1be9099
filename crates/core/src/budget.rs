//! The process-wide memory budget: byte-level, RAII reservations, fair priority-aware acquire.
//!
//! Every large allocation of the engine (an SRS, a partition's working set, queued request
//! payloads) is covered by a [`Reservation`] taken from one [`MemoryBudget`] *before* the memory
//! is allocated. Reservations shrink as buffers are freed and travel with the data through the
//! pipeline's channels; dropping one gives its bytes back.
//!
//! Fairness: waiters are served strictly in order of (priority, arrival). A waiter that does not
//! fit blocks everyone behind it, so a large request is never starved by a stream of small ones.
//!
//! The urgent reserve: the last bytes ([`MemoryBudget::with_urgent_reserve`]) are for HIGH and
//! CRITICAL acquires only ([`MemoryBudget::limit_for`]), so a WinningPoSt arriving while bulk
//! work fills the budget does not wait for a bulk partition to finish (on the H200 under a
//! 32 GiB PoRep load of 30 jobs it waited 7 s for memory before this).
//!
//! Reclaiming: a waiter that does not fit hands the reclaimer a [`Pressure`]. Its `backlog`
//! (what every waiter together lacks) frees what is cheap to make again; its `unavoidable`
//! (what the first in line lacks even once every working set in flight has come back) frees
//! what waiting cannot replace, such as a recently used SRS, whose reload at 32 GiB costs
//! minutes. When a grant or a release leaves the head with an unavoidable shortfall, a
//! waiter is woken to reclaim again, so a waiter that only an eviction can serve never waits
//! for an acquire that will not come.
use crate::error::BudgetError;
use crate::request::Priority;
use parking_lot::Mutex;
use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use tokio::sync::oneshot;

/// What a reservation covers; reported separately in status and metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// Loaded proving parameters.
    Srs,
    /// Partition working sets (assignments, a/b/c, prover scratch, pending proofs).
    WorkingSet,
    /// Queued request payloads (vanilla proofs).
    Requests,
}

impl Category {
    /// Every category, in reporting order.
    pub const ALL: [Category; 3] = [Category::Srs, Category::WorkingSet, Category::Requests];

    /// A short lowercase name (`srs`, `working_set`, `requests`) for metrics labels.
    pub fn name(self) -> &'static str {
        match self {
            Category::Srs => "srs",
            Category::WorkingSet => "working_set",
            Category::Requests => "requests",
        }
    }

    fn idx(self) -> usize {
        match self {
            Category::Srs => 0,
            Category::WorkingSet => 1,
            Category::Requests => 2,
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What memory pressure asks of the reclaimer, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pressure {
    /// What every waiter together needs beyond what is free (below the lowest waiting
    /// priority's limit): worth freeing what is cheap to make again (kept partition buffers)
    /// and what has been idle a long time.
    pub backlog: u64,
    /// What the first waiter in line needs beyond what is free plus the working sets in flight
    /// (those not held by a waiter), which come back as their partitions end. Waiting cannot
    /// provide it: something idle must go now, however recently it was used.
    pub unavoidable: u64,
}

impl Pressure {
    /// Whether anything is asked for.
    pub fn is_none(self) -> bool {
        self.backlog == 0 && self.unavoidable == 0
    }
}

/// Called (outside the budget's lock) with the [`Pressure`] when a waiter cannot be served;
/// the engine's frees kept buffers and evicts idle SRSs.
pub type Reclaimer = Arc<dyn Fn(Pressure) + Send + Sync>;

/// A point-in-time view of the budget.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BudgetSnapshot {
    /// The whole budget in bytes.
    pub total: u64,
    /// Bytes reserved now.
    pub reserved: u64,
    /// Bytes reserved now, per category (in [`Category::ALL`] order).
    pub by_category: Vec<(Category, u64)>,
    /// The highest `reserved` seen since start (or the last [`MemoryBudget::reset_peak`]).
    pub peak: u64,
    /// Per category, the highest value seen for that category alone.
    pub peak_by_category: Vec<(Category, u64)>,
    /// Number of acquires waiting.
    pub waiting: usize,
    /// Bytes the waiting acquires ask for, together.
    pub waiting_bytes: u64,
}

type WaiterKey = (Reverse<Priority>, u64);

struct Waiter {
    bytes: u64,
    category: Category,
    /// Bytes of a working set the waiter holds while it waits ([`MemoryBudget::acquire_more`]):
    /// they do not come back until it is served.
    held: u64,
    tx: oneshot::Sender<Result<(), BudgetError>>,
}

struct State {
    reserved: u64,
    by_cat: [u64; 3],
    peak: u64,
    peak_by_cat: [u64; 3],
    /// Ordered by (priority descending, arrival): the first entry is served first.
    waiters: BTreeMap<WaiterKey, Waiter>,
    next_seq: u64,
    closed: bool,
}

struct Inner {
    total: u64,
    /// Bytes below `total` that only HIGH and CRITICAL acquires may take.
    urgent_reserve: u64,
    /// A `parking_lot` mutex, not tokio's: critical sections are a few integer updates and
    /// never await, and `Drop` of a reservation must be able to take it synchronously.
    state: Mutex<State>,
    /// Set once by the engine; `None` in a bare budget.
    reclaimer: Mutex<Option<Reclaimer>>,
    /// Woken (one waiter) when a grant or a release leaves the head with an unavoidable
    /// shortfall: that waiter runs the reclaimer again.
    reclaim_again: tokio::sync::Notify,
}

/// The byte budget. Cheap to clone (an `Arc` inside).
#[derive(Clone)]
pub struct MemoryBudget {
    inner: Arc<Inner>,
}

impl fmt::Debug for MemoryBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.snapshot();
        f.debug_struct("MemoryBudget")
            .field("total", &s.total)
            .field("reserved", &s.reserved)
            .finish()
    }
}

impl State {
    fn add(&mut self, bytes: u64, cat: Category) {
        self.reserved += bytes;
        self.by_cat[cat.idx()] += bytes;
        self.peak = self.peak.max(self.reserved);
        let i = cat.idx();
        self.peak_by_cat[i] = self.peak_by_cat[i].max(self.by_cat[i]);
    }

    fn sub(&mut self, bytes: u64, cat: Category) {
        self.reserved = self.reserved.saturating_sub(bytes);
        let i = cat.idx();
        self.by_cat[i] = self.by_cat[i].saturating_sub(bytes);
    }

    /// Serves waiters in order while the head fits under its priority's limit.
    fn grant(&mut self, limits: Limits) {
        while let Some(entry) = self.waiters.first_entry() {
            let w = entry.get();
            let Reverse(priority) = entry.key().0;
            if self.reserved + w.bytes > limits.of(priority) {
                break;
            }
            let w = entry.remove();
            self.add(w.bytes, w.category);
            // A dropped receiver is handled by its `PendingAcquire` guard, which sees its key
            // gone and gives the bytes back.
            let _ = w.tx.send(Ok(()));
        }
    }

    /// What the waiters lack ([`Pressure`]).
    fn pressure(&self, limits: Limits) -> Pressure {
        let Some((&(Reverse(head_priority), _), head)) = self.waiters.iter().next() else {
            return Pressure::default();
        };
        let waiting: u64 = self.waiters.values().map(|w| w.bytes).sum();
        let lowest_limit = self
            .waiters
            .keys()
            .map(|&(Reverse(p), _)| limits.of(p))
            .min()
            .unwrap_or(limits.total);
        let held: u64 = self.waiters.values().map(|w| w.held).sum();
        let in_flight = self.by_cat[Category::WorkingSet.idx()].saturating_sub(held);
        let free = limits.of(head_priority).saturating_sub(self.reserved);
        Pressure {
            backlog: (self.reserved + waiting).saturating_sub(lowest_limit),
            unavoidable: head.bytes.saturating_sub(free + in_flight),
        }
    }
}

/// The bytes each priority may fill the budget up to.
#[derive(Clone, Copy)]
struct Limits {
    total: u64,
    urgent_reserve: u64,
}

impl Limits {
    fn of(self, priority: Priority) -> u64 {
        if priority >= Priority::High {
            self.total
        } else {
            self.total - self.urgent_reserve
        }
    }
}

impl MemoryBudget {
    /// A budget of `total` bytes with no urgent reserve.
    pub fn new(total: u64) -> MemoryBudget {
        MemoryBudget::with_urgent_reserve(total, 0)
    }

    /// A budget of `total` bytes whose last `urgent_reserve` bytes (at most `total`) only
    /// HIGH and CRITICAL acquires may take.
    pub fn with_urgent_reserve(total: u64, urgent_reserve: u64) -> MemoryBudget {
        MemoryBudget {
            inner: Arc::new(Inner {
                total,
                urgent_reserve: urgent_reserve.min(total),
                state: Mutex::new(State {
                    reserved: 0,
                    by_cat: [0; 3],
                    peak: 0,
                    peak_by_cat: [0; 3],
                    waiters: BTreeMap::new(),
                    next_seq: 0,
                    closed: false,
                }),
                reclaimer: Mutex::new(None),
                reclaim_again: tokio::sync::Notify::new(),
            }),
        }
    }

    /// The whole budget in bytes.
    pub fn total(&self) -> u64 {
        self.inner.total
    }

    /// The most that may be reserved in all when an acquire at `priority` is granted: the
    /// total for HIGH and CRITICAL, the total less the urgent reserve below. A request larger
    /// than this at its priority can never be admitted.
    pub fn limit_for(&self, priority: Priority) -> u64 {
        self.limits().of(priority)
    }

    fn limits(&self) -> Limits {
        Limits {
            total: self.inner.total,
            urgent_reserve: self.inner.urgent_reserve,
        }
    }

    /// Bytes reserved now.
    pub fn reserved(&self) -> u64 {
        self.inner.state.lock().reserved
    }

    /// Bytes reserved now in one category.
    pub fn reserved_in(&self, cat: Category) -> u64 {
        self.inner.state.lock().by_cat[cat.idx()]
    }

    /// Whether some acquire is waiting.
    pub fn has_waiters(&self) -> bool {
        !self.inner.state.lock().waiters.is_empty()
    }

    /// Runs `keep(value)` only if no acquire is waiting, atomically with that check: an
    /// acquire cannot register between the two, so one that arrives later finds what `keep`
    /// stored and its reclaim can free it. When someone waits, `value` comes straight back
    /// for the caller to free (the waiter needs those bytes now); otherwise `keep`'s return.
    ///
    /// `keep` runs under the budget's lock: it must not reserve or release bytes (moving a
    /// [`Reservation`] into a store is fine; dropping one is not).
    pub fn keep_unless_waiting<T>(&self, value: T, keep: impl FnOnce(T) -> Option<T>) -> Option<T> {
        let st = self.inner.state.lock();
        if !st.waiters.is_empty() {
            drop(st);
            return Some(value);
        }
        let back = keep(value);
        drop(st);
        back
    }

    /// Installs the function called on memory pressure.
    pub fn set_reclaimer(&self, reclaimer: Reclaimer) {
        *self.inner.reclaimer.lock() = Some(reclaimer);
    }

    /// A point-in-time view.
    pub fn snapshot(&self) -> BudgetSnapshot {
        let st = self.inner.state.lock();
        BudgetSnapshot {
            total: self.inner.total,
            reserved: st.reserved,
            by_category: Category::ALL
                .iter()
                .map(|&c| (c, st.by_cat[c.idx()]))
                .collect(),
            peak: st.peak,
            peak_by_category: Category::ALL
                .iter()
                .map(|&c| (c, st.peak_by_cat[c.idx()]))
                .collect(),
            waiting: st.waiters.len(),
            waiting_bytes: st.waiters.values().map(|w| w.bytes).sum(),
        }
    }

    /// Restarts peak tracking from the current values.
    pub fn reset_peak(&self) {
        let mut st = self.inner.state.lock();
        st.peak = st.reserved;
        st.peak_by_cat = st.by_cat;
    }

    /// Fails every waiter and every later acquire with [`BudgetError::Closed`]. Existing
    /// reservations stay valid and are returned as they drop.
    pub fn close(&self) {
        let mut st = self.inner.state.lock();
        st.closed = true;
        for (_, w) in std::mem::take(&mut st.waiters) {
            let _ = w.tx.send(Err(BudgetError::Closed));
        }
    }

    /// Takes `bytes` now if that fits below the urgent reserve and nobody is waiting ahead;
    /// never waits.
    pub fn try_acquire(&self, bytes: u64, category: Category) -> Option<Reservation> {
        let mut st = self.inner.state.lock();
        let limit = self.limit_for(Priority::Normal);
        if st.closed || !st.waiters.is_empty() || st.reserved + bytes > limit {
            return None;
        }
        st.add(bytes, category);
        Some(Reservation {
            budget: self.clone(),
            bytes,
            category,
        })
    }

    /// Waits until `bytes` can be reserved, in (priority, arrival) order, within the limit of
    /// `priority` ([`MemoryBudget::limit_for`]).
    ///
    /// Fails at once with [`BudgetError::TooLarge`] if `bytes` exceeds that limit.
    /// Dropping the returned future gives up the place in line (and any bytes granted to it).
    pub async fn acquire(
        &self,
        bytes: u64,
        category: Category,
        priority: Priority,
    ) -> Result<Reservation, BudgetError> {
        self.acquire_beside(0, bytes, category, priority).await
    }

    /// [`MemoryBudget::acquire`] of `bytes` more of `held`'s category by the holder of `held`
    /// (a kept buffer set that needs more): while it waits, `held` is not counted as coming
    /// back ([`Pressure::unavoidable`]). Returns the new bytes only; the caller merges them.
    pub async fn acquire_more(
        &self,
        held: &Reservation,
        bytes: u64,
        priority: Priority,
    ) -> Result<Reservation, BudgetError> {
        let held_bytes = if held.category == Category::WorkingSet {
            held.bytes
        } else {
            0
        };
        self.acquire_beside(held_bytes, bytes, held.category, priority)
            .await
    }

    async fn acquire_beside(
        &self,
        held: u64,
        bytes: u64,
        category: Category,
        priority: Priority,
    ) -> Result<Reservation, BudgetError> {
        let total = self.limit_for(priority);
        if bytes > total {
            return Err(BudgetError::TooLarge {
                needed: bytes,
                budget: total,
            });
        }
        let (rx, key, pressure) = {
            let mut st = self.inner.state.lock();
            if st.closed {
                return Err(BudgetError::Closed);
            }
            if st.waiters.is_empty() && st.reserved + bytes <= total {
                st.add(bytes, category);
                return Ok(Reservation {
                    budget: self.clone(),
                    bytes,
                    category,
                });
            }
            let (tx, rx) = oneshot::channel();
            let key = (Reverse(priority), st.next_seq);
            st.next_seq += 1;
            st.waiters.insert(
                key,
                Waiter {
                    bytes,
                    category,
                    held,
                    tx,
                },
            );
            // Ahead of waiters that do not fit (a lower priority's, below the urgent
            // reserve), this one may fit now.
            st.grant(self.limits());
            (rx, key, st.pressure(self.limits()))
        };
        let mut guard = PendingAcquire {
            budget: self,
            key,
            bytes,
            category,
            rx: Some(rx),
        };
        self.reclaim(pressure);
        let res = loop {
            let again = self.inner.reclaim_again.notified();
            let Some(rx) = guard.rx.as_mut() else {
                return Err(BudgetError::Closed);
            };
            tokio::select! {
                r = rx => break r,
                () = again => self.reclaim(self.pressure()),
            }
        };
        guard.rx = None;
        match res {
            Ok(Ok(())) => Ok(Reservation {
                budget: self.clone(),
                bytes,
                category,
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(BudgetError::Closed),
        }
    }

    /// Asks the reclaimer (if any) for what `pressure` lacks.
    pub fn reclaim(&self, pressure: Pressure) {
        if pressure.is_none() {
            return;
        }
        let r = self.inner.reclaimer.lock().clone();
        if let Some(r) = r {
            r(pressure);
        }
    }

    /// What the waiters lack now ([`Pressure`]; zero when nobody waits).
    pub fn pressure(&self) -> Pressure {
        self.inner.state.lock().pressure(self.limits())
    }

    fn release(&self, bytes: u64, category: Category) {
        if bytes == 0 {
            return;
        }
        let mut st = self.inner.state.lock();
        st.sub(bytes, category);
        st.grant(self.limits());
        self.wake_if_unavoidable(st);
    }

    /// After a grant: if the head now lacks what waiting cannot bring, one waiter reclaims.
    fn wake_if_unavoidable(&self, st: parking_lot::MutexGuard<'_, State>) {
        let unavoidable = st.pressure(self.limits()).unavoidable > 0;
        drop(st);
        if unavoidable {
            self.inner.reclaim_again.notify_one();
        }
    }
}

/// Removes a waiter whose future was dropped, or returns bytes granted to it too late.
struct PendingAcquire<'a> {
    budget: &'a MemoryBudget,
    key: WaiterKey,
    bytes: u64,
    category: Category,
    /// `None` once the answer has been taken by the acquiring future.
    rx: Option<oneshot::Receiver<Result<(), BudgetError>>>,
}

impl Drop for PendingAcquire<'_> {
    fn drop(&mut self) {
        let Some(mut rx) = self.rx.take() else {
            return;
        };
        // Grants and closes send under the lock, so under it the answer is settled.
        let mut st = self.budget.inner.state.lock();
        if st.waiters.remove(&self.key).is_none() {
            if let Ok(Ok(())) = rx.try_recv() {
                // Granted, but nobody will hold the reservation.
                st.sub(self.bytes, self.category);
            }
        }
        // Whether removed or returned, the head may now fit, or a new head lack more.
        st.grant(self.budget.limits());
        self.budget.wake_if_unavoidable(st);
    }
}

/// Bytes held from a [`MemoryBudget`]; dropping it gives them back.
///
/// Moves with the data it covers (it is `Send`); can be shrunk, split and merged.
pub struct Reservation {
    budget: MemoryBudget,
    bytes: u64,
    category: Category,
}

impl fmt::Debug for Reservation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reservation")
            .field("bytes", &self.bytes)
            .field("category", &self.category)
            .finish()
    }
}

impl Reservation {
    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// What the bytes cover.
    pub fn category(&self) -> Category {
        self.category
    }

    /// Gives back all but `bytes` (no-op if already at or below).
    pub fn shrink_to(&mut self, bytes: u64) {
        if bytes < self.bytes {
            let freed = self.bytes - bytes;
            self.bytes = bytes;
            self.budget.release(freed, self.category);
        }
    }

    /// Gives back `bytes` (at most what is held).
    pub fn release(&mut self, bytes: u64) {
        let keep = self.bytes.saturating_sub(bytes);
        self.shrink_to(keep);
    }

    /// Moves `bytes` (at most what is held) into a new reservation of the same category.
    pub fn split(&mut self, bytes: u64) -> Reservation {
        let bytes = bytes.min(self.bytes);
        self.bytes -= bytes;
        Reservation {
            budget: self.budget.clone(),
            bytes,
            category: self.category,
        }
    }

    /// Absorbs another reservation of the same budget and category.
    ///
    /// Returns it unchanged if the category or budget differs.
    pub fn merge(&mut self, mut other: Reservation) -> Result<(), Reservation> {
        if other.category != self.category || !Arc::ptr_eq(&self.budget.inner, &other.budget.inner)
        {
            return Err(other);
        }
        self.bytes += std::mem::take(&mut other.bytes);
        Ok(())
    }

    /// Adds `bytes` to the reservation without waiting, even past the budget.
    ///
    /// Only for accounting memory that already exists (an estimate that proved low); the
    /// overshoot shows in the reserved total, so it is visible rather than hidden.
    pub fn grow_unchecked(&mut self, bytes: u64) {
        if bytes == 0 {
            return;
        }
        let mut st = self.budget.inner.state.lock();
        st.add(bytes, self.category);
        self.bytes += bytes;
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.release(self.bytes, self.category);
    }
}

#[cfg(test)]
mod tests;
