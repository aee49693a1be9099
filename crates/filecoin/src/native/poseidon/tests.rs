use bellpepper_core::num::AllocatedNum;
use blstrs::Scalar as Fr;
use ff::Field;
use filecoin_hashers::poseidon::PoseidonHasher;
use filecoin_hashers::{POSEIDON_CONSTANTS_11, POSEIDON_CONSTANTS_2, POSEIDON_CONSTANTS_8};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use storage_proofs_core::gadgets::por::{AuthPath, PoRCircuit};
use storage_proofs_core::gadgets::variables::Root;
use storage_proofs_core::merkle::{DiskStore, MerkleTreeWrapper};
use typenum::{U0, U2, U4, U8};

use cuzk_groth16::{Recorder, RecorderMode, Synthesized};

use super::*;

fn random(rng: &mut ChaCha8Rng, n: usize) -> Vec<Fr> {
    (0..n).map(|_| Fr::random(&mut *rng)).collect()
}

/// What a recording allocated past `aux0` aux values, and its constraints past `c0`.
fn tail(w: &Synthesized, aux0: usize, c0: usize) -> (Vec<Fr>, usize) {
    let aux = w
        .compact
        .as_ref()
        .map_or_else(|| w.aux.clone(), |c| c.to_full());
    (aux[aux0..].to_vec(), w.num_constraints - c0)
}

fn check_hash<A: Arity<Fr>>(rng: &mut ChaCha8Rng, c: &PoseidonConstants<Fr, A>) {
    let preimage = random(rng, c.width() - 1);
    let mut cs = Recorder::new(RecorderMode::WitnessOnly);
    let nums: Vec<AllocatedNum<Fr>> = preimage
        .iter()
        .map(|v| AllocatedNum::alloc(&mut cs, || Ok(*v)).unwrap())
        .collect();
    let (a0, c0) = (cs.num_aux(), cs.num_constraints());
    let out = neptune::circuit::poseidon_hash(&mut cs, nums, c).unwrap();
    let want_value = out.get_value().unwrap();
    let want = tail(&cs.into_synthesized(), a0, c0);

    let mut cs = Recorder::new(RecorderMode::WitnessOnly);
    let got_value = hash(&mut cs.native_witness().unwrap(), &preimage, c).unwrap();
    let got = tail(&cs.into_synthesized(), 0, 0);
    assert_eq!(
        got.0.len(),
        want.0.len(),
        "arity {}: allocations",
        c.width() - 1
    );
    assert_eq!(got, want, "arity {}", c.width() - 1);
    assert_eq!(got_value, want_value);
}

#[test]
fn native_poseidon_allocates_what_neptune_s_gadget_allocates() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x9053_1d07);
    for _ in 0..3 {
        check_hash(&mut rng, &*POSEIDON_CONSTANTS_2);
        check_hash(&mut rng, &*POSEIDON_CONSTANTS_8);
        check_hash(&mut rng, &*POSEIDON_CONSTANTS_11);
    }
}

/// A random path of `levels` base levels of arity `U` (and one sub level of `V`, one top level
/// of `W` where non-zero), through `PoRCircuit` and natively.
fn check_path<U, V, W>(rng: &mut ChaCha8Rng, levels: usize)
where
    U: 'static + filecoin_hashers::PoseidonArity,
    V: 'static + filecoin_hashers::PoseidonArity,
    W: 'static + filecoin_hashers::PoseidonArity,
{
    let arities = std::iter::repeat_n(U::to_usize(), levels).chain(
        [V::to_usize(), W::to_usize()]
            .into_iter()
            .filter(|&a| a > 0),
    );
    let opts: Vec<(Vec<Option<Fr>>, Option<usize>)> = arities
        .map(|a| {
            let siblings = random(rng, a - 1).into_iter().map(Some).collect();
            (siblings, Some(rng.gen_range(0..a)))
        })
        .collect();
    let (leaf, root) = (Fr::random(&mut *rng), Fr::random(&mut *rng));

    let mut cs = Recorder::new(RecorderMode::WitnessOnly);
    let leaf_num = AllocatedNum::alloc(&mut cs, || Ok(leaf)).unwrap();
    let root_num = AllocatedNum::alloc(&mut cs, || Ok(root)).unwrap();
    let (a0, c0, i0) = (cs.num_aux(), cs.num_constraints(), cs.num_inputs());
    PoRCircuit::<MerkleTreeWrapper<PoseidonHasher, DiskStore<_>, U, V, W>>::synthesize(
        &mut cs,
        Root::from_allocated::<Recorder>(leaf_num),
        AuthPath::<PoseidonHasher, U, V, W>::from(opts.clone()),
        Root::from_allocated::<Recorder>(root_num),
        true,
    )
    .unwrap();
    let inputs = cs.num_inputs() - i0;
    let want = tail(&cs.into_synthesized(), a0, c0);

    let mut cs = Recorder::new(RecorderMode::WitnessOnly);
    let (_, bits) = path(&mut cs.native_witness().unwrap(), leaf, &opts).unwrap();
    let (aux, constraints) = tail(&cs.into_synthesized(), 0, 0);
    assert_eq!(inputs, bits.len().div_ceil(254));
    // PoRCircuit adds the packed index bits' constraints and the root's equality.
    assert_eq!((aux, constraints + inputs + 1), want);
}

#[test]
fn native_poseidon_paths_allocate_what_por_circuit_allocates() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x9a74_0001);
    check_path::<U8, U0, U0>(&mut rng, 3);
    check_path::<U8, U8, U0>(&mut rng, 2);
    check_path::<U8, U8, U2>(&mut rng, 2);
    check_path::<U4, U0, U0>(&mut rng, 3);
    check_path::<U2, U0, U0>(&mut rng, 4);
}
