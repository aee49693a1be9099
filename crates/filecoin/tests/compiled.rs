//! The pre-compiled path (witness-only synthesis + sparse matrix products) gives exactly
//! what the full recorder gives, on the real 2 KiB circuits.
mod common;

use cuzk_filecoin::plan;
use cuzk_groth16::RecorderMode;

#[test]
fn compiled_evaluation_equals_full_recording() {
    common::dir();
    for kind in ["wpost", "winning", "porep"] {
        let req = common::request(kind);
        let full = plan(&req).unwrap().take_jobs().remove(0);
        let shape = cuzk_filecoin::compiled::compile(full.circuit_id).unwrap();
        let full = full.run(RecorderMode::Full).unwrap();
        let witness = plan(&req).unwrap().take_jobs().remove(0);
        let fast = shape
            .evaluate(witness.run(RecorderMode::WitnessOnly).unwrap())
            .unwrap();
        assert_eq!(fast.num_constraints, full.num_constraints, "{kind}");
        assert_eq!(fast.inputs, full.inputs, "{kind}");
        assert!(
            fast.a == full.a && fast.b == full.b && fast.c == full.c,
            "{kind}: a/b/c differ"
        );
        assert_eq!(fast.a_aux_density, full.a_aux_density, "{kind}");
        assert_eq!(fast.b_input_density, full.b_input_density, "{kind}");
        assert_eq!(fast.b_aux_density, full.b_aux_density, "{kind}");
        assert!(fast.is_satisfied(), "{kind}");
        // A witness of another shape is refused, not mis-evaluated.
        if kind == "porep" {
            let other = plan(&common::request("wpost"))
                .unwrap()
                .take_jobs()
                .remove(0);
            assert!(shape
                .evaluate(other.run(RecorderMode::WitnessOnly).unwrap())
                .is_err());
        }
    }
}

/// `load_or_compile` compiles and stores a circuit the first time and reads it back the
/// next, the same matrices; another parameter file makes it stale, a damaged or truncated
/// file is refused, and each is compiled again (and rewritten) rather than used (a damaged
/// one that `open_or_compile` opened lazily, when its matrices are read); a cache that cannot
/// be written still yields the compiled circuit, saying why it was not stored.
#[test]
fn the_compiled_cache_is_read_back_and_a_stale_or_damaged_file_is_compiled_again() {
    use cuzk_filecoin::compiled::{load_or_compile, Source};
    use cuzk_filecoin::CircuitId;
    let id: CircuitId = "winning-2k".parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("winning.params");
    std::fs::write(&params, vec![7u8; 3 << 20]).unwrap();
    let cache = dir.path().join("cache");
    let (first, source) = load_or_compile(id, &params, &cache).unwrap();
    common::assert_compiled_and_stored(&source);
    let (second, source) = load_or_compile(id, &params, &cache).unwrap();
    assert!(matches!(source, Source::Cache), "{source:?}");
    for m in 0..3 {
        let (x, y) = (first.matrix(m), second.matrix(m));
        assert_eq!(
            (x.row_start, x.cols, x.coeffs),
            (y.row_start, y.cols, y.coeffs)
        );
    }
    assert_eq!(second.num_constraints(), 90_750);

    // Another parameter file (a byte of its head differs): stale, compiled again, rewritten.
    let mut other = std::fs::read(&params).unwrap();
    other[100] ^= 1;
    std::fs::write(&params, &other).unwrap();
    let (_, source) = load_or_compile(id, &params, &cache).unwrap();
    match source {
        Source::Compiled {
            refused: Some(why),
            stored: Ok(()),
        } => assert!(why.contains("stale"), "{why}"),
        s => panic!("{s:?}"),
    }
    assert!(matches!(
        load_or_compile(id, &params, &cache).unwrap().1,
        Source::Cache
    ));

    // A damaged file: refused as corrupt, compiled again.
    let file = cache.join("winning-2k.compiled");
    let mut bytes = std::fs::read(&file).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 0x40;
    std::fs::write(&file, &bytes).unwrap();
    match load_or_compile(id, &params, &cache).unwrap().1 {
        Source::Compiled {
            refused: Some(why),
            stored: Ok(()),
        } => assert!(why.contains("corrupt"), "{why}"),
        s => panic!("{s:?}"),
    }

    // A truncated file: refused as corrupt at opening, compiled again.
    let whole = std::fs::read(&file).unwrap();
    std::fs::write(&file, &whole[..whole.len() * 2 / 3]).unwrap();
    match cuzk_filecoin::compiled::open_or_compile(id, &params, &cache)
        .unwrap()
        .1
    {
        Source::Compiled {
            refused: Some(why),
            stored: Ok(()),
        } => assert!(why.contains("corrupt") && why.contains("bytes"), "{why}"),
        s => panic!("{s:?}"),
    }
    // Opened lazily, a damaged byte among the matrices is found when they are read: the
    // planner then compiles again (`compile_again`), which rewrites the file.
    let mut bytes = std::fs::read(&file).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 0x40;
    std::fs::write(&file, &bytes).unwrap();
    let (mut lazy, source) = cuzk_filecoin::compiled::open_or_compile(id, &params, &cache).unwrap();
    assert!(matches!(source, Source::Cache) && lazy.matrices_in_file());
    let why = lazy.load_host_matrices().unwrap_err().to_string();
    assert!(why.contains("corrupt"), "{why}");
    let (again, source) = cuzk_filecoin::compiled::compile_again(id, &params, &cache, why).unwrap();
    assert!(matches!(
        source,
        Source::Compiled {
            refused: Some(_),
            stored: Ok(())
        }
    ));
    assert_eq!(again.num_constraints(), 90_750);
    assert!(matches!(
        load_or_compile(id, &params, &cache).unwrap().1,
        Source::Cache
    ));

    // A cache path that cannot be a directory (it is a file): compiled, not stored, said why.
    let blocked = dir.path().join("blocked");
    std::fs::write(&blocked, b"a file").unwrap();
    let (c, source) = load_or_compile(id, &params, &blocked).unwrap();
    assert_eq!(c.num_constraints(), 90_750);
    assert!(
        matches!(source, Source::Compiled { stored: Err(_), .. }),
        "{source:?}"
    );
    // No parameter file: no key; compiled, not stored (the SRS load reports the file).
    let (c, source) = load_or_compile(id, &dir.path().join("none.params"), &cache).unwrap();
    assert_eq!(c.num_constraints(), 90_750);
    assert!(
        matches!(source, Source::Compiled { refused: None, stored: Err(ref why) } if why.contains("no cache key")),
        "{source:?}"
    );
}
