//! Cross-checks of our CPU prover and verifier against bellperson 0.26 on seeded synthetic
//! circuits of several shapes: identical proof bytes for the same r, s (split, one-shot and
//! bellperson), verification both ways, bit flips rejected, batch verification, shape errors.
mod params_support;

use bellperson::groth16 as bp;
use blstrs::{Bls12, Scalar};
use cuzk_groth16::{
    proof::Proof,
    prover::{random_blinding, CpuProver, ProverBackend},
    recorder::{Recorder, RecorderMode},
    setup::generate_params,
    synthetic::{CircuitSpec, SyntheticSpec},
    verifier::{verify_proof, verify_proofs_batch, PreparedVerifyingKey},
    ProveError, Srs,
};
use ff::Field;
use params_support::{from_bellperson, to_bellperson};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

fn bp_bytes(p: &bp::Proof<Bls12>) -> Vec<u8> {
    let mut v = Vec::new();
    p.write(&mut v).expect("write");
    v
}

fn to_bp_proof(p: &Proof) -> bp::Proof<Bls12> {
    bp::Proof::read(&p.to_bytes()[..]).expect("bellperson reads our proof")
}

const SHAPES: &[&str] = &[
    // 100 + 2 rows: not a power of two.
    "synthetic:constraints=100,inputs=1,seed=1",
    // 124 + 4 rows = 128: exactly a power of two.
    "synthetic:constraints=124,inputs=3,seed=2",
    // Many inputs.
    "synthetic:constraints=90,inputs=40,seed=3",
    // Empty aux.
    "synthetic:constraints=64,inputs=2,aux=0,seed=4",
    // All-zero A/B densities.
    "synthetic:constraints=200,inputs=5,a=0,b=0,seed=5",
    // All-one densities, every aux value 0 or 1.
    "synthetic:constraints=150,inputs=5,a=1,b=1,bool=1,seed=6",
    // No 0/1 values, twice as many aux as constraints.
    "synthetic:constraints=300,inputs=7,aux=2,bool=0,seed=8",
    // PoRep-like defaults near 2^12.
    "synthetic:constraints=4000,inputs=4,seed=9",
];

#[test]
fn matches_bellperson_on_all_shapes() {
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let prover = CpuProver::new();
    for spec in SHAPES {
        let spec: SyntheticSpec = spec.parse().expect("spec");
        let circuit = spec.circuit();
        let params = bp::generate_random_parameters::<Bls12, _, _>(circuit, &mut rng)
            .expect("bellperson setup");
        let srs = from_bellperson(&params);
        let inputs = CircuitSpec::Synthetic(spec).public_inputs();
        let (r, s) = random_blinding(&mut rng);

        // Split, one-shot and bellperson give identical bytes.
        let syn = Recorder::synthesize(circuit, RecorderMode::Full).expect("synthesis");
        assert!(syn.is_satisfied(), "{spec}");
        let pending = prover.start(&srs, syn.clone(), r, s).expect("start");
        let split = prover.finish(&srs, pending).expect("finish");
        let one_shot = prover.prove(&srs, syn, r, s).expect("prove");
        let theirs = bp::create_proof(circuit, &params, r, s).expect("bellperson prove");
        assert_eq!(split, one_shot, "{spec}");
        assert_eq!(split.to_bytes().to_vec(), bp_bytes(&theirs), "{spec}");

        // Ours verifies with bellperson; bellperson's (random r, s) verifies with ours.
        let bp_pvk = bp::prepare_verifying_key(&params.vk);
        assert!(bp::verify_proof(&bp_pvk, &to_bp_proof(&split), &inputs).expect("bp verify"));
        let theirs = bp::create_random_proof(circuit, &params, &mut rng).expect("bp prove");
        let theirs = Proof::from_bytes(&bp_bytes(&theirs)).expect("decode");
        let pvk = PreparedVerifyingKey::from(srs.vk());
        assert!(
            verify_proof(&pvk, &theirs, &inputs).expect("verify"),
            "{spec}"
        );
        assert!(
            verify_proof(&pvk, &split, &inputs).expect("verify"),
            "{spec}"
        );

        // Wrong public inputs fail.
        if !inputs.is_empty() {
            let mut wrong = inputs.clone();
            wrong[0] += Scalar::ONE;
            assert!(!verify_proof(&pvk, &split, &wrong).expect("verify"));
        }
        assert!(
            verify_proof(&pvk, &split, &inputs[..inputs.len().saturating_sub(1)]).is_err()
                || inputs.is_empty()
        );
    }
}

/// A seeded generator, the synthetic circuit `spec` and our parameters for it.
fn setup(seed: u64, spec: &str) -> (ChaCha8Rng, SyntheticSpec, Srs) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let spec: SyntheticSpec = spec.parse().expect("spec");
    let srs = generate_params(spec.circuit(), &mut rng).expect("setup");
    (rng, spec, srs)
}

#[test]
fn flipped_bits_fail() {
    let (mut rng, spec, srs) = setup(77, "synthetic:constraints=200,inputs=3,seed=10");
    let syn = Recorder::synthesize(spec.circuit(), RecorderMode::Full).expect("synthesis");
    let (r, s) = random_blinding(&mut rng);
    let proof = CpuProver::new().prove(&srs, syn, r, s).expect("prove");
    let inputs = CircuitSpec::Synthetic(spec).public_inputs();
    let pvk = PreparedVerifyingKey::from(srs.vk());
    assert!(verify_proof(&pvk, &proof, &inputs).expect("verify"));
    let bytes = proof.to_bytes();
    let mut rejected = 0;
    // Every byte of A, B and C, a seeded bit in each.
    for i in 0..bytes.len() {
        let mut bad = bytes;
        bad[i] ^= 1 << (rng.next_u32() % 8);
        match Proof::from_bytes(&bad) {
            Err(_) => rejected += 1,
            Ok(p) => {
                assert!(
                    !verify_proof(&pvk, &p, &inputs).expect("verify"),
                    "byte {i}"
                );
                rejected += 1;
            }
        }
    }
    assert_eq!(rejected, bytes.len());
}

#[test]
fn our_setup_works_with_both_provers() {
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    for spec in [
        "synthetic:constraints=500,inputs=1,seed=11",
        "synthetic:constraints=253,inputs=2,a=0.5,b=1,seed=12",
        "synthetic:constraints=64,inputs=6,aux=0,seed=13",
    ] {
        let spec: SyntheticSpec = spec.parse().expect("spec");
        let circuit = spec.circuit();
        let srs = generate_params(circuit, &mut rng).expect("our setup");
        let params = to_bellperson(&srs);
        let (r, s) = random_blinding(&mut rng);
        let syn = Recorder::synthesize(circuit, RecorderMode::Full).expect("synthesis");
        let ours = CpuProver::new().prove(&srs, syn, r, s).expect("prove");
        let theirs = bp::create_proof(circuit, &params, r, s).expect("bellperson prove");
        assert_eq!(ours.to_bytes().to_vec(), bp_bytes(&theirs), "{spec}");
        let inputs = CircuitSpec::Synthetic(spec).public_inputs();
        let pvk = PreparedVerifyingKey::from(srs.vk());
        assert!(verify_proof(&pvk, &ours, &inputs).expect("verify"));
        let bp_pvk = bp::prepare_verifying_key(&params.vk);
        assert!(bp::verify_proof(&bp_pvk, &theirs, &inputs).expect("bp verify"));
    }
}

#[test]
fn batch_verification() {
    let (mut rng, base, srs) = setup(41, "synthetic:constraints=300,inputs=2,seed=20");
    let pvk = PreparedVerifyingKey::from(srs.vk());
    let prover = CpuProver::new();
    // Same shape, different witnesses (seeds change values; structure must match the SRS,
    // so use the same seed but different blinding).
    let mut proofs = Vec::new();
    let mut inputs = Vec::new();
    for _ in 0..4 {
        let syn = Recorder::synthesize(base.circuit(), RecorderMode::Full).expect("synthesis");
        let (r, s) = random_blinding(&mut rng);
        let p = prover.prove(&srs, syn, r, s).expect("prove");
        proofs.push(p);
        inputs.push(CircuitSpec::Synthetic(base).public_inputs());
    }
    let refs: Vec<&Proof> = proofs.iter().collect();
    assert!(verify_proofs_batch(&pvk, &mut rng, &refs, &inputs).expect("batch"));
    assert!(verify_proofs_batch(&pvk, &mut rng, &[], &[]).expect("empty batch"));

    // One bad proof (C of another proof) makes the batch fail.
    let mut bad = proofs.clone();
    bad[2].c = proofs[1].c;
    let refs: Vec<&Proof> = bad.iter().collect();
    assert!(!verify_proofs_batch(&pvk, &mut rng, &refs, &inputs).expect("batch"));
    // One wrong input vector makes it fail too.
    let mut wrong = inputs.clone();
    wrong[3][1] += Scalar::ONE;
    let refs: Vec<&Proof> = proofs.iter().collect();
    assert!(!verify_proofs_batch(&pvk, &mut rng, &refs, &wrong).expect("batch"));
    // Length mismatch is an error.
    assert!(verify_proofs_batch(&pvk, &mut rng, &refs, &inputs[..3]).is_err());
}

#[test]
fn batch_prove_and_shape_errors() {
    let (mut rng, spec, srs) = setup(51, "synthetic:constraints=120,inputs=3,seed=30");
    let prover = CpuProver::new();
    let syns: Vec<_> = (0..3)
        .map(|_| Recorder::synthesize(spec.circuit(), RecorderMode::Full).expect("synthesis"))
        .collect();
    let blind: Vec<(Scalar, Scalar)> = (0..3).map(|_| random_blinding(&mut rng)).collect();
    let pending = prover
        .start_batch(&srs, syns.clone(), &blind)
        .expect("start_batch");
    let proofs = prover.finish_batch(&srs, pending).expect("finish_batch");
    for (p, (syn, &(r, s))) in proofs.iter().zip(syns.iter().zip(&blind)) {
        assert_eq!(*p, prover.prove(&srs, syn.clone(), r, s).expect("prove"));
    }
    assert!(matches!(
        prover.start_batch(&srs, syns.clone(), &blind[..2]),
        Err(ProveError::ShapeMismatch { .. })
    ));

    // A circuit of another shape is a typed error, never a panic.
    for other in [
        "synthetic:constraints=120,inputs=4,seed=30",
        "synthetic:constraints=300,inputs=3,seed=30",
        "synthetic:constraints=120,inputs=3,aux=0.5,seed=30",
        "synthetic:constraints=120,inputs=3,a=0.5,seed=30",
        "synthetic:constraints=120,inputs=3,b=0.9,seed=30",
    ] {
        let other: SyntheticSpec = other.parse().expect("spec");
        let syn = Recorder::synthesize(other.circuit(), RecorderMode::Full).expect("synthesis");
        let err = prover.prove(&srs, syn, Scalar::ONE, Scalar::ONE);
        assert!(
            matches!(err, Err(ProveError::ShapeMismatch { .. })),
            "{other}: {err:?}"
        );
    }
    let witness =
        Recorder::synthesize(spec.circuit(), RecorderMode::WitnessOnly).expect("synthesis");
    assert!(matches!(
        prover.start(&srs, witness, Scalar::ONE, Scalar::ONE),
        Err(ProveError::MissingEvaluations)
    ));
}

#[test]
fn sha256_gadget_circuit_proves() {
    let mut rng = ChaCha8Rng::seed_from_u64(61);
    let spec: CircuitSpec = "sha256:blocks=1,seed=3".parse().expect("spec");
    let srs = generate_params(spec, &mut rng).expect("setup");
    let syn = Recorder::synthesize(spec, RecorderMode::Full).expect("synthesis");
    assert!(syn.is_satisfied());
    let (r, s) = random_blinding(&mut rng);
    let proof = CpuProver::new().prove(&srs, syn, r, s).expect("prove");
    let pvk = PreparedVerifyingKey::from(srs.vk());
    assert!(verify_proof(&pvk, &proof, &spec.public_inputs()).expect("verify"));
    // A real gadget (namespaces, booleans, packed inputs): same bytes as bellperson.
    let theirs = bp::create_proof(spec, &to_bellperson(&srs), r, s).expect("bellperson prove");
    assert_eq!(proof.to_bytes().to_vec(), bp_bytes(&theirs));
}
