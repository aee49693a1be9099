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
