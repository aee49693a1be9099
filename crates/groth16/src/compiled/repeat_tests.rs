//! A repeated compile (`repeat.rs`) against the sequential compile of the same circuit: the
//! same file, byte for byte.
use super::*;
use bellpepper_core::{Circuit, SynthesisError, Variable};

/// A preamble (an input, two aux, two constraints), then `parts` alike parts of `width`
/// constraints that each allocate an input and aux of their own and use the preamble's
/// variables and ONE with varied coefficients; `post`: one constraint after the parts.
#[derive(Clone, Copy)]
struct Repeat {
    parts: usize,
    width: u64,
    post: bool,
}

fn preamble<CS: ConstraintSystem<Scalar>>(cs: &mut CS) -> Result<[Variable; 3], SynthesisError> {
    let x = cs.alloc_input(|| "x", || Ok(Scalar::from(3)))?;
    let y = cs.alloc(|| "y", || Ok(Scalar::from(9)))?;
    let z = cs.alloc(|| "z", || Ok(Scalar::from(27)))?;
    cs.enforce(|| "y", |lc| lc + x, |lc| lc + x, |lc| lc + y);
    cs.enforce(|| "z", |lc| lc + x, |lc| lc + y, |lc| lc + z);
    Ok([x, y, z])
}

impl Circuit<Scalar> for Repeat {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let [x, y, z] = preamble(cs)?;
        for _ in 0..self.parts {
            let u = cs.alloc_input(|| "u", || Ok(Scalar::ONE))?;
            let mut prev = u;
            for i in 0..self.width {
                let coeff = Scalar::from(5 + (i * 7) % 11);
                let next = cs.alloc(|| "n", || Ok(Scalar::ZERO))?;
                cs.enforce(
                    || "step",
                    |lc| lc + (coeff, prev) + y,
                    |lc| lc + x + CS::one(),
                    |lc| lc + next - (Scalar::from(i), z),
                );
                prev = next;
            }
            cs.enforce(|| "end", |lc| lc + prev, |lc| lc + u, |lc| lc + z + x);
        }
        if self.post {
            cs.enforce(|| "post", |lc| lc + z, |lc| lc + z, |lc| lc + y);
        }
        Ok(())
    }
}

fn file_bytes(c: &CompiledCircuit, path: &std::path::Path) -> Vec<u8> {
    c.write_file(path, "repeat|key").unwrap();
    let bytes = std::fs::read(path).unwrap();
    std::fs::remove_file(path).unwrap();
    bytes
}

/// In memory and into a file, a repeated compile is the sequential compile's file, byte for
/// byte: no part, one, a few, and arrays of several digest pieces (row starts included). The
/// file's circuit reads back the sequential matrices and densities; no temporary is left.
#[test]
fn a_repeated_compile_writes_the_sequential_compile_s_file() {
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("scratch");
    let path = dir.path().join("repeated.compiled");
    for (parts, width) in [(0, 3), (1, 3), (2, 1), (7, 5), (120_000, 40)] {
        let with = |parts| Repeat {
            parts,
            width,
            post: false,
        };
        let sequential = CompiledCircuit::compile("repeat", with(parts)).unwrap();
        let want = file_bytes(&sequential, &scratch);
        let memory = CompiledCircuit::compile_repeated("repeat", with, parts).unwrap();
        assert!(
            file_bytes(&memory, &scratch) == want,
            "{parts} parts in memory"
        );
        let opened =
            CompiledCircuit::compile_repeated_to_file("repeat", with, parts, &path, "repeat|key")
                .unwrap();
        assert!(opened.matrices_in_file());
        assert!(
            std::fs::read(&path).unwrap() == want,
            "{parts} parts into a file"
        );
        let read = CompiledCircuit::read_file(&path, "repeat|key").unwrap();
        for m in 0..3 {
            let (x, y) = (sequential.matrix(m), read.matrix(m));
            assert!(x.row_start == y.row_start && x.cols == y.cols && x.coeffs == y.coeffs);
        }
        assert_eq!(read.densities(), sequential.densities());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["repeated.compiled"], "{parts} parts");
    }
}

/// A circuit with a constraint after its parts is refused (the circuit with no part is not
/// where one part's begins), and so is one whose part fails; a file that cannot be created
/// is `CompileError::File`. Nothing is written.
#[test]
fn a_circuit_that_does_not_repeat_or_cannot_be_written_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.compiled");
    let with = |parts| Repeat {
        parts,
        width: 2,
        post: true,
    };
    let r = CompiledCircuit::compile_repeated("repeat", with, 4);
    assert!(matches!(r, Err(CompileError::NotRepeated { .. })), "{r:?}");
    let r = CompiledCircuit::compile_repeated_to_file("repeat", with, 4, &path, "k");
    assert!(matches!(r, Err(CompileError::NotRepeated { .. })), "{r:?}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    std::fs::write(dir.path().join("a-file"), b"").unwrap();
    let path = dir.path().join("a-file").join("x.compiled");
    let with = |parts| Repeat {
        parts,
        width: 2,
        post: false,
    };
    let r = CompiledCircuit::compile_repeated_to_file("repeat", with, 3, &path, "k");
    assert!(matches!(r, Err(CompileError::File { .. })), "{r:?}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}
