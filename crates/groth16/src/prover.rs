//! The multi-threaded CPU backend of [`ProverBackend`] (in `backend.rs`, re-exported here),
//! and the proof assembly every backend's `finish` shares.
pub use crate::backend::{Pending, PendingG2, ProverBackend, ResidentUpload};
use crate::{
    domain,
    msm::{msm, msm_full, G1, G2},
};
use crate::{
    error::ProveError,
    params::Srs,
    proof::Proof,
    recorder::{Density, Synthesized},
};
use blstrs::{G1Projective, G2Projective, Scalar};
use group::{prime::PrimeCurveAffine, Curve};
use std::time::{Duration, Instant};

/// The multi-threaded CPU backend (rayon NTTs, blst Pippenger MSMs).
#[derive(Clone, Debug, Default)]
pub struct CpuProver {}

/// Wall time of each prover phase (zero for phases that did not run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timings {
    /// H = (A·B − C)/Z: six NTTs and the pointwise steps (`domain::quotient`).
    pub ntt_h: Duration,
    /// Σ h_i·H_i.
    pub msm_h: Duration,
    /// Σ aux_i·L_i.
    pub msm_l: Duration,
    /// A in G1.
    pub msm_a: Duration,
    /// B in G1.
    pub msm_b_g1: Duration,
    /// B in G2.
    pub msm_b_g2: Duration,
    /// Proof assembly.
    pub assemble: Duration,
}

impl Timings {
    /// Sum of all phases.
    pub fn total(&self) -> Duration {
        self.ntt_h
            + self.msm_h
            + self.msm_l
            + self.msm_a
            + self.msm_b_g1
            + self.msm_b_g2
            + self.assemble
    }

    /// Adds `other`'s phases to these.
    pub fn add(&mut self, other: &Timings) {
        self.ntt_h += other.ntt_h;
        self.msm_h += other.msm_h;
        self.msm_l += other.msm_l;
        self.msm_a += other.msm_a;
        self.msm_b_g1 += other.msm_b_g1;
        self.msm_b_g2 += other.msm_b_g2;
        self.assemble += other.assemble;
    }
}

impl std::fmt::Display for Timings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        write!(
            f,
            "ntt_h {:.1} ms, msm_h {:.1} ms, msm_l {:.1} ms, msm_a {:.1} ms, msm_b_g1 {:.1} ms, msm_b_g2 {:.1} ms, assemble {:.1} ms, total {:.1} ms",
            ms(self.ntt_h),
            ms(self.msm_h),
            ms(self.msm_l),
            ms(self.msm_a),
            ms(self.msm_b_g1),
            ms(self.msm_b_g2),
            ms(self.assemble),
            ms(self.total())
        )
    }
}

fn mismatch(what: &'static str, expected: usize, got: usize) -> Result<(), ProveError> {
    if expected == got {
        Ok(())
    } else {
        Err(ProveError::ShapeMismatch {
            what,
            expected,
            got,
        })
    }
}

fn msm_err(what: &'static str) -> impl Fn(crate::msm::MsmError) -> ProveError {
    move |e| match e {
        crate::msm::MsmError::Length { bases, selected } => ProveError::ShapeMismatch {
            what,
            expected: bases,
            got: selected,
        },
        crate::msm::MsmError::Density { density, scalars } => ProveError::ShapeMismatch {
            what,
            expected: scalars,
            got: density,
        },
    }
}

/// Checks that a circuit fits the parameters; every later slice is then in range.
fn check_shape(srs: &Srs, c: &Synthesized) -> Result<(), ProveError> {
    if srs.host_points_released() {
        return Err(ProveError::Unavailable(
            "the CPU prover needs the SRS's points in host memory, and they were released \
             (a device holds them)"
                .into(),
        ));
    }
    if !c.has_evaluations() {
        return Err(ProveError::MissingEvaluations);
    }
    mismatch("inputs (vk.ic)", srs.vk().ic.len(), c.inputs.len())?;
    mismatch("h bases", srs.h().len(), c.domain_size() - 1)?;
    mismatch("l bases (aux)", srs.l().len(), c.aux.len())?;
    mismatch("a_aux_density length", c.aux.len(), c.a_aux_density.len())?;
    mismatch("b_aux_density length", c.aux.len(), c.b_aux_density.len())?;
    mismatch(
        "b_input_density length",
        c.inputs.len(),
        c.b_input_density.len(),
    )?;
    mismatch(
        "a bases",
        srs.a().len(),
        c.inputs.len() + c.a_aux_density.count_ones(),
    )?;
    let b = c.b_input_density.count_ones() + c.b_aux_density.count_ones();
    mismatch("b_g1 bases", srs.b_g1().len(), b)?;
    mismatch("b_g2 bases", srs.b_g2().len(), b)?;
    Ok(())
}

fn b_g2_msm(
    srs: &Srs,
    inputs: &[Scalar],
    aux: &[Scalar],
    b_input_density: &Density,
    b_aux_density: &Density,
) -> Result<G2Projective, ProveError> {
    let bi = b_input_density.count_ones();
    let total = bi + b_aux_density.count_ones();
    mismatch("b_g2 bases", srs.b_g2().len(), total)?;
    mismatch(
        "b_input_density length",
        inputs.len(),
        b_input_density.len(),
    )?;
    mismatch("b_aux_density length", aux.len(), b_aux_density.len())?;
    let _span = tracing::info_span!("msm_b_g2").entered();
    let mut acc = msm::<G2>(&srs.b_g2()[..bi], inputs, Some(b_input_density))
        .map_err(msm_err("b_g2 bases (inputs)"))?;
    acc += msm::<G2>(&srs.b_g2()[bi..], aux, Some(b_aux_density))
        .map_err(msm_err("b_g2 bases (aux)"))?;
    Ok(acc)
}

impl CpuProver {
    /// A CPU prover using rayon's global pool and blst's thread pool.
    pub fn new() -> CpuProver {
        CpuProver {}
    }

    /// [`ProverBackend::start`], also returning the time of each phase.
    pub fn start_timed(
        &self,
        srs: &Srs,
        circuit: Synthesized,
        r: Scalar,
        s: Scalar,
    ) -> Result<(Pending, Timings), ProveError> {
        // Deferred a/b/c (a device prover's layout) are evaluated here, on the host, and a
        // compact witness expanded.
        let circuit = circuit.evaluated()?.with_full_aux();
        check_shape(srs, &circuit)?;
        let mut t = Timings::default();
        let Synthesized {
            inputs,
            aux,
            a,
            b,
            c,
            a_aux_density,
            b_input_density,
            b_aux_density,
            num_constraints: _,
            compact: _,
            compiled: _,
        } = circuit;

        let now = Instant::now();
        let h = {
            let _span = tracing::info_span!("ntt_h", n = a.len()).entered();
            // `quotient` frees b and c as soon as they are used, and reuses a's buffer for h.
            domain::quotient(a, b, c).map_err(|e| match e {
                domain::DomainError::BadLength { n, got } => ProveError::ShapeMismatch {
                    what: "domain",
                    expected: n,
                    got,
                },
                _ => ProveError::ShapeMismatch {
                    what: "domain size (2-adicity)",
                    expected: 1 << 32,
                    got: srs.h().len() + 1,
                },
            })?
        };
        t.ntt_h = now.elapsed();

        let now = Instant::now();
        let mut h_l = {
            let _span = tracing::info_span!("msm_h", n = h.len()).entered();
            // Consumes h, the last piece of a/b/c (h lived in a's buffer).
            msm_full::<G1>(srs.h(), h).map_err(msm_err("h bases"))?
        };
        t.msm_h = now.elapsed();

        let now = Instant::now();
        {
            let _span = tracing::info_span!("msm_l", n = aux.len()).entered();
            h_l += msm::<G1>(srs.l(), &aux, None).map_err(msm_err("l bases"))?;
        }
        t.msm_l = now.elapsed();

        let now = Instant::now();
        let ni = inputs.len();
        let a_g1 = {
            let _span = tracing::info_span!("msm_a").entered();
            let mut acc =
                msm::<G1>(&srs.a()[..ni], &inputs, None).map_err(msm_err("a bases (inputs)"))?;
            acc += msm::<G1>(&srs.a()[ni..], &aux, Some(&a_aux_density))
                .map_err(msm_err("a bases (aux)"))?;
            acc
        };
        drop(a_aux_density);
        t.msm_a = now.elapsed();

        let now = Instant::now();
        let bi = b_input_density.count_ones();
        let b_g1 = {
            let _span = tracing::info_span!("msm_b_g1").entered();
            let mut acc = msm::<G1>(&srs.b_g1()[..bi], &inputs, Some(&b_input_density))
                .map_err(msm_err("b_g1 bases (inputs)"))?;
            acc += msm::<G1>(&srs.b_g1()[bi..], &aux, Some(&b_aux_density))
                .map_err(msm_err("b_g1 bases (aux)"))?;
            acc
        };
        t.msm_b_g1 = now.elapsed();

        Ok((
            Pending {
                r,
                s,
                a_g1,
                b_g1,
                h_l,
                b_g2: PendingG2::Deferred {
                    inputs,
                    aux,
                    b_input_density,
                    b_aux_density,
                },
            },
            t,
        ))
    }

    /// [`ProverBackend::finish`], also returning the time of the G2 MSM and the assembly.
    pub fn finish_timed(
        &self,
        srs: &Srs,
        pending: Pending,
    ) -> Result<(Proof, Timings), ProveError> {
        finish_with_timings(srs, pending)
    }

    /// One-shot proof with per-phase timings.
    pub fn prove_timed(
        &self,
        srs: &Srs,
        circuit: Synthesized,
        r: Scalar,
        s: Scalar,
    ) -> Result<(Proof, Timings), ProveError> {
        let (pending, mut t) = self.start_timed(srs, circuit, r, s)?;
        let (proof, t2) = self.finish_timed(srs, pending)?;
        t.add(&t2);
        Ok((proof, t))
    }
}

/// Completes a proof from any backend's [`Pending`]: the B G2 MSM on the CPU if it was
/// deferred, then α, β, the r·δ / s·δ blinding and C. Every backend's `finish` is this, so the
/// proof bytes for the same circuit, r and s are the same whichever backend ran `start`.
pub fn finish(srs: &Srs, pending: Pending) -> Result<Proof, ProveError> {
    finish_with_timings(srs, pending).map(|(p, _)| p)
}

/// [`finish`], also returning the time of the G2 MSM and the assembly.
fn finish_with_timings(srs: &Srs, pending: Pending) -> Result<(Proof, Timings), ProveError> {
    let mut t = Timings::default();
    let now = Instant::now();
    let b_g2 = match pending.b_g2 {
        PendingG2::Done(p) => p,
        PendingG2::Deferred {
            inputs,
            aux,
            b_input_density,
            b_aux_density,
        } => b_g2_msm(srs, &inputs, &aux, &b_input_density, &b_aux_density)?,
    };
    t.msm_b_g2 = now.elapsed();
    let now = Instant::now();
    let proof = assemble(
        srs,
        pending.r,
        pending.s,
        pending.a_g1,
        pending.b_g1,
        b_g2,
        pending.h_l,
    )?;
    t.assemble = now.elapsed();
    Ok((proof, t))
}

/// A = α + Σa + rδ; B = β + Σb + sδ; C = s·A + r·(β + Σb_G1 + sδ) − rs·δ + Σh + Σl.
fn assemble(
    srs: &Srs,
    r: Scalar,
    s: Scalar,
    a_g1: G1Projective,
    b_g1: G1Projective,
    b_g2: G2Projective,
    h_l: G1Projective,
) -> Result<Proof, ProveError> {
    let vk = srs.vk();
    if bool::from(vk.delta_g1.is_identity() | vk.delta_g2.is_identity()) {
        return Err(ProveError::ShapeMismatch {
            what: "delta is the identity",
            expected: 0,
            got: 1,
        });
    }
    let delta_g1 = vk.delta_g1.to_curve();
    let a = a_g1 + vk.alpha_g1 + delta_g1 * r;
    let b = b_g2 + vk.beta_g2 + vk.delta_g2.to_curve() * s;
    let b1 = b_g1 + vk.beta_g1 + delta_g1 * s;
    let c = a * s + b1 * r - delta_g1 * (r * s) + h_l;
    // Normalise the two G1 points with one inversion.
    let mut g1 = [blstrs::G1Affine::identity(); 2];
    G1Projective::batch_normalize(&[a, c], &mut g1);
    Ok(Proof {
        a: g1[0],
        b: b.to_affine(),
        c: g1[1],
    })
}

impl ProverBackend for CpuProver {
    fn name(&self) -> String {
        "cpu".to_string()
    }

    fn start(
        &self,
        srs: &Srs,
        circuit: Synthesized,
        r: Scalar,
        s: Scalar,
    ) -> Result<Pending, ProveError> {
        self.start_timed(srs, circuit, r, s).map(|(p, _)| p)
    }

    fn finish(&self, srs: &Srs, pending: Pending) -> Result<Proof, ProveError> {
        finish(srs, pending)
    }
}

/// Draws the blinding factors (r, s) of one proof from `rng`.
pub fn random_blinding<R: rand_core::RngCore>(rng: &mut R) -> (Scalar, Scalar) {
    use ff::Field;
    (Scalar::random(&mut *rng), Scalar::random(&mut *rng))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::setup::generate_params;
    use crate::synthetic::SyntheticSpec;
    use crate::{Recorder, RecorderMode};
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    /// A `Pending` whose B G2 sum is already done (as the CUDA backend hands over) finishes
    /// to the same proof as the CPU backend's deferred one.
    #[test]
    fn finish_of_done_b_g2_matches_deferred() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let spec = SyntheticSpec {
            constraints: 200,
            seed: 3,
            ..SyntheticSpec::default()
        };
        let srs = generate_params(spec.circuit(), &mut rng).unwrap();
        let c = Recorder::synthesize(spec.circuit(), RecorderMode::Full).unwrap();
        let (r, s) = random_blinding(&mut rng);
        let cpu = CpuProver::new();
        let deferred = cpu.start(&srs, c.clone(), r, s).unwrap();
        let mut done = cpu.start(&srs, c, r, s).unwrap();
        assert!(deferred.heap_bytes() > 1024);
        if let PendingG2::Deferred {
            inputs,
            aux,
            b_input_density,
            b_aux_density,
        } = &done.b_g2
        {
            let g2 = b_g2_msm(&srs, inputs, aux, b_input_density, b_aux_density).unwrap();
            done.b_g2 = PendingG2::Done(g2);
        }
        assert_eq!(done.heap_bytes(), 1024);
        let want = cpu.finish(&srs, deferred).unwrap();
        assert_eq!(finish(&srs, done).unwrap(), want);
    }
}
