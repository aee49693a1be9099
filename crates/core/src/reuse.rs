//! Finished partitions' buffers kept for the next synthesis of the same circuit id.
//!
//! A backend that hands a partition's buffers back after `start`
//! (`ProverBackend::start_reusing`) saves the next partition from faulting in — and the
//! finished one from unmapping — gigabytes of a/b/c and assignments. Every kept set holds the
//! part of its partition's reservation that covers it, so the budget stays exact; the budget's
//! reclaimer frees kept sets (oldest first) before evicting any SRS.
use crate::budget::Reservation;
use cuzk_groth16::Synthesized;
use parking_lot::Mutex;
use std::collections::VecDeque;

/// One kept set of buffers.
struct Kept {
    circuit_id: String,
    buffers: Synthesized,
    reservation: Reservation,
}

/// The pool. At most `capacity` sets; the oldest goes first.
pub(crate) struct BufferPool {
    capacity: usize,
    kept: Mutex<VecDeque<Kept>>,
}

impl BufferPool {
    /// A pool of at most `capacity` sets (0: nothing is ever kept).
    pub(crate) fn new(capacity: usize) -> BufferPool {
        BufferPool {
            capacity,
            kept: Mutex::new(VecDeque::new()),
        }
    }

    /// Whether [`BufferPool::put`] would keep anything.
    pub(crate) fn enabled(&self) -> bool {
        self.capacity > 0
    }

    /// Keeps `buffers` (covered by `reservation`) for `circuit_id`. Returns the set that
    /// does not fit (the oldest one when the pool is full; the given one when the pool is
    /// off) for the caller to free where unmapping gigabytes does no harm; dropping the pair
    /// frees the buffers before it returns their bytes.
    pub(crate) fn put(
        &self,
        circuit_id: &str,
        buffers: Synthesized,
        reservation: Reservation,
    ) -> Option<(Synthesized, Reservation)> {
        if self.capacity == 0 {
            return Some((buffers, reservation));
        }
        let mut kept = self.kept.lock();
        kept.push_back(Kept {
            circuit_id: circuit_id.to_string(),
            buffers,
            reservation,
        });
        if kept.len() > self.capacity {
            kept.pop_front().map(|k| (k.buffers, k.reservation))
        } else {
            None
        }
    }

    /// Takes the newest set kept for `circuit_id` (its pages are the likeliest to be warm).
    pub(crate) fn take(&self, circuit_id: &str) -> Option<(Synthesized, Reservation)> {
        let mut kept = self.kept.lock();
        let i = kept.iter().rposition(|k| k.circuit_id == circuit_id)?;
        kept.remove(i).map(|k| (k.buffers, k.reservation))
    }

    /// Frees the oldest sets until `shortfall` bytes are given back or none is left. Returns
    /// the bytes freed.
    pub(crate) fn reclaim(&self, shortfall: u64) -> u64 {
        let freed = self.oldest(shortfall);
        let bytes = freed.iter().map(|k| k.reservation.bytes()).sum();
        if bytes > 0 {
            tracing::debug!(bytes, sets = freed.len(), "freeing kept partition buffers");
        }
        // Off the runtime (a waiter asking for memory runs this); each set's buffers go
        // before its reservation, so the waiter is granted the bytes once they are free.
        crate::reaper::free(freed);
        bytes
    }

    /// The oldest sets, until they cover `shortfall` bytes.
    fn oldest(&self, shortfall: u64) -> Vec<Kept> {
        let mut kept = self.kept.lock();
        let mut out = Vec::new();
        let mut bytes = 0;
        while bytes < shortfall {
            let Some(k) = kept.pop_front() else { break };
            bytes += k.reservation.bytes();
            out.push(k);
        }
        out
    }

    /// Frees everything, here and now (shutdown).
    pub(crate) fn clear(&self) -> u64 {
        let freed = self.oldest(u64::MAX);
        freed.iter().map(|k| k.reservation.bytes()).sum()
    }

    /// Sets kept and the bytes reserved for them.
    pub(crate) fn stats(&self) -> (usize, u64) {
        let kept = self.kept.lock();
        (kept.len(), kept.iter().map(|k| k.reservation.bytes()).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::{Category, MemoryBudget};

    fn bufs(n: usize) -> Synthesized {
        Synthesized {
            aux: Vec::with_capacity(n),
            ..Synthesized::default()
        }
    }

    #[test]
    fn keeps_newest_per_circuit_frees_oldest_and_returns_bytes() {
        let budget = MemoryBudget::new(1000);
        let pool = BufferPool::new(2);
        let r = |b| budget.try_acquire(b, Category::WorkingSet).unwrap();
        assert!(pool.put("x", bufs(1), r(100)).is_none());
        assert!(pool.put("y", bufs(2), r(200)).is_none());
        assert_eq!(budget.reserved(), 300);
        let (old, old_res) = pool.put("x", bufs(3), r(300)).expect("the oldest goes");
        assert_eq!((old.aux.capacity(), old_res.bytes()), (1, 100));
        drop((old, old_res));
        assert_eq!(budget.reserved(), 500);
        assert_eq!(pool.stats(), (2, 500));
        assert!(pool.take("z").is_none());
        let (b, res) = pool.take("x").unwrap();
        assert_eq!((b.aux.capacity(), res.bytes()), (3, 300));
        drop(res);
        assert_eq!(budget.reserved(), 200);
        assert_eq!(pool.reclaim(1), 200);
        assert_eq!(budget.reserved(), 0);
        assert_eq!(pool.stats(), (0, 0));
        let off = BufferPool::new(0);
        drop(off.put("x", bufs(1), r(10)).expect("nothing is kept"));
        assert_eq!(budget.reserved(), 0);
        assert!(!off.enabled());
    }

    /// Issue 15 item 9: a prover checked `has_waiters()` and then kept its buffers, while a
    /// waiter arriving between the two ran the reclaimer once, on a pool that did not yet
    /// hold them, and then waited for bytes nobody would release. A waiter that arrives during
    /// the keep must be served by reclaiming the kept set.
    #[test]
    fn a_waiter_arriving_while_buffers_are_kept_is_served_from_them() {
        use crate::request::Priority;
        use std::sync::Arc;
        use std::time::Duration;
        let budget = MemoryBudget::new(1000);
        let pool = Arc::new(BufferPool::new(4));
        let p = pool.clone();
        budget.set_reclaimer(Arc::new(move |pressure: crate::budget::Pressure| {
            p.reclaim(pressure.backlog);
        }));
        let part = budget.try_acquire(1000, Category::WorkingSet).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let back = budget.keep_unless_waiting((bufs(8), part), |(b, r)| {
            // A new partition asks for the memory right now, between check and keep.
            let b2 = budget.clone();
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                let got = rt.block_on(b2.acquire(1000, Category::WorkingSet, Priority::Normal));
                tx.send(got.map(|r| r.bytes())).unwrap();
            });
            std::thread::sleep(Duration::from_millis(100));
            pool.put("c", b, r)
        });
        assert!(back.is_none(), "kept: nobody was registered at the check");
        let got = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the waiter is served from the reclaimed set, not left waiting");
        assert_eq!(got.unwrap(), 1000);
        assert_eq!(pool.stats(), (0, 0));
        // And with a waiter already registered, nothing is kept.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let b3 = budget.clone();
        let held = rt.block_on(async move {
            let first = b3
                .acquire(600, Category::WorkingSet, Priority::Normal)
                .await;
            first.unwrap()
        });
        let waiting = budget.clone();
        let h = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(waiting.acquire(600, Category::WorkingSet, Priority::Normal))
                .map(|r| r.bytes())
        });
        while !budget.has_waiters() {
            std::thread::yield_now();
        }
        let back = budget.keep_unless_waiting((bufs(1), held), |(b, r)| pool.put("c", b, r));
        let (_, r) = back.expect("a waiter is registered: the set comes back");
        drop(r);
        assert_eq!(h.join().unwrap().unwrap(), 600);
    }
}
