//! Shared test fixture: one 2 KiB test-data directory (sector, requests, our parameters)
//! generated once per `target` dir and reused by every test binary (file-locked).
#![allow(dead_code)]
use std::path::PathBuf;
use std::sync::{Once, OnceLock};

use cuzk_filecoin::testdata::{ensure, Manifest, TestdataOptions};
use cuzk_filecoin::{ProofRequest, SectorSize};

/// Seed of the shared test data.
pub const SEED: u64 = 0x5eed_2c1d;

static ENV: Once = Once::new();
static DATA: OnceLock<(PathBuf, Manifest)> = OnceLock::new();

/// The shared directory. filecoin-proofs reads `FIL_PROOFS_*` once per process, so this
/// sets them before anything touches the Filecoin crates: call it first in every test.
pub fn dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cuzk-testdata-2k");
    ENV.call_once(|| {
        std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &dir);
        std::env::set_var("FIL_PROOFS_CACHE_DIR", format!("{}/", dir.display()));
    });
    dir
}

/// The shared test data (generated on first use, including parameters).
pub fn data() -> &'static (PathBuf, Manifest) {
    DATA.get_or_init(|| {
        let dir = dir();
        let m = ensure(&TestdataOptions {
            out: dir.clone(),
            sector_size: SectorSize::S2KiB,
            seed: SEED,
            params: true,
        })
        .expect("generating test data");
        (dir, m)
    })
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

/// Bytes of a synthesized partition's a/b/c vectors and assignments.
pub fn vector_bytes(s: &cuzk_groth16::Synthesized) -> u64 {
    32 * (s.a.len() + s.b.len() + s.c.len() + s.inputs.len() + s.aux.len()) as u64
}
