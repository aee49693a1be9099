//! The partition pipeline: one module per stage, in the order a partition goes through them.
//!
//! ```text
//!  Engine::submit ─▶ Queue (shared.rs: priority, then oldest job)
//!    ─▶ admission.rs   one task: synthesis slot, SRS handle, memory reservation
//!    ─▶ synthesis.rs   blocking pool; reservation sized to the circuit
//!    ─▶ provers' channel (shared.rs: bounded; the slot is held until it accepts)
//!    ─▶ prover.rs      workers per device, device interlock, backend `start`
//!    ─▶ finalize.rs    finalizer slot, backend `finish`, self-check
//!    ─▶ assembler.rs   the job's proof, its finishing step and check ─▶ outcome
//! ```
//!
//! One [`Partition`] value travels the whole way; each stage takes it and returns
//! it carrying the next stage's work, or `None` when it left (its job ended, or it failed and
//! failed its job through `Partition::fail`). The stages know nothing of each other: this file
//! chains them. `shared.rs` (queue, channel, permits, drain) and `partition.rs` sit below
//! every stage.
//!
//! Memory safety by construction: a partition's reservation is taken before synthesis
//! allocates, travels with the partition through the channel (the synthesis permit too, until
//! the send is accepted), shrinks after `start` frees a/b/c, and is dropped after `finish`.
mod admission;
mod assembler;
mod finalize;
mod partition;
mod prover;
mod shared;
mod synthesis;

pub(crate) use self::admission::check_fits;
pub(crate) use self::shared::{ProverInbox, Shared};

use self::partition::{Partition, Started};
use crate::metrics::MemorySample;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Starts the pipeline's background tasks (admission, the sampler, the prover workers of
/// every device) and hands them to the drain.
pub(crate) fn start(sh: &Arc<Shared>, provers: ProverInbox) {
    let mut tasks = vec![
        tokio::spawn(admission_loop(sh.clone())),
        tokio::spawn(sampler_loop(sh.clone())),
    ];
    for dev in 0..sh.devices.len() {
        for _ in 0..sh.config.prover_workers_per_device {
            tasks.push(tokio::spawn(prover_worker(
                sh.clone(),
                dev,
                provers.clone(),
            )));
        }
    }
    sh.keep_tasks(tasks);
}

/// Admits queued partitions one at a time; each admitted one synthesizes in a task of its own.
async fn admission_loop(sh: Arc<Shared>) {
    let mut stop = sh.stopping();
    while let Some((p, permit)) = admission::next(&sh, &mut stop).await {
        if let Some(p) = admission::admit(&sh, p, permit).await {
            tokio::spawn(synthesis::run(sh.clone(), p));
        }
    }
}

/// One worker of device `dev`: proves what the channel brings; each started partition is
/// finalized and assembled in a task of its own.
async fn prover_worker(sh: Arc<Shared>, dev: usize, provers: ProverInbox) {
    loop {
        let p = {
            let mut rx = provers.lock().await;
            rx.recv().await
        };
        let Some(p) = p else {
            return;
        };
        if let Some(p) = prover::prove(&sh, dev, p).await {
            tokio::spawn(finish(sh.clone(), p));
        }
    }
}

/// Finalizes a started partition, then hands its proof to the assembler.
async fn finish(sh: Arc<Shared>, p: Partition<Started>) {
    if let Some(p) = finalize::finalize(&sh, p).await {
        assembler::assemble(&sh, p).await;
    }
}

/// Samples the reserved bytes every `sample_interval`, and forgets expired jobs each second.
async fn sampler_loop(sh: Arc<Shared>) {
    let mut stop = sh.stopping();
    let mut tick = tokio::time::interval(sh.config.sample_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut last_purge = Instant::now();
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.wait_for(|s| *s) => return,
        }
        let s = sh.budget.snapshot();
        sh.metrics.add_sample(MemorySample {
            at: sh.metrics.now(),
            reserved: s.reserved,
            by_category: s.by_category,
        });
        if last_purge.elapsed() > Duration::from_secs(1) {
            last_purge = Instant::now();
            sh.jobs.purge_expired(sh.config.result_retention);
        }
    }
}
