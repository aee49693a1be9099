//! Synthesis, the second stage: runs the plan's synthesis on the blocking pool (the rayon
//! work of HIGH and CRITICAL partitions on their own CPU pools), calibrates
//! the circuit's estimate on the result, sizes the reservation to what the prover will need,
//! and hands the partition to the provers' queue (by priority).
//!
//! The synthesis slot is held until the queue accepts the partition: a full queue stops
//! further synthesis instead of letting finished partitions pile up.
use super::partition::{Admitted, Circuit, Partition};
use super::shared::Shared;
use crate::estimate::resident_bytes;
use crate::metrics::Stage;
use crate::planner::SynthesisContext;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::OwnedSemaphorePermit;

/// Synthesizes an admitted partition and sends it to the provers.
pub(crate) async fn run(sh: Arc<Shared>, p: Partition<Admitted>) {
    if let Some((p, permit)) = synthesize(&sh, p).await {
        send(&sh, p, permit).await;
    }
}

async fn synthesize(
    sh: &Shared,
    p: Partition<Admitted>,
) -> Option<(Partition<Circuit>, OwnedSemaphorePermit)> {
    let (mut p, work) = p.take_work();
    let Admitted {
        synthesize,
        reuse,
        permit,
        mut held,
    } = work;
    p.tracker.to(Stage::Synthesizing);
    p.tracker.stamp(|r, t| r.synth_start = Some(t));
    let t0 = Instant::now();
    let ctx = SynthesisContext {
        prepared: held.srs.prepared.clone(),
        reuse,
    };
    // HIGH and CRITICAL partitions synthesize on their own CPU pools (`crate::cpu`).
    let (cpu, priority) = (sh.cpu.clone(), p.job.priority);
    let out = tokio::task::spawn_blocking(move || cpu.run(priority, || synthesize(ctx))).await;
    let dt = t0.elapsed();
    p.tracker.stamp(|r, t| r.synth_end = Some(t));
    p.job.progress.lock().timings.synthesis += dt;
    let circuit = match out {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => return p.fail(sh, "synthesis", e),
        Err(e) => return p.fail(sh, "synthesis task", e),
    };
    if p.job.cancelled() {
        // The circuit before its reservation, off the runtime.
        crate::reaper::free((circuit, held));
        return None;
    }
    // Calibrate on the first sample, then hold what the prover will need.
    let est = sh.estimator.calibrate(&p.circuit_id, &circuit);
    let hold = est.proving.max(resident_bytes(&circuit));
    let reservation = &mut held.reservation;
    if hold < reservation.bytes() {
        reservation.shrink_to(hold);
    } else if hold > reservation.bytes() {
        tracing::warn!(circuit = %p.circuit_id, estimated = reservation.bytes(), actual = hold, "working set above its estimate");
        reservation.grow_unchecked(hold - reservation.bytes());
    }
    p.tracker.to(Stage::WaitingForProver);
    Some((p.with_work(Circuit { circuit, held }), permit))
}

/// Hands a synthesized partition to the provers' queue, holding its synthesis slot until the
/// queue accepts it (or its job ends, or the queue closed at shutdown).
async fn send(sh: &Shared, p: Partition<Circuit>, permit: OwnedSemaphorePermit) {
    let job = p.job.clone();
    tokio::select! {
        r = sh.provers.push(p) => drop(r),
        _ = job.wait_cancelled() => {}
    }
    drop(permit);
}
