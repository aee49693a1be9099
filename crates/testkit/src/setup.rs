//! **INSECURE** parameters of the Filecoin circuits at any size (the 32 GiB and 64 GiB ones
//! included), for tests and self-tests: each circuit's blank circuit compiled
//! ([`cuzk_filecoin::compiled`]), then `cuzk_groth16`'s setup streamed into the `.params` file under
//! Filecoin's name ([`cuzk_filecoin::params`]), with a note beside it. Anyone who knows the seed can
//! forge proofs with them.
use std::path::Path;

use rand_core::RngCore;

use cuzk_filecoin::error::{FilecoinError, Result};
use cuzk_filecoin::params::ParamFiles;
use cuzk_filecoin::registry::CircuitId;

/// The note written beside insecure parameters, whose Filecoin file names cannot say it.
pub const INSECURE_NOTE_FILE: &str = "INSECURE-TEST-PARAMETERS-KNOWN-TOXIC-WASTE.txt";

/// What [`write_insecure_params`] wrote and how long it took.
#[derive(Debug)]
pub struct InsecureParams {
    /// The files, in the output directory.
    pub files: ParamFiles,
    /// The setup's shape, timings and verifying key.
    pub setup: cuzk_groth16::setup::StreamedSetup,
    /// Seconds compiling the blank circuit (its matrices are the setup's input).
    pub compile_seconds: f64,
    /// Bytes the compiled matrices held.
    pub compile_bytes: usize,
}

/// Writes **INSECURE** parameters for circuit `id` (any size: 32 GiB and 64 GiB circuits
/// included) into `dir` under Filecoin's file names, with toxic waste from `rng`: the blank
/// circuit compiled on every core it can use, then the setup streamed into the `.params` file
/// ([`cuzk_groth16::setup::write_params_streamed`]) with `points` making the points; the
/// `.vk`, the `.meta` and [`INSECURE_NOTE_FILE`] beside it. Anyone who knows the seed can
/// forge proofs: for tests and self-tests only.
pub fn write_insecure_params(
    id: CircuitId,
    dir: &Path,
    seed: u64,
    rng: &mut impl RngCore,
    points: &dyn cuzk_groth16::setup::PointMaker,
) -> Result<InsecureParams> {
    std::fs::create_dir_all(dir).map_err(|e| FilecoinError::io(dir, e))?;
    let files = id.param_files()?;
    let t = std::time::Instant::now();
    let compiled = cuzk_filecoin::compiled::compile(id)?;
    let compile_seconds = t.elapsed().as_secs_f64();
    let compile_bytes = compiled.heap_bytes();
    let setup =
        cuzk_groth16::setup::write_params_streamed(compiled, rng, &files.params_path(dir), points)?;
    cuzk_groth16::params::write_vk(&files.vk_path(dir), &setup.vk)
        .map_err(cuzk_groth16::Error::from)?;
    let meta = format!("{{\"sector_size\":{}}}", id.size.bytes());
    let meta_path = files.meta_path(dir);
    std::fs::write(&meta_path, meta).map_err(|e| FilecoinError::io(meta_path, e))?;
    let note = dir.join(INSECURE_NOTE_FILE);
    let line = format!(
        "{} and {}: INSECURE test parameters for {id} (`cuzk gen params`, toxic waste from seed \
         {seed}). Anyone who knows the seed can forge proofs. Use for tests and self-tests \
         only, never for a real sector.\n",
        files.params, files.vk
    );
    // One line per parameter file: this one's replaces an earlier one's.
    let mut text: String = std::fs::read_to_string(&note)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with(&files.params))
        .map(|l| format!("{l}\n"))
        .collect();
    text.push_str(&line);
    std::fs::write(&note, text).map_err(|e| FilecoinError::io(&note, e))?;
    Ok(InsecureParams {
        files,
        setup,
        compile_seconds,
        compile_bytes,
    })
}

/// [`write_insecure_params`] (points on the CPU) for each circuit of `ids` whose `.params`,
/// `.vk` and `.meta` are not all in `dir` yet from the same `seed`; safe from several
/// processes at once (a lock file). For tests that share parameters across a target dir.
pub fn ensure_insecure_params(ids: &[CircuitId], dir: &Path, seed: u64) -> Result<()> {
    use rand_core::SeedableRng;
    crate::testdata::with_dir_lock(dir, || {
        let note = std::fs::read_to_string(dir.join(INSECURE_NOTE_FILE)).unwrap_or_default();
        let mut points = None;
        for &id in ids {
            let f = id.param_files()?;
            let done = [f.params_path(dir), f.vk_path(dir), f.meta_path(dir)]
                .iter()
                .all(|p| p.exists())
                && note
                    .lines()
                    .any(|l| l.starts_with(&f.params) && l.contains(&format!("from seed {seed})")));
            if !done {
                let points = points.get_or_insert_with(cuzk_groth16::setup::CpuPoints::new);
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
                write_insecure_params(id, dir, seed, &mut rng, points)?;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cuzk_filecoin::params::{
        generate_test_params, is_published_vk, vk_is_published, write_filecoin_params,
    };

    /// The streamed setup of a real circuit (compiled on every core: WindowPoSt's sectors are
    /// sub-systems) writes the in-memory setup's file, byte for byte, with its `.vk`, `.meta`
    /// and the insecure note beside it; its verifying key is not Filecoin's published one.
    #[test]
    fn insecure_params_streamed_equal_the_in_memory_setup_s_for_real_circuits() {
        use rand_chacha::ChaCha8Rng;
        use rand_core::SeedableRng;
        let dir = tempfile::tempdir().unwrap();
        let cpu = cuzk_groth16::setup::CpuPoints::new();
        for id in ["wpost-2k", "winning-2k"] {
            let id: CircuitId = id.parse().unwrap();
            let mem = dir.path().join("mem");
            let srs = generate_test_params(id, &mut ChaCha8Rng::seed_from_u64(4)).unwrap();
            let files = write_filecoin_params(id, &srs, &mem).unwrap();
            let streamed = dir.path().join("streamed");
            let w =
                write_insecure_params(id, &streamed, 4, &mut ChaCha8Rng::seed_from_u64(4), &cpu)
                    .unwrap();
            assert_eq!(w.files, files);
            for name in [&files.params, &files.vk, &files.meta] {
                let a = std::fs::read(mem.join(name)).unwrap();
                let b = std::fs::read(streamed.join(name)).unwrap();
                assert!(a == b, "{id}: {name} differs");
            }
            assert!(!vk_is_published(id, &streamed).unwrap(), "{id}");
            assert!(!is_published_vk(id, &w.setup.vk).unwrap(), "{id}");
            let note = std::fs::read_to_string(streamed.join(INSECURE_NOTE_FILE)).unwrap();
            assert!(
                note.contains("INSECURE") && note.contains(&files.params),
                "{note}"
            );
        }
    }
}
