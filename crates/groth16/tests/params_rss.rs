//! Loading a parameter file of ~180 MB (`PARAMS_RSS_MB=<size of h>` for other sizes) must not
//! raise the process's peak RSS (VmHWM) by anything near twice the file's size: the mapped
//! pages are released window by window. Also prints load throughput (warm page cache).
//! Loads skip the subgroup checks unless `PARAMS_RSS_CHECKED=1` (they cost ~100 µs a point
//! on a 2-core machine, minutes for this file; memory behaves the same either way).
//!
//! `cargo test --release -p cuzk-groth16 --test params_rss -- --nocapture`
//! (`PARAMS_RSS_FILE=path` measures an existing file instead; `PARAMS_RSS_BELLPERSON=1` also
//! times bellperson's reader on it).
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
use cuzk_groth16::params::{read_params, write_params, ReadOptions};
use cuzk_groth16::{Srs, VerifyingKey};
use group::{prime::PrimeCurveAffine, Curve, Group};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

/// `n` distinct G1 points: a random start plus multiples of a random step.
fn g1_points(n: usize, rng: &mut ChaCha8Rng) -> Vec<G1Affine> {
    let step = G1Projective::random(&mut *rng);
    let mut p = G1Projective::random(&mut *rng);
    let proj: Vec<G1Projective> = (0..n)
        .map(|_| {
            p += step;
            p
        })
        .collect();
    let mut out = vec![G1Affine::identity(); n];
    G1Projective::batch_normalize(&proj, &mut out);
    out
}

fn g2_points(n: usize, rng: &mut ChaCha8Rng) -> Vec<G2Affine> {
    let g = G2Projective::random(&mut *rng);
    let mut p = g;
    (0..n)
        .map(|_| {
            p += g;
            p.to_affine()
        })
        .collect()
}

/// A field of /proc/self/status, in bytes.
fn status_kib(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Loads `path` once per mode, printing time, GB/s and the peak-RSS growth, and checks the
/// growth stays below 1.5x the file.
fn measure_loads(path: &std::path::Path, expected_points: Option<(usize, usize, usize)>) {
    let file_len = std::fs::metadata(path).unwrap().len();
    let checked = std::env::var("PARAMS_RSS_CHECKED").is_ok_and(|v| v == "1");
    let modes: &[bool] = if checked { &[false, true] } else { &[false] };
    for &check_points in modes {
        // Reset VmHWM to the current RSS (Linux >= 4.0), then load.
        let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
        let before = status_kib("VmRSS:").unwrap_or(0);
        let opts = ReadOptions {
            check_points,
            ..ReadOptions::default()
        };
        let (loaded, stats) = read_params(path, &opts).unwrap();
        let peak = status_kib("VmHWM:").unwrap_or(0);
        let delta = peak.saturating_sub(before);
        if let Some(expected) = expected_points {
            assert_eq!(
                (loaded.h().len(), loaded.l().len(), loaded.b_g2().len()),
                expected
            );
        }
        println!(
            "load {:.1} MB, check_points={check_points}: {:.3} s, {:.3} GB/s; \
             peak RSS delta {:.1} MB = {:.2}x file (HWM reset: {reset})",
            file_len as f64 / 1e6,
            stats.elapsed.as_secs_f64(),
            stats.gbps(),
            delta as f64 / 1e6,
            delta as f64 / file_len as f64
        );
        if reset {
            assert!(
                (delta as f64) < 1.5 * file_len as f64,
                "peak RSS grew by {delta} bytes loading a {file_len}-byte file"
            );
        }
        drop(loaded);
        if std::env::var("PARAMS_RSS_BELLPERSON").is_ok_and(|v| v == "1") {
            // Reference: bellperson's own reader (buffered, single-threaded).
            let t = std::time::Instant::now();
            let f = std::io::BufReader::new(std::fs::File::open(path).unwrap());
            let p =
                bellperson::groth16::Parameters::<blstrs::Bls12>::read(f, check_points).unwrap();
            let secs = t.elapsed().as_secs_f64();
            println!(
                "bellperson Parameters::read(checked={check_points}): {secs:.3} s, {:.3} GB/s",
                file_len as f64 / secs / 1e9
            );
            drop(p);
        }
    }
}

#[test]
fn load_peak_rss_stays_well_below_twice_the_file() {
    if let Ok(path) = std::env::var("PARAMS_RSS_FILE") {
        // An existing file, e.g. one written by `cuzk gen params`.
        measure_loads(std::path::Path::new(&path), None);
        return;
    }
    let mb: usize = std::env::var("PARAMS_RSS_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    // `h` must hold 2^k - 1 points; pick k so `h` is about the requested size.
    let k = ((mb << 20) / 96)
        .next_power_of_two()
        .trailing_zeros()
        .max(4);
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let h = g1_points((1 << (k - 1)) - 1, &mut rng);
    let l = g1_points(h.len() / 2, &mut rng);
    let a = l[..l.len() / 2].to_vec();
    let b_g1 = l[..l.len() / 8].to_vec();
    let b_g2 = g2_points(64, &mut rng);
    let vk = VerifyingKey {
        alpha_g1: h[0],
        beta_g1: h[1],
        beta_g2: b_g2[0],
        gamma_g2: b_g2[1],
        delta_g1: h[2],
        delta_g2: b_g2[2],
        ic: h[..5].to_vec(),
    };
    let srs = Srs::new(vk, h, l, a, b_g1, b_g2);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.params");
    write_params(&path, &srs).unwrap();
    let expected_points = (srs.h().len(), srs.l().len(), srs.b_g2().len());
    drop(srs);
    measure_loads(&path, Some(expected_points));
}
