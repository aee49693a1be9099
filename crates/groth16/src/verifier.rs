//! Groth16 verification against a prepared verifying key, single and batched (random linear
//! combination, one multi-Miller loop, one final exponentiation). Public inputs exclude ONE,
//! as in bellperson.
use crate::{params::VerifyingKey, proof::Proof};
use blstrs::{Bls12, G1Affine, G1Projective, G2Prepared, Gt, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve, Group};
use pairing::{MillerLoopResult, MultiMillerLoop};
use rand_core::RngCore;

/// Why verification could not be performed (a false proof is `Ok(false)`, not an error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The number of public inputs does not match the verifying key.
    #[error("verifying key expects {expected} public inputs, got {got}")]
    InputCount {
        /// `ic.len() - 1`.
        expected: usize,
        /// Inputs given.
        got: usize,
    },
    /// Batch arguments disagree in length.
    #[error("{proofs} proofs but {inputs} input vectors")]
    BatchLength {
        /// Proofs given.
        proofs: usize,
        /// Input vectors given.
        inputs: usize,
    },
}

/// A verifying key with its pairing-side precomputation.
#[derive(Clone, Debug)]
pub struct PreparedVerifyingKey {
    alpha_beta: Gt,
    neg_gamma: G2Prepared,
    neg_delta: G2Prepared,
    alpha_g1: G1Affine,
    beta_g2: G2Prepared,
    ic: Vec<G1Affine>,
}

impl From<&VerifyingKey> for PreparedVerifyingKey {
    fn from(vk: &VerifyingKey) -> Self {
        PreparedVerifyingKey {
            alpha_beta: blstrs::pairing(&vk.alpha_g1, &vk.beta_g2),
            neg_gamma: G2Prepared::from(-vk.gamma_g2),
            neg_delta: G2Prepared::from(-vk.delta_g2),
            alpha_g1: vk.alpha_g1,
            beta_g2: G2Prepared::from(vk.beta_g2),
            ic: vk.ic.clone(),
        }
    }
}

impl PreparedVerifyingKey {
    /// Number of public inputs (excluding ONE).
    pub fn num_inputs(&self) -> usize {
        self.ic.len().saturating_sub(1)
    }

    /// IC_0 + Σ inputs[i]·IC_{i+1}.
    fn accumulate(&self, inputs: &[Scalar]) -> Result<G1Projective, VerifyError> {
        if inputs.len() + 1 != self.ic.len() {
            return Err(VerifyError::InputCount {
                expected: self.num_inputs(),
                got: inputs.len(),
            });
        }
        let mut acc = G1Projective::from(self.ic[0]);
        for (x, p) in inputs.iter().zip(&self.ic[1..]) {
            acc += *p * x;
        }
        Ok(acc)
    }
}

/// Checks e(A,B) = e(α,β)·e(Σ x_i·IC_i, γ)·e(C, δ). `public_inputs` excludes ONE.
pub fn verify_proof(
    pvk: &PreparedVerifyingKey,
    proof: &Proof,
    public_inputs: &[Scalar],
) -> Result<bool, VerifyError> {
    let acc = pvk.accumulate(public_inputs)?.to_affine();
    let b = G2Prepared::from(proof.b);
    let ml = Bls12::multi_miller_loop(&[
        (&proof.a, &b),
        (&acc, &pvk.neg_gamma),
        (&proof.c, &pvk.neg_delta),
    ]);
    Ok(ml.final_exponentiation() == pvk.alpha_beta)
}

/// Verifies several proofs at once: with random z_j (z_0 = 1),
/// Π e(z_j·A_j, B_j) · e(−Σz_j·acc_j, γ) · e(−Σz_j·C_j, δ) · e(−(Σz_j)·α, β) = 1.
/// Returns false if any proof is invalid (with overwhelming probability).
pub fn verify_proofs_batch<R: RngCore>(
    pvk: &PreparedVerifyingKey,
    rng: &mut R,
    proofs: &[&Proof],
    public_inputs: &[Vec<Scalar>],
) -> Result<bool, VerifyError> {
    if proofs.len() != public_inputs.len() {
        return Err(VerifyError::BatchLength {
            proofs: proofs.len(),
            inputs: public_inputs.len(),
        });
    }
    if proofs.is_empty() {
        return Ok(true);
    }
    let mut acc_inputs = G1Projective::identity();
    let mut acc_c = G1Projective::identity();
    let mut z_sum = Scalar::ZERO;
    let mut a_scaled = Vec::with_capacity(proofs.len());
    let mut b_prep = Vec::with_capacity(proofs.len());
    for (j, (p, x)) in proofs.iter().zip(public_inputs).enumerate() {
        let z = if j == 0 {
            Scalar::ONE
        } else {
            // 128-bit random coefficients suffice for soundness.
            Scalar::from(rng.next_u64()) * Scalar::from(1u64 << 32).square()
                + Scalar::from(rng.next_u64())
        };
        acc_inputs += pvk.accumulate(x)? * z;
        acc_c += p.c * z;
        z_sum += z;
        a_scaled.push((p.a * z).to_affine());
        b_prep.push(G2Prepared::from(p.b));
    }
    let acc_inputs = acc_inputs.to_affine();
    let acc_c = acc_c.to_affine();
    let neg_alpha = (-(pvk.alpha_g1.to_curve() * z_sum)).to_affine();
    let mut terms: Vec<(&G1Affine, &G2Prepared)> = a_scaled.iter().zip(b_prep.iter()).collect();
    terms.push((&acc_inputs, &pvk.neg_gamma));
    terms.push((&acc_c, &pvk.neg_delta));
    terms.push((&neg_alpha, &pvk.beta_g2));
    let ml = Bls12::multi_miller_loop(&terms);
    Ok(ml.final_exponentiation() == Gt::identity())
}
