//! Issue 29 item 2's cold half, for a box that cannot hold the compile: `cuzk gen compiled`
//! fills the compiled cache that the daemon opens at start (the same key, the same file), so
//! the daemon never compiles. Compiled and written the first time; checked whole and kept the
//! second; a damaged file compiled again the third (and intact after); a circuit without its
//! parameter file is a clear error.
use cuzk_filecoin::compiled::{is_cached, open_or_compile, Source, CACHE_SUBDIR};
use std::process::Command;

/// `cuzk gen ARGS`: whether it succeeded, and what it printed.
fn gen(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .arg("gen")
        .args(args)
        .output()
        .expect("run cuzk gen");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn gen_compiled_fills_the_daemons_cache_and_mends_a_damaged_file() {
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("params");
    let p = params.to_str().unwrap();
    let (ok, out) = gen(&["timing-params", "--circuit", "wpost-2k", "--out", p]);
    assert!(ok, "{out}");
    let compiled = || gen(&["compiled", "--circuit", "wpost-2k", "--params-dir", p]);
    let id: cuzk_filecoin::CircuitId = "wpost-2k".parse().unwrap();
    let param_file = id.param_files().unwrap().params_path(&params);
    let cache = params.join(CACHE_SUBDIR);
    assert!(!is_cached(id, &param_file, &cache));

    let (ok, out) = compiled();
    assert!(ok && out.contains("compiled and cached"), "{out}");
    assert!(is_cached(id, &param_file, &cache));
    // The daemon's own path opens it instead of compiling.
    let (_, source) = open_or_compile(id, &param_file, &cache).unwrap();
    assert!(matches!(source, Source::Cache), "{source:?}");

    let (ok, out) = compiled();
    assert!(ok && out.contains("cached and intact"), "{out}");

    // One byte of the matrices (near the end of the file, before its digest) flipped: the
    // header still opens, the check finds it, and the file is written anew.
    let file = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|f| f.is_file())
        .expect("the cache file");
    let mut bytes = std::fs::read(&file).unwrap();
    let at = bytes.len() - 200;
    bytes[at] ^= 0x01;
    std::fs::write(&file, &bytes).unwrap();
    let (ok, out) = compiled();
    assert!(
        ok && (out.contains("damaged") || out.contains("not used")),
        "{out}"
    );
    assert_ne!(std::fs::read(&file).unwrap(), bytes, "written anew");
    let (ok, out) = compiled();
    assert!(ok && out.contains("cached and intact"), "{out}");

    // No parameter file for the circuit: nothing to key the cache by.
    let (ok, out) = gen(&["compiled", "--circuit", "porep-2k", "--params-dir", p]);
    assert!(!ok && out.contains("no parameter file"), "{out}");
}
