//! CPU pools: where the engine's parallel host work runs.
//!
//! Bulk work (PoRep and SnapDeals synthesis, whose witnesses fan out over every core) runs on
//! rayon's global pool. HIGH work (a WindowPoSt partition's synthesis, and the SRS load it
//! waits for) runs on a pool of its own, and CRITICAL work (WinningPoSt) on another, so a
//! WinningPoSt never queues behind a 125 M-constraint WindowPoSt either. Rayon serves a pool's
//! tasks in queue order, so on one shared pool a WinningPoSt's parallel sector synthesis
//! waited behind every queued PoRep challenge: on the H200 under a 32 GiB PoRep load its
//! synthesis took 7.8 s (c=8) instead of 1.3 s alone, and its 192 MB SRS took 11.4 s to load
//! (c=30). With its own pool it only shares the cores with the bulk threads through the OS
//! scheduler. The urgent pools' threads sleep while no urgent work runs.
use crate::error::EngineError;
use crate::request::Priority;

/// The engine's CPU pools. The default has no urgent pools.
#[derive(Default)]
pub struct CpuPools {
    /// HIGH work's pool.
    high: Option<rayon::ThreadPool>,
    /// CRITICAL work's pool.
    critical: Option<rayon::ThreadPool>,
}

impl std::fmt::Debug for CpuPools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuPools")
            .field("urgent_threads", &self.urgent_threads())
            .finish()
    }
}

/// What the names of the urgent pools' threads start with (`cuzk-urgent-high-<n>`,
/// `cuzk-urgent-critical-<n>`).
pub const URGENT_THREAD_PREFIX: &str = "cuzk-urgent-";

impl CpuPools {
    /// Pools of `urgent_threads` threads each for HIGH and for CRITICAL work; 0: urgent
    /// work shares the global pool.
    pub fn new(urgent_threads: usize) -> Result<CpuPools, EngineError> {
        if urgent_threads == 0 {
            return Ok(CpuPools::default());
        }
        let pool = |which: &'static str| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(urgent_threads)
                .thread_name(move |i| format!("{URGENT_THREAD_PREFIX}{which}-{i}"))
                .build()
                .map_err(|e| EngineError::Config(format!("the {which} CPU pool: {e}")))
        };
        Ok(CpuPools {
            high: Some(pool("high")?),
            critical: Some(pool("critical")?),
        })
    }

    /// Threads of each urgent pool (0: none).
    pub fn urgent_threads(&self) -> usize {
        self.high.as_ref().map_or(0, |p| p.current_num_threads())
    }

    /// Runs `f`, blocking the calling thread until it returns: on the pool of an urgent
    /// `priority` (so the rayon work inside it runs there), else on the calling thread (its
    /// rayon work on the global pool). A panic in `f` resumes on the caller.
    pub fn run<R: Send>(&self, priority: Priority, f: impl FnOnce() -> R + Send) -> R {
        let pool = match priority {
            Priority::Critical => self.critical.as_ref(),
            Priority::High => self.high.as_ref(),
            Priority::Low | Priority::Normal => None,
        };
        match pool {
            Some(pool) => pool.install(f),
            None => f(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;
    use std::sync::mpsc;
    use std::sync::{Arc, Barrier};
    use std::time::Duration;

    fn thread_name() -> String {
        std::thread::current().name().unwrap_or("").to_string()
    }

    /// Holds `n` threads of a pool (each job given to `spawn` holds one) until the returned
    /// sender is dropped; returns once all of them are held.
    fn hold(n: usize, spawn: impl Fn(Box<dyn FnOnce() + Send>)) -> mpsc::Sender<()> {
        let started = Arc::new(Barrier::new(n + 1));
        let (tx, rx) = mpsc::channel::<()>();
        let rx = Arc::new(parking_lot::Mutex::new(rx));
        for _ in 0..n {
            let (started, rx) = (started.clone(), rx.clone());
            spawn(Box::new(move || {
                started.wait();
                // One holder at a time takes the receiver; all wait until the sender goes.
                let _ = rx.lock().recv();
            }));
        }
        started.wait();
        tx
    }

    #[test]
    fn urgent_work_runs_while_bulk_tasks_hold_every_global_thread() {
        let pools = Arc::new(CpuPools::new(2).unwrap());
        let release = hold(rayon::current_num_threads(), rayon::spawn);
        let (tx, rx) = mpsc::channel();
        let p = pools.clone();
        std::thread::spawn(move || {
            let r = p.run(Priority::Critical, || {
                let sum: u64 = (0..100_000u64).into_par_iter().sum();
                let names: Vec<String> = (0..64).into_par_iter().map(|_| thread_name()).collect();
                (sum, names)
            });
            let _ = tx.send(r);
        });
        // On the global pool this could not finish until the holders are released.
        let got = rx.recv_timeout(Duration::from_secs(30));
        drop(release);
        let (sum, names) = got.expect("urgent work waited for the global pool's threads");
        assert_eq!(sum, 99_999 * 100_000 / 2);
        assert!(
            names.iter().all(|n| n.starts_with(URGENT_THREAD_PREFIX)),
            "{names:?}"
        );
    }

    /// A 125 M-constraint WindowPoSt (HIGH) holding every thread of its pool does not delay a
    /// WinningPoSt (CRITICAL).
    #[test]
    fn critical_work_runs_while_high_work_holds_its_pool() {
        let pools = Arc::new(CpuPools::new(2).unwrap());
        let high = pools.high.as_ref().unwrap();
        let release = hold(high.current_num_threads(), |job| high.spawn(job));
        let (tx, rx) = mpsc::channel();
        let p = pools.clone();
        std::thread::spawn(move || {
            let names: Vec<String> = p.run(Priority::Critical, || {
                (0..32).into_par_iter().map(|_| thread_name()).collect()
            });
            let _ = tx.send(names);
        });
        let got = rx.recv_timeout(Duration::from_secs(30));
        drop(release);
        let names = got.expect("CRITICAL work waited for HIGH work's threads");
        assert!(
            names
                .iter()
                .all(|n| n.starts_with(&format!("{URGENT_THREAD_PREFIX}critical-"))),
            "{names:?}"
        );
    }

    #[test]
    fn bulk_work_runs_on_the_caller_and_the_global_pool() {
        let pools = CpuPools::new(2).unwrap();
        for prio in [Priority::Low, Priority::Normal] {
            let (caller, inside) = pools.run(prio, || {
                let inside: Vec<String> = (0..8).into_par_iter().map(|_| thread_name()).collect();
                (thread_name(), inside)
            });
            assert!(!caller.starts_with(URGENT_THREAD_PREFIX), "{caller}");
            assert!(inside.iter().all(|n| !n.starts_with(URGENT_THREAD_PREFIX)));
        }
        for prio in [Priority::High, Priority::Critical] {
            assert!(pools
                .run(prio, thread_name)
                .starts_with(URGENT_THREAD_PREFIX));
        }
        let none = CpuPools::new(0).unwrap();
        assert_eq!(none.urgent_threads(), 0);
        assert!(!none
            .run(Priority::Critical, thread_name)
            .starts_with(URGENT_THREAD_PREFIX));
    }
}
