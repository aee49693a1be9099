//! `cuzk bench cpu`: times the CPU prover on synthetic circuits of several sizes. The
//! comparison against bellperson lives in an example of `cuzk-groth16` (bellperson is a
//! dev-dependency there, so this binary stays free of it); this command prints how to run it.
use anyhow::Context;
use clap::{Args, Subcommand};
use cuzk_groth16::{
    prover::{random_blinding, CpuProver},
    recorder::{Recorder, RecorderMode},
    setup::generate_params,
    synthetic::SyntheticSpec,
};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::time::Instant;

/// Arguments of `cuzk bench`.
#[derive(Args)]
pub struct BenchArgs {
    /// Which benchmark.
    #[command(subcommand)]
    pub cmd: BenchCommand,
}

/// The benchmarks.
#[derive(Subcommand)]
pub enum BenchCommand {
    /// Our CPU prover on synthetic circuits with a 2^k evaluation domain for each k.
    Cpu(CpuArgs),
    /// Synthetic jobs through an in-process engine: s/proof, prover-busy, peak RSS/reserved.
    Pipeline(crate::bench_pipeline::PipelineArgs),
    /// Multi-GPU scaling of the engine on PoRep-shaped partitions (TIMING-ONLY parameters).
    Gpus(crate::bench_gpus::GpusArgs),
    /// Client benchmarks against a running daemon (`single`, `batch`, `status`, ...).
    #[command(flatten)]
    Client(crate::client_bench::ClientBenchCmd),
}

/// Arguments of `cuzk bench cpu`.
#[derive(Args)]
pub struct CpuArgs {
    /// Domain sizes as powers of two, comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = vec![14u32, 16, 18])]
    pub sizes: Vec<u32>,
    /// Circuit shape (its `constraints` is replaced per size).
    #[arg(long, default_value = "synthetic:")]
    pub circuit: SyntheticSpec,
    /// Runs per size (the fastest is reported).
    #[arg(long, default_value_t = 1)]
    pub reps: usize,
}

/// Runs `cuzk bench`.
pub fn run(args: BenchArgs) -> anyhow::Result<()> {
    match args.cmd {
        BenchCommand::Cpu(a) => run_cpu(a),
        BenchCommand::Pipeline(a) => crate::bench_pipeline::run(a),
        BenchCommand::Gpus(a) => crate::bench_gpus::run(a),
        BenchCommand::Client(c) => crate::client_bench::run(c),
    }
}

fn run_cpu(args: CpuArgs) -> anyhow::Result<()> {
    let sizes: Vec<String> = args.sizes.iter().map(|k| k.to_string()).collect();
    println!(
        "comparison with bellperson (same circuit, same SRS, one run):\n  cargo run --release -p cuzk-groth16 --example bench_cpu -- --sizes {}\n",
        sizes.join(",")
    );
    println!(
        "{:>4} {:>9} {:>10} {:>10}  phases",
        "log2", "constr", "synth_s", "prove_s"
    );
    let prover = CpuProver::new();
    for &k in &args.sizes {
        anyhow::ensure!((1..=28).contains(&k), "size 2^{k} out of range 2^1..=2^28");
        let n = 1usize << k;
        let spec = SyntheticSpec {
            constraints: n.saturating_sub(args.circuit.inputs + 1),
            ..args.circuit
        };
        let mut rng = ChaCha8Rng::seed_from_u64(u64::from(k));
        let srs = generate_params(spec.circuit(), &mut rng).context("setup")?;
        let mut best: Option<(f64, f64, String)> = None;
        for _ in 0..args.reps.max(1) {
            let t = Instant::now();
            let rec = Recorder::with_hints(
                RecorderMode::Full,
                spec.constraints,
                spec.inputs + 1,
                spec.num_aux(),
            );
            let syn = Recorder::synthesize_into(rec, spec.circuit()).context("synthesis")?;
            let t_syn = t.elapsed().as_secs_f64();
            let (r, s) = random_blinding(&mut rng);
            let t = Instant::now();
            let (_, timings) = prover.prove_timed(&srs, syn, r, s).context("prove")?;
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
