//! The generator is deterministic from its seed and reuses a matching directory.
mod common;

use cuzk_filecoin::SectorSize;
use cuzk_testkit::testdata::{cached, ensure, TestdataOptions};

#[test]
fn testdata_is_deterministic_and_cached() {
    common::dir();
    let tmp = tempfile::tempdir().unwrap();
    let opts = |name: &str, seed: u64| TestdataOptions {
        out: tmp.path().join(name),
        sector_size: SectorSize::S2KiB,
        seed,
        params: false,
    };
    let a = ensure(&opts("a", 11)).unwrap();
    let b = ensure(&opts("b", 11)).unwrap();
    let c = ensure(&opts("c", 12)).unwrap();
    assert_eq!(a.requests, b.requests);
    assert_eq!(a.sector, b.sector);
    assert_ne!(a.sector, c.sector);
    for (name, _) in &a.files {
        let x = std::fs::read(tmp.path().join("a").join(name)).unwrap();
        let y = std::fs::read(tmp.path().join("b").join(name)).unwrap();
        assert_eq!(x, y, "{name} differs between two runs with one seed");
    }
    // Cached while intact; regenerated when a file is damaged or the seed differs.
    assert!(cached(&opts("a", 11)).is_some());
    assert!(cached(&opts("a", 12)).is_none());
    let victim = tmp.path().join("a").join(&a.files[0].0);
    std::fs::write(&victim, b"x").unwrap();
    assert!(cached(&opts("a", 11)).is_none());
    let again = ensure(&opts("a", 11)).unwrap();
    assert_eq!(again.requests, a.requests);
    assert!(cached(&opts("a", 11)).is_some());
}
