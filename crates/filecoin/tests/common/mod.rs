//! Shared test fixture: one 2 KiB test-data directory (sector, requests, our parameters)
//! generated once per `target` dir and reused by every test binary (file-locked).
#![allow(dead_code)]
use std::path::{Path, PathBuf};

use cuzk_filecoin::ProofRequest;
use cuzk_testkit::testdata::{process_data, process_dir, Manifest};

/// The shared directory, with filecoin-proofs pointed at it: call it first in every test.
pub fn dir() -> PathBuf {
    process_dir(Path::new(env!("CARGO_TARGET_TMPDIR")))
}

/// The shared test data (generated on first use, parameters included).
pub fn data() -> &'static (PathBuf, Manifest) {
    process_data(Path::new(env!("CARGO_TARGET_TMPDIR")))
}

/// The request of a kind (`porep`, `snap`, `wpost`, `winning`).
pub fn request(kind: &str) -> ProofRequest {
    let (dir, m) = data();
    m.request(kind)
        .unwrap_or_else(|| panic!("no {kind} request in the manifest"))
        .load(dir)
        .expect("loading request")
}

/// 32 bytes from hex.
pub fn b32(s: &str) -> [u8; 32] {
    hex::decode(s).unwrap().try_into().unwrap()
}

fn status_kib(key: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{key} missing from /proc/self/status"))
}

/// Runs `f` and returns its output with the bytes the process's resident set grew by at its
/// peak while `f` ran (VmHWM reset to VmRSS first; Linux ≥ 4.0).
pub fn peak_rss_growth<T>(f: impl FnOnce() -> T) -> (T, u64) {
    std::fs::write("/proc/self/clear_refs", "5").expect("resetting VmHWM");
    let base = status_kib("VmRSS:");
    let out = f();
    let peak = status_kib("VmHWM:");
    (out, peak.saturating_sub(base) * 1024)
}

/// Asserts that a 2 KiB PoRep partition `s`, synthesized while the resident set grew by
/// `grown` bytes at its peak, is the circuit (over 2 M constraints) and grew by at most 1.3×
/// its vectors' bytes; `note` is printed beside the figures.
pub fn assert_rss_within_1_3x(s: &cuzk_groth16::Synthesized, grown: u64, note: &str) {
    let needed = vector_bytes(s);
    let ratio = grown as f64 / needed as f64;
    eprintln!(
        "peak RSS growth {} MiB, a/b/c + assignments {} MiB, ratio {:.3} ({} constraints{note})",
        grown >> 20,
        needed >> 20,
        ratio,
        s.num_constraints
    );
    assert!(s.num_constraints > 2_000_000);
    assert!(
        ratio <= 1.3,
        "peak RSS growth {grown} B is {ratio:.2}× the {needed} B needed"
    );
}

/// Bytes of a synthesized partition's a/b/c vectors and assignments (a compact aux
/// assignment by its heap bytes).
pub fn vector_bytes(s: &cuzk_groth16::Synthesized) -> u64 {
    32 * (s.a.len() + s.b.len() + s.c.len() + s.inputs.len() + s.aux.len()) as u64
        + s.compact_bytes() as u64
}

/// Partition `k` of `req` synthesized witness-only (the native witness, its partition's
/// challenges or sectors in parallel) and by the circuit's own full sequential recording:
/// asserts they hold the same constraint count, inputs and aux values, that the native path
/// was used and that nothing fell back or differed. Returns the witness and the full
/// recording's and the witness's seconds.
pub fn native_equals_full(
    req: &ProofRequest,
    k: usize,
    what: &str,
) -> (cuzk_groth16::Synthesized, f64, f64) {
    use cuzk_filecoin::partition::{
        native_witness_mismatches, native_witness_partitions, witness_fallbacks,
    };
    use cuzk_groth16::RecorderMode;
    let t = std::time::Instant::now();
    let full = cuzk_filecoin::plan(req).unwrap().take_jobs().remove(k);
    let full = full.run(RecorderMode::Full).unwrap();
    let full_s = t.elapsed().as_secs_f64();
    let job = cuzk_filecoin::plan(req).unwrap().take_jobs().remove(k);
    let before = (
        witness_fallbacks(),
        native_witness_mismatches(),
        native_witness_partitions(),
    );
    let t = std::time::Instant::now();
    let w = job.run(RecorderMode::WitnessOnly).unwrap();
    let witness_s = t.elapsed().as_secs_f64();
    assert_eq!(
        witness_fallbacks(),
        before.0,
        "{what}: fell back to the gadgets"
    );
    assert_eq!(
        native_witness_mismatches(),
        before.1,
        "{what}: the native witness differed from the gadgets"
    );
    assert!(
        native_witness_partitions() > before.2,
        "{what}: the native witness was not used"
    );
    assert_eq!(
        w.num_constraints, full.num_constraints,
        "{what}: constraints"
    );
    assert_eq!(w.inputs, full.inputs, "{what}: inputs");
    let compact = w
        .compact
        .as_ref()
        .expect("a witness-only recording holds its aux compact");
    assert!(w.aux.is_empty(), "{what}: a full-width aux vector exists");
    assert_eq!(compact.len(), full.aux.len(), "{what}: aux count");
    if let Some(i) = compact.iter().zip(&full.aux).position(|(a, b)| a != *b) {
        panic!("{what}: aux value {i} differs");
    }
    assert_eq!(
        *compact,
        cuzk_groth16::CompactAux::from_full(&full.aux),
        "{what}: compact forms"
    );
    (w, full_s, witness_s)
}

/// Asserts that a circuit was compiled (no cached file was refused) and written to the cache.
pub fn assert_compiled_and_stored(source: &cuzk_filecoin::compiled::Source) {
    use cuzk_filecoin::compiled::Source;
    assert!(
        matches!(
            source,
            Source::Compiled {
                refused: None,
                stored: Ok(())
            }
        ),
        "{source:?}"
    );
}
