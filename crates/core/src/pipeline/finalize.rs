//! Finalize, the fourth stage: under a finalizer slot, the backend's `finish` turns the
//! pending proof into the partition's proof, and the self-check (`self_verify`) verifies it
//! against the partition's public inputs. The partition's reservation is dropped here.
use super::partition::{Held, Partition, Proved, Started};
use super::prover::is_device_fault;
use super::shared::Shared;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Finishes and checks a started partition. `None`: it left the pipeline (its job ended, or
/// it failed and failed the job).
pub(crate) async fn finalize(sh: &Shared, p: Partition<Started>) -> Option<Partition<Proved>> {
    let Ok(permit) = sh.finalize_permits.clone().acquire_owned().await else {
        return None;
    };
    if p.job.cancelled() {
        // Dropped with its work: the pending proof is freed off the runtime.
        return None;
    }
    let (mut p, work) = p.take_work();
    let Started {
        pending,
        backend,
        device,
        held,
    } = work;
    let Held {
        srs,
        reservation,
        flight,
    } = held;
    // TIMING-ONLY parameters (allowed by config) make proofs that cannot verify.
    let self_verify = sh.config.self_verify && !srs.timing_only;
    if srs.timing_only {
        p.job.progress.lock().timing_only = true;
    }
    // The self-check is the public inputs' last use, unless a retry may need them again.
    let public_inputs = if p.retry.is_some() {
        p.public_inputs.clone()
    } else {
        std::mem::take(&mut p.public_inputs)
    };
    let t0 = Instant::now();
    let out = tokio::task::spawn_blocking(move || {
        let proof = backend.finish(&srs.srs, pending).map_err(Failure::Finish)?;
        if self_verify {
            crate::verify::verify_partition(srs.pvk(), &proof, &public_inputs)
                .map_err(|e| Failure::Check(e.to_string()))?;
        }
        Ok::<_, Failure>(proof.to_bytes().to_vec())
    })
    .await;
    p.job.progress.lock().timings.prover += t0.elapsed();
    drop(reservation);
    p.tracker.stamp(|r, t| r.finished = Some(t));
    let proof = match out {
        Ok(Ok(b)) => b,
        Ok(Err(Failure::Finish(e))) if is_device_fault(&e) => {
            return p.device_failed(sh, device, "finalize", format_args!("prover finish: {e}"))
        }
        Ok(Err(Failure::Finish(e))) => {
            return p.fail(sh, "finalize", format_args!("prover finish: {e}"))
        }
        // A proof that fails its check is more often a wrong parameter file than a device
        // fault: not retried, not held against the device.
        Ok(Err(Failure::Check(e))) => {
            return p.fail(sh, "finalize", format_args!("self-check: {e}"))
        }
        Err(e) => return p.device_failed(sh, device, "finalize task", e),
    };
    sh.device_ok(device);
    sh.metrics.partitions_proved.fetch_add(1, Ordering::Relaxed);
    p.tracker.close("completed");
    Some(p.with_work(Proved {
        proof,
        permit,
        flight,
    }))
}

/// Why a finalize failed.
enum Failure {
    /// The backend's `finish`.
    Finish(cuzk_groth16::ProveError),
    /// The proof did not verify.
    Check(String),
}
