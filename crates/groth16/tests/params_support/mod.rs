//! Test helpers shared by the parameter and setup tests: a seeded random satisfied circuit
//! of configurable shape, and conversions between our `Srs` and bellperson's `Parameters`.
#![allow(dead_code)]

use bellpepper_core::{Circuit, ConstraintSystem, LinearCombination, SynthesisError, Variable};
use blstrs::{Bls12, Scalar};
use cuzk_groth16::{Srs, VerifyingKey};
use ff::Field;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::sync::Arc;

/// One term: variable id (`< inputs` = input, ONE is 0; else aux `id - inputs`) and coefficient.
type Lc = Vec<(usize, Scalar)>;

/// A satisfied circuit drawn at random from a seed. Cloning is cheap enough for tests.
#[derive(Clone, Debug)]
pub struct RandomCircuit {
    /// Input values, `inputs[0]` is ONE.
    pub inputs: Vec<Scalar>,
    /// Aux values.
    pub aux: Vec<Scalar>,
    /// (A, B, C) per constraint, with A·B = C on the values above.
    pub constraints: Vec<(Lc, Lc, Lc)>,
}

/// Shape of a [`RandomCircuit`].
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Public inputs including ONE (>= 1).
    pub inputs: usize,
    /// Aux variables.
    pub aux: usize,
    /// Constraints.
    pub constraints: usize,
    /// Probability that a constraint's B mentions an aux variable.
    pub b_aux: f64,
}

impl RandomCircuit {
    pub fn new(shape: Shape, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let nonzero = |rng: &mut ChaCha8Rng| loop {
            let x = Scalar::random(&mut *rng);
            if !bool::from(x.is_zero()) {
                return x;
            }
        };
        let mut inputs = vec![Scalar::ONE];
        inputs.extend((1..shape.inputs).map(|_| nonzero(&mut rng)));
        let aux: Vec<Scalar> = (0..shape.aux).map(|_| nonzero(&mut rng)).collect();
        let nvars = shape.inputs + shape.aux;
        let value = |id: usize| {
            if id < shape.inputs {
                inputs[id]
            } else {
                aux[id - shape.inputs]
            }
        };
        let eval = |lc: &Lc| {
            lc.iter()
                .fold(Scalar::ZERO, |acc, (id, c)| acc + value(*id) * c)
        };
        let mut constraints = Vec::with_capacity(shape.constraints);
        for j in 0..shape.constraints {
            let mut a: Lc = Vec::new();
            // Every aux variable appears in some A (so none is unconstrained).
            if shape.aux > 0 {
                a.push((shape.inputs + j % shape.aux, nonzero(&mut rng)));
            }
            for _ in 0..rng.gen_range(0..3) {
                a.push((rng.gen_range(0..nvars), nonzero(&mut rng)));
            }
            if a.is_empty() {
                a.push((rng.gen_range(0..shape.inputs), nonzero(&mut rng)));
            }
            let mut b: Lc = vec![(rng.gen_range(0..shape.inputs), nonzero(&mut rng))];
            if shape.aux > 0 && rng.gen_bool(shape.b_aux) {
                b.push((
                    shape.inputs + rng.gen_range(0..shape.aux),
                    nonzero(&mut rng),
                ));
            }
            let prod = eval(&a) * eval(&b);
            // C = prod expressed through one variable with a non-zero value.
            let x = rng.gen_range(0..nvars);
            let inv = Option::<Scalar>::from(value(x).invert()).expect("values are non-zero");
            let c: Lc = vec![(x, prod * inv)];
            constraints.push((a, b, c));
        }
        RandomCircuit {
            inputs,
            aux,
            constraints,
        }
    }

    /// Public inputs without ONE, as verifiers take them.
    pub fn public_inputs(&self) -> Vec<Scalar> {
        self.inputs[1..].to_vec()
    }
}

impl Circuit<Scalar> for RandomCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut vars = vec![CS::one()];
        for (i, v) in self.inputs.iter().enumerate().skip(1) {
            let v = *v;
            vars.push(cs.alloc_input(|| format!("in{i}"), || Ok(v))?);
        }
        for (i, v) in self.aux.iter().enumerate() {
            let v = *v;
            vars.push(cs.alloc(|| format!("aux{i}"), || Ok(v))?);
        }
        let lc = |terms: &Lc| {
            terms
                .iter()
                .fold(LinearCombination::<Scalar>::zero(), |acc, (id, c)| {
                    acc + (*c, vars[*id])
                })
        };
        for (j, (a, b, c)) in self.constraints.iter().enumerate() {
            let (a, b, c) = (lc(a), lc(b), lc(c));
            cs.enforce(|| format!("c{j}"), |_| a, |_| b, |_| c);
        }
        Ok(())
    }
}

/// A chain `x_{i+1} = x_i · x_i`: small, cheap, every aux constrained; `n` constraints.
#[derive(Clone, Debug)]
pub struct SquareChain {
    pub n: usize,
    pub x0: Scalar,
}

impl Circuit<Scalar> for SquareChain {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut val = self.x0;
        let mut var: Variable = cs.alloc_input(|| "x0", || Ok(val))?;
        for i in 0..self.n {
            let next = val.square();
            let nv = cs.alloc(|| format!("x{i}"), || Ok(next))?;
            cs.enforce(
                || format!("sq{i}"),
                |lc| lc + var,
                |lc| lc + var,
                |lc| lc + nv,
            );
            var = nv;
            val = next;
        }
        Ok(())
    }
}

/// Our parameters as bellperson's, in memory.
pub fn to_bellperson(srs: &Srs) -> bellperson::groth16::Parameters<Bls12> {
    bellperson::groth16::Parameters {
        vk: vk_to_bellperson(srs.vk()),
        h: Arc::new(srs.h().to_vec()),
        l: Arc::new(srs.l().to_vec()),
        a: Arc::new(srs.a().to_vec()),
        b_g1: Arc::new(srs.b_g1().to_vec()),
        b_g2: Arc::new(srs.b_g2().to_vec()),
    }
}

/// A verifying key's fields copied into type `$ty` (ours and bellperson's have the same).
macro_rules! copy_vk {
    ($vk:expr, $($ty:ident)::+) => {
        $($ty)::+ {
            alpha_g1: $vk.alpha_g1,
            beta_g1: $vk.beta_g1,
            beta_g2: $vk.beta_g2,
            gamma_g2: $vk.gamma_g2,
            delta_g1: $vk.delta_g1,
            delta_g2: $vk.delta_g2,
            ic: $vk.ic.clone(),
        }
    };
}

/// Our verifying key as bellperson's.
pub fn vk_to_bellperson(vk: &VerifyingKey) -> bellperson::groth16::VerifyingKey<Bls12> {
    copy_vk!(vk, bellperson::groth16::VerifyingKey)
}

/// bellperson's parameters as ours.
pub fn from_bellperson(p: &bellperson::groth16::Parameters<Bls12>) -> Srs {
    Srs::new(
        vk_from_bellperson(&p.vk),
        p.h.to_vec(),
        p.l.to_vec(),
        p.a.to_vec(),
        p.b_g1.to_vec(),
        p.b_g2.to_vec(),
    )
}

/// bellperson's verifying key as ours.
pub fn vk_from_bellperson(vk: &bellperson::groth16::VerifyingKey<Bls12>) -> VerifyingKey {
    copy_vk!(vk, VerifyingKey)
}

/// Asserts two parameter sets hold the same points.
pub fn assert_same_points(a: &Srs, b: &Srs) {
    assert_eq!(a.vk(), b.vk(), "vk");
    assert_eq!(a.h(), b.h(), "h");
    assert_eq!(a.l(), b.l(), "l");
    assert_eq!(a.a(), b.a(), "a");
    assert_eq!(a.b_g1(), b.b_g1(), "b_g1");
    assert_eq!(a.b_g2(), b.b_g2(), "b_g2");
}
