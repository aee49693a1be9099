//! The partition in flight: one [`Partition`] enters the queue at submit and travels through
//! every stage to the assembler, carrying its job, its stage gauge and timeline row, and
//! what the stage it is in works on (`W`: [`Planned`] → [`Admitted`] → [`Circuit`] →
//! [`Started`] → [`Proved`]). From admission on, that includes what it [`Held`]s: its SRS,
//! its memory reservation and its place in the in-flight count.
//!
//! Its failure path, `Partition::fail`, sits in `shared.rs` beside the queue that failing a
//! job purges, so that this file needs nothing above it.
use crate::budget::Reservation;
use crate::jobs::Job;
use crate::metrics::{Metrics, PartitionTimeline, Stage, TimelineRow};
use crate::planner::{PartitionPlan, SynthesizeFn};
use crate::reaper::OffRuntime;
use crate::srs::SrsHandle;
use cuzk_groth16::{Pending, ProverBackend, Scalar, Synthesized};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, OwnedSemaphorePermit};

/// One partition of a job, on its way through the pipeline.
pub(crate) struct Partition<W: Send + 'static> {
    /// Its job.
    pub(crate) job: Arc<Job>,
    /// Position of its proof in the job's output.
    pub(crate) index: usize,
    /// The circuit shape, which names the SRS.
    pub(crate) circuit_id: String,
    /// Public inputs without the leading ONE, for the self-check.
    pub(crate) public_inputs: Vec<Scalar>,
    /// Its stage gauge and timeline row.
    pub(crate) tracker: Tracker,
    /// Its synthesis again, for the one retry after a device error; `None` once used.
    pub(crate) retry: Option<SynthesizeFn>,
    /// The device whose error sent it back for its retry: avoided while another device is
    /// healthy.
    pub(crate) avoid_device: Option<usize>,
    /// What the stage it is in works on. A partition dropped with its work (cancelled,
    /// failed, refused by a closed queue) frees it off the runtime: it can be a whole
    /// witness and a/b/c, and its reservation after them (see `crate::reaper`).
    work: OffRuntime<W>,
}

/// Queued: the plan's synthesis, not started.
pub(crate) struct Planned {
    /// (constraints, inputs, aux) if the planner knew them; sizes the first reservation.
    pub(crate) shape_hint: Option<(usize, usize, usize)>,
    /// The hint is exact and preallocated (see `PartitionPlan::shape_counted`).
    pub(crate) shape_counted: bool,
    /// Produces the synthesized circuit.
    pub(crate) synthesize: SynthesizeFn,
}

/// What an admitted partition holds until its proof is made. Fields drop in order, so the
/// partition leaves the in-flight count only after its SRS and memory are back.
pub(crate) struct Held {
    /// Its SRS; while held, the entry is never evicted.
    pub(crate) srs: SrsHandle,
    /// The memory its working set may use.
    pub(crate) reservation: Reservation,
    /// Its place in the in-flight count that shutdown waits on.
    pub(crate) flight: Flight,
}

/// Admitted: memory and SRS held, synthesis next.
pub(crate) struct Admitted {
    /// Produces the synthesized circuit.
    pub(crate) synthesize: SynthesizeFn,
    /// A finished partition's buffers to record into (covered by the reservation).
    pub(crate) reuse: Option<Synthesized>,
    /// A synthesis slot, given back once the provers' channel accepts the partition.
    pub(crate) permit: OwnedSemaphorePermit,
    /// SRS, memory, in-flight count.
    pub(crate) held: Held,
}

/// Synthesized, in (or on its way into) the provers' channel.
pub(crate) struct Circuit {
    /// The synthesized circuit.
    pub(crate) circuit: Synthesized,
    /// SRS, memory, in-flight count.
    pub(crate) held: Held,
}

/// Past a prover's `start`: a pending proof for a finalizer.
pub(crate) struct Started {
    /// What `finish` completes.
    pub(crate) pending: Pending,
    /// The backend that started it, which finishes it.
    pub(crate) backend: Arc<dyn ProverBackend>,
    /// That backend's device index.
    pub(crate) device: usize,
    /// SRS, memory (now what `pending` holds), in-flight count.
    pub(crate) held: Held,
}

/// Finished and self-checked: the partition's proof, for the assembler.
pub(crate) struct Proved {
    /// The proof's bytes.
    pub(crate) proof: Vec<u8>,
    /// A finalizer slot, held until the job's proof is assembled.
    pub(crate) permit: OwnedSemaphorePermit,
    /// Its place in the in-flight count, left once the assembler is done with it.
    pub(crate) flight: Flight,
}

impl<W: Send + 'static> Partition<W> {
    /// Takes the stage's work out; [`Partition::with_work`] puts the next stage's in.
    pub(crate) fn take_work(self) -> (Partition<()>, W) {
        self.replace_work(())
    }

    /// The partition carrying `work` instead, and the work it carried.
    fn replace_work<V: Send + 'static>(self, work: V) -> (Partition<V>, W) {
        let Partition {
            job,
            index,
            circuit_id,
            public_inputs,
            tracker,
            retry,
            avoid_device,
            work: old,
        } = self;
        let next = Partition {
            job,
            index,
            circuit_id,
            public_inputs,
            tracker,
            retry,
            avoid_device,
            work: OffRuntime::new(work),
        };
        (next, old.into_inner())
    }
}

impl Partition<()> {
    /// The partition, now carrying `work`.
    pub(crate) fn with_work<V: Send + 'static>(self, work: V) -> Partition<V> {
        self.replace_work(work).0
    }
}

impl Partition<Planned> {
    /// A partition of `job` as planned, with its timeline row, counted as queued.
    pub(crate) fn queued(job: Arc<Job>, plan: PartitionPlan, metrics: &Arc<Metrics>) -> Self {
        let row = metrics.add_row(PartitionTimeline {
            job_id: job.id.clone(),
            partition: plan.index,
            circuit_id: plan.circuit_id.clone(),
            priority: job.priority,
            queued: metrics.now(),
            ..Default::default()
        });
        let mut tracker = Tracker {
            metrics: metrics.clone(),
            stage: None,
            row,
        };
        tracker.to(Stage::Queued);
        Partition {
            job,
            index: plan.index,
            circuit_id: plan.circuit_id,
            public_inputs: plan.public_inputs,
            tracker,
            retry: Some(plan.synthesize.clone()),
            avoid_device: None,
            work: OffRuntime::new(Planned {
                shape_hint: plan.shape_hint,
                shape_counted: plan.shape_counted,
                synthesize: plan.synthesize,
            }),
        }
    }
}

/// Keeps a partition's stage gauge and timeline row honest on every exit path.
pub(crate) struct Tracker {
    /// Where the gauges are.
    metrics: Arc<Metrics>,
    /// The gauge the partition counts in now, if any.
    stage: Option<Stage>,
    /// Its timeline row, shared with the metrics store.
    row: TimelineRow,
}

impl Tracker {
    /// Moves the partition's gauge to `stage`.
    pub(crate) fn to(&mut self, stage: Stage) {
        self.metrics.move_stage(self.stage, Some(stage));
        self.stage = Some(stage);
    }

    /// Sets a timeline field to the time now.
    pub(crate) fn stamp(&self, f: impl FnOnce(&mut PartitionTimeline, Duration)) {
        let now = self.metrics.now();
        f(&mut self.row.lock(), now);
    }

    /// Records the outcome (`completed`, `failed`).
    pub(crate) fn outcome(&self, o: &str) {
        self.row.lock().outcome = o.to_string();
    }

    /// Records the outcome and leaves the stage gauges: the partition's row is final.
    pub(crate) fn close(&mut self, o: &str) {
        self.outcome(o);
        self.metrics.move_stage(self.stage.take(), None);
    }
}

impl Drop for Tracker {
    fn drop(&mut self) {
        self.metrics.move_stage(self.stage.take(), None);
        let mut r = self.row.lock();
        if r.outcome.is_empty() {
            r.outcome = "cancelled".into();
        }
    }
}

/// Counts partitions between admission and the assembler, so shutdown can wait for them.
#[derive(Default)]
pub(crate) struct InFlight {
    /// Partitions in flight now.
    count: AtomicUsize,
    /// Woken when the count drops to zero.
    zero: Notify,
}

impl InFlight {
    /// Counts one more partition until the returned guard drops.
    pub(crate) fn enter(self: &Arc<Self>) -> Flight {
        self.count.fetch_add(1, Ordering::SeqCst);
        Flight(self.clone())
    }

    /// Returns once no partition is in flight.
    pub(crate) async fn wait_zero(&self) {
        loop {
            let zero = self.zero.notified();
            if self.count.load(Ordering::SeqCst) == 0 {
                return;
            }
            zero.await;
        }
    }
}

/// One partition's place in the in-flight count, left on drop, whatever the path.
pub(crate) struct Flight(Arc<InFlight>);

impl Drop for Flight {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.zero.notify_waiters();
        }
    }
}
