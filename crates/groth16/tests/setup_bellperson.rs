//! Parameters from our insecure setup work with bellperson's prover and verifier, and have
//! the shape bellperson's own generator gives the same circuit.
mod params_support;

use bellperson::groth16::{
    create_proof, create_random_proof, generate_random_parameters, prepare_verifying_key,
    verify_proof,
};
use blstrs::{Bls12, Scalar};
use cuzk_groth16::setup::{generate_params, generate_params_timed};
use ff::Field;
use params_support::{to_bellperson, RandomCircuit, Shape, SquareChain};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

fn shapes() -> Vec<(&'static str, Shape)> {
    let s = |inputs, aux, constraints, b_aux| Shape {
        inputs,
        aux,
        constraints,
        b_aux,
    };
    vec![
        ("one input", s(1, 9, 13, 0.5)),
        ("many inputs", s(23, 40, 70, 0.3)),
        ("empty aux", s(4, 0, 6, 0.0)),
        // 60 constraints + 4 input rows = 64: domain exactly a power of two.
        ("power of two rows", s(4, 50, 60, 0.5)),
        ("b aux density zero", s(2, 30, 35, 0.0)),
        ("b aux density one", s(2, 30, 35, 1.0)),
    ]
}

#[test]
fn bellperson_proves_and_verifies_with_our_params() {
    for (k, (name, shape)) in shapes().into_iter().enumerate() {
        let circuit = RandomCircuit::new(shape, 100 + k as u64);
        let mut rng = ChaCha8Rng::seed_from_u64(200 + k as u64);
        let srs = generate_params(circuit.clone(), &mut rng).expect("setup");
        let params = to_bellperson(&srs);
        let pvk = prepare_verifying_key(&params.vk);
        let inputs = circuit.public_inputs();

        let proof = create_random_proof::<Bls12, _, _, _>(circuit.clone(), &params, &mut rng)
            .expect("bellperson proves");
        assert!(
            verify_proof(&pvk, &proof, &inputs).expect("verify runs"),
            "{name}: proof rejected"
        );

        let r = Scalar::random(&mut rng);
        let s = Scalar::random(&mut rng);
        let proof = create_proof::<Bls12, _, _>(circuit.clone(), &params, r, s).expect("proves");
        assert!(
            verify_proof(&pvk, &proof, &inputs).expect("verify runs"),
            "{name}"
        );

        if !inputs.is_empty() {
            let mut wrong = inputs.clone();
            wrong[0] += Scalar::ONE;
            assert!(
                !verify_proof(&pvk, &proof, &wrong).expect("verify runs"),
                "{name}: proof accepted for wrong inputs"
            );
        }
    }
}

#[test]
fn square_chain_of_non_power_of_two_length_verifies() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let circuit = SquareChain {
        n: 1000,
        x0: Scalar::random(&mut rng),
    };
    let srs = generate_params(circuit.clone(), &mut rng).expect("setup");
    let params = to_bellperson(&srs);
    let pvk = prepare_verifying_key(&params.vk);
    let proof =
        create_random_proof::<Bls12, _, _, _>(circuit.clone(), &params, &mut rng).expect("proves");
    assert!(verify_proof(&pvk, &proof, &[circuit.x0]).unwrap());
    assert!(!verify_proof(&pvk, &proof, &[circuit.x0 + Scalar::ONE]).unwrap());
}

#[test]
fn query_lengths_match_bellperson_generator() {
    for (k, (name, shape)) in shapes().into_iter().enumerate() {
        let circuit = RandomCircuit::new(shape, 300 + k as u64);
        let mut rng = ChaCha8Rng::seed_from_u64(400 + k as u64);
        let (ours, got_shape, _) = generate_params_timed(circuit.clone(), &mut rng).unwrap();
        let theirs = generate_random_parameters::<Bls12, _, _>(circuit, &mut rng).unwrap();
        assert_eq!(ours.vk().ic.len(), theirs.vk.ic.len(), "{name}: ic");
        assert_eq!(ours.h().len(), theirs.h.len(), "{name}: h");
        assert_eq!(ours.l().len(), theirs.l.len(), "{name}: l");
        assert_eq!(ours.a().len(), theirs.a.len(), "{name}: a");
        assert_eq!(ours.b_g1().len(), theirs.b_g1.len(), "{name}: b_g1");
        assert_eq!(ours.b_g2().len(), theirs.b_g2.len(), "{name}: b_g2");
        assert_eq!(got_shape.inputs, shape.inputs, "{name}");
        assert_eq!(got_shape.aux, shape.aux, "{name}");
        assert_eq!(got_shape.constraints, shape.constraints, "{name}");
        assert_eq!(
            got_shape.domain,
            (shape.constraints + shape.inputs).next_power_of_two()
        );
    }
}

#[test]
fn unconstrained_aux_variable_is_an_error() {
    #[derive(Clone)]
    struct Unconstrained;
    impl bellpepper_core::Circuit<Scalar> for Unconstrained {
        fn synthesize<CS: bellpepper_core::ConstraintSystem<Scalar>>(
            self,
            cs: &mut CS,
        ) -> Result<(), bellpepper_core::SynthesisError> {
            let x = cs.alloc(|| "x", || Ok(Scalar::ONE))?;
            let _unused = cs.alloc(|| "y", || Ok(Scalar::ONE))?;
            cs.enforce(|| "x*x=x", |lc| lc + x, |lc| lc + x, |lc| lc + x);
            Ok(())
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let err = generate_params(Unconstrained, &mut rng).unwrap_err();
    assert!(
        matches!(
            err,
            cuzk_groth16::Error::Synthesis(bellpepper_core::SynthesisError::UnconstrainedVariable)
        ),
        "{err:?}"
    );
}
