//! Big frees off the runtime.
//!
//! Dropping a partition's witness and a/b/c vectors, a kept buffer set or an evicted SRS
//! gives 1–50 GiB back to the allocator: seconds of page unmapping. On a tokio worker that
//! stalls every task scheduled there (GetStatus, admission, other proofs' stages) for as
//! long. [`free`] hands such a value to one background thread, `cuzk-free`, which drops
//! values in the order they arrive. Outside a tokio runtime (a blocking closure's thread is
//! inside one) the value is dropped at once.
//!
//! A value that carries its own budget reservation is handed over whole, its data declared
//! (and so dropped) before its reservation: the bytes return to the budget only once the
//! memory really is free, so a waiter granted them never overlaps the free.
use std::sync::mpsc;
use std::sync::OnceLock;

type Boxed = Box<dyn Send>;

fn reaper() -> Option<&'static mpsc::Sender<Boxed>> {
    static TX: OnceLock<Option<mpsc::Sender<Boxed>>> = OnceLock::new();
    TX.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Boxed>();
        let spawned = std::thread::Builder::new()
            .name("cuzk-free".into())
            .spawn(move || {
                for value in rx {
                    drop(value);
                }
            });
        match spawned {
            Ok(_) => Some(tx),
            Err(e) => {
                tracing::warn!(cause = %e, "no cuzk-free thread; big frees stay inline");
                None
            }
        }
    })
    .as_ref()
}

/// Drops `value` on the `cuzk-free` thread when called on a tokio runtime, else here.
pub(crate) fn free<T: Send + 'static>(value: T) {
    if std::mem::size_of::<T>() == 0 || tokio::runtime::Handle::try_current().is_err() {
        return drop(value);
    }
    match reaper() {
        Some(tx) => {
            if let Err(mpsc::SendError(value)) = tx.send(Box::new(value)) {
                drop(value);
            }
        }
        None => drop(value),
    }
}

/// A value [`free`]d when it is dropped unopened; [`OffRuntime::into_inner`] takes it out.
pub(crate) struct OffRuntime<T: Send + 'static>(Option<T>);

impl<T: Send + 'static> OffRuntime<T> {
    pub(crate) fn new(value: T) -> Self {
        Self(Some(value))
    }

    pub(crate) fn into_inner(mut self) -> T {
        // Always `Some` until here: only this consuming method and `drop` take it.
        self.0
            .take()
            .expect("OffRuntime holds its value until taken")
    }
}

impl<T: Send + 'static> Drop for OffRuntime<T> {
    fn drop(&mut self) {
        if let Some(value) = self.0.take() {
            free(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Records the name of the thread that drops it.
    struct Probe(Arc<Mutex<Option<String>>>);

    impl Drop for Probe {
        fn drop(&mut self) {
            let name = std::thread::current().name().unwrap_or("?").to_string();
            *self.0.lock().unwrap() = Some(name);
        }
    }

    async fn dropped_on(seen: &Arc<Mutex<Option<String>>>) -> String {
        for _ in 0..500 {
            if let Some(n) = seen.lock().unwrap().clone() {
                return n;
            }
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
        panic!("never dropped");
    }

    /// Issue 15 item 12: on a runtime worker, a freed value and an unopened `OffRuntime`
    /// are dropped on `cuzk-free`, not on the worker.
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn big_frees_leave_the_runtime_threads() {
        let seen = Arc::new(Mutex::new(None));
        free(Probe(seen.clone()));
        assert_eq!(dropped_on(&seen).await, "cuzk-free");
        let seen = Arc::new(Mutex::new(None));
        drop(OffRuntime::new(Probe(seen.clone())));
        assert_eq!(dropped_on(&seen).await, "cuzk-free");
        // Opened, the value is the caller's to drop.
        let seen = Arc::new(Mutex::new(None));
        let probe = OffRuntime::new(Probe(seen.clone())).into_inner();
        drop(probe);
        assert_ne!(seen.lock().unwrap().as_deref(), Some("cuzk-free"));
    }

    /// Off the runtime there is nothing to protect: dropped at once, here.
    #[test]
    fn outside_a_runtime_frees_are_inline() {
        let seen = Arc::new(Mutex::new(None));
        free(Probe(seen.clone()));
        assert!(seen.lock().unwrap().is_some());
        assert_ne!(seen.lock().unwrap().as_deref(), Some("cuzk-free"));
    }
}
