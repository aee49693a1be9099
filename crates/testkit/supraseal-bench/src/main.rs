//! `cuzk-supraseal-bench --log-n 20,22 [--runs 3] [--dir /tmp]`: times the upstream
//! supraseal-c2 prover (one partition per call, median of `runs` after one warm-up) on the
//! same TIMING-ONLY parameters (proofs DO NOT VERIFY) and partitions as `cuzk-gpu-bench`, and
//! prints the proof bytes of the first two runs for a byte-for-byte cross-check.
use blstrs::{G1Affine, G2Affine, Scalar};
use cuzk_testkit::timing::{self, PartitionShape, NOT_VERIFYING};
use cuzk_groth16::{Density, Proof};
use ff::Field;
use group::prime::PrimeCurveAffine;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::time::Instant;

/// supraseal-c2's proof layout: affine A, B, C in blst's representation.
#[repr(C)]
#[derive(Clone, Copy)]
struct SupraProof {
    a: G1Affine,
    b: G2Affine,
    c: G1Affine,
}

fn opt<'a>(args: &'a [String], key: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == key)
        .and_then(|i| args.get(i + 1))
        .map(|s| s.as_str())
}

fn rs(i: u64) -> (Scalar, Scalar) {
    let mut rng = ChaCha8Rng::seed_from_u64(1000 + i);
    (Scalar::random(&mut rng), Scalar::random(&mut rng))
}

fn pop(d: &Density) -> usize {
    d.words.iter().map(|w| w.count_ones() as usize).sum()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sizes: Vec<u32> = opt(&args, "--log-n")
        .unwrap_or("20")
        .split(',')
        .filter_map(|x| x.parse().ok())
        .collect();
    let runs: usize = opt(&args, "--runs")
        .and_then(|x| x.parse().ok())
        .unwrap_or(3);
    let dir = opt(&args, "--dir").unwrap_or("/tmp").to_string();
    eprintln!("WARNING: {NOT_VERIFYING}");
    let mut summary = Vec::new();
    for log_n in sizes {
        let shape = PartitionShape::porep_like(log_n);
        let t = Instant::now();
        let srs = timing::timing_only_srs(&shape);
        let path = std::path::Path::new(&dir).join(timing::timing_only_file_name(log_n));
        if let Err(e) = cuzk_groth16::params::write_params(&path, &srs) {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
        drop(srs);
        eprintln!(
            "[2^{log_n}] params written in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        let t = Instant::now();
        let ss = match supraseal_c2::SRS::try_new(path.clone(), false) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: supraseal SRS: {e}");
                std::process::exit(1);
            }
        };
        eprintln!(
            "[2^{log_n}] supraseal loaded the SRS in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        let parts = [
            timing::porep_like_partition(&shape, 1),
            timing::porep_like_partition(&shape, 2),
        ];
        let mut times = Vec::new();
        for i in 0..=runs {
            let p = &parts[i % 2];
            let (r, s) = rs(i as u64 % 2);
            let mut proofs = [SupraProof {
                a: G1Affine::identity(),
                b: G2Affine::identity(),
                c: G1Affine::identity(),
            }];
            let t = Instant::now();
            supraseal_c2::generate_groth16_proof(
                &[p.a.as_ptr()],
                &[p.b.as_ptr()],
                &[p.c.as_ptr()],
                p.a.len(),
                &[p.inputs.as_ptr()],
                &[p.aux.as_ptr()],
                p.inputs.len(),
                p.aux.len(),
                &p.a_aux_density.words,
                &p.b_input_density.words,
                &p.b_aux_density.words,
                pop(&p.a_aux_density),
                pop(&p.b_input_density),
                pop(&p.b_aux_density),
                1,
                &[r],
                &[s],
                &mut proofs,
                &ss,
            );
            let dt = t.elapsed().as_secs_f64();
            eprintln!("[2^{log_n}] supraseal #{i}: {dt:.3} s");
            if i < 2 {
                let pr = Proof {
                    a: proofs[0].a,
                    b: proofs[0].b,
                    c: proofs[0].c,
                };
                let hex: String = pr.to_bytes().iter().map(|x| format!("{x:02x}")).collect();
                println!("proof 2^{log_n} #{i}: {hex}");
            }
            if i > 0 {
                times.push(dt);
            }
        }
        drop(ss);
        let _ = std::fs::remove_file(&path);
        times.sort_by(|a, b| a.total_cmp(b));
        let med = times[times.len() / 2];
        println!(
            "supraseal 2^{log_n}: median {med:.3} s over {} runs ({times:?})",
            times.len()
        );
        summary.push(format!("{log_n}:{med:.4}"));
    }
    println!("SUPRASEAL_TIMES={}", summary.join(","));
}
