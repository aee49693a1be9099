//! Issue 14: a SnapDeals partition's witness computed natively, its challenges in parallel
//! (`native/snap.rs`, what witness-only synthesis does), equals, value for value, the
//! circuit's own synthesis (a full recording), on real 2 KiB data.
mod common;

use cuzk_filecoin::partition::{
    native_witness_mismatches, native_witness_partitions, witness_fallbacks,
};
use cuzk_filecoin::plan;
use cuzk_groth16::RecorderMode;

#[test]
fn native_snap_witness_equals_the_circuits_own_at_2k() {
    common::dir();
    let req = common::request("snap");
    let full = plan(&req).unwrap().take_jobs().remove(0);
    let full = full.run(RecorderMode::Full).unwrap();
    let job = plan(&req).unwrap().take_jobs().remove(0);
    let before = (
        witness_fallbacks(),
        native_witness_mismatches(),
        native_witness_partitions(),
    );
    let w = job.run(RecorderMode::WitnessOnly).unwrap();
    assert_eq!(witness_fallbacks(), before.0, "fell back to the gadgets");
    assert_eq!(native_witness_mismatches(), before.1, "native differed");
    assert!(native_witness_partitions() > before.2, "native not used");
    assert_eq!(w.num_constraints, full.num_constraints, "constraints");
    assert_eq!(w.inputs, full.inputs, "inputs");
    assert_eq!(w.aux.len(), full.aux.len(), "aux count");
    if let Some(i) = w.aux.iter().zip(&full.aux).position(|(a, b)| a != b) {
        panic!("aux value {i} differs");
    }
}
