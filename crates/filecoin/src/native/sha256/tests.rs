use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellperson::gadgets::sha256::sha256 as gadget_sha256;
use blstrs::Scalar;
use ff::Field;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use cuzk_groth16::{Recorder, RecorderMode};

use super::*;

/// The allocated values and the constraint count, as the native code emits them.
#[derive(Default)]
struct Tape {
    bits: Vec<bool>,
    constraints: usize,
}

impl Sink for Tape {
    fn bit(&mut self, value: bool) {
        self.bits.push(value);
        self.constraints += 1;
    }
    fn constraints(&mut self, n: usize) {
        self.constraints += n;
    }
}

/// The gadget and the native code on the same input: same values allocated in the same
/// order, same constraint count, same digest.
fn check(input: &[Bit]) {
    let mut cs = Recorder::new(RecorderMode::WitnessOnly);
    let gadget_in: Vec<Boolean> = input
        .iter()
        .map(|b| match *b {
            Const(v) => Boolean::constant(v),
            Is(v) => Boolean::from(AllocatedBit::alloc(&mut cs, Some(v)).unwrap()),
            Not(v) => Boolean::from(AllocatedBit::alloc(&mut cs, Some(v)).unwrap()).not(),
        })
        .collect();
    let (aux0, constraints0) = (cs.num_aux(), cs.num_constraints());
    let digest = gadget_sha256(&mut cs, &gadget_in).unwrap();
    let (aux1, constraints1) = (cs.num_aux(), cs.num_constraints());
    let w = cs.into_synthesized().with_full_aux();

    let mut tape = Tape::default();
    let native = sha256(&mut tape, input);

    assert_eq!(tape.bits.len(), aux1 - aux0, "allocations");
    for (i, (&n, g)) in tape.bits.iter().zip(&w.aux[aux0..]).enumerate() {
        let n = if n { Scalar::ONE } else { Scalar::ZERO };
        assert_eq!(n, *g, "allocation {i}");
    }
    assert_eq!(tape.constraints, constraints1 - constraints0, "constraints");
    let want: Vec<bool> = digest.iter().map(|b| b.get_value().unwrap()).collect();
    let got: Vec<bool> = native.iter().map(|b| b.value()).collect();
    assert_eq!(got, want, "digest");
}

fn random_bits(rng: &mut ChaCha8Rng, n: usize, p_const: f64, p_not: f64) -> Vec<Bit> {
    (0..n)
        .map(|_| {
            let v = rng.gen::<bool>();
            if rng.gen_bool(p_const) {
                Const(v)
            } else if rng.gen_bool(p_not) {
                Not(v)
            } else {
                Is(v)
            }
        })
        .collect()
}

#[test]
fn native_sha256_allocates_what_the_gadget_allocates() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5a25_6001);
    // Lengths in bytes: one block, two (padding spills over), the PoRep label's 39 × 32.
    for (bytes, p_const, p_not) in [
        (32, 0.0, 0.0),
        (64, 0.3, 0.2),
        (55, 0.5, 0.5),
        (56, 1.0, 0.0),
        (120, 0.1, 0.0),
        (1248, 0.2, 0.1),
    ] {
        check(&random_bits(&mut rng, bytes * 8, p_const, p_not));
    }
}

#[test]
fn native_sha256_matches_the_standard_digest_on_constants() {
    use sha2::Digest;
    let msg = b"cuzk: native sha256 witness";
    let bits: Vec<Bit> = msg
        .iter()
        .flat_map(|byte| (0..8).rev().map(move |i| Const((byte >> i) & 1 == 1)))
        .collect();
    let mut tape = Tape::default();
    let out = sha256(&mut tape, &bits);
    assert!(tape.bits.is_empty(), "constants allocate nothing");
    let want = sha2::Sha256::digest(msg);
    let got: Vec<u8> = out
        .chunks(8)
        .map(|byte| {
            byte.iter()
                .fold(0u8, |acc, b| (acc << 1) | u8::from(b.value()))
        })
        .collect();
    assert_eq!(got, want.as_slice());
}
