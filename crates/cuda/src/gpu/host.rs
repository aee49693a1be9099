//! The host side of the CUDA prover's `start`: planning the split MSMs (phase 2, with the
//! parts too small for the device summed here) and staging a/b/c or the deferred witness
//! with the plans to a worker (phase 4b).
#![allow(unsafe_code)]

use super::{dev_err, shape_err, SrsSource, SMALL_MSM};
use crate::vram::Lease;
use crate::{ffi, msm_plan};
use blstrs::{G1Projective, G2Projective, Scalar};
use cuzk_groth16::params::G1Section;
use cuzk_groth16::{ParamsError, ProveError, Srs, Synthesized};
use group::Group;

/// Takes a small Pippenger part off a plan and evaluates it on the host, with its bases from
/// `base` (the SRS's host copy, or its file once that copy was released).
fn host_small<G, A>(
    q: &mut msm_plan::QueryPlan,
    base: impl Fn(usize) -> Result<A, ParamsError>,
) -> Result<G, ProveError>
where
    G: group::Group<Scalar = Scalar> + From<A>,
{
    let mut acc = G::identity();
    if q.idx.len() < SMALL_MSM {
        for (&i, s) in q.idx.iter().zip(&q.scalars) {
            acc += G::from(base(i as usize)?) * s;
        }
        q.idx.clear();
        q.scalars.clear();
    }
    Ok(acc)
}

fn cquery(q: &msm_plan::QueryPlan) -> ffi::CQuery {
    let has_ones = q.ones.iter().any(|w| *w != 0);
    ffi::CQuery {
        nbases: q.nbases,
        ones_bits: if has_ones {
            q.ones.as_ptr()
        } else {
            std::ptr::null()
        },
        ones_words: if has_ones { q.ones.len() } else { 0 },
        idx: q.idx.as_ptr(),
        scalars: q.scalars.as_ptr(),
        nothers: q.idx.len(),
    }
}

/// The split MSM plans of one proof, with the Pippenger parts too small for the GPU taken off
/// and summed on the host.
pub(super) struct HostPlan {
    pub(super) plan: msm_plan::ProvePlan,
    /// The witness's values neither 0 nor 1 (aux index, value) when a/b/c are deferred and
    /// the L plan's were taken off for the host (too few for the device).
    pub(super) wit_small: Option<(Vec<u32>, Vec<Scalar>)>,
    pub(super) small_l: G1Projective,
    pub(super) small_a: G1Projective,
    pub(super) small_b1: G1Projective,
    pub(super) small_b2: G2Projective,
}

/// Phase 2: classifies the scalars and builds the per-MSM plans.
pub(super) fn plan_host(
    srs: &Srs,
    circuit: &Synthesized,
    deferred: bool,
) -> Result<HostPlan, ProveError> {
    let (a_aux, b_input, b_aux) = circuit.densities();
    // A witness-only recording's aux is compact already; a full one is classified here.
    let aux = circuit.compact_aux();
    let mut plan = msm_plan::plan(&circuit.inputs, &aux, a_aux, b_input, b_aux)?;
    let counts = srs.counts();
    if plan.a.nbases != counts.a {
        return Err(shape_err("A bases", counts.a, plan.a.nbases));
    }
    if plan.b.nbases != counts.b_g1 {
        return Err(shape_err("B G1 bases", counts.b_g1, plan.b.nbases));
    }
    let wit_small = (deferred && plan.l.idx.len() < SMALL_MSM)
        .then(|| (plan.l.idx.clone(), plan.l.scalars.clone()));
    let small_l: G1Projective = host_small(&mut plan.l, |i| srs.g1_at(G1Section::L, i))?;
    let small_a: G1Projective = host_small(&mut plan.a, |i| srs.g1_at(G1Section::A, i))?;
    let (small_b1, small_b2) = if plan.b.idx.len() < SMALL_MSM {
        let mut b2 = msm_plan::QueryPlan {
            idx: plan.b.idx.clone(),
            scalars: plan.b.scalars.clone(),
            ..Default::default()
        };
        let b2: G2Projective = host_small(&mut b2, |i| srs.g2_at(i))?;
        let b1: G1Projective = host_small(&mut plan.b, |i| srs.g1_at(G1Section::BG1, i))?;
        (b1, b2)
    } else {
        (G1Projective::identity(), G2Projective::identity())
    };
    Ok(HostPlan {
        plan,
        wit_small,
        small_l,
        small_a,
        small_b1,
        small_b2,
    })
}

/// Phase 4b: stages a/b/c (or, `deferred`, the witness), 1/Z and the three plans to the
/// worker's device buffers on its copy stream; returns the bytes staged once the copy stream
/// is idle.
#[allow(clippy::too_many_arguments)]
pub(super) fn upload(
    lease: &Lease<'_>,
    circuit: &Synthesized,
    hp: &HostPlan,
    n: usize,
    len: usize,
    z_inv: &Scalar,
    src: &SrsSource,
    deferred: bool,
) -> Result<u64, ProveError> {
    let plan = &hp.plan;
    let (l, a_q, b_q) = (cquery(&plan.l), cquery(&plan.a), cquery(&plan.b));
    let wit = if deferred {
        let (idx, scalars) = match &hp.wit_small {
            Some((i, s)) => (i.as_slice(), s.as_slice()),
            None => (plan.l.idx.as_slice(), plan.l.scalars.as_slice()),
        };
        ffi::CWitness {
            inputs: circuit.inputs.as_ptr(),
            ninputs: circuit.inputs.len(),
            naux: circuit.num_aux(),
            nconstraints: circuit.num_constraints,
            ones: l.ones_bits,
            idx: idx.as_ptr(),
            scalars: scalars.as_ptr(),
            nothers: idx.len(),
        }
    } else {
        ffi::CWitness::none()
    };
    let query_bytes = |q: &ffi::CQuery| (8 * q.ones_words + 36 * q.nothers) as u64;
    let mut bytes = query_bytes(&l) + query_bytes(&a_q) + query_bytes(&b_q);
    bytes += if deferred {
        let own = if hp.wit_small.is_some() {
            wit.nothers
        } else {
            0
        };
        (32 * wit.ninputs + 36 * own) as u64
    } else {
        3 * 32 * len as u64
    };
    let (a, b, c) = if deferred {
        (std::ptr::null(), std::ptr::null(), std::ptr::null())
    } else {
        (circuit.a.as_ptr(), circuit.b.as_ptr(), circuit.c.as_ptr())
    };
    let input = ffi::CInput {
        a,
        b,
        c,
        abc_len: len,
        lg_domain: n.trailing_zeros(),
        z_inv,
        l,
        a_q,
        b_q,
        stream_chunk: if src.host.is_some() { src.chunk } else { 0 },
        deferred: deferred as u32,
        wit,
        early_ones: src.early_ones as u32,
        queued: src.queued as u32,
        sorted_h: src.sorted_h as u32,
    };
    // SAFETY: `input` points into `circuit` and `plan`, alive and unmoved across the call;
    // lengths were checked (abc_len ≤ 2^lg, bitmaps cover nbases bits, idx < nbases and
    // ascending by construction of the plan). The call returns only after the copy stream is
    // idle, so the host buffers may be freed afterwards. The worker's reservation covers
    // every buffer the call may grow.
    // Deferred, the witness points into `circuit` and `hp` likewise (its bitmap is the L
    // query's, as the device requires).
    let err = unsafe { ffi::cuzk_worker_upload(lease.handle(), &input) };
    ffi::check(err, "upload").map_err(dev_err)?;
    Ok(bytes)
}
