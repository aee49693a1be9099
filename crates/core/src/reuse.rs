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
        let freed: Vec<Kept> = {
            let mut kept = self.kept.lock();
            let mut out = Vec::new();
            let mut bytes = 0;
            while bytes < shortfall {
                let Some(k) = kept.pop_front() else { break };
                bytes += k.reservation.bytes();
                out.push(k);
            }
            out
        };
        let bytes = freed.iter().map(|k| k.reservation.bytes()).sum();
        if bytes > 0 {
            tracing::debug!(bytes, sets = freed.len(), "freed kept partition buffers");
        }
        bytes
    }

    /// Frees everything (shutdown).
    pub(crate) fn clear(&self) -> u64 {
        self.reclaim(u64::MAX)
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
}
