//! The H polynomial on the device: the six NTTs proofs use (`cuda/h_ntt.cuh`) equal the
//! textbook seven (`cuda/h_compare.cuh`) and the host's `domain::quotient`, bit for bit, on
//! a, b, c that satisfy nothing, at several domain sizes (`CUZK_TEST_H_LOGS`, comma-separated
//! log2 sizes, replaces them, e.g. 27 for a 32 GiB PoRep partition's domain, where the host's
//! quotient is left out: it would take minutes).
//! Needs a CUDA device (skips with a message where there is none).
#![cfg(feature = "cuda")]

mod common;

use common::{has_device, serial};
use cuzk_cuda::CudaProver;
use cuzk_groth16::domain::quotient;
use cuzk_groth16::Scalar;
use ff::Field;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

fn random_vec(rng: &mut ChaCha8Rng, n: usize) -> Vec<Scalar> {
    (0..n).map(|_| Scalar::random(&mut *rng)).collect()
}

/// The first index where `x` and `y` differ, and how many do (None: equal, lengths included).
fn first_difference(x: &[Scalar], y: &[Scalar]) -> Option<(usize, usize)> {
    if x.len() != y.len() {
        return Some((x.len().min(y.len()), x.len().abs_diff(y.len())));
    }
    let bad = x.iter().zip(y).filter(|(p, q)| p != q).count();
    x.iter().zip(y).position(|(p, q)| p != q).map(|i| (i, bad))
}

#[test]
fn six_ntts_equal_seven_and_the_host() {
    let _s = serial();
    if !has_device() {
        return;
    }
    let gpu = CudaProver::new(0).expect("device 0");
    let logs: Vec<u32> = std::env::var("CUZK_TEST_H_LOGS")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![6, 10, 13, 17, 20]);
    let mut rng = ChaCha8Rng::seed_from_u64(28);
    for lg in logs {
        let n = 1usize << lg;
        // a shorter than the domain (zero-padded), b and c full
        let (a, b, c) = (
            random_vec(&mut rng, n - n / 4),
            random_vec(&mut rng, n),
            random_vec(&mut rng, n),
        );
        let t = std::time::Instant::now();
        let h = gpu.h_time(lg, &a, &b, &c, 0).expect("H comparison");
        assert_eq!(h.six.len(), n);
        if lg <= 22 {
            // each against the host's first, so that a failure says which one is wrong
            let host = quotient(a, b, c).expect("host quotient");
            assert_eq!(
                first_difference(&h.six[..n - 1], &host),
                None,
                "2^{lg}: six NTTs against the host's quotient"
            );
            assert_eq!(
                first_difference(&h.seven[..n - 1], &host),
                None,
                "2^{lg}: seven NTTs against the host's quotient"
            );
        }
        assert_eq!(
            first_difference(&h.six, &h.seven),
            None,
            "2^{lg}: six NTTs against seven"
        );
        eprintln!(
            "2^{lg}: six {:.2} ms, seven {:.2} ms (device); {:.1} s in all",
            h.device_ms[0],
            h.device_ms[1],
            t.elapsed().as_secs_f64()
        );
    }
    assert!(
        gpu.h_time(29, &[], &[], &[], 0).is_err(),
        "a domain above 2^28 is an error"
    );
}
