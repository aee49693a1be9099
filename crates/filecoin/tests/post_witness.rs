//! Issue 14: a WindowPoSt or WinningPoSt partition's witness computed natively, its sectors in
//! parallel (`post/witness.rs`, what witness-only synthesis does), equals, value for value,
//! the circuit's own synthesis (a full recording), on real 2 KiB data.
mod common;

use cuzk_filecoin::partition::{
    native_witness_mismatches, native_witness_partitions, witness_fallbacks,
};
use cuzk_filecoin::{plan, ProofRequest};
use cuzk_groth16::RecorderMode;

fn check(req: &ProofRequest, what: &str) {
    let full = plan(req).unwrap().take_jobs().remove(0);
    let full = full.run(RecorderMode::Full).unwrap();
    let job = plan(req).unwrap().take_jobs().remove(0);
    let before = (
        witness_fallbacks(),
        native_witness_mismatches(),
        native_witness_partitions(),
    );
    let w = job.run(RecorderMode::WitnessOnly).unwrap();
    assert_eq!(
        witness_fallbacks(),
        before.0,
        "{what}: fell back to the gadgets"
    );
    assert_eq!(
        native_witness_mismatches(),
        before.1,
        "{what}: native differed"
    );
    assert!(
        native_witness_partitions() > before.2,
        "{what}: native not used"
    );
    assert_eq!(
        w.num_constraints, full.num_constraints,
        "{what}: constraints"
    );
    assert_eq!(w.inputs, full.inputs, "{what}: inputs");
    assert_eq!(w.aux.len(), full.aux.len(), "{what}: aux count");
    if let Some(i) = w.aux.iter().zip(&full.aux).position(|(a, b)| a != b) {
        panic!("{what}: aux value {i} differs");
    }
}

#[test]
fn native_post_witnesses_equal_the_circuits_own_at_2k() {
    common::dir();
    check(&common::request("winning"), "winning-2k");
    check(&common::request("wpost"), "wpost-2k");
}
