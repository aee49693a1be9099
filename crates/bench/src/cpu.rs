//! `cuzk bench cpu`: times the CPU prover on synthetic circuits of several sizes. The
//! comparison against bellperson lives in an example of `cuzk-groth16` (bellperson is a
//! dev-dependency there, so this crate stays free of it); the table says how to run it.
use crate::error::{invalid, Result, Step};
use cuzk_groth16::{
    prover::{random_blinding, CpuProver},
    recorder::RecorderMode,
    setup::generate_params,
    synthetic::SyntheticSpec,
};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::time::Instant;

/// Times the CPU prover on `circuit` with a 2^k evaluation domain for each k of `sizes`
/// (the fastest of `reps` runs each) and prints the table (`cuzk bench cpu`).
pub fn run(sizes: &[u32], circuit: SyntheticSpec, reps: usize) -> Result<()> {
    let names: Vec<String> = sizes.iter().map(|k| k.to_string()).collect();
    println!(
        "comparison with bellperson (same circuit, same SRS, one run):\n  cargo run --release -p cuzk-groth16 --example bench_cpu -- --sizes {}\n",
        names.join(",")
    );
    println!(
        "{:>4} {:>9} {:>10} {:>10}  phases",
        "log2", "constr", "synth_s", "prove_s"
    );
    let prover = CpuProver::new();
    for &k in sizes {
        if !(1..=28).contains(&k) {
            return Err(invalid!("size 2^{k} out of range 2^1..=2^28"));
        }
        let n = 1usize << k;
        let spec = SyntheticSpec {
            constraints: n.saturating_sub(circuit.inputs + 1),
            ..circuit
        };
        let mut rng = ChaCha8Rng::seed_from_u64(u64::from(k));
        let srs = generate_params(spec.circuit(), &mut rng).step("setup")?;
        let mut best: Option<(f64, f64, String)> = None;
        for _ in 0..reps.max(1) {
            let t = Instant::now();
            let syn = spec.synthesize(RecorderMode::Full).step("synthesis")?;
            let t_syn = t.elapsed().as_secs_f64();
            let (r, s) = random_blinding(&mut rng);
            let t = Instant::now();
            let (_, timings) = prover.prove_timed(&srs, syn, r, s).step("prove")?;
            let t_prv = t.elapsed().as_secs_f64();
            if best.as_ref().is_none_or(|b| t_syn + t_prv < b.0 + b.1) {
                best = Some((t_syn, t_prv, timings.to_string()));
            }
        }
        if let Some((a, b, ph)) = best {
            println!("{k:>4} {:>9} {a:>10.3} {b:>10.3}  {ph}", spec.constraints);
        }
    }
    Ok(())
}
