//! The pre-compiled path (witness-only synthesis + sparse matrix products) gives exactly
//! what the full recorder gives, on the real 2 KiB circuits.
mod common;

use cuzk_filecoin::plan;
use cuzk_groth16::RecorderMode;

#[test]
fn compiled_evaluation_equals_full_recording() {
    common::dir();
    for kind in ["wpost", "winning", "porep"] {
        let req = common::request(kind);
        let full = plan(&req).unwrap().take_jobs().remove(0);
        let shape = cuzk_filecoin::compiled::compile(full.circuit_id).unwrap();
        let full = full.run(RecorderMode::Full).unwrap();
        let witness = plan(&req).unwrap().take_jobs().remove(0);
        let fast = shape
            .evaluate(witness.run(RecorderMode::WitnessOnly).unwrap())
            .unwrap();
        assert_eq!(fast.num_constraints, full.num_constraints, "{kind}");
        assert_eq!(fast.inputs, full.inputs, "{kind}");
        assert!(
            fast.a == full.a && fast.b == full.b && fast.c == full.c,
            "{kind}: a/b/c differ"
        );
        assert_eq!(fast.a_aux_density, full.a_aux_density, "{kind}");
        assert_eq!(fast.b_input_density, full.b_input_density, "{kind}");
        assert_eq!(fast.b_aux_density, full.b_aux_density, "{kind}");
        assert!(fast.is_satisfied(), "{kind}");
        // A witness of another shape is refused, not mis-evaluated.
        if kind == "porep" {
            let other = plan(&common::request("wpost"))
                .unwrap()
                .take_jobs()
                .remove(0);
            assert!(shape
                .evaluate(other.run(RecorderMode::WitnessOnly).unwrap())
                .is_err());
        }
    }
}
