//! The section counts of a circuit's parameter file, without its matrices: one synthesis
//! that marks which variables A and B use (two bitsets) and counts everything else. This is
//! what the TIMING-ONLY parameter writer needs for the real 32 GiB circuits, where building
//! the matrices (hundreds of millions of terms) would take far longer and far more memory.
use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
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

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
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
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::{Sha256Circuit, SyntheticSpec};
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

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
