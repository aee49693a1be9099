//! The CUDA backend against the CPU backend: same circuit, same r and s → same proof bytes,
//! and the proofs verify, with the SRS resident in VRAM (the batch additions early or late,
//! the MSMs queued or sppark's own) or streamed from host memory; two workers sharing one
//! device (also under a VRAM budget that fits only one of them); `start_reusing`; errors
//! instead of panics. The queued and sorted MSMs alone against sppark's and the host's, up to
//! sizes no proof here reaches.
//! Needs a CUDA device (skips with a message where there is none).
//!
//! The tests share device 0's state (options, budget, idle contexts), so they run one at a
//! time (`serial`), each setting the options it needs.
#![cfg(feature = "cuda")]

mod common;

use common::{gpu_with, has_device, prove_equal, serial, spec, synth};

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
use cuzk_cuda::{CudaOptions, CudaProver};
use cuzk_groth16::prover::random_blinding;
use cuzk_groth16::setup::generate_params;
use cuzk_groth16::synthetic::SyntheticSpec;
use cuzk_groth16::verifier::{verify_proof, PreparedVerifyingKey};
use cuzk_groth16::{CpuProver, ProveError, ProverBackend, Scalar, Srs, Synthesized};
use ff::Field;
use group::{Curve, Group};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::sync::{Arc, Mutex};

fn gpu() -> Option<CudaProver> {
    has_device().then(|| gpu_with(CudaOptions::default()))
}

/// Proves `spec` on the GPU and the CPU with the same r, s; asserts equal bytes and that the
/// proof verifies. Returns whether the GPU streamed the SRS.
fn check_equal_and_verify(srs: &Srs, spec: &SyntheticSpec, gpu: &CudaProver, seed: u64) -> bool {
    prove_equal(gpu, srs, srs, spec, seed)
}

fn log_sizes(default: &[u32]) -> Vec<u32> {
    std::env::var("CUZK_TEST_LOG_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| default.to_vec())
}

#[test]
fn gpu_proof_bytes_equal_cpu_and_verify() {
    let _s = serial();
    if !has_device() {
        return;
    }
    let sizes = log_sizes(&[10, 14, 18, 20]);
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
            // (early batch additions, queued MSMs, H by the sorted MSM): the defaults, then
            // the references (late, sppark's kernels for H, sppark's Pippenger) at the small
            // sizes only, and H by sppark's kernels at 2^18 too.
            let modes: &[(bool, bool, bool)] = if log_n >= 20 {
                &[(true, true, true)]
            } else if log_n >= 18 {
                &[(true, true, true), (true, true, false)]
            } else {
                &[
                    (true, true, true),
                    (true, true, false),
                    (false, true, true),
                    (true, false, true),
                    (false, false, true),
                ]
            };
            for &(early, queued, sorted) in modes {
                let gpu = gpu_with(CudaOptions {
                    early_batch_additions: early,
                    queued_msm: queued,
                    sorted_msm: sorted,
                    ..CudaOptions::default()
                });
                let t = std::time::Instant::now();
                let streamed = check_equal_and_verify(&srs, &sp, &gpu, 7 + j as u64);
                assert!(!streamed, "the default budget should hold a 2^{log_n} SRS");
                eprintln!(
                    "2^{log_n}, early batch additions {early}, queued MSMs {queued}, \
                     sorted H MSM {sorted}: cpu+gpu+verify {:.1} s",
                    t.elapsed().as_secs_f64()
                );
                gpu.evict(srs.id());
            }
        }
    }
}

/// Scalars for an MSM comparison: random, with runs of 0, 1 and −1 (the batch additions'
/// and the signed digits' edge cases).
fn msm_scalars(n: usize, rng: &mut ChaCha8Rng) -> Vec<Scalar> {
    (0..n)
        .map(|i| match i % 97 {
            0 => Scalar::ZERO,
            1 | 2 => Scalar::ONE,
            3 => -Scalar::ONE,
            _ => Scalar::random(&mut *rng),
        })
        .collect()
}

/// Σ scalars[i]·bases[i mod m] on the host: the scalars summed per base first.
fn tiled_sum<G: group::Group<Scalar = Scalar>>(bases: &[G], scalars: &[Scalar]) -> G {
    let mut per_base = vec![Scalar::ZERO; bases.len()];
    for (i, s) in scalars.iter().enumerate() {
        per_base[i % bases.len()] += s;
    }
    bases.iter().zip(&per_base).map(|(b, s)| *b * s).sum()
}

/// The queued MSM equals sppark's Pippenger and the host's sum in G1 and G2, and the sorted
/// one (ours, G1) equals both, at sizes that take each of their paths: the queued one's one
/// batch and several, every window width from 10 to 16 bits (the top window narrower than a
/// thread group's span, or wider, at 16); every window width the sorted one chooses up to
/// 12 M points (4 to 20 bits: 1, 100, 300, … points), beyond any proof in these tests.
/// `CUZK_TEST_MSM_SIZES` (comma-separated point counts) replaces the sizes, e.g. with a
/// 32 GiB PoRep partition's H query, 2^27 − 1 points (sppark: 18-bit windows, 8 batches;
/// sorted: 22-bit windows).
#[test]
fn queued_and_sorted_msms_equal_sppark_and_the_host() {
    let _s = serial();
    let Some(gpu) = gpu() else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    // 61 bases: the tiling does not line up with any power of two
    let g1: Vec<G1Projective> = (0..61).map(|_| G1Projective::random(&mut rng)).collect();
    let g2: Vec<G2Projective> = (0..61).map(|_| G2Projective::random(&mut rng)).collect();
    let g1a: Vec<G1Affine> = g1.iter().map(|p| p.to_affine()).collect();
    let g2a: Vec<G2Affine> = g2.iter().map(|p| p.to_affine()).collect();
    let sizes: Vec<usize> = std::env::var("CUZK_TEST_MSM_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| {
            vec![
                1,
                7,
                100,
                192,
                193,
                300,
                600,
                1000,
                2000,
                5000,
                10_000,
                20_000,
                40_000,
                65_539,
                100_000,
                300_000,
                (1 << 20) + 5,
                2_000_000,
                10_000_000,
                12_000_000,
            ]
        });
    for n in sizes {
        let scalars = msm_scalars(n, &mut rng);
        let t = std::time::Instant::now();
        let [sppark, queued, sorted] = gpu.msm_compare_g1(&g1a, &scalars).expect("G1 comparison");
        let host = tiled_sum(&g1, &scalars);
        assert_eq!(sppark, host, "sppark's G1 MSM of {n} points");
        assert_eq!(queued, host, "the queued G1 MSM of {n} points");
        assert_eq!(sorted, host, "the sorted G1 MSM of {n} points");
        let [sppark, queued] = gpu.msm_compare_g2(&g2a, &scalars).expect("G2 comparison");
        let host = tiled_sum(&g2, &scalars);
        assert_eq!(sppark, host, "sppark's G2 MSM of {n} points");
        assert_eq!(queued, host, "the queued G2 MSM of {n} points");
        eprintln!("{n} points: {:.1} s", t.elapsed().as_secs_f64());
    }
    assert!(
        gpu.msm_compare_g1(&g1a, &[]).is_err(),
        "no scalars is an error"
    );
}

/// The VRAM sizing model reserves at least what the sorted MSM allocates (its layout and
/// CUB's temporaries, as the device sizes them), and not much more, at every window width up
/// to a 32 GiB PoRep partition's H query.
#[test]
fn sorted_msm_scratch_is_bounded() {
    let _s = serial();
    let Some(gpu) = gpu() else { return };
    for n in [
        1usize,
        100,
        5000,
        65_539,
        1 << 20,
        12_000_000,
        (1 << 26) - 1,
        (1 << 27) - 1,
    ] {
        let (device, model) = gpu.sorted_msm_scratch(n).expect("scratch");
        eprintln!("{n} points: the device allocates {device} bytes, the model reserves {model}");
        assert!(
            model >= device,
            "{n} points: model {model} < device {device}"
        );
        assert!(
            model <= device + device / 10 + (64 << 20),
            "{n} points: model {model} far above device {device}"
        );
    }
}

/// The sorted MSM on scalars that stress its digits and its segments, each the same for every
/// point (one bucket a window holds all of them: segments of a bucket merged) or alternating
/// with its negation: 0, 1, −1 (the modulus − 1), the two scalars either side of r/2 (where
/// the digits' negation starts), 2^253, and 2^k − 1 for a window's width (a top digit of
/// −1 carried into the next window), at a window width with few points and at one with cap
/// > 256.
#[test]
fn sorted_msm_edge_scalars_equal_the_host() {
    let _s = serial();
    let Some(gpu) = gpu() else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(22);
    let g1: Vec<G1Projective> = (0..61).map(|_| G1Projective::random(&mut rng)).collect();
    let g1a: Vec<G1Affine> = g1.iter().map(|p| p.to_affine()).collect();
    let half = Scalar::from(2).invert().unwrap(); // (r + 1) / 2
    let pow = |k: u32| (0..k).fold(Scalar::ONE, |a, _| a.double());
    let values = [
        ("0", Scalar::ZERO),
        ("1", Scalar::ONE),
        ("-1", -Scalar::ONE),
        ("(r+1)/2", half),
        ("(r-1)/2", half - Scalar::ONE),
        ("2^253", pow(253)),
        ("2^13 - 1", pow(13) - Scalar::ONE),
        ("2^22 - 1", pow(22) - Scalar::ONE),
    ];
    for n in [1000usize, 2_000_000] {
        for (name, v) in values {
            for alternate in [false, true] {
                let scalars: Vec<Scalar> = (0..n)
                    .map(|i| if alternate && i % 2 == 1 { -v } else { v })
                    .collect();
                let host = tiled_sum(&g1, &scalars);
                if n <= 1000 {
                    // (sppark's Pippenger walks a bucket on one thread: 2 M equal scalars
                    // take it tens of seconds)
                    let [sppark, _, sorted] =
                        gpu.msm_compare_g1(&g1a, &scalars).expect("G1 comparison");
                    assert_eq!(
                        sppark, host,
                        "sppark, {n} × {name} (alternating {alternate})"
                    );
                    assert_eq!(
                        sorted, host,
                        "sorted, {n} × {name} (alternating {alternate})"
                    );
                } else {
                    let sorted = gpu.msm_sorted_g1(&g1a, &scalars).expect("G1 sorted MSM");
                    assert_eq!(
                        sorted, host,
                        "sorted, {n} × {name} (alternating {alternate})"
                    );
                }
            }
        }
    }
}

#[test]
fn two_workers_twenty_partitions_equal_cpu() {
    let _s = serial();
    let Some(gpu) = gpu() else { return };
    let gpu = Arc::new(gpu);
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let base = spec(14, 1.0, 0.25, 0.92, 1);
    let srs = Arc::new(generate_params(base.circuit(), &mut rng).expect("setup"));
    let pvk = PreparedVerifyingKey::from(srs.vk());
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
    let _s = serial();
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

/// Bases per streamed chunk at each size: several chunks, the last one partial, and query
/// lengths that are not multiples of the chunk (a single partial chunk at 2^10).
fn chunk_for(log_n: u32) -> usize {
    match log_n {
        0..=10 => 1024,
        11..=14 => 3 * 1024,
        15..=18 => 40 * 1024,
        _ => 320 * 1024,
    }
}

#[test]
fn streamed_srs_bytes_equal_cpu_and_verify() {
    let _s = serial();
    if !has_device() {
        return;
    }
    let shapes = [
        (1.0, 0.25, 0.92),
        (0.5, 1.0, 0.0),
        (1.0, 0.0, 1.0),
        (0.0, 0.5, 0.5),
    ];
    for (k, &log_n) in log_sizes(&[10, 14, 18]).iter().enumerate() {
        let chunk = chunk_for(log_n);
        let mut rng = ChaCha8Rng::seed_from_u64(90 + log_n as u64);
        let shape_list: &[(f64, f64, f64)] = if log_n >= 18 { &shapes[..2] } else { &shapes };
        for (j, &(a, b, bools)) in shape_list.iter().enumerate() {
            let sp = spec(log_n, a, b, bools, 500 + 100 * k as u64 + j as u64);
            let srs = generate_params(sp.circuit(), &mut rng).expect("setup");
            let forced = CudaOptions {
                stream_chunk_bases: chunk,
                force_streaming: true,
                ..CudaOptions::default()
            };
            // 1. streaming forced: measure what one streaming worker context reserves
            let gpu = gpu_with(forced);
            assert!(
                check_equal_and_verify(&srs, &sp, &gpu, 11 + j as u64),
                "2^{log_n}: streaming was forced"
            );
            let st = gpu.vram_status();
            assert_eq!(st.resident_srs, 0, "a streamed SRS must not be resident");
            assert!(
                srs.backend_cache().get().is_some(),
                "the SRS's host memory registration lives in its backend cache"
            );
            let worker = st.reserved;
            // 2. a budget that holds that context but not the SRS beside one: the SRS must
            // stream because it does not fit (where the SRS outweighs the chunk buffers)
            let gpu = CudaProver::with_options(
                0,
                CudaOptions {
                    vram_budget: Some(worker),
                    force_streaming: false,
                    ..forced
                },
            )
            .expect("device 0");
            let streamed = check_equal_and_verify(&srs, &sp, &gpu, 21 + j as u64);
            let chunk_buffers = 2 * 192 * chunk as u64;
            if srs.size_bytes() > chunk_buffers + (64 << 10) {
                assert!(streamed, "2^{log_n}: the SRS does not fit the budget");
            }
            let st = gpu.vram_status();
            assert!(st.reserved <= st.budget, "{st:?}");
            if j == 0 {
                // 3. chunks copied through pinned staging buffers instead of page-locked SRS
                let gpu = gpu_with(CudaOptions {
                    page_lock_host: false,
                    ..forced
                });
                assert!(check_equal_and_verify(&srs, &sp, &gpu, 31));
            }
            eprintln!("2^{log_n} {sp:?}: streamed in chunks of {chunk}: ok ({st:?})");
        }
    }
    gpu_with(CudaOptions::default());
}

#[test]
fn two_workers_wait_for_vram_within_a_budget() {
    let _s = serial();
    let Some(gpu) = gpu() else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    let sp = spec(14, 1.0, 0.25, 0.92, 31);
    let srs = Arc::new(generate_params(sp.circuit(), &mut rng).expect("setup"));
    // one proof alone: the SRS copy plus one worker context
    assert!(!check_equal_and_verify(&srs, &sp, &gpu, 1));
    let st = gpu.vram_status();
    assert_eq!((st.resident_srs, st.idle_workers), (1, 1), "{st:?}");
    let one_worker = st.reserved - st.reserved_srs;
    // room for the SRS and one and a half contexts: the second worker must wait
    let budget = st.reserved + one_worker / 2;
    let gpu = CudaProver::with_options(
        0,
        CudaOptions {
            vram_budget: Some(budget),
            ..CudaOptions::default()
        },
    )
    .expect("device 0");
    let waits0 = gpu.vram_status().waits;
    let rounds = 4;
    let barrier = std::sync::Barrier::new(2);
    let proofs = Mutex::new(Vec::new());
    std::thread::scope(|sc| {
        for t in 0..2u64 {
            let (gpu, srs, barrier, proofs) = (&gpu, &srs, &barrier, &proofs);
            sc.spawn(move || {
                for i in 0..rounds {
                    let mut rng = ChaCha8Rng::seed_from_u64(1000 + 10 * t + i);
                    let (r, s) = random_blinding(&mut rng);
                    let c = synth(&sp);
                    barrier.wait();
                    let (pending, ph) = gpu.start_timed(srs, c, r, s).expect("gpu start");
                    assert!(!ph.streamed, "the SRS stays resident");
                    let p = gpu.finish(srs, pending).expect("gpu finish");
                    let st = gpu.vram_status();
                    assert!(st.reserved <= st.budget, "{st:?}");
                    proofs.lock().unwrap().push((r, s, p));
                }
            });
        }
    });
    let st = gpu.vram_status();
    eprintln!("budget {budget}: {st:?}");
    assert!(
        st.idle_workers <= 1,
        "a second context does not fit: {st:?}"
    );
    assert!(st.waits > waits0, "a worker should have waited: {st:?}");
    let pvk = PreparedVerifyingKey::from(srs.vk());
    let c = synth(&sp);
    let public: Vec<Scalar> = c.inputs[1..].to_vec();
    for (r, s, p) in proofs.into_inner().unwrap() {
        let cpu = CpuProver::new().prove(&srs, c.clone(), r, s).expect("cpu");
        assert_eq!(p.to_bytes(), cpu.to_bytes());
        assert!(verify_proof(&pvk, &p, &public).unwrap());
    }
    gpu_with(CudaOptions::default());
}

#[test]
fn start_reusing_hands_back_the_buffers() {
    let _s = serial();
    let Some(gpu) = gpu() else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    let sp = spec(14, 1.0, 0.25, 0.92, 41);
    let srs = generate_params(sp.circuit(), &mut rng).expect("setup");
    let (r, s) = random_blinding(&mut rng);
    let c = synth(&sp);
    let shape = |c: &Synthesized| {
        [&c.inputs, &c.aux, &c.a, &c.b, &c.c].map(|v| (v.as_ptr() as usize, v.len(), v.capacity()))
    };
    let before = shape(&c);
    let (pending, kept) = gpu.start_reusing(&srs, c, r, s).expect("start_reusing");
    let kept = kept.expect("the CUDA backend hands the circuit back");
    assert_eq!(
        shape(&kept),
        before,
        "same allocations, lengths and capacities"
    );
    assert_eq!(kept.a_aux_density.len, kept.aux.len());
    let reused = gpu.finish(&srs, pending).expect("finish");
    let plain = gpu.prove(&srs, synth(&sp), r, s).expect("prove");
    assert_eq!(reused.to_bytes(), plain.to_bytes());
    let cpu = CpuProver::new().prove(&srs, kept, r, s).expect("cpu");
    assert_eq!(
        plain.to_bytes(),
        cpu.to_bytes(),
        "the kept circuit is intact"
    );
}

#[test]
fn a_budget_too_small_is_a_typed_error() {
    let _s = serial();
    if !has_device() {
        return;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(51);
    let sp = spec(10, 1.0, 0.25, 0.92, 51);
    let srs = generate_params(sp.circuit(), &mut rng).expect("setup");
    let gpu = gpu_with(CudaOptions {
        vram_budget: Some(4096),
        ..CudaOptions::default()
    });
    let err = gpu
        .start(&srs, synth(&sp), Scalar::ONE, Scalar::ONE)
        .unwrap_err();
    assert!(matches!(err, ProveError::Unavailable(_)), "{err}");
    // and the device still proves once the budget is back
    let gpu = gpu_with(CudaOptions::default());
    assert!(!check_equal_and_verify(&srs, &sp, &gpu, 5));
}

/// Issue 13 item 3: an SRS read from a file, made resident and pinned (`make_resident`), then
/// released on the host, proves byte-equal to the CPU backend with the host copy; the few
/// points of the host's small MSMs come from the file. The pin keeps the copy through a
/// `trim`, and it is freed when the SRS is dropped.
#[test]
fn released_host_copy_proves_equal_from_the_pinned_vram_copy() {
    let _s = serial();
    let Some(gpu) = gpu() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    // (A density, B density, fraction of 0/1 aux): the last two leave B with fewer than 64
    // Pippenger scalars, so its small part runs on the host from file-read points.
    for (j, &(a, b, bools)) in [(1.0, 0.25, 0.92), (1.0, 0.02, 0.99), (0.5, 1.0, 0.0)]
        .iter()
        .enumerate()
    {
        let sp = spec(14, a, b, bools, 40 + j as u64);
        let mut rng = ChaCha8Rng::seed_from_u64(41 + j as u64);
        let held = generate_params(sp.circuit(), &mut rng).expect("setup");
        let path = dir.path().join(format!("release-{j}.params"));
        cuzk_groth16::params::write_params(&path, &held).expect("write");
        let opts = cuzk_groth16::params::ReadOptions::default();
        let (mut srs, _) = cuzk_groth16::params::read_params(&path, &opts).expect("read");
        let before = gpu.vram_status();
        assert!(gpu.make_resident(&srs).expect("make resident"), "{sp:?}");
        assert!(srs.release_host_points() > 0);
        assert!(srs.h().is_empty());
        let pinned = gpu.vram_status();
        assert_eq!(pinned.pinned_srs, before.pinned_srs + 1);
        // A trim frees idle copies, not a pinned one.
        gpu.trim();
        assert_eq!(gpu.vram_status().pinned_srs, pinned.pinned_srs);
        for round in 0..2 {
            assert!(!prove_equal(
                &gpu,
                &srs,
                &held,
                &sp,
                500 + 10 * j as u64 + round
            ));
        }
        // An explicit evict leaves a pinned copy alone (its SRS has no host copy to re-upload).
        gpu.evict(srs.id());
        assert_eq!(gpu.vram_status().pinned_srs, pinned.pinned_srs);
        drop(srs);
        let after = gpu.vram_status();
        assert_eq!(
            after.pinned_srs, before.pinned_srs,
            "dropping the SRS unpins it"
        );
        assert_eq!(after.resident_srs, before.resident_srs);
    }
}

/// Issue 13: an SRS read header-first streams from its file into VRAM a window at a time
/// (`begin_resident`), is pinned there, and proves byte-equal to the CPU backend with the
/// whole host copy, though the host never held its points. An upload abandoned half way (or
/// refused a window past its section) frees its VRAM; a budget without room says no.
#[test]
fn an_srs_streamed_from_its_file_proves_equal_from_vram() {
    use cuzk_groth16::params::{read_params_header, G1Section, PointsWindow, ReadOptions};
    let _s = serial();
    let Some(gpu) = gpu() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    // Windows of 1000 G1 points (500 G2): every section of a 2^14 domain spans several.
    let opts = ReadOptions {
        check_points: true,
        window_bytes: 96_000,
    };
    for (j, &(a, b, bools)) in [(1.0, 0.25, 0.92), (0.5, 1.0, 0.0)].iter().enumerate() {
        let sp = spec(14, a, b, bools, 60 + j as u64);
        let mut rng = ChaCha8Rng::seed_from_u64(61 + j as u64);
        let held = generate_params(sp.circuit(), &mut rng).expect("setup");
        let path = dir.path().join(format!("stream-{j}.params"));
        cuzk_groth16::params::write_params(&path, &held).expect("write");
        let before = gpu.vram_status();

        // Abandoned after two windows: nothing stays reserved or resident.
        let (srs, _) = read_params_header(&path, &opts).expect("header");
        let mut up = gpu
            .begin_resident(&srs)
            .expect("begin")
            .expect("room for it");
        let mut n = 0;
        srs.stream_points::<cuzk_groth16::ParamsError>(&opts, |w| {
            if n < 2 {
                up.put(w).expect("window");
            }
            n += 1;
            Ok(())
        })
        .expect("stream");
        assert!(gpu.vram_status().reserved > before.reserved);
        // A window past the end of its section is refused, not written.
        let past = PointsWindow::G1 {
            section: G1Section::H,
            start: srs.counts().h,
            points: &held.h()[..1],
        };
        assert!(matches!(up.put(past), Err(ProveError::Device(_))));
        drop(up);
        let after = gpu.vram_status();
        assert_eq!(
            (after.reserved, after.resident_srs),
            (before.reserved, before.resident_srs)
        );

        // Streamed whole: resident and pinned, and it proves.
        let mut up = gpu
            .begin_resident(&srs)
            .expect("begin")
            .expect("room for it");
        let mut windows = 0;
        srs.stream_points::<ProveError>(&opts, |w| {
            windows += 1;
            up.put(w)
        })
        .expect("stream");
        assert!(windows > 10, "{windows} windows");
        assert!(up.finish().expect("finish"));
        assert!(srs.host_points_released() && srs.h().is_empty());
        let pinned = gpu.vram_status();
        assert_eq!(pinned.pinned_srs, before.pinned_srs + 1);
        gpu.trim();
        assert_eq!(gpu.vram_status().pinned_srs, pinned.pinned_srs);
        for round in 0..2 {
            assert!(!prove_equal(
                &gpu,
                &srs,
                &held,
                &sp,
                600 + 10 * j as u64 + round
            ));
        }
        drop(srs);
        let after = gpu.vram_status();
        assert_eq!(after.pinned_srs, before.pinned_srs, "dropped, unpinned");
        assert_eq!(after.resident_srs, before.resident_srs);
    }
    // No room under a tiny budget: no copy is begun.
    let sp = spec(10, 1.0, 0.25, 0.92, 70);
    let held = generate_params(sp.circuit(), &mut ChaCha8Rng::seed_from_u64(71)).expect("setup");
    let path = dir.path().join("small.params");
    cuzk_groth16::params::write_params(&path, &held).expect("write");
    let (srs, _) = read_params_header(&path, &opts).expect("header");
    let tiny = gpu_with(CudaOptions {
        vram_budget: Some(4096),
        ..CudaOptions::default()
    });
    assert!(tiny.begin_resident(&srs).expect("begin").is_none());
    drop(tiny);
    let _ = gpu_with(CudaOptions::default());
}
