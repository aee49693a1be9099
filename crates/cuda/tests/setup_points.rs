//! The insecure setup's points made on the GPU (`GpuPoints`, `cuda/fixed_base.cuh`) against
//! the CPU's (`CpuPoints`): the same `.params` bytes for every scalar (random, 0, ±1, digit
//! and window boundaries, powers of two up to 2^254), in G1 and G2, for batches that end
//! anywhere in a block; and a whole streamed setup made on the GPU equals the CPU's file.
//! Needs a CUDA device (skips with a message where there is none); `CUZK_TEST_SETUP_POINTS`
//! adds sizes (e.g. `20000000`, past one device batch).
#![cfg(feature = "cuda")]

mod common;

use common::{has_device, serial};
use cuzk_cuda::GpuPoints;
use cuzk_groth16::compiled::CompiledCircuit;
use cuzk_groth16::setup::{write_params_streamed, CpuPoints, PointMaker, G1_BYTES, G2_BYTES};
use cuzk_groth16::synthetic::CircuitSpec;
use cuzk_groth16::Scalar;
use ff::{Field, PrimeField};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

/// `n` scalars: the edge cases first, then seeded random ones.
fn scalars(n: usize, seed: u64) -> Vec<Scalar> {
    let mut edges = vec![Scalar::ZERO, Scalar::ONE, -Scalar::ONE, Scalar::from(2u64)];
    for bits in [11u32, 12, 13, 23, 24, 63, 64, 127, 128, 200, 252, 253, 254] {
        let p = Scalar::from(2u64).pow_vartime([u64::from(bits)]);
        edges.extend([p, p - Scalar::ONE, -p]);
    }
    edges.push(Scalar::from_u128(0x0fff_0800_07ff_f800_0000_0fff_0000_0801));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    edges
        .into_iter()
        .chain(std::iter::repeat_with(|| Scalar::random(&mut rng)))
        .take(n)
        .collect()
}

fn first_difference(a: &[u8], b: &[u8], size: usize) -> Option<usize> {
    a.chunks(size).zip(b.chunks(size)).position(|(x, y)| x != y)
}

#[test]
fn gpu_setup_points_equal_the_cpu_s_in_g1_and_g2() {
    let _s = serial();
    if !has_device() {
        return;
    }
    let gpu = GpuPoints::new(0).expect("device 0");
    let cpu = CpuPoints::new();
    let mut sizes = vec![1usize, 2, 31, 33, 255, 4097, 100_003];
    if let Ok(v) = std::env::var("CUZK_TEST_SETUP_POINTS") {
        sizes.extend(v.split(',').filter_map(|x| x.parse::<usize>().ok()));
    }
    for (k, &n) in sizes.iter().enumerate() {
        let s = scalars(n, k as u64);
        for (size, g2) in [(G1_BYTES, false), (G2_BYTES, true)] {
            let mut want = vec![0u8; size * n];
            let mut got = vec![0xa5u8; size * n];
            let t = std::time::Instant::now();
            if g2 {
                cpu.g2(&s, &mut want).unwrap();
            } else {
                cpu.g1(&s, &mut want).unwrap();
            }
            let cpu_s = t.elapsed().as_secs_f64();
            let t = std::time::Instant::now();
            if g2 {
                gpu.g2(&s, &mut got).unwrap();
            } else {
                gpu.g1(&s, &mut got).unwrap();
            }
            let gpu_s = t.elapsed().as_secs_f64();
            let group = if g2 { "G2" } else { "G1" };
            eprintln!("{group} x {n}: CPU {cpu_s:.3} s, GPU {gpu_s:.3} s");
            if let Some(i) = first_difference(&want, &got, size) {
                panic!(
                    "{group}, {n} points: point {i} (scalar {:?}) differs:\n cpu {}\n gpu {}",
                    s[i],
                    hex(&want[size * i..size * (i + 1)]),
                    hex(&got[size * i..size * (i + 1)])
                );
            }
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn a_streamed_setup_made_on_the_gpu_equals_the_cpu_s_file() {
    let _s = serial();
    if !has_device() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let circuit = "synthetic:constraints=40000,inputs=9,aux=1.0,a=1.0,b=0.25,seed=3";
    let spec: CircuitSpec = circuit.parse().unwrap();
    let gpu = GpuPoints::new(0).expect("device 0");
    let mut files = Vec::new();
    for (name, maker) in [("cpu", &CpuPoints::new() as &dyn PointMaker), ("gpu", &gpu)] {
        let path = dir.path().join(format!("{name}.params"));
        let compiled = CompiledCircuit::compile(circuit, spec).unwrap();
        write_params_streamed(compiled, &mut ChaCha8Rng::seed_from_u64(5), &path, maker).unwrap();
        files.push(std::fs::read(&path).unwrap());
    }
    assert_eq!(files[0].len(), files[1].len());
    assert!(
        files[0] == files[1],
        "the GPU's file differs from the CPU's"
    );
}
