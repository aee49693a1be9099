//! Corrupt, truncated and padded parameter files give typed errors naming the section and
//! offset, and no input makes the reader panic.
mod params_support;

use cuzk_groth16::params::{
    read_params, read_params_from_bytes, read_params_header, read_vk, read_vk_from_bytes,
    write_params_to, write_vk_to, ReadOptions,
};
use cuzk_groth16::setup::generate_params;
use cuzk_groth16::{ParamsError, Srs};
use params_support::{RandomCircuit, Shape};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

const G1: usize = 96;
const G2: usize = 192;
/// alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2.
const VK_FIXED: usize = 3 * G1 + 3 * G2;

/// Offsets of each section's count prefix.
struct Layout {
    ic: usize,
    h: usize,
    l: usize,
    a: usize,
    b_g1: usize,
    b_g2: usize,
    end: usize,
}

fn layout(srs: &Srs) -> Layout {
    let ic = VK_FIXED;
    let h = ic + 4 + srs.vk().ic.len() * G1;
    let l = h + 4 + srs.h().len() * G1;
    let a = l + 4 + srs.l().len() * G1;
    let b_g1 = a + 4 + srs.a().len() * G1;
    let b_g2 = b_g1 + 4 + srs.b_g1().len() * G1;
    let end = b_g2 + 4 + srs.b_g2().len() * G2;
    Layout {
        ic,
        h,
        l,
        a,
        b_g1,
        b_g2,
        end,
    }
}

fn sample() -> (Srs, Vec<u8>) {
    let circuit = RandomCircuit::new(
        Shape {
            inputs: 3,
            aux: 20,
            constraints: 25,
            b_aux: 0.5,
        },
        11,
    );
    let srs = generate_params(circuit, &mut ChaCha8Rng::seed_from_u64(12)).unwrap();
    let mut bytes = Vec::new();
    write_params_to(&mut bytes, &srs).unwrap();
    (srs, bytes)
}

fn read(bytes: &[u8]) -> Result<Srs, ParamsError> {
    read_params_from_bytes(bytes, &ReadOptions::default())
}

#[test]
fn layout_matches_the_written_length() {
    let (srs, bytes) = sample();
    assert_eq!(layout(&srs).end, bytes.len());
}

#[test]
fn flipped_byte_in_a_point_is_a_bad_point() {
    let (srs, bytes) = sample();
    let lay = layout(&srs);
    // Third point of `l`, a byte inside its x coordinate.
    let point = lay.l + 4 + 2 * G1;
    let mut bad = bytes.clone();
    bad[point + 20] ^= 0x10;
    match read(&bad) {
        Err(ParamsError::BadPoint {
            section,
            index,
            offset,
            ..
        }) => {
            assert_eq!((section, index, offset), ("l", 2, point as u64));
        }
        other => panic!("expected BadPoint, got {other:?}"),
    }
    // The same in G2 (`b_g2`, first point) and in the fixed vk points.
    let point = lay.b_g2 + 4;
    let mut bad = bytes.clone();
    bad[point + 100] ^= 0x01;
    assert!(matches!(
        read(&bad),
        Err(ParamsError::BadPoint { section: "b_g2", index: 0, offset, .. }) if offset == point as u64
    ));
    let mut bad = bytes.clone();
    bad[G1 + 5] ^= 0x80;
    assert!(matches!(
        read(&bad),
        Err(ParamsError::BadPoint {
            section: "vk.beta_g1",
            offset: 96,
            ..
        })
    ));
}

#[test]
fn off_curve_point_is_a_bad_point() {
    let (srs, bytes) = sample();
    let lay = layout(&srs);
    // y + 1 (last byte of the big-endian y coordinate) leaves x, y in range but off the curve.
    let point = lay.h + 4 + 5 * G1;
    let mut bad = bytes.clone();
    bad[point + G1 - 1] = bad[point + G1 - 1].wrapping_add(1);
    for check_points in [true, false] {
        let err = read_params_from_bytes(
            &bad,
            &ReadOptions {
                check_points,
                ..ReadOptions::default()
            },
        );
        match err {
            Err(ParamsError::BadPoint {
                section,
                index,
                offset,
                reason,
            }) => {
                assert_eq!((section, index, offset), ("h", 5, point as u64));
                assert!(reason.contains("curve"), "{reason}");
            }
            other => panic!("expected BadPoint, got {other:?}"),
        }
    }
}

#[test]
fn point_at_infinity_in_a_query_is_a_bad_point() {
    let (srs, bytes) = sample();
    let lay = layout(&srs);
    let point = lay.a + 4 + G1;
    let mut bad = bytes.clone();
    bad[point..point + G1].fill(0);
    bad[point] = 0x40; // the infinity flag
    match read(&bad) {
        Err(ParamsError::BadPoint {
            section: "a",
            index: 1,
            offset,
            reason,
        }) => {
            assert_eq!(offset, point as u64);
            assert_eq!(reason, "point at infinity");
        }
        other => panic!("expected BadPoint, got {other:?}"),
    }
}

#[test]
fn truncated_files_name_the_section_and_offset() {
    let (srs, bytes) = sample();
    let lay = layout(&srs);
    let len = bytes.len();
    let cases: Vec<(usize, &str, usize, usize)> = vec![
        // (cut at, section, offset of the failed read, bytes it needed)
        (0, "vk.alpha_g1", 0, G1),
        (100, "vk.beta_g1", G1, G1),
        (G1 * 2 + 10, "vk.beta_g2", G1 * 2, G2),
        (lay.ic + 2, "vk.ic", lay.ic, 4),
        (lay.l + 3, "l", lay.l, 4),
        (
            lay.b_g2 + 4 + 1,
            "b_g2",
            lay.b_g2 + 4,
            srs.b_g2().len() * G2,
        ),
        (len - 1, "b_g2", lay.b_g2 + 4, srs.b_g2().len() * G2),
    ];
    for (cut, section, offset, needed) in cases {
        match read(&bytes[..cut]) {
            Err(ParamsError::Truncated {
                section: s,
                offset: o,
                needed: n,
                len: l,
            }) => {
                assert_eq!(
                    (s, o, n, l),
                    (section, offset as u64, needed as u64, cut as u64),
                    "cut at {cut}"
                );
            }
            other => panic!("cut at {cut}: expected Truncated, got {other:?}"),
        }
    }
}

#[test]
fn huge_or_impossible_counts_are_bad_counts() {
    let (srs, bytes) = sample();
    let lay = layout(&srs);
    let mut bad = bytes.clone();
    bad[lay.l..lay.l + 4].copy_from_slice(&u32::MAX.to_be_bytes());
    assert!(matches!(
        read(&bad),
        Err(ParamsError::BadCount { section: "l", offset, count }) if offset == lay.l as u64 && count == u32::MAX as u64
    ));
    // `h` must hold domain - 1 points.
    let mut bad = bytes.clone();
    let h = (srs.h().len() - 1) as u32;
    bad[lay.h..lay.h + 4].copy_from_slice(&h.to_be_bytes());
    assert!(matches!(
        read(&bad),
        Err(ParamsError::BadCount { section: "h", offset, count }) if offset == lay.h as u64 && count == h as u64
    ));
    // Every circuit has the ONE input.
    let mut bad = bytes.clone();
    bad[lay.ic..lay.ic + 4].copy_from_slice(&0u32.to_be_bytes());
    assert!(matches!(
        read(&bad),
        Err(ParamsError::BadCount {
            section: "vk.ic",
            count: 0,
            ..
        })
    ));
    let _ = (lay.a, lay.b_g1);
}

#[test]
fn trailing_bytes_are_an_error() {
    let (srs, mut bytes) = sample();
    let len = bytes.len() as u64;
    bytes.extend_from_slice(&[1, 2, 3, 4, 5]);
    assert!(matches!(
        read(&bytes),
        Err(ParamsError::TrailingBytes { offset, extra: 5 }) if offset == len
    ));
    let mut vk = Vec::new();
    write_vk_to(&mut vk, srs.vk()).unwrap();
    let vk_len = vk.len() as u64;
    vk.push(0);
    assert!(matches!(
        read_vk_from_bytes(&vk),
        Err(ParamsError::TrailingBytes { offset, extra: 1 }) if offset == vk_len
    ));
}

#[test]
fn params_file_read_as_vk_is_trailing_bytes() {
    let (srs, bytes) = sample();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("whole.params");
    std::fs::write(&path, &bytes).unwrap();
    let vk_end = layout(&srs).h as u64;
    assert!(matches!(
        read_vk(&path),
        Err(ParamsError::TrailingBytes { offset, extra }) if offset == vk_end && extra == bytes.len() as u64 - vk_end
    ));
}

#[test]
fn missing_file_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.params");
    assert!(matches!(
        read_params(&path, &ReadOptions::default()),
        Err(ParamsError::Io { path: p, .. }) if p == path
    ));
}

#[test]
fn random_truncations_and_flips_never_panic() {
    let (_, bytes) = sample();
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fuzz.params");
    let (mut ok, mut err) = (0, 0);
    for round in 0..400 {
        let mut b = bytes.clone();
        match round % 3 {
            0 => b.truncate(rng.gen_range(0..bytes.len())),
            1 => {
                for _ in 0..rng.gen_range(1..4) {
                    let i = rng.gen_range(0..b.len());
                    b[i] ^= 1 << rng.gen_range(0..8);
                }
            }
            _ => {
                let i = rng.gen_range(0..b.len());
                b[i] = rng.gen();
                b.truncate(rng.gen_range(i..bytes.len() + 1));
            }
        }
        let opts = ReadOptions {
            check_points: rng.gen_bool(0.5),
            window_bytes: rng.gen_range(1..5000),
        };
        let from_bytes = read_params_from_bytes(&b, &opts);
        // Every fifth case also through the file path (windows read from it).
        if round % 5 == 0 {
            std::fs::write(&path, &b).unwrap();
            let from_file = read_params(&path, &opts).map(|(s, _)| s);
            assert_eq!(
                format!("{:?}", from_file.as_ref().err()),
                format!("{:?}", from_bytes.as_ref().err())
            );
            // Header first, then the points: the same outcome. A layout error is the same
            // error (the header finds the first one in file order, as the whole read does
            // when no bad point comes before it); a bad point shows when the points are read.
            let header = read_params_header(&path, &opts).map(|(s, _)| s);
            match (&from_file, header) {
                (Ok(whole), Ok(mut h)) => {
                    h.load_host_points(&opts).unwrap();
                    assert_eq!(h.h(), whole.h());
                    assert_eq!(h.b_g2(), whole.b_g2());
                }
                (Err(ParamsError::BadPoint { .. }), Ok(mut h)) => {
                    let e = h.load_host_points(&opts).unwrap_err();
                    assert_eq!(
                        format!("{e:?}"),
                        format!("{:?}", from_file.as_ref().err().unwrap())
                    );
                }
                (Err(ParamsError::BadPoint { .. }), Err(_)) => {}
                (Err(whole), Err(h)) => assert_eq!(format!("{h:?}"), format!("{whole:?}")),
                (whole, h) => panic!("whole {:?}, header {:?}", whole.as_ref().err(), h.err()),
            }
        }
        let _ = read_vk_from_bytes(&b);
        match from_bytes {
            Ok(_) => ok += 1,
            Err(_) => err += 1,
        }
    }
    // Almost every corruption must be caught (a flip in an unused flag bit is not).
    assert!(err > 300, "only {err} of {} corruptions detected", ok + err);
}
