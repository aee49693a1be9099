//! The partition pipeline: one module per stage, in the order a partition goes through them.
//!
//! ```text
//!  Engine::submit ─▶ Queue (shared.rs: priority, then oldest job)
//!    ─▶ admission.rs   two lanes (bulk; HIGH+CRITICAL): slot, SRS handle, reservation
//!    ─▶ synthesis.rs   blocking pool; reservation sized to the circuit
//!    ─▶ provers' queue (shared.rs: by priority; bulk bounded, the slot held until accepted)
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
pub(crate) use self::shared::Shared;

use self::admission::Lane;
use self::partition::{Partition, Started};
use crate::metrics::MemorySample;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Starts the pipeline's background tasks (both admission lanes, the sampler, the prover
/// workers of every device) and hands them to the drain.
pub(crate) fn start(sh: &Arc<Shared>) {
    let mut tasks = vec![
        tokio::spawn(admission_loop(sh.clone(), Lane::Bulk)),
        tokio::spawn(admission_loop(sh.clone(), Lane::Urgent)),
        tokio::spawn(sampler_loop(sh.clone())),
    ];
    for dev in 0..sh.devices.len() {
        for _ in 0..sh.config.prover_workers_per_device {
            tasks.push(tokio::spawn(prover_worker(sh.clone(), dev)));
        }
    }
    sh.keep_tasks(tasks);
}

/// Admits the queued partitions `lane` takes, one at a time; each admitted one synthesizes
/// in a task of its own.
async fn admission_loop(sh: Arc<Shared>, lane: Lane) {
    let mut stop = sh.stopping();
    while let Some((p, permit)) = admission::next(&sh, lane, &mut stop).await {
        if let Some(p) = admission::admit(&sh, p, permit).await {
            tokio::spawn(synthesis::run(sh.clone(), p));
        }
    }
}

/// One worker of device `dev`: proves what the provers' queue brings, highest priority
/// first; each started partition is finalized and assembled in a task of its own.
async fn prover_worker(sh: Arc<Shared>, dev: usize) {
    while let Some((p, interlock)) = prover::next(&sh, dev).await {
        if let Some(p) = prover::prove(&sh, dev, p, interlock).await {
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

/// Samples the reserved bytes every `sample_interval`; each second reads the devices' busy
/// times (the status's busy fraction over the last minute) and forgets expired jobs.
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
            sh.metrics.add_busy_reading(crate::metrics::BusyReading {
                at: sh.metrics.now(),
                busy: sh
                    .devices
                    .iter()
                    .map(|d| d.busy(sh.config.prover_interlock).0)
                    .collect(),
            });
            sh.jobs.purge_expired(sh.config.result_retention);
        }
    }
}
