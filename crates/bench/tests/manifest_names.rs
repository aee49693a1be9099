//! A manifest's request is picked by its own name before its kind: the 2 KiB test data holds
//! two PoRep requests, `porep` and `porep-ni` (and `cuzk gen testdata --timing-only
//! --ni-porep` writes the same pair), and `--kind porep-ni` must not prove the first.
use cuzk_bench::request_file::load;
use cuzk_testkit::testdata::process_data;
use std::path::Path;

#[test]
fn a_manifest_request_is_picked_by_its_name_then_by_its_kind() {
    let (dir, m) = process_data(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let manifest = dir.join(cuzk_testkit::testdata::MANIFEST);
    let registered = |kind: &str| {
        load(&manifest, Some(kind))
            .unwrap()
            .request
            .registered_proof
    };
    let by_name = |kind: &str| m.request(kind).unwrap().registered_proof;
    assert_eq!(registered("porep-ni"), by_name("porep-ni"));
    assert_eq!(registered("porep"), by_name("porep"));
    assert_ne!(registered("porep"), registered("porep-ni"));
    // Kind aliases still pick the first request of the kind.
    assert_eq!(registered("c2"), by_name("porep"));
    assert!(load(&manifest, Some("nonsense")).is_err());
}
