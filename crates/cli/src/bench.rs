//! The arguments of `cuzk bench` and its dispatch; the benchmarks are in `cuzk-bench`
//! (`cuzk bench cpu`: `cuzk_bench::cpu`).
use clap::{Args, Subcommand};
use cuzk_groth16::synthetic::SyntheticSpec;

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
        BenchCommand::Cpu(a) => Ok(cuzk_bench::cpu::run(&a.sizes, a.circuit, a.reps)?),
        BenchCommand::Pipeline(a) => crate::bench_pipeline::run(a),
        BenchCommand::Gpus(a) => crate::bench_gpus::run(a),
        BenchCommand::Client(c) => crate::client_bench::run(c),
    }
}
