//! Issue 29 item 4: an SRS filled in VRAM from the parameter file's bytes as they are, decoded
//! on the device (`ResidentUpload::put_wire`, `cuda/srs_wire.cuh`), proves byte-equal to the
//! CPU backend with the whole host copy, for windows that end anywhere in a section and for a
//! window larger than the ones before it (new staging slots). A point off the curve, one with a
//! coordinate above the modulus and one with the infinity flag are each refused, by a later
//! put or by `finish`, with the error the host's decoder gives for the same bytes (section,
//! index, offset, reason), and the refused upload leaves nothing reserved or resident.
//! Needs a CUDA device (skips with a message where there is none).
#![cfg(feature = "cuda")]

mod common;

use common::{gpu_with, has_device, prove_equal, serial, spec};
use cuzk_cuda::{CudaOptions, CudaProver};
use cuzk_groth16::params::{read_params_header, write_params, ReadOptions};
use cuzk_groth16::setup::generate_params;
use cuzk_groth16::{ParamsError, ProveError, ProverBackend, Srs};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::path::Path;

/// Streams `srs`'s file into a resident copy on `gpu` through `put_wire`: the copy, or the
/// error that refused it.
fn fill(gpu: &CudaProver, srs: &Srs, opts: &ReadOptions) -> Result<bool, ProveError> {
    let mut up = gpu
        .begin_resident(srs)
        .expect("begin")
        .expect("room for it");
    srs.stream_wire::<ProveError>(opts, |w| up.put_wire(w))?;
    up.finish()
}

/// The error the host's decoder gives for `path` with `opts`.
fn host_error(path: &Path, opts: &ReadOptions) -> ParamsError {
    let (srs, _) = read_params_header(path, opts).expect("header");
    srs.stream_wire::<ParamsError>(opts, |w| w.decode(|_| ()))
        .expect_err("the host refuses it")
}

#[test]
fn an_srs_decoded_on_the_device_proves_equal_and_its_bad_points_are_named() {
    let _s = serial();
    if !has_device() {
        return;
    }
    let gpu = gpu_with(CudaOptions::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let sp = spec(14, 1.0, 0.25, 0.92, 80);
    let held = generate_params(sp.circuit(), &mut ChaCha8Rng::seed_from_u64(81)).expect("setup");
    let path = dir.path().join("wire.params");
    write_params(&path, &held).expect("write");
    let c = held.counts();
    // Windows of 1013 G1 points (506 G2), ending anywhere in a section; then windows larger
    // than `h` (2^14 − 1 points), so `a` (2^14 points) comes in a larger window than the first.
    for window_bytes in [1013 * 96, 4 << 20] {
        let opts = ReadOptions {
            check_points: false,
            window_bytes,
        };
        let before = gpu.vram_status();
        let (srs, _) = read_params_header(&path, &opts).expect("header");
        assert!(fill(&gpu, &srs, &opts).expect("filled"));
        assert!(srs.host_points_released());
        assert_eq!(gpu.vram_status().pinned_srs, before.pinned_srs + 1);
        for round in 0..2 {
            assert!(!prove_equal(&gpu, &srs, &held, &sp, 900 + round));
        }
        drop(srs);
        // The proofs' idle worker context goes too.
        gpu.trim();
        let after = gpu.vram_status();
        assert_eq!(
            (after.pinned_srs, after.resident_srs, after.reserved),
            (before.pinned_srs, before.resident_srs, before.reserved)
        );
    }

    // Where each section's points start in the file.
    let vk_end = 3 * 96 + 3 * 192 + 4 + 96 * held.vk().ic.len();
    let h = vk_end + 4;
    let l = h + 96 * c.h + 4;
    let a = l + 96 * c.l + 4;
    let b_g1 = a + 96 * c.a + 4;
    let b_g2 = b_g1 + 96 * c.b_g1 + 4;
    let original = std::fs::read(&path).expect("read");
    let opts = ReadOptions {
        check_points: false,
        window_bytes: 1013 * 96,
    };
    type Damage = fn(&mut [u8]);
    let cases: [(&str, usize, usize, Damage); 4] = [
        // Off the curve: one bit of x.
        ("l", 2500, l + 2500 * 96, |p| p[20] ^= 0x10),
        // x above the modulus (0x1fff…ff), no flag bit.
        ("a", 7, a + 7 * 96, |p| {
            p[0] = 0x1f;
            p[1..48].fill(0xff);
        }),
        // The infinity flag on a finite point.
        ("h", 0, h, |p| p[0] |= 0x40),
        // The last point of b_g2 (found by `finish`): x.c0 above the modulus.
        ("b_g2", c.b_g2 - 1, b_g2 + (c.b_g2 - 1) * 192, |p| {
            p[48] = 0x1f;
            p[49..96].fill(0xff);
        }),
    ];
    for (section, index, at, damage) in cases {
        let mut bytes = original.clone();
        let size = if section == "b_g2" { 192 } else { 96 };
        damage(&mut bytes[at..at + size]);
        std::fs::write(&path, &bytes).expect("write");
        let expected = host_error(&path, &opts);
        assert!(
            matches!(expected, ParamsError::BadPoint { section: s, index: i, offset, .. }
                if s == section && i == index && offset == at as u64),
            "{expected:?}"
        );
        let before = gpu.vram_status();
        let (srs, _) = read_params_header(&path, &opts).expect("header");
        match fill(&gpu, &srs, &opts) {
            Err(ProveError::Params(e)) => {
                assert_eq!(format!("{e:?}"), format!("{expected:?}"), "{section}")
            }
            other => panic!("{section}: {other:?}"),
        }
        drop(srs);
        let after = gpu.vram_status();
        assert_eq!(
            (after.pinned_srs, after.resident_srs, after.reserved),
            (before.pinned_srs, before.resident_srs, before.reserved),
            "{section}: the refused copy is gone"
        );
    }
}
