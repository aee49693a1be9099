//! The assembler, the last stage: stores each partition's proof; the last one concatenates
//! them, applies the plan's finishing step and whole-proof check, and completes the job.
use super::partition::{Partition, Proved};
use super::shared::Shared;
use crate::request::JobState;

/// Stores a partition proof; the last one assembles the job's proof, checks it and completes
/// the job. The partition (its finalizer slot and in-flight count) is let go afterwards.
pub(crate) async fn assemble(sh: &Shared, p: Partition<Proved>) {
    let (p, work) = p.take_work();
    let Proved {
        proof,
        permit,
        flight,
    } = work;
    let _until_assembled = (permit, flight);
    let job = &p.job;
    let ready = {
        let mut pr = job.progress.lock();
        let index = p.index;
        if pr.finished_at.is_some() || index >= pr.proofs.len() || pr.proofs[index].is_some() {
            return;
        }
        pr.proofs[index] = Some(proof);
        pr.done += 1;
        if pr.done < job.n {
            return;
        }
        let proof: Vec<u8> = pr.proofs.iter().flatten().flatten().copied().collect();
        // A proof from TIMING-ONLY parameters cannot pass the job's check: not run.
        let verify = if pr.timing_only {
            None
        } else {
            pr.verify.clone()
        };
        (proof, verify, pr.finish.clone())
    };
    let (mut proof, verify, finish) = ready;
    if let Some(f) = finish {
        let t = std::time::Instant::now();
        let res = tokio::task::spawn_blocking(move || f(proof)).await;
        proof = match res {
            Ok(Ok(p)) => {
                // NI-PoRep's SnarkPack aggregate: its time is not a stage of the job's.
                tracing::info!(job = %job.id, ms = t.elapsed().as_millis() as u64, bytes = p.len(), "proof finished (partition proofs aggregated)");
                p
            }
            Ok(Err(e)) => {
                return sh.finish_job(
                    job,
                    JobState::Failed {
                        error: format!("finishing the proof: {e}"),
                    },
                )
            }
            Err(e) => {
                return sh.finish_job(
                    job,
                    JobState::Failed {
                        error: format!("finishing task: {e}"),
                    },
                )
            }
        };
    }
    if let Some(v) = verify {
        let pr = proof.clone();
        let res = tokio::task::spawn_blocking(move || v(&pr)).await;
        let err = match res {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e),
            Err(e) => Some(format!("verification task: {e}")),
        };
        if let Some(e) = err {
            sh.finish_job(
                job,
                JobState::Failed {
                    error: format!("assembled proof failed verification: {e}"),
                },
            );
            return;
        }
    }
    sh.finish_job(job, JobState::Completed { proof });
}
