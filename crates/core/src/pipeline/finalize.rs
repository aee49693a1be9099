//! Finalize, the fourth stage: under a finalizer slot, the backend's `finish` turns the
//! pending proof into the partition's proof, and the self-check (`self_verify`) verifies it
//! against the partition's public inputs. The partition's reservation is dropped here.
use super::partition::{Held, Partition, Proved, Started};
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
        held,
    } = work;
    let Held {
        srs,
        reservation,
        flight,
    } = held;
    let self_verify = sh.config.self_verify;
    // The self-check is the public inputs' last use.
    let public_inputs = std::mem::take(&mut p.public_inputs);
    let t0 = Instant::now();
    let out = tokio::task::spawn_blocking(move || {
        let proof = backend
            .finish(&srs.srs, pending)
            .map_err(|e| format!("prover finish: {e}"))?;
        if self_verify {
            crate::verify::verify_partition(srs.pvk(), &proof, &public_inputs)
                .map_err(|e| format!("self-check: {e}"))?;
        }
        Ok::<_, String>(proof.to_bytes().to_vec())
    })
    .await;
    p.job.progress.lock().timings.prover += t0.elapsed();
    drop(reservation);
    p.tracker.stamp(|r, t| r.finished = Some(t));
    let proof = match out {
        Ok(Ok(b)) => b,
        Ok(Err(e)) => return p.fail(sh, "finalize", e),
        Err(e) => return p.fail(sh, "finalize task", e),
    };
    sh.metrics.partitions_proved.fetch_add(1, Ordering::Relaxed);
    p.tracker.close("completed");
    Some(p.with_work(Proved {
        proof,
        permit,
        flight,
    }))
}
