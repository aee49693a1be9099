//! Our `.params`/`.vk` reader and writer against bellperson's, both directions.
mod params_support;

use bellperson::groth16::{generate_random_parameters, Parameters, VerifyingKey as BpVk};
use blstrs::Bls12;
use cuzk_groth16::params::{
    read_params, read_params_from_bytes, read_vk, read_vk_from_bytes, write_params,
    write_params_to, write_vk, ReadOptions,
};
use cuzk_groth16::setup::generate_params;
use params_support::{
    assert_same_points, from_bellperson, vk_from_bellperson, RandomCircuit, Shape,
};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

fn circuit(seed: u64) -> RandomCircuit {
    RandomCircuit::new(
        Shape {
            inputs: 5,
            aux: 70,
            constraints: 90,
            b_aux: 0.4,
        },
        seed,
    )
}

#[test]
fn file_written_by_bellperson_is_read_by_us() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let theirs: Parameters<Bls12> = generate_random_parameters(circuit(2), &mut rng).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bp.params");
    let mut bytes = Vec::new();
    theirs.write(&mut bytes).unwrap();
    std::fs::write(&path, &bytes).unwrap();

    let expected = from_bellperson(&theirs);
    for check_points in [true, false] {
        let opts = ReadOptions {
            check_points,
            // Tiny windows so the windowed path crosses many window boundaries.
            window_bytes: 1000,
        };
        let (ours, stats) = read_params(&path, &opts).unwrap();
        assert_same_points(&ours, &expected);
        assert_eq!(stats.bytes, bytes.len() as u64);
        assert_same_points(&read_params_from_bytes(&bytes, &opts).unwrap(), &expected);
    }
    let (ours, _) = read_params(&path, &ReadOptions::default()).unwrap();
    assert_same_points(&ours, &expected);

    let vk_path = dir.path().join("bp.vk");
    let mut vk_bytes = Vec::new();
    theirs.vk.write(&mut vk_bytes).unwrap();
    std::fs::write(&vk_path, &vk_bytes).unwrap();
    assert_eq!(read_vk(&vk_path).unwrap(), vk_from_bellperson(&theirs.vk));
    assert_eq!(
        read_vk_from_bytes(&vk_bytes).unwrap(),
        vk_from_bellperson(&theirs.vk)
    );
}

#[test]
fn file_written_by_us_is_read_by_bellperson() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let ours = generate_params(circuit(4), &mut rng).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ours.params");
    write_params(&path, &ours).unwrap();
    let bytes = std::fs::read(&path).unwrap();

    let mut in_memory = Vec::new();
    write_params_to(&mut in_memory, &ours).unwrap();
    assert_eq!(in_memory, bytes);

    for checked in [true, false] {
        let theirs = Parameters::<Bls12>::read(&bytes[..], checked).unwrap();
        assert_same_points(&from_bellperson(&theirs), &ours);
        // Same bytes back from bellperson's writer.
        let mut again = Vec::new();
        theirs.write(&mut again).unwrap();
        assert_eq!(again, bytes);
    }

    let vk_path = dir.path().join("ours.vk");
    write_vk(&vk_path, ours.vk()).unwrap();
    let vk_bytes = std::fs::read(&vk_path).unwrap();
    let theirs = BpVk::<Bls12>::read(&vk_bytes[..]).unwrap();
    assert_eq!(vk_from_bellperson(&theirs), *ours.vk());
    // And our reader round-trips our writer.
    let (back, _) = read_params(&path, &ReadOptions::default()).unwrap();
    assert_same_points(&back, &ours);
    assert_eq!(read_vk(&vk_path).unwrap(), *ours.vk());
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn unchecked_read_gives_the_same_points() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let ours = generate_params(circuit(6), &mut rng).unwrap();
    let mut bytes = Vec::new();
    write_params_to(&mut bytes, &ours).unwrap();
    let checked = read_params_from_bytes(&bytes, &ReadOptions::default()).unwrap();
    let unchecked = read_params_from_bytes(
        &bytes,
        &ReadOptions {
            check_points: false,
            ..ReadOptions::default()
        },
    )
    .unwrap();
    assert_same_points(&checked, &ours);
    assert_same_points(&unchecked, &ours);
}
