//! Admission, the first stage: takes the next queued partition once a synthesis slot is
//! free, then gets its SRS and its memory reservation, waiting in priority order.
//!
//! Admission runs in two lanes, one task each: the bulk lane takes any partition, highest
//! priority first, with the synthesis slots; the urgent lane takes only HIGH and CRITICAL
//! ones, with slots of its own, so such a partition is never stuck behind a bulk partition
//! that waits for memory or for a slot. Each lane has at most one partition waiting for
//! memory, and a waiter holds no memory another waiter needs (no hold-and-wait cycle); the
//! budget serves its waiters by priority. The reservation is taken before synthesis
//! allocates. [`check_fits`] refuses at submit what could never be admitted.
use super::partition::{Admitted, Held, Partition, Planned};
use super::shared::{Shared, URGENT};
use crate::budget::{Category, Reservation};
use crate::error::{BudgetError, EngineError};
use crate::planner::PartitionPlan;
use crate::request::Priority;
use tokio::sync::{watch, OwnedSemaphorePermit};

/// An admission lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lane {
    /// Any partition, with the synthesis slots.
    Bulk,
    /// HIGH and CRITICAL partitions only, with the urgent slots.
    Urgent,
}

/// Waits for a synthesis slot of `lane`, then for a queued partition it takes. `None` once
/// the engine stops.
pub(crate) async fn next(
    sh: &Shared,
    lane: Lane,
    stop: &mut watch::Receiver<bool>,
) -> Option<(Partition<Planned>, OwnedSemaphorePermit)> {
    let (slots, min) = match lane {
        Lane::Bulk => (&sh.synth_permits, Priority::Low),
        Lane::Urgent => (&sh.urgent_permits, URGENT),
    };
    let permit = tokio::select! {
        p = slots.clone().acquire_owned() => p.ok()?,
        _ = stop.wait_for(|s| *s) => return None,
    };
    loop {
        if *stop.borrow() {
            return None;
        }
        if let Some(p) = sh.queue.pop(min) {
            return Some((p, permit));
        }
        tokio::select! {
            _ = sh.queue.notified(min) => {}
            _ = stop.wait_for(|s| *s) => return None,
        }
    }
}

/// Gets the partition's SRS and memory (waiting in priority order). `None`: it left the
/// pipeline (its job ended, or it failed and failed the job).
pub(crate) async fn admit(
    sh: &Shared,
    p: Partition<Planned>,
    permit: OwnedSemaphorePermit,
) -> Option<Partition<Admitted>> {
    if p.job.cancelled() {
        return None;
    }
    let flight = sh.drain.in_flight.enter();
    let (p, work) = p.take_work();
    let Planned {
        shape_hint,
        shape_counted,
        synthesize,
    } = work;
    let prio = p.job.priority;
    // The load runs in a task of its own: a cancelled job must not abandon a half-done load
    // (its memory would outlive the reservation); the SRS then stays cached, idle.
    let load = {
        let (srs, id) = (sh.srs.clone(), p.circuit_id.clone());
        tokio::spawn(async move { srs.get(&id, prio).await })
    };
    let acquired = tokio::select! {
        r = load => r.unwrap_or_else(|e| Err(EngineError::Internal(format!("SRS task: {e}")))),
        _ = p.job.wait_cancelled() => return None,
    };
    let acquired = match acquired {
        Ok(a) => a,
        Err(e) => return p.fail(sh, "SRS", e),
    };
    if !acquired.was_loaded {
        p.job.progress.lock().timings.srs_load += acquired.load_time;
    }
    let srs_bytes = sh.srs.size_hint(&p.circuit_id);
    // Below HIGH, the urgent reserve is not this partition's to fill.
    let total = sh.budget.limit_for(prio);
    // a/b/c are deferred to the devices when they all make them and the circuit was compiled;
    // the compiled circuit says which aux values its constraints hold to 0 or 1.
    // (the prepared circuit's `bounded_aux`, recorded on the SRS at its load)
    let bounded = acquired.handle.srs.bounded_aux().unwrap_or(0);
    let layout = sh.host_layout(sh.device_abc && acquired.handle.prepared.is_some(), bounded);
    let est = sh.estimator.estimate(
        &p.circuit_id,
        shape_hint,
        shape_counted,
        layout,
        srs_bytes,
        total / 4,
    );
    let need = est.admission_bytes();
    if need + srs_bytes.unwrap_or(0) > total {
        let error = EngineError::TooLarge {
            what: format!(
                "partition {} of {} (working set + SRS)",
                p.index, p.circuit_id
            ),
            needed: need + srs_bytes.unwrap_or(0),
            budget: total,
        };
        return p.fail_job(sh, error.to_string());
    }
    // A finished partition's buffers of this circuit come with the reservation covering them;
    // only what the estimate asks beyond that is acquired.
    let (kept, kept_res) = match sh.buffers.take(&p.circuit_id) {
        Some((b, r)) => (Some(b), Some(r)),
        None => (None, None),
    };
    let more = need.saturating_sub(kept_res.as_ref().map_or(0, Reservation::bytes));
    let res = match (kept_res, more) {
        (Some(r), 0) => Ok(r),
        (kept_res, more) => {
            // Holding a kept set while waiting for more: the budget must not count that set
            // as coming back (see `Pressure::unavoidable`).
            let acquire = async {
                match kept_res.as_ref() {
                    Some(kept) => sh.budget.acquire_more(kept, more, prio).await,
                    None => sh.budget.acquire(more, Category::WorkingSet, prio).await,
                }
            };
            let r = tokio::select! {
                r = acquire => r,
                _ = p.job.wait_cancelled() => return None,
            };
            r.map(|extra| match kept_res {
                Some(mut r) => {
                    // Same budget, same category: merging cannot fail.
                    let _ = r.merge(extra);
                    r
                }
                None => extra,
            })
        }
    };
    let reservation = match res {
        Ok(r) => r,
        Err(BudgetError::Closed) => return None,
        Err(e) => return p.fail(sh, "memory", e),
    };
    p.job.mark_admitted();
    p.tracker.stamp(|r, t| r.admitted = Some(t));
    Some(p.with_work(Admitted {
        synthesize,
        reuse: kept,
        permit,
        held: Held {
            srs: acquired.handle,
            reservation,
            flight,
        },
    }))
}

/// Refuses a job at submit when one of its partitions could never be admitted: its SRS, or
/// its working set with what its SRS holds once loaded, is larger than the budget at the job's
/// priority (the whole budget for HIGH and CRITICAL, less the urgent reserve below). An SRS
/// not loaded yet whose host copy will go to the devices counts only what stays on the host
/// ([`crate::srs::SrsCache::held_hint`]; admission checks again after the load): a 64 GiB
/// box refused a porep-32g job unless its 44 GiB SRS was preloaded and released.
pub(crate) fn check_fits(
    sh: &Shared,
    parts: &[PartitionPlan],
    priority: Priority,
) -> Result<(), EngineError> {
    let total = sh.budget.limit_for(priority);
    for p in parts {
        let srs = sh.srs.size_hint(&p.circuit_id);
        if let Some(s) = srs {
            if s > total {
                return Err(EngineError::TooLarge {
                    what: format!("SRS {}", p.circuit_id),
                    needed: s,
                    budget: total,
                });
            }
        }
        let known = p.shape_hint.is_some() || sh.estimator.calibrated(&p.circuit_id).is_some();
        if known {
            // The least a partition may need: every aux value held to 0 or 1 by the
            // constraints (deferred where the devices make a/b/c). How many are is known once
            // the circuit is compiled; admission checks against that after the load.
            let layout = sh.host_layout(sh.device_abc, usize::MAX);
            let e = sh.estimator.estimate(
                &p.circuit_id,
                p.shape_hint,
                p.shape_counted,
                layout,
                srs,
                total / 4,
            );
            let need = e.admission_bytes();
            let held = sh.srs.held_hint(&p.circuit_id).unwrap_or(0);
            if need + held > total {
                return Err(EngineError::TooLarge {
                    what: format!(
                        "partition {} of {} (working set + SRS)",
                        p.index, p.circuit_id
                    ),
                    needed: need + held,
                    budget: total,
                });
            }
        }
    }
    Ok(())
}
