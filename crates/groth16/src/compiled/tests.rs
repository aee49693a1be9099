//! The compiled path against full recording.
use super::*;
use crate::{ProveError, Recorder, RecorderMode};
use bellpepper_core::{Circuit, SynthesisError};
use std::sync::Arc;

/// `parts` independent gadgets with varied coefficients, inputs and ONE in every matrix;
/// in sub-systems made with `CS::new()` when `split` and the system is extensible (as
/// storage-proofs' PoSt circuit does), else inline.
#[derive(Clone, Copy)]
pub(super) struct Parts {
    pub(super) parts: u64,
    pub(super) split: bool,
}

fn part<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    k: u64,
) -> std::result::Result<(), SynthesisError> {
    let x = cs.alloc_input(|| "x", || Ok(Scalar::from(k + 2)))?;
    let mut prev = cs.alloc(|| "p", || Ok(Scalar::from(k % 2)))?;
    let mut val = Scalar::from(k % 2);
    for i in 0..(4 + k) {
        let coeff = Scalar::from(3 + (i + k) % 5);
        let next_val = val * Scalar::from(k + 2) * coeff + Scalar::from(i);
        let next = cs.alloc(|| "n", || Ok(next_val))?;
        cs.enforce(
            || "step",
            |lc| lc + (coeff, prev),
            |lc| lc + x,
            |lc| lc + next - (Scalar::from(i), CS::one()),
        );
        prev = next;
        val = next_val;
    }
    cs.enforce(
        || "one",
        |lc| lc + CS::one(),
        |lc| lc + CS::one() + x,
        |lc| lc + x + CS::one(),
    );
    Ok(())
}

impl Circuit<Scalar> for Parts {
    fn synthesize<CS: ConstraintSystem<Scalar>>(
        self,
        cs: &mut CS,
    ) -> std::result::Result<(), SynthesisError> {
        if !(self.split && CS::is_extensible()) {
            return (0..self.parts).try_for_each(|k| part(cs, k));
        }
        let mut subs = Vec::new();
        for k in 0..self.parts {
            let mut sub = CS::new();
            sub.alloc_input(|| "temp ONE", || Ok(Scalar::ONE))?;
            part(&mut sub, k)?;
            subs.push(sub);
        }
        subs.iter().for_each(|sub| cs.extend(sub));
        Ok(())
    }
}

pub(super) fn compile(circuit: Parts) -> CompiledCircuit {
    CompiledCircuit::compile("parts", circuit).expect("compiled")
}

#[test]
fn a_circuit_compiled_in_sub_systems_evaluates_as_its_full_recording() {
    for parts in [1, 3, 6] {
        let full = Recorder::synthesize(
            Parts {
                parts,
                split: false,
            },
            RecorderMode::Full,
        )
        .expect("full");
        assert!(full.is_satisfied());
        for split in [false, true] {
            let compiled = compile(Parts { parts, split });
            assert_eq!(compiled.num_constraints(), full.num_constraints);
            let witness = Recorder::synthesize(Parts { parts, split }, RecorderMode::WitnessOnly)
                .expect("witness");
            let got = compiled.evaluate(witness).expect("evaluate");
            assert_eq!(got.inputs, full.inputs, "parts {parts} split {split}");
            assert_eq!(got.aux, full.aux);
            assert!(
                got.compact.is_none(),
                "evaluated, the witness is full again"
            );
            assert_eq!(got.a, full.a, "parts {parts} split {split}");
            assert_eq!(got.b, full.b);
            assert_eq!(got.c, full.c);
            assert_eq!(got.a_aux_density, full.a_aux_density);
            assert_eq!(got.b_input_density, full.b_input_density);
            assert_eq!(got.b_aux_density, full.b_aux_density);
        }
    }
}

#[test]
fn a_deferred_circuit_evaluates_on_the_host_as_an_evaluated_one() {
    let parts = Parts {
        parts: 4,
        split: true,
    };
    let compiled = Arc::new(compile(parts));
    let witness = || Recorder::synthesize(parts, RecorderMode::WitnessOnly).expect("witness");
    let eager = compiled.evaluate(witness()).expect("evaluate");
    let deferred = compiled.defer(witness()).expect("defer");
    assert!(deferred.is_deferred() && !deferred.has_evaluations());
    assert!(deferred.a.is_empty() && deferred.a_aux_density.len == 0);
    let (a, bi, b) = deferred.densities();
    assert_eq!(
        (a, bi, b),
        (
            &eager.a_aux_density,
            &eager.b_input_density,
            &eager.b_aux_density
        )
    );
    let late = deferred.evaluated().expect("evaluated");
    assert!(!late.is_deferred() && late.compiled.is_none());
    assert_eq!(late.a, eager.a);
    assert_eq!(late.b, eager.b);
    assert_eq!(late.c, eager.c);
    assert_eq!(late.b_aux_density, eager.b_aux_density);
    assert!(late.is_satisfied());
    // A witness of another shape is refused, not attached.
    let other = Recorder::synthesize(
        Parts {
            parts: 2,
            split: true,
        },
        RecorderMode::WitnessOnly,
    )
    .expect("witness");
    assert!(matches!(
        compiled.defer(other),
        Err(ProveError::ShapeMismatch { .. })
    ));
}

#[test]
fn released_matrices_still_defer_but_no_longer_evaluate() {
    let parts = Parts {
        parts: 3,
        split: false,
    };
    let mut compiled = compile(parts);
    let before = compiled.heap_bytes();
    let rows = compiled.num_constraints();
    let freed = compiled.release_host_matrices();
    assert!(freed > 0 && compiled.host_matrices_released());
    assert_eq!(compiled.heap_bytes() as u64, before as u64 - freed);
    assert_eq!(compiled.num_constraints(), rows);
    assert!(compiled.matrix(0).cols.is_empty());
    let compiled = Arc::new(compiled);
    let witness = || Recorder::synthesize(parts, RecorderMode::WitnessOnly).expect("witness");
    let deferred = compiled.defer(witness()).expect("defer");
    assert!(deferred.is_deferred());
    assert!(matches!(
        compiled.evaluate(witness()),
        Err(ProveError::Unavailable(_))
    ));
    assert!(matches!(
        deferred.evaluated(),
        Err(ProveError::Unavailable(_))
    ));
}

/// A circuit written to a file and read back is the same circuit (same matrices, shape,
/// densities, and the same evaluation of a witness); a file of another key or format is
/// stale, a short one, a changed byte or a wrong magic is corrupt, a missing one is missing:
/// none of them is ever a circuit, and a failed write leaves nothing behind.
#[test]
fn a_circuit_file_round_trips_and_a_stale_short_or_damaged_one_is_refused() {
    use super::CircuitFileError as E;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("parts.compiled");
    let circuit = Parts {
        parts: 5,
        split: true,
    };
    let c = compile(circuit);
    c.write_file(&path, "parts|params-1").unwrap();
    let back = CompiledCircuit::read_file(&path, "parts|params-1").unwrap();
    assert_ne!(back.id(), c.id(), "a new identity for the device caches");
    for m in 0..3 {
        let (x, y) = (c.matrix(m), back.matrix(m));
        assert_eq!(
            (x.row_start, x.cols, x.coeffs),
            (y.row_start, y.cols, y.coeffs),
            "matrix {m}"
        );
    }
    assert_eq!(back.coeff_table(), c.coeff_table());
    assert_eq!(back.densities(), c.densities());
    assert_eq!(
        (back.num_constraints(), back.num_inputs(), back.num_aux()),
        (c.num_constraints(), c.num_inputs(), c.num_aux())
    );
    let witness = || Recorder::synthesize(circuit, RecorderMode::WitnessOnly).unwrap();
    let (x, y) = (
        c.evaluate(witness()).unwrap(),
        back.evaluate(witness()).unwrap(),
    );
    assert_eq!((x.a, x.b, x.c), (y.a, y.b, y.c));

    let read = |key: &str| CompiledCircuit::read_file(&path, key);
    assert!(matches!(read("parts|params-2"), Err(E::Stale { .. })));
    let good = std::fs::read(&path).unwrap();
    let damaged = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut bytes = good.clone();
        f(&mut bytes);
        std::fs::write(&path, &bytes).unwrap();
        read("parts|params-1")
    };
    // Another format version (bytes 8..12).
    assert!(matches!(damaged(&|b| b[8] ^= 1), Err(E::Stale { .. })));
    assert!(matches!(damaged(&|b| b[0] ^= 1), Err(E::Corrupt { .. })));
    for cut in [good.len() - 1, good.len() / 2, 40, 3] {
        let r = damaged(&|b| b.truncate(cut));
        assert!(matches!(r, Err(E::Corrupt { .. })), "cut at {cut}: {r:?}");
    }
    // One changed byte anywhere past the header: a coefficient, a column, the digest.
    for at in [
        good.len() / 3,
        good.len() / 2,
        good.len() - 70,
        good.len() - 1,
    ] {
        let r = damaged(&|b| b[at] ^= 0x10);
        assert!(matches!(r, Err(E::Corrupt { .. })), "byte {at}: {r:?}");
    }
    // An extra byte.
    assert!(matches!(damaged(&|b| b.push(0)), Err(E::Corrupt { .. })));
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(read("parts|params-1"), Err(E::Missing(_))));

    // Released matrices cannot be written; nothing is left behind.
    let mut released = compile(circuit);
    released.release_host_matrices();
    assert!(released.write_file(&path, "k").is_err());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// The writer that `a_kill_during_a_write_leaves_no_corrupt_cache` kills: with
/// `CUZK_TEST_WRITER` set to a path it writes a circuit there over and over until killed.
#[test]
#[ignore = "a child process of a_kill_during_a_write_leaves_no_corrupt_cache"]
fn cache_writer_child() {
    let Some(path) = std::env::var_os("CUZK_TEST_WRITER") else {
        return;
    };
    let c = compile(Parts {
        parts: 800,
        split: true,
    });
    loop {
        c.write_file(std::path::Path::new(&path), "writer").unwrap();
    }
}

/// `kill -9` of a process writing the cache, at several moments: the file under the final
/// name is always absent or whole (it reads back), never half; the killed writer's temporary
/// file is removed by the next `remove_orphaned_temporaries`; a running process's is not.
#[test]
fn a_kill_during_a_write_leaves_no_corrupt_cache() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("parts.compiled");
    let reference = compile(Parts {
        parts: 800,
        split: true,
    });
    let mut orphans = 0;
    // Killed: as soon as its first temporary file shows (mid-write), once a whole file has
    // landed (plus 37 ms), and at 170 ms whatever it is doing.
    let tmp_shows = |dir: &std::path::Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .any(|e| e.unwrap().file_name().to_string_lossy().contains(".tmp."))
    };
    for moment in ["mid-write", "after a write", "at 170 ms"] {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "compiled::tests::cache_writer_child",
                "--exact",
                "--ignored",
                "--nocapture",
            ])
            .env("CUZK_TEST_WRITER", &path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let t0 = std::time::Instant::now();
        let until = |ready: &dyn Fn() -> bool| {
            while !ready() && t0.elapsed() < std::time::Duration::from_secs(120) {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
        };
        match moment {
            "mid-write" => until(&|| tmp_shows(dir.path())),
            "after a write" => {
                until(&|| path.exists());
                std::thread::sleep(std::time::Duration::from_millis(37));
            }
            _ => std::thread::sleep(std::time::Duration::from_millis(170)),
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        match CompiledCircuit::read_file(&path, "writer") {
            Ok(c) => assert_eq!(c.num_constraints(), reference.num_constraints()),
            Err(CircuitFileError::Missing(_)) => {}
            Err(e) => panic!("after a kill {moment}: {e}"),
        }
        orphans += CompiledCircuit::remove_orphaned_temporaries(&path);
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "parts.compiled")
            .collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }
    // The writer did write (a whole file landed) and was caught mid-write at least once
    // (writing is nearly all of its loop), so the checks above saw both cases.
    assert!(path.exists(), "the child never completed a write");
    assert!(orphans >= 1, "no kill landed mid-write");
    // A temporary file of a live process (this one) stays; of a dead one, goes.
    let mine = dir
        .path()
        .join(format!("parts.compiled.tmp.{}", std::process::id()));
    std::fs::write(&mine, b"half").unwrap();
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = gone.id();
    gone.wait().unwrap();
    let dead = dir.path().join(format!("parts.compiled.tmp.{dead_pid}"));
    std::fs::write(&dead, b"half").unwrap();
    let unrelated = dir.path().join(format!("other.compiled.tmp.{dead_pid}"));
    std::fs::write(&unrelated, b"x").unwrap();
    assert_eq!(CompiledCircuit::remove_orphaned_temporaries(&path), 1);
    assert!(mine.exists() && !dead.exists() && unrelated.exists());
}
