//! Issue 14: a PoRep partition's witness computed natively, its challenges in parallel
//! (`porep_witness.rs`, `native/`: what witness-only synthesis now does) equals, value for value, the circuit's own sequential synthesis (a full recording),
//! on real 2 KiB and real 8 MiB data;
//! and the compiled a/b/c from it satisfy the circuit. The 32 GiB-shaped check runs on the
//! device (`-- --ignored`).
mod common;

use std::time::Instant;

use cuzk_filecoin::{plan, ProofRequest, SectorSize};
use cuzk_testkit::testdata::{ensure, TestdataOptions};

/// Partition `k` of `req`: the parallel native witness against the full sequential
/// recording, then (with `evaluate`) the compiled a/b/c from it against the circuit.
fn check(req: &ProofRequest, k: usize, what: &str, evaluate: bool) {
    let (w, full_s, witness_s) = common::native_equals_full(req, k, what);
    eprintln!(
        "{what} partition {k}: {} constraints, {} aux; full sequential recording {full_s:.2} s, \
         parallel witness {witness_s:.2} s on {} threads",
        w.num_constraints,
        w.num_aux(),
        rayon::current_num_threads()
    );
    if evaluate {
        let id = plan(req).unwrap().take_jobs().remove(k).circuit_id;
        let shape = cuzk_filecoin::compiled::compile(id).unwrap();
        assert!(
            shape.evaluate(w).unwrap().is_satisfied(),
            "{what}: not satisfied"
        );
    }
}

#[test]
fn parallel_porep_witness_equals_the_circuit_s_own_at_2k() {
    common::dir();
    check(&common::request("porep"), 0, "porep-2k", true);
}

#[test]
fn parallel_porep_witness_equals_the_circuit_s_own_at_8m() {
    common::dir();
    let out = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cuzk-testdata-8m");
    let t = Instant::now();
    let m = ensure(&TestdataOptions {
        out: out.clone(),
        sector_size: SectorSize::S8MiB,
        seed: 0x5eed_8a1b,
        params: false,
    })
    .expect("sealing an 8 MiB sector");
    eprintln!("8 MiB test data in {:.1} s", t.elapsed().as_secs_f64());
    let req = m.request("porep").unwrap().load(&out).unwrap();
    check(&req, 0, "porep-8m", true);
}

#[test]
#[ignore = "a 32 GiB-shaped partition: ~35 GB of memory and 16 cores; run on the device"]
fn parallel_porep_witness_equals_the_circuit_s_own_at_32g_shape() {
    let out = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cuzk-shaped-32g-w");
    let _ = std::fs::remove_dir_all(&out);
    let m = cuzk_testkit::shaped::generate(&cuzk_testkit::shaped::ShapedOptions {
        out: out.clone(),
        sector_size: SectorSize::S32GiB,
        seed: 0x5eed_32a1,
        ni_porep: false,
    })
    .unwrap();
    let req = m.manifest.request("porep").unwrap().load(&out).unwrap();
    check(&req, 0, "porep-32g (shape-true, TIMING-ONLY values)", false);
}
