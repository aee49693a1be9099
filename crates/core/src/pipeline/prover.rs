//! The prover stage: a worker of a device waits for the device's interlock, takes the
//! highest-priority synthesized partition from the provers' queue, and runs the backend's
//! `start` (the MSMs and NTTs) on a blocking thread.
//!
//! Afterwards a/b/c are gone, or handed back and kept for the next synthesis with the bytes
//! that cover them, and the reservation shrinks to what the pending proof holds.
use super::partition::{Circuit, Held, Partition, Started};
use super::shared::Shared;
use crate::estimate::resident_bytes;
use crate::metrics::Stage;
use cuzk_groth16::prover::random_blinding;
use std::sync::atomic::Ordering;
use std::time::Instant;
use tokio::sync::MutexGuard;

/// The device's interlock (when the config asks for it), then the highest-priority
/// synthesized partition. The lock comes first: a worker waiting for the device holds no
/// partition, so whatever is most urgent when the device frees up goes next. `None` once the
/// provers' queue is closed and empty.
pub(crate) async fn next(
    sh: &Shared,
    dev: usize,
) -> Option<(Partition<Circuit>, Option<MutexGuard<'_, ()>>)> {
    let lock = if sh.config.prover_interlock {
        Some(sh.devices[dev].interlock.lock().await)
    } else {
        None
    };
    // A quarantined device takes no work while another device is healthy.
    let mut stop = sh.stopping();
    loop {
        // Registered before the check, so a change between the two still wakes us.
        let woken = sh.provers.woken();
        let benched = sh.devices[dev].quarantined.load(Ordering::SeqCst) && sh.others_healthy(dev);
        if !benched || *stop.borrow() {
            break;
        }
        tokio::select! {
            _ = woken => {}
            _ = stop.wait_for(|s| *s) => {}
        }
    }
    let p = sh.provers.pop(dev, || sh.others_healthy(dev)).await?;
    Some((p, lock))
}

/// Runs `start` for a partition on device `dev`, holding `lock` (the device's interlock, if
/// taken) until it returns. `None`: it left the pipeline (its job ended, or `start` failed and
/// failed the job).
pub(crate) async fn prove(
    sh: &Shared,
    dev: usize,
    p: Partition<Circuit>,
    lock: Option<MutexGuard<'_, ()>>,
) -> Option<Partition<Started>> {
    // The interlock (if taken) is held with a partition in hand from here to the end of
    // `start`: the device's busy time as the engine sees it.
    let held_since = Instant::now();
    if p.job.cancelled() {
        // Dropped with its work: the witness and a/b/c are freed off the runtime.
        return None;
    }
    let (mut p, Circuit { circuit, held }) = p.take_work();
    p.tracker.stamp(|r, t| r.sent = Some(t));
    let device = &sh.devices[dev];
    p.tracker.to(Stage::Proving);
    let dev_name = device.name.clone();
    p.tracker.stamp(|r, t| {
        r.prove_start = Some(t);
        r.device = Some(dev_name);
    });
    *device.current.lock() = Some((p.job.id.clone(), p.job.kind));
    let Held {
        srs,
        mut reservation,
        flight,
    } = held;
    let backend = device.backend.clone();
    let t0 = Instant::now();
    let reuse = sh.buffers.enabled();
    let out = tokio::task::spawn_blocking(move || {
        let (r, s) = random_blinding(&mut rand_core::OsRng);
        let r = if reuse {
            backend.start_reusing(&srs.srs, circuit, r, s)
        } else {
            backend.start(&srs.srs, circuit, r, s).map(|p| (p, None))
        };
        (r, srs)
    })
    .await;
    let dt = t0.elapsed();
    device
        .start_ns
        .fetch_add(dt.as_nanos() as u64, Ordering::Relaxed);
    device.partitions.fetch_add(1, Ordering::Relaxed);
    *device.current.lock() = None;
    if lock.is_some() {
        device
            .interlock_ns
            .fetch_add(held_since.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
    drop(lock);
    p.tracker.stamp(|r, t| r.prove_end = Some(t));
    p.job.progress.lock().timings.prover += dt;
    let ((pending, spent), srs) = match out {
        Ok((Ok(started), srs)) => (started, srs),
        Ok((Err(e), _)) if is_device_fault(&e) => {
            return p.device_failed(sh, dev, "prover start", e)
        }
        Ok((Err(e), _)) => return p.fail(sh, "prover start", e),
        Err(e) => return p.device_failed(sh, dev, "prover task", e),
    };
    // a/b/c are gone, or handed back: kept for the next synthesis with the bytes that
    // cover them, unless someone waits for memory (the waiter gets the bytes instead). The
    // check and the keep are one step under the budget's lock, so a waiter that arrives
    // just after finds the set in the pool and its reclaim frees it.
    // Freeing gigabytes (unmapping) runs off the runtime's threads, and the bytes are
    // returned to the budget only once the memory is gone.
    if let Some(spent) = spent {
        let part = reservation.split(resident_bytes(&spent).min(reservation.bytes()));
        let freed = sh
            .budget
            .keep_unless_waiting((spent, part), |(spent, part)| {
                sh.buffers.put(&p.circuit_id, spent, part)
            });
        if let Some(set) = freed {
            tokio::task::spawn_blocking(move || drop(set));
        }
    }
    // Keep only what the pending proof holds.
    let pend = pending.heap_bytes();
    if reservation.bytes() < pend {
        reservation.grow_unchecked(pend - reservation.bytes());
    } else {
        reservation.shrink_to(pend);
    }
    p.tracker.to(Stage::Finalizing);
    Some(p.with_work(Started {
        pending,
        backend: device.backend.clone(),
        device: dev,
        held: Held {
            srs,
            reservation,
            flight,
        },
    }))
}

/// Whether a backend error is the device's (worth a retry elsewhere and counted towards
/// quarantine) rather than the partition's: a shape mismatch or a missing a/b/c would fail
/// on any device.
pub(crate) fn is_device_fault(e: &cuzk_groth16::ProveError) -> bool {
    use cuzk_groth16::ProveError;
    matches!(e, ProveError::Device(_) | ProveError::Unavailable(_))
}
