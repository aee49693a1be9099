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
    /// Real-size synthesis of one partition per kind (TIMING-ONLY requests of the real
    /// shapes, built in memory): the daemon's path on every core against bellperson's on one.
    Synth(SynthArgs),
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

/// Arguments of `cuzk bench synth`.
#[derive(Args)]
pub struct SynthArgs {
    /// Sector size of the TIMING-ONLY requests (32GiB, 64GiB; smaller sizes for a quick look).
    #[arg(long, default_value = "32GiB")]
    pub sector_size: String,
    /// Kinds, comma separated: porep, snap, wpost, winning.
    #[arg(long, value_delimiter = ',', default_values_t = vec!["porep".to_string(), "snap".into(), "wpost".into()])]
    pub kinds: Vec<String>,
    /// Seed of the requests' random values.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Skip bellperson's single-threaded synthesis (minutes a partition at 32 GiB).
    #[arg(long)]
    pub no_bellperson: bool,
    /// Also synthesize the kinds the daemon records in full (WindowPoSt with
    /// `--record-window-post`) through compiled matrices, in a row of their own.
    #[arg(long)]
    pub compile_all: bool,
    /// Synthesize as the daemon does beside GPU provers that make a/b/c themselves
    /// (`[srs] device_abc`): the witness only, a/b/c left to the device.
    #[arg(long)]
    pub device_abc: bool,
    /// Plan as the daemon does with `[srs] compile_window_post = false`: WindowPoSt recorded
    /// in full (by default it is compiled first, timed apart, as the daemon does).
    #[arg(long)]
    pub record_window_post: bool,
}

/// Runs `cuzk bench`.
pub fn run(args: BenchArgs) -> anyhow::Result<()> {
    match args.cmd {
        BenchCommand::Cpu(a) => Ok(cuzk_bench::cpu::run(&a.sizes, a.circuit, a.reps)?),
        BenchCommand::Pipeline(a) => crate::bench_pipeline::run(a),
        BenchCommand::Gpus(a) => crate::bench_gpus::run(a),
        BenchCommand::Synth(a) => {
            let opts = cuzk_bench::synth::SynthOptions {
                sector_size: cuzk_filecoin::SectorSize::parse(&a.sector_size)?,
                kinds: a.kinds,
                seed: a.seed,
                bellperson: !a.no_bellperson,
                compile_all: a.compile_all,
                device_abc: a.device_abc,
                compile_window_post: !a.record_window_post,
            };
            eprintln!("WARNING: TIMING-ONLY requests: random vanilla proofs of the real shapes, for synthesis time and memory only; no proof is made");
            let rows = cuzk_bench::synth::run(&opts)?;
            print!("{}", cuzk_bench::synth::table(&rows));
            Ok(())
        }
        BenchCommand::Client(c) => crate::client_bench::run(c),
    }
}
