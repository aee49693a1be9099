//! The section counts of a circuit's parameter file, without its matrices: one synthesis
//! that marks which variables A and B use (two bitsets) and counts everything else. This is
//! what the TIMING-ONLY parameter writer needs for the real 32 GiB circuits, where building
//! the matrices (hundreds of millions of terms) would take far longer and far more memory.
use bellpepper_core::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError};
use blstrs::Scalar;
use ff::{Field, PrimeField};

use crate::error::Error;

/// How many points each section of a parameter file for one circuit holds, in the order of
/// bellperson's layout (see `crate::params`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sections {
    /// Constraints the circuit enforces (without the input rows).
    pub constraints: usize,
    /// `ic`: the public inputs, ONE included.
    pub ic: usize,
    /// `h`: the evaluation domain size − 1 (rows = constraints + one per input).
    pub h: usize,
    /// `l`: the auxiliary variables.
    pub l: usize,
    /// `a`: every input, then the aux variables used in A.
    pub a: usize,
    /// `b_g1` and `b_g2`: the inputs and aux variables used in B.
    pub b: usize,
}

/// The sections of `circuit`'s parameters, as [`super::generate_params`] would lay them out
/// (a variable counts as used where a term with a non-zero coefficient names it).
pub fn sections<C: Circuit<Scalar>>(circuit: C) -> Result<Sections, Error> {
    let mut cs = Marker::default();
    cs.alloc_input(|| "ONE", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut cs)?;
    let rows = cs.constraints + cs.inputs;
    let domain = rows.next_power_of_two();
    if domain.trailing_zeros() > Scalar::S {
        return Err(SynthesisError::PolynomialDegreeTooLarge.into());
    }
    Ok(Sections {
        constraints: cs.constraints,
        ic: cs.inputs,
        h: domain - 1,
        l: cs.aux,
        a: cs.inputs + count(&cs.a_aux),
        b: count(&cs.b_inputs) + count(&cs.b_aux),
    })
}

fn count(bits: &[u64]) -> usize {
    bits.iter().map(|w| w.count_ones() as usize).sum()
}

/// The positions of the bits set in `bits`, ascending.
fn set_bits(bits: &[u64]) -> impl Iterator<Item = usize> + '_ {
    bits.iter().enumerate().flat_map(|(w, &word)| {
        let mut word = word;
        std::iter::from_fn(move || {
            (word != 0).then(|| {
                let bit = word.trailing_zeros() as usize;
                word &= word - 1;
                w * 64 + bit
            })
        })
    })
}

/// Marks in `dst` every bit set in `src`, `offset` places further on.
fn mark_shifted(dst: &mut Vec<u64>, src: &[u64], offset: usize) {
    for i in set_bits(src) {
        mark(dst, offset + i);
    }
}

fn mark(bits: &mut Vec<u64>, i: usize) {
    let w = i / 64;
    if bits.len() <= w {
        bits.resize(w + 1, 0);
    }
    bits[w] |= 1 << (i % 64);
}

/// Counts variables and constraints and marks A's aux and B's inputs and aux.
#[derive(Default)]
struct Marker {
    inputs: usize,
    aux: usize,
    constraints: usize,
    a_aux: Vec<u64>,
    b_inputs: Vec<u64>,
    b_aux: Vec<u64>,
}

impl ConstraintSystem<Scalar> for Marker {
    type Root = Self;

    fn new() -> Self {
        Marker::default()
    }

    crate::count_variables!(aux, inputs);

    crate::enforce!(|self, _, a, b, _| {
        self.constraints += 1;
        // Every input is in A through its own input row: only A's aux matter.
        for (var, coeff) in a(LinearCombination::zero()).iter() {
            if let Index::Aux(i) = var.get_unchecked() {
                if !bool::from(coeff.is_zero()) {
                    mark(&mut self.a_aux, i);
                }
            }
        }
        for (var, coeff) in b(LinearCombination::zero()).iter() {
            if bool::from(coeff.is_zero()) {
                continue;
            }
            match var.get_unchecked() {
                Index::Input(i) => mark(&mut self.b_inputs, i),
                Index::Aux(i) => mark(&mut self.b_aux, i),
            }
        }
    });

    crate::flat_namespaces!();

    /// Sub-systems made with `new()` (each allocating its own ONE as input 0) may be
    /// synthesized in parallel and appended: storage-proofs' WindowPoSt circuit then walks its
    /// sectors on every core. Counting the 2,349-sector wpost-32g blank circuit one sector
    /// after another took over 330 s on the H200 (`cuzk gen timing-params` timed out).
    fn is_extensible() -> bool {
        true
    }

    /// Appends `other`'s constraints and variables; its input 0 (its temporary ONE) is ours.
    fn extend(&mut self, other: &Self) {
        self.constraints += other.constraints;
        mark_shifted(&mut self.a_aux, &other.a_aux, self.aux);
        mark_shifted(&mut self.b_aux, &other.b_aux, self.aux);
        self.aux += other.aux;
        // Input 0 stays 0; other's input i >= 1 becomes our input self.inputs + i - 1.
        for i in set_bits(&other.b_inputs) {
            let ours = if i == 0 { 0 } else { self.inputs + i - 1 };
            mark(&mut self.b_inputs, ours);
        }
        self.inputs += other.inputs.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::{Sha256Circuit, SyntheticSpec};
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    /// Synthesizes `parts` copies of `circuit` as parallel sub-systems appended with
    /// `extend`, the way storage-proofs' WindowPoSt circuit does (each with its own ONE).
    struct Parts<C> {
        circuit: C,
        parts: usize,
    }

    impl<C: Circuit<Scalar> + Clone> Circuit<Scalar> for Parts<C> {
        fn synthesize<CS: ConstraintSystem<Scalar>>(
            self,
            cs: &mut CS,
        ) -> Result<(), SynthesisError> {
            if CS::is_extensible() {
                for _ in 0..self.parts {
                    let mut sub = CS::new();
                    sub.alloc_input(|| "temp ONE", || Ok(Scalar::ONE))?;
                    self.circuit.clone().synthesize(&mut sub)?;
                    cs.extend(&sub);
                }
            } else {
                for _ in 0..self.parts {
                    self.circuit.clone().synthesize(cs)?;
                }
            }
            Ok(())
        }
    }

    /// Appended sub-systems give the sections of the same circuit synthesized in one system:
    /// that of parameters generated from it (whose setup records it in one system).
    #[test]
    fn extended_sub_systems_count_as_one_system() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for spec in [
            "constraints=700,inputs=4,a=0.8,b=0.4,seed=7",
            "constraints=333,inputs=1,a=0.2,b=1.0,seed=8",
        ] {
            let spec: SyntheticSpec = format!("synthetic:{spec}").parse().unwrap();
            let whole = Parts {
                circuit: spec.circuit(),
                parts: 3,
            };
            let got = sections(whole).unwrap();
            let srs = super::super::generate_params(
                Parts {
                    circuit: spec.circuit(),
                    parts: 3,
                },
                &mut rng,
            )
            .unwrap();
            assert_eq!(got.ic, srs.vk().ic.len(), "{spec:?}");
            assert_eq!(got.h, srs.h().len());
            assert_eq!(got.l, srs.l().len());
            assert_eq!(got.a, srs.a().len());
            assert_eq!(got.b, srs.b_g1().len());
            assert_eq!(got.b, srs.b_g2().len());
            assert_eq!(
                got.constraints,
                3 * sections(spec.circuit()).unwrap().constraints
            );
        }
    }

    /// The counts equal the sections of parameters really generated for the same circuit.
    #[test]
    fn sections_equal_generated_parameters() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let check = |s: Sections, srs: &crate::Srs| {
            assert_eq!(s.ic, srs.vk().ic.len());
            assert_eq!(s.h, srs.h().len());
            assert_eq!(s.l, srs.l().len());
            assert_eq!(s.a, srs.a().len());
            assert_eq!(s.b, srs.b_g1().len());
            assert_eq!(s.b, srs.b_g2().len());
        };
        for spec in [
            "constraints=1000,inputs=3,a=0.9,b=0.3,seed=1",
            "constraints=4096,inputs=1,a=1.0,b=0.05,seed=2",
        ] {
            let spec: SyntheticSpec = format!("synthetic:{spec}").parse().unwrap();
            let srs = super::super::generate_params(spec.circuit(), &mut rng).unwrap();
            check(sections(spec.circuit()).unwrap(), &srs);
        }
        let sha = Sha256Circuit { blocks: 2, seed: 5 };
        let srs = super::super::generate_params(sha, &mut rng).unwrap();
        check(sections(sha).unwrap(), &srs);
    }
}
