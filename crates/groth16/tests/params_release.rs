//! Releasing the host copy of a file-read SRS: the lengths stay, single points come back from
//! the file equal to the ones held before, and what cannot be released is not.
mod params_support;

use cuzk_groth16::params::{read_params, read_params_from_bytes, write_params, ReadOptions};
use cuzk_groth16::params::{G1Section, SrsCounts};
use cuzk_groth16::setup::generate_params;
use cuzk_groth16::{CpuProver, ParamsError, ProverBackend, Recorder, RecorderMode, Scalar, Srs};
use params_support::{RandomCircuit, Shape};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

fn circuit() -> RandomCircuit {
    RandomCircuit::new(
        Shape {
            inputs: 3,
            aux: 40,
            constraints: 50,
            b_aux: 0.5,
        },
        21,
    )
}

fn written() -> (Srs, tempfile::TempDir, std::path::PathBuf) {
    let srs = generate_params(circuit(), &mut ChaCha8Rng::seed_from_u64(22)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("release.params");
    write_params(&path, &srs).unwrap();
    (srs, dir, path)
}

fn counts_of(srs: &Srs) -> SrsCounts {
    SrsCounts {
        h: srs.h().len(),
        l: srs.l().len(),
        a: srs.a().len(),
        b_g1: srs.b_g1().len(),
        b_g2: srs.b_g2().len(),
    }
}

#[test]
fn released_points_are_read_back_equal_from_the_file() {
    let (generated, _dir, path) = written();
    let (mut srs, _) = read_params(&path, &ReadOptions::default()).unwrap();
    assert_eq!(srs.counts(), counts_of(&generated));
    assert_eq!(srs.file_path(), Some(path.as_path()));
    assert!(srs.can_release_host_points());
    let held = srs.size_bytes();
    let freed = srs.release_host_points();
    assert!(srs.host_points_released());
    assert!(!srs.can_release_host_points());
    assert_eq!(freed + srs.size_bytes(), held);
    assert_eq!(srs.size_bytes(), 96 * srs.vk().ic.len() as u64);
    assert!(srs.h().is_empty() && srs.l().is_empty() && srs.b_g2().is_empty());
    // The lengths survive, and every point reads back equal to the generated one.
    assert_eq!(srs.counts(), counts_of(&generated));
    for (section, points) in [
        (G1Section::H, generated.h()),
        (G1Section::L, generated.l()),
        (G1Section::A, generated.a()),
        (G1Section::BG1, generated.b_g1()),
    ] {
        assert!(!points.is_empty(), "{section:?} is empty");
        for (i, p) in points.iter().enumerate() {
            assert_eq!(srs.g1_at(section, i).unwrap(), *p, "{section:?}[{i}]");
        }
        let past = points.len();
        assert!(matches!(
            srs.g1_at(section, past),
            Err(ParamsError::NoSuchPoint { index, count, .. }) if index == past && count == past
        ));
    }
    for (i, p) in generated.b_g2().iter().enumerate() {
        assert_eq!(srs.g2_at(i).unwrap(), *p, "b_g2[{i}]");
    }
    // Releasing twice frees nothing more.
    assert_eq!(srs.release_host_points(), 0);
}

#[test]
fn held_points_are_served_from_memory_and_bytes_cannot_be_released() {
    let (generated, _dir, path) = written();
    let bytes = std::fs::read(&path).unwrap();
    let mut srs = read_params_from_bytes(&bytes, &ReadOptions::default()).unwrap();
    assert_eq!(srs.file_path(), None);
    assert!(!srs.can_release_host_points());
    assert_eq!(srs.release_host_points(), 0);
    assert!(!srs.host_points_released());
    assert_eq!(srs.h(), generated.h());
    assert_eq!(srs.g1_at(G1Section::L, 3).unwrap(), generated.l()[3]);
    assert_eq!(srs.g2_at(1).unwrap(), generated.b_g2()[1]);
    assert!(matches!(
        srs.g2_at(generated.b_g2().len()),
        Err(ParamsError::NoSuchPoint { .. })
    ));
}

#[test]
fn a_changed_file_gives_a_typed_error_for_a_released_point() {
    let (_, _dir, path) = written();
    let (mut srs, _) = read_params(&path, &ReadOptions::default()).unwrap();
    srs.release_host_points();
    // Overwrite the file in place (the SRS keeps its descriptor open) with garbage.
    let len = std::fs::metadata(&path).unwrap().len() as usize;
    std::fs::write(&path, vec![0x55u8; len]).unwrap();
    assert!(matches!(
        srs.g1_at(G1Section::H, 0),
        Err(ParamsError::BadPoint { section: "h", .. })
    ));
    std::fs::write(&path, b"short").unwrap();
    assert!(matches!(srs.g2_at(0), Err(ParamsError::Io { .. })));
}

#[test]
fn the_cpu_prover_refuses_a_released_srs_with_a_typed_error() {
    let (_, _dir, path) = written();
    let (mut srs, _) = read_params(&path, &ReadOptions::default()).unwrap();
    srs.release_host_points();
    let synthesized = Recorder::synthesize(circuit(), RecorderMode::Full).unwrap();
    let r = CpuProver::default().start(&srs, synthesized, Scalar::from(3u64), Scalar::from(5u64));
    assert!(matches!(r, Err(cuzk_groth16::ProveError::Unavailable(_))));
}
