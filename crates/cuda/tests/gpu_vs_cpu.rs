//! The CUDA backend against the CPU backend: same circuit, same r and s → same proof bytes,
//! and the proofs verify; two workers sharing one device; errors instead of panics.
//! Needs a CUDA device (skips with a message where there is none).
#![cfg(feature = "cuda")]

use cuzk_cuda::CudaProver;
use cuzk_groth16::setup::generate_params;
use cuzk_groth16::synthetic::SyntheticSpec;
use cuzk_groth16::verifier::{verify_proof, PreparedVerifyingKey};
use cuzk_groth16::{
    CpuProver, ProveError, ProverBackend, Recorder, RecorderMode, Scalar, Srs, Synthesized,
};
use ff::Field;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::sync::Arc;

fn gpu() -> Option<CudaProver> {
    if cuzk_cuda::devices().is_empty() {
        eprintln!("no CUDA device: skipping");
        return None;
    }
    Some(CudaProver::new(0).expect("device 0"))
}

/// A spec whose domain is exactly 2^log_n.
fn spec(log_n: u32, a: f64, b: f64, bools: f64, seed: u64) -> SyntheticSpec {
    let inputs = 3;
    SyntheticSpec {
        constraints: (1usize << log_n) - inputs - 1,
        inputs,
        aux_ratio: 1.0,
        a_density: a,
        b_density: b,
        bool_fraction: bools,
        seed,
    }
}

fn synth(spec: &SyntheticSpec) -> Synthesized {
    Recorder::synthesize(spec.circuit(), RecorderMode::Full).expect("synthesis")
}

fn check_equal_and_verify(srs: &Srs, spec: &SyntheticSpec, gpu: &CudaProver, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
    let c = synth(spec);
    let public: Vec<Scalar> = c.inputs[1..].to_vec();
    let cpu = CpuProver::new()
        .prove(srs, c.clone(), r, s)
        .expect("cpu proof");
    let g = gpu.prove(srs, c, r, s).expect("gpu proof");
    assert_eq!(
        g.to_bytes(),
        cpu.to_bytes(),
        "GPU and CPU proofs differ for {spec:?}"
    );
    let pvk = PreparedVerifyingKey::from(&srs.vk);
    assert!(
        verify_proof(&pvk, &g, &public).expect("verify"),
        "GPU proof does not verify: {spec:?}"
    );
}

#[test]
fn gpu_proof_bytes_equal_cpu_and_verify() {
    let Some(gpu) = gpu() else { return };
    let sizes: Vec<u32> = std::env::var("CUZK_TEST_LOG_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![10, 14, 18, 20]);
    // (A density, B density, fraction of 0/1 aux)
    let shapes = [
        (1.0, 0.25, 0.92),
        (0.5, 1.0, 0.0),
        (1.0, 0.0, 1.0),
        (0.0, 0.5, 0.5),
    ];
    for (k, &log_n) in sizes.iter().enumerate() {
        let mut rng = ChaCha8Rng::seed_from_u64(60 + log_n as u64);
        let shape_list: &[(f64, f64, f64)] = if log_n >= 18 { &shapes[..1] } else { &shapes };
        for (j, &(a, b, bools)) in shape_list.iter().enumerate() {
            let sp = spec(log_n, a, b, bools, 100 * k as u64 + j as u64);
            let t = std::time::Instant::now();
            let srs = generate_params(sp.circuit(), &mut rng).expect("setup");
            eprintln!("2^{log_n} {sp:?}: setup {:.1} s", t.elapsed().as_secs_f64());
            let t = std::time::Instant::now();
            check_equal_and_verify(&srs, &sp, &gpu, 7 + j as u64);
            eprintln!(
                "2^{log_n}: cpu+gpu+verify {:.1} s",
                t.elapsed().as_secs_f64()
            );
            gpu.evict(srs.id);
        }
    }
}

#[test]
fn two_workers_twenty_partitions_equal_cpu() {
    let Some(gpu) = gpu() else { return };
    let gpu = Arc::new(gpu);
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let base = spec(14, 1.0, 0.25, 0.92, 1);
    let srs = Arc::new(generate_params(base.circuit(), &mut rng).expect("setup"));
    let pvk = PreparedVerifyingKey::from(&srs.vk);
    let jobs: Vec<(SyntheticSpec, Scalar, Scalar)> = (0..20)
        .map(|i| {
            // same structure (seed), different witness values are not expressible in the
            // spec, so vary r and s per partition
            (
                base,
                Scalar::random(&mut rng),
                Scalar::random(&mut rng) + Scalar::from(i as u64),
            )
        })
        .collect();
    let jobs = Arc::new(std::sync::Mutex::new(
        jobs.into_iter().enumerate().collect::<Vec<_>>(),
    ));
    let out = Arc::new(std::sync::Mutex::new(Vec::new()));
    std::thread::scope(|sc| {
        for _ in 0..2 {
            let (gpu, srs, jobs, out) = (gpu.clone(), srs.clone(), jobs.clone(), out.clone());
            sc.spawn(move || loop {
                let job = jobs.lock().unwrap().pop();
                let Some((i, (sp, r, s))) = job else { break };
                let p = gpu.prove(&srs, synth(&sp), r, s).expect("gpu proof");
                out.lock().unwrap().push((i, sp, r, s, p));
            });
        }
    });
    let out = out.lock().unwrap();
    assert_eq!(out.len(), 20);
    for (i, sp, r, s, p) in out.iter() {
        let c = synth(sp);
        let public: Vec<Scalar> = c.inputs[1..].to_vec();
        let cpu = CpuProver::new().prove(&srs, c, *r, *s).expect("cpu");
        assert_eq!(p.to_bytes(), cpu.to_bytes(), "partition {i}");
        assert!(
            verify_proof(&pvk, p, &public).unwrap(),
            "partition {i} does not verify"
        );
    }
}

#[test]
fn shape_mismatch_is_an_error_not_a_panic() {
    let Some(gpu) = gpu() else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let sp = spec(10, 1.0, 0.25, 0.92, 5);
    let srs = generate_params(sp.circuit(), &mut rng).expect("setup");
    let mut c = synth(&sp);
    c.aux.pop();
    let err = gpu.start(&srs, c, Scalar::ONE, Scalar::ONE).unwrap_err();
    assert!(matches!(err, ProveError::ShapeMismatch { .. }), "{err}");
    let mut c = synth(&sp);
    c.a.clear();
    c.b.clear();
    c.c.clear();
    assert!(gpu.start(&srs, c, Scalar::ONE, Scalar::ONE).is_err());
}
