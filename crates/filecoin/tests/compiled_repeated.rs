//! PoRep's circuit compiled from its preamble and one challenge, repeated
//! (`CompiledCircuit::compile_repeated`), is the circuit walked whole: the same compiled
//! file, byte for byte, in host memory and straight into the cache.
mod common;

use cuzk_filecoin::compiled::{self, open_or_compile, open_or_compile_with, Source};
use cuzk_filecoin::CircuitId;

/// Whether files `a` and `b` hold the same bytes (read a few MiB at a time: at 32 GiB they
/// are 7 GB each).
fn same_bytes(a: &std::path::Path, b: &std::path::Path) -> bool {
    use std::io::Read;
    let (mut a, mut b) = (
        std::fs::File::open(a).unwrap(),
        std::fs::File::open(b).unwrap(),
    );
    if a.metadata().unwrap().len() != b.metadata().unwrap().len() {
        return false;
    }
    let (mut x, mut y) = (vec![0u8; 8 << 20], vec![0u8; 8 << 20]);
    loop {
        let n = a.read(&mut x).unwrap();
        if n == 0 {
            return true;
        }
        b.read_exact(&mut y[..n]).unwrap();
        if x[..n] != y[..n] {
            return false;
        }
    }
}

/// The walked circuit's file against the cache file `open_or_compile` writes (straight from
/// one challenge) and the file of the repeated compile in host memory; one circuit in
/// memory at a time.
fn check(id: CircuitId) {
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("p.params");
    std::fs::write(&params, vec![3u8; 4096]).unwrap();
    let key = compiled::cache_key(id, &params).unwrap();
    let walked_file = dir.path().join("walked");
    let t0 = std::time::Instant::now();
    let walked = compiled::compile_walked(id).unwrap();
    let walked_s = t0.elapsed().as_secs_f64();
    walked.write_file(&walked_file, &key).unwrap();
    drop(walked);

    let cache = dir.path().join("cache");
    let t0 = std::time::Instant::now();
    let (opened, source) = open_or_compile(id, &params, &cache).unwrap();
    let file_s = t0.elapsed().as_secs_f64();
    common::assert_compiled_and_stored(&source);
    assert!(
        opened.matrices_in_file(),
        "compiled into the file, not host memory"
    );
    let file = cache.join(format!("{id}.compiled"));
    assert!(same_bytes(&file, &walked_file), "{id}: the cache file");
    let names: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "no temporary left: {names:?}");
    drop(opened);
    std::fs::remove_file(&file).unwrap();

    let t0 = std::time::Instant::now();
    let repeated = compiled::compile(id).unwrap();
    let memory_s = t0.elapsed().as_secs_f64();
    let memory_file = dir.path().join("memory");
    repeated.write_file(&memory_file, &key).unwrap();
    assert!(
        same_bytes(&memory_file, &walked_file),
        "{id}: in host memory"
    );
    println!(
        "{id}: walked {walked_s:.2} s; from one challenge into the file {file_s:.2} s, \
         in host memory {memory_s:.2} s"
    );
}

#[test]
fn porep_compiled_from_one_challenge_is_the_walked_circuit() {
    assert_eq!(
        compiled::repeated_parts("porep-2k".parse().unwrap()),
        Some(2)
    );
    assert_eq!(
        compiled::repeated_parts("winning-2k".parse().unwrap()),
        None
    );
    for id in ["porep-2k", "porep-8m"] {
        check(id.parse().unwrap());
    }
}

/// The same at 32 GiB (walking the whole circuit: minutes on one core; 7.4 GB of RAM and
/// 22 GB of disk under the temporary directory).
#[test]
#[ignore = "32 GiB: minutes, 7.4 GB of RAM, 22 GB of disk; run by hand"]
fn porep_32g_compiled_from_one_challenge_is_the_walked_circuit() {
    check("porep-32g".parse().unwrap());
}

/// A cache that cannot be written: PoRep is compiled into host memory and said not stored,
/// or, when the caller reserved only a compile into the file, refused with why.
#[test]
fn porep_with_an_unwritable_cache_compiles_in_memory_or_is_refused() {
    let id: CircuitId = "porep-2k".parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("p.params");
    std::fs::write(&params, vec![3u8; 4096]).unwrap();
    let blocked = dir.path().join("blocked");
    std::fs::write(&blocked, b"a file").unwrap();
    let (c, source) = open_or_compile(id, &params, &blocked).unwrap();
    assert!(!c.matrices_in_file());
    assert!(
        matches!(source, Source::Compiled { stored: Err(_), .. }),
        "{source:?}"
    );
    let e = open_or_compile_with(id, &params, &blocked, || false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not reserved"), "{e}");
}
