//! An **INSECURE** Groth16 parameter generator, for tests and benchmarks only.
//!
//! It draws the toxic waste (τ, α, β, γ, δ) from the caller's RNG and forgets it, but anyone
//! who knows the RNG seed can forge proofs. Never use these parameters for anything of value.
//!
//! The output follows bellperson's conventions exactly, so bellperson's prover and verifier
//! accept it:
//! - after the circuit's constraints, one extra row per input `i` with A = input_i and
//!   B = C = 0, so the domain is the next power of two ≥ constraints + inputs;
//! - `h[i] = τ^i·Z(τ)/δ` for `i < domain − 1`, with `Z(X) = X^domain − 1`;
//! - `ic[i] = (β·u_i(τ) + α·v_i(τ) + w_i(τ))/γ` per input, `l[i]` the same over δ per aux;
//! - `a` = `u_i(τ)` for every input, then for the aux variables dense in A;
//! - `b_g1`/`b_g2` = `v_i(τ)` for the inputs dense in B, then the aux variables dense in B.
//!
//! A variable is dense in A (B) iff it appears with a non-zero coefficient in some A (B)
//! linear combination: bellperson's prover ignores zero-coefficient terms when it tracks
//! density, so this generator does too.
//!
//! Speed: the QAP evaluations come straight from the Lagrange coefficients at τ,
//! `L_j(τ) = ω^j·(τ^n − 1)/(n·(τ − ω^j))`, with one batch inversion and no NTT; every point
//! is a fixed-base multiplication with signed-window tables of the generator, accumulated in
//! affine coordinates with one shared inversion per window and batch, all in parallel (rayon).
//! Measured: ~58 s on 2 idle cores for a 2 KiB-PoRep-shaped circuit (2.69M constraints,
//! domain 2^22), ~2 s at 2^16 (`bench/RESULTS.md`).
mod assembly;
mod fixed_base;
mod points;
mod sections;
mod stream;

pub use points::{g1_window_table, g2_window_table, CpuPoints, PointMaker, G1_BYTES, G2_BYTES};
pub use sections::{sections, Sections};
pub use stream::{write_params_streamed, StreamedSetup};

use crate::error::Error;
use crate::params::{Srs, VerifyingKey};
use assembly::{Assembly, Matrix, Var};
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::{G1Affine, G1Projective, G2Projective, Scalar};
use ff::{Field, PrimeField};
use fixed_base::{best_window, FixedBase, SetupGroup};
use group::{prime::PrimeCurveAffine, Curve, Group};
use rand_core::RngCore;
use rayon::prelude::*;
use std::time::{Duration, Instant};

/// Field elements handled per parallel task when computing scalars.
pub(crate) const CHUNK: usize = 1 << 14;

/// Where setup spent its time.
#[derive(Clone, Copy, Debug, Default)]
pub struct SetupTimings {
    /// Synthesizing the circuit into the sparse matrices.
    pub synthesize: Duration,
    /// Lagrange coefficients, QAP evaluations at τ and the scalars of every query.
    pub evaluate: Duration,
    /// Fixed-base multiplications in G1 (`h`, `ic`, `l`, `a`, `b_g1`), tables included.
    pub g1: Duration,
    /// Fixed-base multiplications in G2 (`b_g2`), tables included.
    pub g2: Duration,
    /// Everything.
    pub total: Duration,
}

/// The shape setup found in the circuit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SetupShape {
    /// Constraints enforced by the circuit (without the input rows).
    pub constraints: usize,
    /// Public inputs, ONE included.
    pub inputs: usize,
    /// Auxiliary variables.
    pub aux: usize,
    /// Evaluation domain size (a power of two).
    pub domain: usize,
}

/// Generates **INSECURE** Groth16 parameters for `circuit` with toxic waste from `rng`.
/// For tests and benchmarks only (see the module docs).
pub fn generate_params<C: Circuit<Scalar>>(
    circuit: C,
    rng: &mut impl RngCore,
) -> Result<Srs, Error> {
    generate_params_timed(circuit, rng).map(|(srs, _, _)| srs)
}

/// [`generate_params`], also reporting the circuit's shape and where the time went.
pub fn generate_params_timed<C: Circuit<Scalar>>(
    circuit: C,
    rng: &mut impl RngCore,
) -> Result<(Srs, SetupShape, SetupTimings), Error> {
    let started = Instant::now();
    let mut timings = SetupTimings::default();

    let mut cs = Assembly::default();
    cs.alloc_input(|| "ONE", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut cs)?;
    let constraints = cs.num_rows();
    cs.add_input_constraints();
    if cs.overflow {
        return Err(SynthesisError::PolynomialDegreeTooLarge.into());
    }
    let rows = cs.num_rows();
    let (domain, omega) = domain_of(rows)?;
    let shape = SetupShape {
        constraints,
        inputs: cs.num_inputs,
        aux: cs.num_aux,
        domain,
    };
    timings.synthesize = started.elapsed();

    let t = Instant::now();
    let toxic = ToxicWaste::draw(rng, domain as u64);
    let lagrange = lagrange_at(toxic.tau, omega, domain, rows);
    let nvars = cs.num_inputs + cs.num_aux;
    let ni = cs.num_inputs;
    let ((u, a_dense), ((v, b_dense), (w, _))) = rayon::join(
        || evaluate(&cs.a, &lagrange, ni, nvars),
        || {
            rayon::join(
                || evaluate(&cs.b, &lagrange, ni, nvars),
                || evaluate(&cs.c, &lagrange, ni, nvars),
            )
        },
    );
    drop(lagrange);
    drop(cs);
    let scalars = Scalars::new(&toxic, domain, ni, &u, &v, &w, &a_dense, &b_dense)?;
    drop((u, v, w, a_dense, b_dense));
    timings.evaluate = t.elapsed();

    let t = Instant::now();
    let n_g2 = scalars.b.len();
    let b_g2 = fixed_base_many::<G2Projective>(&scalars.b, best_window(n_g2));
    timings.g2 = t.elapsed();

    let t = Instant::now();
    let n_g1 = scalars.h.len() + scalars.ic.len() + scalars.l.len() + scalars.a.len() + n_g2;
    let g1 = FixedBase::<G1Projective>::new(G1Projective::generator(), best_window(n_g1));
    let run = |s: &[Scalar]| {
        let mut out = vec![G1Affine::identity(); s.len()];
        g1.mul_many(s, &mut out);
        out
    };
    let h = run(&scalars.h);
    let ic = run(&scalars.ic);
    let l = run(&scalars.l);
    let a = run(&scalars.a);
    let b_g1 = run(&scalars.b);
    drop(g1);
    timings.g1 = t.elapsed();

    let vk = toxic.verifying_key(ic);
    timings.total = started.elapsed();
    Ok((Srs::new(vk, h, l, a, b_g1, b_g2), shape, timings))
}

fn fixed_base_many<G: SetupGroup>(scalars: &[Scalar], window: usize) -> Vec<G::Aff> {
    let fb = FixedBase::<G>::new(G::generator(), window);
    let mut out = vec![G::Aff::identity(); scalars.len()];
    fb.mul_many(scalars, &mut out);
    out
}

/// The secrets of one setup. Dropped (not zeroized: these parameters are insecure anyway).
pub(crate) struct ToxicWaste {
    pub(crate) tau: Scalar,
    pub(crate) alpha: Scalar,
    pub(crate) beta: Scalar,
    pub(crate) gamma: Scalar,
    pub(crate) delta: Scalar,
}

impl ToxicWaste {
    pub(crate) fn draw(rng: &mut impl RngCore, domain: u64) -> Self {
        let mut nonzero = || loop {
            let x = Scalar::random(&mut *rng);
            if !bool::from(x.is_zero()) {
                return x;
            }
        };
        // τ must not be a root of Z(X) = X^domain − 1, or the Lagrange formula divides by 0.
        let tau = loop {
            let t = nonzero();
            if t.pow_vartime([domain]) != Scalar::ONE {
                break t;
            }
        };
        ToxicWaste {
            tau,
            alpha: nonzero(),
            beta: nonzero(),
            gamma: nonzero(),
            delta: nonzero(),
        }
    }
}

/// The evaluation domain of `rows` rows: its size (the next power of two) and generator.
pub(crate) fn domain_of(rows: usize) -> Result<(usize, Scalar), Error> {
    let domain = rows.next_power_of_two();
    let exp = domain.trailing_zeros();
    if exp > Scalar::S {
        return Err(SynthesisError::PolynomialDegreeTooLarge.into());
    }
    let mut omega = Scalar::ROOT_OF_UNITY;
    for _ in exp..Scalar::S {
        omega = omega.square();
    }
    Ok((domain, omega))
}

impl ToxicWaste {
    /// The verifying key of these secrets, with the inputs' points `ic`.
    pub(crate) fn verifying_key(&self, ic: Vec<G1Affine>) -> VerifyingKey {
        let g1 = G1Projective::generator();
        let g2 = G2Projective::generator();
        VerifyingKey {
            alpha_g1: (g1 * self.alpha).to_affine(),
            beta_g1: (g1 * self.beta).to_affine(),
            beta_g2: (g2 * self.beta).to_affine(),
            gamma_g2: (g2 * self.gamma).to_affine(),
            delta_g1: (g1 * self.delta).to_affine(),
            delta_g2: (g2 * self.delta).to_affine(),
            ic,
        }
    }
}

/// `L_j(τ)` for `j < rows`, over the domain of size `domain` generated by `omega`.
fn lagrange_at(tau: Scalar, omega: Scalar, domain: usize, rows: usize) -> Vec<Scalar> {
    let z = tau.pow_vartime([domain as u64]) - Scalar::ONE;
    let n_inv = Option::<Scalar>::from(Scalar::from(domain as u64).invert()).unwrap_or(Scalar::ONE);
    let c = z * n_inv;
    let mut out = vec![Scalar::ZERO; rows];
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(k, chunk)| {
            let mut wj = omega.pow_vartime([(k * CHUNK) as u64]);
            let mut powers = Vec::with_capacity(chunk.len());
            for o in chunk.iter_mut() {
                powers.push(wj);
                *o = tau - wj;
                wj *= omega;
            }
            batch_invert(chunk);
            for (o, p) in chunk.iter_mut().zip(powers) {
                *o *= p * c;
            }
        });
    out
}

/// Inverts every element in place (all must be non-zero) with one field inversion.
pub(crate) fn batch_invert(v: &mut [Scalar]) {
    let mut prefix = Vec::with_capacity(v.len());
    let mut acc = Scalar::ONE;
    for x in v.iter() {
        prefix.push(acc);
        acc *= x;
    }
    let mut inv = Option::<Scalar>::from(acc.invert()).unwrap_or(Scalar::ZERO);
    for (x, p) in v.iter_mut().zip(prefix).rev() {
        let xi = inv * p;
        inv *= *x;
        *x = xi;
    }
}

/// One QAP polynomial per variable (inputs first, then aux) evaluated at τ, and which
/// variables appear in the matrix at all.
fn evaluate(m: &Matrix, lagrange: &[Scalar], ni: usize, nvars: usize) -> (Vec<Scalar>, Vec<bool>) {
    let mut eval = vec![Scalar::ZERO; nvars];
    let mut dense = vec![false; nvars];
    m.for_each(|row, var, coeff| {
        let i = match var {
            Var::Input(i) => i,
            Var::Aux(i) => ni + i,
        };
        eval[i] += lagrange[row] * coeff;
        dense[i] = true;
    });
    (eval, dense)
}

/// The scalar of every point of the parameters, query by query.
struct Scalars {
    h: Vec<Scalar>,
    ic: Vec<Scalar>,
    l: Vec<Scalar>,
    a: Vec<Scalar>,
    b: Vec<Scalar>,
}

impl Scalars {
    #[allow(clippy::too_many_arguments)]
    fn new(
        t: &ToxicWaste,
        domain: usize,
        ni: usize,
        u: &[Scalar],
        v: &[Scalar],
        w: &[Scalar],
        a_dense: &[bool],
        b_dense: &[bool],
    ) -> Result<Self, Error> {
        let invert = |x: Scalar| {
            Option::<Scalar>::from(x.invert()).ok_or(SynthesisError::UnexpectedIdentity)
        };
        let gamma_inv = invert(t.gamma)?;
        let delta_inv = invert(t.delta)?;

        let zt_over_delta = (t.tau.pow_vartime([domain as u64]) - Scalar::ONE) * delta_inv;
        let mut h = vec![Scalar::ZERO; domain - 1];
        h.par_chunks_mut(CHUNK).enumerate().for_each(|(k, chunk)| {
            let mut p = t.tau.pow_vartime([(k * CHUNK) as u64]) * zt_over_delta;
            for o in chunk {
                *o = p;
                p *= t.tau;
            }
        });

        let ext = |i: usize, inv: Scalar| (t.beta * u[i] + t.alpha * v[i] + w[i]) * inv;
        let ic: Vec<Scalar> = (0..ni).into_par_iter().map(|i| ext(i, gamma_inv)).collect();
        let l: Vec<Scalar> = (ni..u.len())
            .into_par_iter()
            .map(|i| ext(i, delta_inv))
            .collect();
        if l.par_iter().any(|x| bool::from(x.is_zero())) {
            return Err(SynthesisError::UnconstrainedVariable.into());
        }

        // Every input is in A (its own input row); aux variables only where dense.
        let a: Vec<Scalar> = (0..u.len())
            .filter(|&i| i < ni || a_dense[i])
            .map(|i| u[i])
            .collect();
        let b: Vec<Scalar> = (0..v.len()).filter(|&i| b_dense[i]).map(|i| v[i]).collect();
        // A dense variable with a zero evaluation would need the point at infinity, which
        // bellperson's files cannot hold (probability ~ rows / r for honest circuits).
        if a.iter().chain(&b).any(|x| bool::from(x.is_zero())) {
            return Err(SynthesisError::UnexpectedIdentity.into());
        }
        Ok(Scalars { h, ic, l, a, b })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    #[test]
    fn lagrange_coefficients_interpolate() {
        // Σ_j L_j(τ)·f(ω^j) = f(τ) for a polynomial f of degree < n.
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let n = 16usize;
        let mut omega = Scalar::ROOT_OF_UNITY;
        for _ in 4..Scalar::S {
            omega = omega.square();
        }
        let tau = Scalar::random(&mut rng);
        let coeffs: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
        let f = |x: Scalar| coeffs.iter().rev().fold(Scalar::ZERO, |acc, c| acc * x + c);
        let l = lagrange_at(tau, omega, n, n);
        let mut sum = Scalar::ZERO;
        let mut wj = Scalar::ONE;
        for lj in &l {
            sum += *lj * f(wj);
            wj *= omega;
        }
        assert_eq!(sum, f(tau));
    }

    #[test]
    fn batch_invert_inverts() {
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let xs: Vec<Scalar> = (0..37).map(|_| Scalar::random(&mut rng)).collect();
        let mut ys = xs.clone();
        batch_invert(&mut ys);
        for (x, y) in xs.iter().zip(&ys) {
            assert_eq!(*x * y, Scalar::ONE);
        }
    }
}
