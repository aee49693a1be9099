//! The compiled path against full recording.
use super::*;
use crate::{ProveError, Recorder, RecorderMode};
use bellpepper_core::Circuit;
use std::sync::Arc;

/// `parts` independent gadgets with varied coefficients, inputs and ONE in every matrix;
/// in sub-systems made with `CS::new()` when `split` and the system is extensible (as
/// storage-proofs' PoSt circuit does), else inline.
#[derive(Clone, Copy)]
struct Parts {
    parts: u64,
    split: bool,
}

fn part<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    k: u64,
) -> std::result::Result<(), SynthesisError> {
    let x = cs.alloc_input(|| "x", || Ok(Scalar::from(k + 2)))?;
    let mut prev = cs.alloc(|| "p", || Ok(Scalar::from(k % 2)))?;
    let mut val = Scalar::from(k % 2);
    for i in 0..(4 + k) {
        let coeff = Scalar::from(3 + (i + k) % 5);
        let next_val = val * Scalar::from(k + 2) * coeff + Scalar::from(i);
        let next = cs.alloc(|| "n", || Ok(next_val))?;
        cs.enforce(
            || "step",
            |lc| lc + (coeff, prev),
            |lc| lc + x,
            |lc| lc + next - (Scalar::from(i), CS::one()),
        );
        prev = next;
        val = next_val;
    }
    cs.enforce(
        || "one",
        |lc| lc + CS::one(),
        |lc| lc + CS::one() + x,
        |lc| lc + x + CS::one(),
    );
    Ok(())
}

impl Circuit<Scalar> for Parts {
    fn synthesize<CS: ConstraintSystem<Scalar>>(
        self,
        cs: &mut CS,
    ) -> std::result::Result<(), SynthesisError> {
        if !(self.split && CS::is_extensible()) {
            return (0..self.parts).try_for_each(|k| part(cs, k));
        }
        let mut subs = Vec::new();
        for k in 0..self.parts {
            let mut sub = CS::new();
            sub.alloc_input(|| "temp ONE", || Ok(Scalar::ONE))?;
            part(&mut sub, k)?;
            subs.push(sub);
        }
        subs.iter().for_each(|sub| cs.extend(sub));
        Ok(())
    }
}

fn compile(circuit: Parts) -> CompiledCircuit {
    CompiledCircuit::compile("parts", circuit).expect("compiled")
}

#[test]
fn a_circuit_compiled_in_sub_systems_evaluates_as_its_full_recording() {
    for parts in [1, 3, 6] {
        let full = Recorder::synthesize(
            Parts {
                parts,
                split: false,
            },
            RecorderMode::Full,
        )
        .expect("full");
        assert!(full.is_satisfied());
        for split in [false, true] {
            let compiled = compile(Parts { parts, split });
            assert_eq!(compiled.num_constraints(), full.num_constraints);
            let witness = Recorder::synthesize(Parts { parts, split }, RecorderMode::WitnessOnly)
                .expect("witness");
            let got = compiled.evaluate(witness).expect("evaluate");
            assert_eq!(got.inputs, full.inputs, "parts {parts} split {split}");
            assert_eq!(got.aux, full.aux);
            assert!(
                got.compact.is_none(),
                "evaluated, the witness is full again"
            );
            assert_eq!(got.a, full.a, "parts {parts} split {split}");
            assert_eq!(got.b, full.b);
            assert_eq!(got.c, full.c);
            assert_eq!(got.a_aux_density, full.a_aux_density);
            assert_eq!(got.b_input_density, full.b_input_density);
            assert_eq!(got.b_aux_density, full.b_aux_density);
        }
    }
}

#[test]
fn a_deferred_circuit_evaluates_on_the_host_as_an_evaluated_one() {
    let parts = Parts {
        parts: 4,
        split: true,
    };
    let compiled = Arc::new(compile(parts));
    let witness = || Recorder::synthesize(parts, RecorderMode::WitnessOnly).expect("witness");
    let eager = compiled.evaluate(witness()).expect("evaluate");
    let deferred = compiled.defer(witness()).expect("defer");
    assert!(deferred.is_deferred() && !deferred.has_evaluations());
    assert!(deferred.a.is_empty() && deferred.a_aux_density.len == 0);
    let (a, bi, b) = deferred.densities();
    assert_eq!(
        (a, bi, b),
        (
            &eager.a_aux_density,
            &eager.b_input_density,
            &eager.b_aux_density
        )
    );
    let late = deferred.evaluated().expect("evaluated");
    assert!(!late.is_deferred() && late.compiled.is_none());
    assert_eq!(late.a, eager.a);
    assert_eq!(late.b, eager.b);
    assert_eq!(late.c, eager.c);
    assert_eq!(late.b_aux_density, eager.b_aux_density);
    assert!(late.is_satisfied());
    // A witness of another shape is refused, not attached.
    let other = Recorder::synthesize(
        Parts {
            parts: 2,
            split: true,
        },
        RecorderMode::WitnessOnly,
    )
    .expect("witness");
    assert!(matches!(
        compiled.defer(other),
        Err(ProveError::ShapeMismatch { .. })
    ));
}

#[test]
fn released_matrices_still_defer_but_no_longer_evaluate() {
    let parts = Parts {
        parts: 3,
        split: false,
    };
    let mut compiled = compile(parts);
    let before = compiled.heap_bytes();
    let rows = compiled.num_constraints();
    let freed = compiled.release_host_matrices();
    assert!(freed > 0 && compiled.host_matrices_released());
    assert_eq!(compiled.heap_bytes() as u64, before as u64 - freed);
    assert_eq!(compiled.num_constraints(), rows);
    assert!(compiled.matrix(0).cols.is_empty());
    let compiled = Arc::new(compiled);
    let witness = || Recorder::synthesize(parts, RecorderMode::WitnessOnly).expect("witness");
    let deferred = compiled.defer(witness()).expect("defer");
    assert!(deferred.is_deferred());
    assert!(matches!(
        compiled.evaluate(witness()),
        Err(ProveError::Unavailable(_))
    ));
    assert!(matches!(
        deferred.evaluated(),
        Err(ProveError::Unavailable(_))
    ));
}
