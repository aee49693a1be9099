//! Groth16 proof assembly from the sums `start` computed (bellperson's formula, so the bytes
//! equal every other backend's for the same r and s).
use blstrs::{G1Projective, G2Projective};
use cuzk_groth16::{prover::PendingG2, Pending, Proof, ProveError, Srs};
use group::{prime::PrimeCurveAffine, Curve};

/// Σ b_i·B_G2_i for a deferred G2 part, on the CPU (the GPU backend never defers; this keeps
/// `finish` total for pending values from elsewhere).
fn b_g2_cpu(srs: &Srs, g2: PendingG2) -> Result<G2Projective, ProveError> {
    match g2 {
        PendingG2::Done(p) => Ok(p),
        PendingG2::Deferred {
            inputs,
            aux,
            b_input_density,
            b_aux_density,
        } => {
            let mut scalars = Vec::new();
            for (i, s) in inputs.iter().enumerate() {
                if b_input_density
                    .words
                    .get(i / 64)
                    .is_some_and(|w| w >> (i % 64) & 1 == 1)
                {
                    scalars.push(*s);
                }
            }
            for (i, s) in aux.iter().enumerate() {
                if b_aux_density
                    .words
                    .get(i / 64)
                    .is_some_and(|w| w >> (i % 64) & 1 == 1)
                {
                    scalars.push(*s);
                }
            }
            if scalars.len() != srs.b_g2.len() {
                return Err(ProveError::ShapeMismatch {
                    what: "B G2 bases",
                    expected: srs.b_g2.len(),
                    got: scalars.len(),
                });
            }
            let pts: Vec<G2Projective> = srs.b_g2.iter().map(G2Projective::from).collect();
            Ok(G2Projective::multi_exp(&pts, &scalars))
        }
    }
}

/// Completes a proof: adds α, β, the r·δ / s·δ blinding and forms C.
pub(crate) fn assemble(srs: &Srs, p: Pending) -> Result<Proof, ProveError> {
    let vk = &srs.vk;
    if bool::from(vk.delta_g1.is_identity()) || bool::from(vk.delta_g2.is_identity()) {
        return Err(ProveError::Device("verifying key has δ = identity".into()));
    }
    let (r, s) = (p.r, p.s);
    let b2 = b_g2_cpu(srs, p.b_g2)?;
    let delta_g1 = G1Projective::from(vk.delta_g1);
    let mut g_a = delta_g1 * r + vk.alpha_g1;
    let mut g_b = G2Projective::from(vk.delta_g2) * s + vk.beta_g2;
    let mut g_c = delta_g1 * (r * s)
        + G1Projective::from(vk.alpha_g1) * s
        + G1Projective::from(vk.beta_g1) * r;
    g_a += p.a_g1;
    g_c += p.a_g1 * s;
    g_b += b2;
    g_c += p.b_g1 * r;
    g_c += p.h_l;
    Ok(Proof {
        a: g_a.to_affine(),
        b: g_b.to_affine(),
        c: g_c.to_affine(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cuzk_groth16::setup::generate_params;
    use cuzk_groth16::synthetic::SyntheticSpec;
    use cuzk_groth16::{CpuProver, ProverBackend, Recorder, RecorderMode, Scalar};
    use ff::Field;
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    #[test]
    fn assembly_matches_cpu_backend() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let spec = SyntheticSpec {
            constraints: 200,
            seed: 3,
            ..SyntheticSpec::default()
        };
        let srs = generate_params(spec.circuit(), &mut rng).unwrap();
        let c = Recorder::synthesize(spec.circuit(), RecorderMode::Full).unwrap();
        let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
        let cpu = CpuProver::new();
        let p1 = cpu.start(&srs, c.clone(), r, s).unwrap();
        let p2 = cpu.start(&srs, c, r, s).unwrap();
        let want = cpu.finish(&srs, p1).unwrap();
        assert_eq!(assemble(&srs, p2).unwrap(), want);
    }
}
