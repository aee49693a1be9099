//! Synthesis benchmark: our recorder against bellperson's prover-side synthesis on the real
//! 2 KiB circuits of the test data (see `cuzk_testkit::synth_bench`).
//!
//! `cargo run --release -p cuzk-filecoin --example synth_bench -- [DIR] [REPS] [KINDS]`
//! (DIR defaults to `target/cuzk-bench-testdata`; it is generated without parameters if
//! missing; KINDS is a comma list of `porep,snap,winning,wpost`). With `WALK=porep-2k,porep-32g`
//! it also walks those blank circuits with a structure-only constraint system.
use std::path::PathBuf;

use cuzk_filecoin::SectorSize;
use cuzk_testkit::synth_bench::bench_request;
use cuzk_testkit::testdata::{ensure, TestdataOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/cuzk-bench-testdata"));
    let reps: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(3);
    let kinds = args
        .next()
        .unwrap_or_else(|| "porep,snap,winning,wpost".into());
    cuzk_filecoin::params::set_cache_dir(&dir);
    let m = ensure(&TestdataOptions {
        out: dir.clone(),
        sector_size: SectorSize::S2KiB,
        seed: 7,
        params: false,
    })?;
    println!(
        "| circuit | constraints | bellperson median (best) | recorder median (best) | witness-only median | compiled median (compile once) | bellperson c/s | recorder c/s | compiled c/s | recorder speed-up | compiled speed-up |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for kind in kinds.split(',') {
        let spec = m.request(kind).ok_or("unknown kind")?;
        let req = spec.load(&dir)?;
        let b = bench_request(&req, reps)?;
        println!(
            "| {} | {} | {:.3} s ({:.3}) | {:.3} s ({:.3}) | {:.3} s | {:.3} s ({:.2} s) | {:.2} M | {:.2} M | {:.2} M | {:.2}× | {:.2}× |",
            b.circuit_id,
            b.constraints,
            b.bellperson_median.as_secs_f64(),
            b.bellperson_best.as_secs_f64(),
            b.ours_median.as_secs_f64(),
            b.ours_best.as_secs_f64(),
            b.witness_only_median.as_secs_f64(),
            b.compiled_median.as_secs_f64(),
            b.compile_time.as_secs_f64(),
            b.bellperson_rate() / 1e6,
            b.ours_rate() / 1e6,
            b.constraints as f64 / b.compiled_median.as_secs_f64() / 1e6,
            b.speedup(),
            b.compiled_speedup()
        );
    }
    if let Ok(ids) = std::env::var("WALK") {
        println!();
        println!(
            "| blank circuit | constraints | terms | variables | structure walk | constraints/s |"
        );
        println!("|---|---|---|---|---|---|");
        for id in ids.split(',') {
            let w = cuzk_testkit::synth_bench::walk_blank_structure(id.parse()?)?;
            println!(
                "| {id} | {} | {} | {} | {:.2} s | {:.2} M |",
                w.constraints,
                w.terms,
                w.variables,
                w.elapsed.as_secs_f64(),
                w.constraints as f64 / w.elapsed.as_secs_f64() / 1e6
            );
        }
    }
    Ok(())
}
