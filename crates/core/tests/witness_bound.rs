//! Issue 29 item 3: the reservation calibrated from one measured partition of a circuit (what
//! later partitions reserve, and, kept across starts, what a restarted daemon's first ones
//! do) is never below what another real partition of that circuit holds. For every kind at
//! 2 KiB and 8 MiB, the partitions of sparse sectors of three seeds are synthesized as the engine
//! synthesizes them (compiled matrices; a/b/c on the host, or deferred to the device with
//! the compact witness), and each one's bytes are checked against the first one's
//! calibration: the CPU prover's layout, and the device prover's (which counts its `start`
//! bytes; here none, the tightest case). Before any measurement, a deferred partition's first
//! reservation comes from the compiled circuit (a full scalar only for the aux values its
//! constraints do not hold to 0 or 1): that too covers every partition.
use cuzk_core::kinds::filecoin::FilecoinPlanner;
use cuzk_core::{resident_bytes, Planner, ProofRequest, SynthesisContext, WorkingSetEstimate};
use cuzk_filecoin::{ProofKind, SectorSize};
use cuzk_testkit::sparse::request;
use std::collections::HashMap;
use std::path::PathBuf;

#[test]
fn a_calibrated_reservation_covers_every_partition_of_its_circuit_at_2k() {
    calibration_covers_every_partition(SectorSize::S2KiB);
}

/// The same at 8 MiB (the matrices of four circuits compiled, every partition of three
/// sectors a kind synthesized twice: 25 s on two cores in release).
#[test]
fn a_calibrated_reservation_covers_every_partition_of_its_circuit_at_8m() {
    calibration_covers_every_partition(SectorSize::S8MiB);
}

fn calibration_covers_every_partition(size: SectorSize) {
    // Planning and synthesis need no parameter file; the matrices are compiled here.
    let planner = FilecoinPlanner::new(PathBuf::from("/nonexistent"));
    let mut prepared = HashMap::new();
    for kind in ProofKind::ALL {
        for defer_abc in [false, true] {
            let mut first: Option<(WorkingSetEstimate, WorkingSetEstimate)> = None;
            let mut most = 0u64;
            let (mut most_proving, mut bound) = (0u64, 0u64);
            for seed in 1..=3 {
                let (req, _) = request(kind, size, seed, None).expect("request");
                let plan = planner
                    .plan(ProofRequest::filecoin(req.clone()).with_id("bound"))
                    .expect("plan");
                for p in plan.partitions {
                    let (data, bounded) = prepared
                        .entry(p.circuit_id.clone())
                        .or_insert_with(|| {
                            let prepared = planner.prepare(&p.circuit_id).expect("compile");
                            let bounded = prepared.as_ref().and_then(|p| p.bounded_aux);
                            (prepared.map(|p| p.data), bounded)
                        })
                        .clone();
                    let (_, inputs, aux) = p.shape_hint.expect("a counted shape");
                    let s = (p.synthesize)(SynthesisContext {
                        prepared: data,
                        reuse: None,
                        defer_abc,
                    })
                    .expect("synthesis");
                    let held = resident_bytes(&s);
                    most = most.max(held);
                    let (cpu, device) = *first.get_or_insert_with(|| {
                        (
                            WorkingSetEstimate::from_measured(&s, None),
                            WorkingSetEstimate::from_measured(&s, Some(0)),
                        )
                    });
                    // (Admission takes the deferred bound for counted shapes only.)
                    if defer_abc && p.shape_counted {
                        // What the CUDA prover's `start` holds on the host beside it.
                        let (a_aux, b_input, b_aux) = s.densities();
                        let compact = s.compact.as_ref().expect("a compact witness");
                        let plans = cuzk_cuda::msm_plan::host_bytes(
                            &s.inputs, compact, false, a_aux, b_input, b_aux,
                        );
                        let bounded = bounded.expect("the compiled circuit's bits");
                        let first = WorkingSetEstimate::from_deferred_shape(inputs, aux, bounded);
                        assert!(
                            held <= first.synthesis_peak && held + plans <= first.proving,
                            "{kind} seed {seed} partition {}: holds {held} bytes and {plans} \
                             more proving, the compiled circuit's bound ({bounded} of {aux} aux \
                             values 0 or 1) reserves {first:?}",
                            p.index,
                        );
                        most_proving = most_proving.max(held + plans);
                        bound = first.admission_bytes();
                    }
                    for (layout, e) in [("cpu", cpu), ("device", device)] {
                        assert!(
                            held <= e.admission_bytes(),
                            "{kind} defer_abc={defer_abc} seed {seed} partition {}: holds \
                             {held} bytes, the {layout} calibration reserves {}",
                            p.index,
                            e.admission_bytes()
                        );
                    }
                }
            }
            let (_, device) = first.expect("a partition");
            if bound > 0 {
                println!(
                    "{size:?} {kind}: the most a deferred partition held proving {most_proving} \
                     bytes, the compiled circuit's bound reserves {bound}"
                );
            }
            println!(
                "{size:?} {kind} defer_abc={defer_abc}: the most a partition held {most} bytes, \
                 the tightest calibration reserves {}",
                device.admission_bytes()
            );
        }
    }
}
