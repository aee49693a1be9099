//! The streamed setup (`setup::write_params_streamed`) writes the same `.params` file, byte for
//! byte, as the in-memory setup with the same toxic-waste seed, whatever the point maker's
//! batch; a failing point maker leaves no file behind.
use cuzk_groth16::compiled::CompiledCircuit;
use cuzk_groth16::params::{write_params, write_vk};
use cuzk_groth16::setup::{
    generate_params, write_params_streamed, CpuPoints, PointMaker, G1_BYTES,
};
use cuzk_groth16::synthetic::CircuitSpec;
use cuzk_groth16::{Error, Scalar};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

/// The CPU maker in batches of `batch` points (to cross batch and section boundaries).
struct Batched(CpuPoints, usize);

impl PointMaker for Batched {
    fn name(&self) -> String {
        format!("CPU in batches of {}", self.1)
    }
    fn batch(&self) -> usize {
        self.1
    }
    fn g1(&self, s: &[Scalar], out: &mut [u8]) -> Result<(), Error> {
        assert!(s.len() <= self.1);
        self.0.g1(s, out)
    }
    fn g2(&self, s: &[Scalar], out: &mut [u8]) -> Result<(), Error> {
        assert!(s.len() <= self.1);
        self.0.g2(s, out)
    }
}

fn spec(s: &str) -> CircuitSpec {
    s.parse().unwrap()
}

fn same_file_both_ways(circuit: &str, seed: u64, batches: &[usize]) {
    let dir = tempfile::tempdir().unwrap();
    let mem = dir.path().join("mem.params");
    let srs = generate_params(spec(circuit), &mut ChaCha8Rng::seed_from_u64(seed)).unwrap();
    write_params(&mem, &srs).unwrap();
    write_vk(&dir.path().join("mem.vk"), srs.vk()).unwrap();
    let expected = std::fs::read(&mem).unwrap();
    let cpu = CpuPoints::new();
    for &batch in batches {
        let compiled = CompiledCircuit::compile(circuit, spec(circuit)).unwrap();
        let path = dir.path().join(format!("streamed-{batch}.params"));
        let maker = Batched(CpuPoints::new(), batch);
        let maker: &dyn PointMaker = if batch == 0 { &cpu } else { &maker };
        let out =
            write_params_streamed(compiled, &mut ChaCha8Rng::seed_from_u64(seed), &path, maker)
                .unwrap();
        let got = std::fs::read(&path).unwrap();
        assert_eq!(out.bytes, got.len() as u64);
        assert_eq!(
            got.len(),
            expected.len(),
            "{circuit}, batch {batch}: length"
        );
        assert!(
            got == expected,
            "{circuit}, batch {batch}: the bytes differ"
        );
        assert_eq!(&out.vk, srs.vk(), "{circuit}, batch {batch}: vk");
        assert_eq!(out.shape.domain, srs.h().len() + 1);
    }
    // Nothing but the files above is left in the directory (no temporary files).
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| n.ends_with(".params") || n.ends_with(".vk")),
        "{names:?}"
    );
}

#[test]
fn streamed_setup_equals_the_in_memory_setup_byte_for_byte() {
    // Inputs, B density 25 %, coefficients other than ±1 (synthetic), a real gadget (SHA-256).
    same_file_both_ways(
        "synthetic:constraints=3000,inputs=7,aux=1.0,a=1.0,b=0.25,seed=4",
        17,
        &[0, 1000, 999],
    );
    same_file_both_ways("sha256:blocks=2,seed=5", 18, &[0, 4096]);
}

/// A maker whose device fails on the second batch.
struct Failing(CpuPoints, std::sync::atomic::AtomicUsize);

impl PointMaker for Failing {
    fn name(&self) -> String {
        "failing".into()
    }
    fn batch(&self) -> usize {
        512
    }
    fn g1(&self, s: &[Scalar], out: &mut [u8]) -> Result<(), Error> {
        if self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 1 {
            return Err(Error::Points("device lost".into()));
        }
        self.0.g1(s, out)
    }
    fn g2(&self, s: &[Scalar], out: &mut [u8]) -> Result<(), Error> {
        self.0.g2(s, out)
    }
}

#[test]
fn a_failing_point_maker_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.params");
    let circuit = "synthetic:constraints=2000,inputs=3,seed=1";
    let compiled = CompiledCircuit::compile(circuit, spec(circuit)).unwrap();
    let maker = Failing(CpuPoints::new(), Default::default());
    let e = write_params_streamed(compiled, &mut ChaCha8Rng::seed_from_u64(1), &path, &maker)
        .unwrap_err();
    assert!(e.to_string().contains("device lost"), "{e}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    assert_eq!(G1_BYTES, 96);
}
