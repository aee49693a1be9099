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
        defer_abc: sh.device_abc,
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
    // What the provers' `start` will hold beyond the circuit, counted from it (off the
    // runtime: a pass over the witness), unless a prover has the CPU layout.
    let backends: Vec<_> = sh.devices.iter().map(|d| d.backend.clone()).collect();
    let cpu = sh.cpu.clone();
    let counted = tokio::task::spawn_blocking(move || {
        let bytes = cpu.run(priority, || start_host_bytes(&backends, &circuit));
        (circuit, bytes)
    })
    .await;
    let (circuit, start_host) = match counted {
        Ok(c) => c,
        Err(e) => return p.fail(sh, "synthesis task", e),
    };
    // Calibrate on the first sample, then hold what the prover will need: exactly what this
    // partition's `start` holds when the provers count it, else the calibrated estimate.
    let est = sh.estimator.calibrate(&p.circuit_id, &circuit, start_host);
    let resident = resident_bytes(&circuit);
    let hold = match start_host {
        Some(extra) => resident + extra,
        None => est.proving.max(resident),
    };
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

/// The most host bytes any prover's `start` holds beyond `circuit`
/// (`ProverBackend::start_host_bytes`); `None` when a prover has the CPU layout, or there is
/// none.
fn start_host_bytes(
    backends: &[Arc<dyn cuzk_groth16::ProverBackend>],
    circuit: &cuzk_groth16::Synthesized,
) -> Option<u64> {
    let mut most = None;
    for b in backends {
        let bytes = b.start_host_bytes(circuit)?;
        most = Some(most.map_or(bytes, |m: u64| m.max(bytes)));
    }
    most
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
