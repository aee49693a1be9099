//! a/b/c made on the device from compiled matrices resident in VRAM (deferred a/b/c): for the
//! same witness, r and s, the GPU's proof bytes equal the CPU backend's (which evaluates the
//! matrices on the host) and the GPU's with host-made a/b/c, and the proofs verify: on
//! synthetic shapes (all-zero and all-one densities and witnesses included, both SRS tiers,
//! two workers sharing one resident copy), and on the real 2 KiB circuits of every Filecoin
//! proof kind, whose assembled proofs filecoin-proofs' own verifier accepts.
//! Needs a CUDA device (skips with a message where there is none).
#![cfg(feature = "cuda")]

mod common;

use common::{serial, spec};

use cuzk_cuda::{CudaOptions, CudaProver};
use cuzk_groth16::prover::random_blinding;
use cuzk_groth16::setup::generate_params;
use cuzk_groth16::verifier::{verify_proof, PreparedVerifyingKey};
use cuzk_groth16::{
    CompiledCircuit, CpuProver, Proof, ProverBackend, Recorder, RecorderMode, Scalar, Srs,
    Synthesized,
};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::path::Path;
use std::sync::{Arc, Mutex};

fn gpu_with(options: CudaOptions) -> Option<CudaProver> {
    common::has_device().then(|| common::gpu_with(options))
}

/// Proves `witness` deferred on the GPU, evaluated on the GPU and on the CPU with the same
/// r, s; asserts the three are equal and that the GPU's device-made a/b/c really ran there
/// (its timing says so). Returns the proof and whether the SRS streamed.
fn three_ways(
    srs: &Srs,
    compiled: &Arc<CompiledCircuit>,
    witness: Synthesized,
    gpu: &CudaProver,
    seed: u64,
    what: &str,
) -> (Proof, bool) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (r, s) = random_blinding(&mut rng);
    let full = compiled.evaluate(witness.clone()).expect("evaluate");
    assert!(full.is_satisfied(), "{what}: the witness does not satisfy");
    let deferred = compiled.defer(witness).expect("defer");
    let cpu = CpuProver::new()
        .prove(srs, full.clone(), r, s)
        .expect("cpu");
    // The CPU prover accepts a deferred circuit too (evaluating it on the host).
    let cpu_deferred = CpuProver::new()
        .prove(srs, deferred.clone(), r, s)
        .expect("cpu (deferred)");
    assert_eq!(
        cpu_deferred.to_bytes(),
        cpu.to_bytes(),
        "{what}: CPU deferred"
    );
    let (p, t) = gpu
        .start_timed(srs, deferred, r, s)
        .expect("gpu start (deferred)");
    assert!(t.abc_ms > 0.0, "{what}: a/b/c were not made on the device");
    let on_device = gpu.finish(srs, p).expect("gpu finish");
    let (p, t2) = gpu
        .start_timed(srs, full, r, s)
        .expect("gpu start (host a/b/c)");
    assert_eq!(t2.abc_ms, 0.0);
    let uploaded = gpu.finish(srs, p).expect("gpu finish");
    assert_eq!(
        on_device.to_bytes(),
        cpu.to_bytes(),
        "{what}: device a/b/c vs CPU"
    );
    assert_eq!(
        uploaded.to_bytes(),
        cpu.to_bytes(),
        "{what}: host a/b/c vs CPU"
    );
    assert!(
        t.upload_bytes < t2.upload_bytes,
        "{what}: deferred uploaded {} bytes, host a/b/c {}",
        t.upload_bytes,
        t2.upload_bytes
    );
    eprintln!(
        "{what}: a/b/c on the device {:.2} ms; uploaded {} bytes (host a/b/c: {})",
        t.abc_ms, t.upload_bytes, t2.upload_bytes
    );
    (on_device, t.streamed)
}

fn synthetic_shapes(gpu: &CudaProver, sizes: &[u32], expect_streamed: bool) {
    // (A density, B density, fraction of 0/1 aux)
    let shapes = [
        (0.0, 0.0, 0.0),
        (1.0, 1.0, 1.0),
        (1.0, 0.25, 0.92),
        (0.5, 1.0, 0.0),
        (0.0, 0.5, 1.0),
    ];
    for &log_n in sizes {
        let mut rng = ChaCha8Rng::seed_from_u64(80 + log_n as u64);
        for (j, &(a, b, bools)) in shapes.iter().enumerate() {
            let sp = spec(log_n, a, b, bools, 10 * log_n as u64 + j as u64);
            let srs = generate_params(sp.circuit(), &mut rng).expect("setup");
            let compiled =
                Arc::new(CompiledCircuit::compile("synthetic", sp.circuit()).expect("compile"));
            let witness =
                Recorder::synthesize(sp.circuit(), RecorderMode::WitnessOnly).expect("witness");
            let public = witness.inputs[1..].to_vec();
            let what = format!("2^{log_n} {sp:?}");
            let (p, streamed) = three_ways(&srs, &compiled, witness, gpu, j as u64, &what);
            assert_eq!(streamed, expect_streamed, "{what}: tier");
            let pvk = PreparedVerifyingKey::from(srs.vk());
            assert!(
                verify_proof(&pvk, &p, &public).unwrap(),
                "{what}: does not verify"
            );
            assert!(
                gpu.vram_status().resident_matrices >= 1,
                "{what}: no resident matrices"
            );
            drop(compiled);
            // Dropping the circuit frees its device copy.
            assert_eq!(
                gpu.vram_status().resident_matrices,
                0,
                "{what}: matrices outlived their circuit"
            );
            gpu.evict(srs.id());
        }
    }
}

#[test]
fn synthetic_device_abc_equals_cpu_and_verifies() {
    let _s = serial();
    let Some(gpu) = gpu_with(CudaOptions::default()) else {
        return;
    };
    synthetic_shapes(&gpu, &[10, 13, 16], false);
}

#[test]
fn streamed_srs_device_abc_equals_cpu_and_verifies() {
    let _s = serial();
    let Some(gpu) = gpu_with(CudaOptions {
        force_streaming: true,
        stream_chunk_bases: 1024,
        ..CudaOptions::default()
    }) else {
        return;
    };
    synthetic_shapes(&gpu, &[12], true);
}

#[test]
fn two_workers_share_one_resident_copy() {
    let _s = serial();
    let Some(gpu) = gpu_with(CudaOptions::default()) else {
        return;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let sp = spec(14, 1.0, 0.25, 0.92, 3);
    let srs = generate_params(sp.circuit(), &mut rng).expect("setup");
    let compiled = Arc::new(CompiledCircuit::compile("synthetic", sp.circuit()).expect("compile"));
    let witness = Recorder::synthesize(sp.circuit(), RecorderMode::WitnessOnly).expect("witness");
    let full = compiled.evaluate(witness.clone()).unwrap();
    let blinding: Vec<(Scalar, Scalar)> = (0..12).map(|_| random_blinding(&mut rng)).collect();
    let work = Mutex::new((0..blinding.len()).collect::<Vec<_>>());
    let out = Mutex::new(Vec::new());
    std::thread::scope(|sc| {
        for _ in 0..2 {
            sc.spawn(|| loop {
                let Some(i) = work.lock().unwrap().pop() else {
                    break;
                };
                let (r, s) = blinding[i];
                let c = compiled.defer(witness.clone()).unwrap();
                let p = gpu.prove(&srs, c, r, s).expect("gpu");
                out.lock().unwrap().push((i, p));
            });
        }
    });
    let out = out.into_inner().unwrap();
    assert_eq!(out.len(), blinding.len());
    assert_eq!(
        gpu.vram_status().resident_matrices,
        1,
        "one copy for both workers"
    );
    for (i, p) in out {
        let (r, s) = blinding[i];
        let cpu = CpuProver::new().prove(&srs, full.clone(), r, s).unwrap();
        assert_eq!(p.to_bytes(), cpu.to_bytes(), "partition {i}");
    }
}

#[test]
fn real_2k_filecoin_kinds_device_abc_equal_cpu_and_verify() {
    let _s = serial();
    let Some(gpu) = gpu_with(CudaOptions::default()) else {
        return;
    };
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let t = std::time::Instant::now();
    let (dir, m) = cuzk_testkit::testdata::process_data(tmp);
    eprintln!("2 KiB test data: {:.1} s", t.elapsed().as_secs_f64());
    let opts = cuzk_groth16::params::ReadOptions {
        check_points: false,
        ..Default::default()
    };
    for kind in ["porep", "snap", "wpost", "winning"] {
        let req = m.request(kind).expect("request").load(dir).expect("load");
        let mut plan = cuzk_filecoin::plan(&req).expect("plan");
        let id = plan.circuit_id;
        let files = id.param_files().unwrap();
        let (srs, _) =
            cuzk_groth16::params::read_params(&files.params_path(dir), &opts).expect("params");
        let compiled = Arc::new(cuzk_filecoin::compiled::compile(id).expect("compile"));
        let mut proofs = Vec::new();
        for (k, job) in plan.take_jobs().into_iter().enumerate() {
            let witness = job.run(RecorderMode::WitnessOnly).expect("witness");
            let what = format!("{kind} ({id}) partition {k}");
            let (p, _) = three_ways(&srs, &compiled, witness, &gpu, 40 + k as u64, &what);
            proofs.push(p);
        }
        plan.verify(&cuzk_filecoin::assemble(&proofs))
            .unwrap_or_else(|e| {
                panic!("{kind}: filecoin-proofs rejects the device-made proof: {e}")
            });
        eprintln!(
            "{kind}: {} partitions, verified by filecoin-proofs",
            proofs.len()
        );
        drop(compiled);
        gpu.evict(srs.id());
    }
}

/// A proof of `circuit` with a/b/c made on the device from `compiled`'s VRAM copy: the CPU's
/// proof from `reference`'s host matrices, bit for bit, and it verifies.
fn deferred_equals_cpu(
    gpu: &CudaProver,
    srs: &cuzk_groth16::Srs,
    compiled: &Arc<CompiledCircuit>,
    reference: &CompiledCircuit,
    circuit: cuzk_groth16::synthetic::SyntheticCircuit,
    rng: &mut ChaCha8Rng,
) {
    let witness = Recorder::synthesize(circuit, RecorderMode::WitnessOnly).expect("witness");
    let public = witness.inputs[1..].to_vec();
    let (r, s) = random_blinding(rng);
    let cpu = CpuProver::new()
        .prove(srs, reference.evaluate(witness.clone()).unwrap(), r, s)
        .unwrap();
    let (p, t) = gpu
        .start_timed(srs, compiled.defer(witness).expect("defer"), r, s)
        .expect("gpu");
    assert!(t.abc_ms > 0.0);
    let p = gpu.finish(srs, p).unwrap();
    assert_eq!(p.to_bytes(), cpu.to_bytes());
    assert!(verify_proof(&PreparedVerifyingKey::from(srs.vk()), &p, &public).unwrap());
}

#[test]
fn released_host_matrices_prove_from_the_pinned_vram_copy() {
    let _s = serial();
    let Some(gpu) = gpu_with(CudaOptions::default()) else {
        return;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let sp = spec(14, 1.0, 0.25, 0.92, 4);
    let srs = generate_params(sp.circuit(), &mut rng).expect("setup");
    // The CPU's reference keeps its own host copy.
    let reference = CompiledCircuit::compile("synthetic", sp.circuit()).expect("compile");
    let mut compiled = CompiledCircuit::compile("synthetic", sp.circuit()).expect("compile");
    assert!(gpu
        .make_matrices_resident(&srs, &compiled)
        .expect("resident"));
    assert!(compiled.release_host_matrices() > 0);
    // Released, they cannot be uploaded again: a second ask says no.
    assert!(!gpu.make_matrices_resident(&srs, &compiled).unwrap());
    let compiled = Arc::new(compiled);
    // Pinned: trimming frees idle contexts and copies, not these.
    gpu.trim();
    assert_eq!(gpu.vram_status().resident_matrices, 1);
    deferred_equals_cpu(&gpu, &srs, &compiled, &reference, sp.circuit(), &mut rng);
    drop(compiled);
    assert_eq!(
        gpu.vram_status().resident_matrices,
        0,
        "freed with its circuit"
    );
}

/// A compiled circuit opened from its cache file reaches VRAM a window at a time, never
/// read whole into host memory: the proof made from that copy is the CPU's, bit for bit. A
/// file damaged among its matrices is caught by its digest as they pass: the upload says no
/// and no copy stays in VRAM.
#[test]
fn matrices_streamed_from_their_file_prove_as_the_cpu_does() {
    let _s = serial();
    let Some(gpu) = gpu_with(CudaOptions::default()) else {
        return;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let sp = spec(14, 1.0, 0.25, 0.92, 4);
    let srs = generate_params(sp.circuit(), &mut rng).expect("setup");
    let reference = CompiledCircuit::compile("synthetic", sp.circuit()).expect("compile");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("synthetic.compiled");
    reference.write_file(&path, "k").unwrap();

    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 1;
    let damaged = dir.path().join("damaged.compiled");
    std::fs::write(&damaged, &bytes).unwrap();
    let bad = CompiledCircuit::open_file(&damaged, "k").expect("its header is intact");
    assert!(!gpu.make_matrices_resident(&srs, &bad).unwrap());
    assert_eq!(gpu.vram_status().resident_matrices, 0, "nothing kept");

    let opened = CompiledCircuit::open_file(&path, "k").expect("open");
    assert!(opened.matrices_in_file());
    assert!(gpu.make_matrices_resident(&srs, &opened).expect("resident"));
    assert!(opened.matrices_in_file(), "never read into host memory");
    assert_eq!(gpu.vram_status().resident_matrices, 1);
    let opened = Arc::new(opened);
    deferred_equals_cpu(&gpu, &srs, &opened, &reference, sp.circuit(), &mut rng);
    drop(opened);
    assert_eq!(gpu.vram_status().resident_matrices, 0);
}
