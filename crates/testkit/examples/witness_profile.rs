//! One partition's witness-only synthesis of a TIMING-ONLY shaped request (random vanilla
//! proofs of the real shapes; no proof is made), timed: where a witness's wall time goes on
//! this machine, without the compile `cuzk bench synth` makes first.
//!
//! `cargo run --release -p cuzk-filecoin --example witness_profile -- [SIZE] [KIND] [REPS]`
//! (SIZE defaults to 32GiB, KIND to porep, REPS to 3). `RUST_LOG=cuzk_filecoin=debug` logs
//! the phases of each run.
use std::time::Instant;

use cuzk_filecoin::SectorSize;
use cuzk_groth16::RecorderMode;
use cuzk_testkit::shaped;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let mut args = std::env::args().skip(1);
    let size = SectorSize::parse(&args.next().unwrap_or_else(|| "32GiB".into()))?;
    let kind = args.next().unwrap_or_else(|| "porep".into());
    let reps: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(3);
    let t = Instant::now();
    let shaped = shaped::requests(size, 1)?;
    let req = match kind.as_str() {
        "porep" => &shaped.porep,
        "snap" => &shaped.snap,
        "wpost" => &shaped.wpost,
        "winning" => &shaped.winning,
        k => return Err(format!("kind {k}: one of porep, snap, wpost, winning").into()),
    };
    eprintln!(
        "TIMING-ONLY {kind} request ({size:?}) built in {:.2} s",
        t.elapsed().as_secs_f64()
    );
    for rep in 0..reps {
        let t = Instant::now();
        let job = cuzk_filecoin::plan(req)?
            .take_jobs()
            .into_iter()
            .next()
            .ok_or("no partition")?;
        let planned = t.elapsed();
        let t = Instant::now();
        let w = job.run(RecorderMode::WitnessOnly)?;
        let synthesized = t.elapsed();
        let (constraints, aux) = (w.num_constraints, w.num_aux());
        let (heap, full) = (
            w.heap_bytes(),
            w.compact.as_ref().map_or(aux, |c| c.values().len()),
        );
        let t = Instant::now();
        drop(w);
        println!(
            "run {rep}: plan {:.3} s, witness {:.3} s on {} threads, free {:.3} s: {constraints} constraints, {aux} aux ({full} neither 0 nor 1), {:.1} MiB held",
            planned.as_secs_f64(),
            synthesized.as_secs_f64(),
            rayon::current_num_threads(),
            t.elapsed().as_secs_f64(),
            heap as f64 / (1 << 20) as f64,
        );
    }
    Ok(())
}
