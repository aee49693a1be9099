//! The compiled synthesis path (witness-only recording + evaluation against the circuit's
//! compiled matrices, which the engine uses for PoRep) stays within 1.3× of the bytes that the
//! a/b/c vectors and the assignments need, like the recorder (`tests/rss.rs`). The matrices
//! belong to the circuit id, not to the partition (the engine holds them with the SRS), so they
//! are compiled before the measurement starts. Its own test binary, so no other test's
//! allocations share the process.
mod common;

use cuzk_filecoin::plan;
use cuzk_groth16::RecorderMode;

#[test]
fn porep_2k_compiled_synthesis_peak_rss_is_within_1_3x_of_its_vectors() {
    common::dir();
    let req = common::request("porep");
    let job = plan(&req).unwrap().take_jobs().remove(0);
    let compiled = cuzk_filecoin::compiled::compile(job.circuit_id).unwrap();
    let (s, grown) = common::peak_rss_growth(|| {
        compiled
            .evaluate(job.run(RecorderMode::WitnessOnly).unwrap())
            .unwrap()
    });
    assert!(s.is_satisfied());
    let held = compiled.heap_bytes() >> 20;
    common::assert_rss_within_1_3x(
        &s,
        grown,
        &format!("; compiled matrices {held} MiB held before"),
    );
}
