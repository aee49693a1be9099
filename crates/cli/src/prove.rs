//! The arguments of `cuzk prove` (one circuit proved in-process on the CPU, timed per phase);
//! the run itself is `cuzk_bench::prove`.
use clap::Args;
use cuzk_bench::prove::{self, ProveOptions};
use cuzk_groth16::synthetic::CircuitSpec;
use std::path::PathBuf;

/// Arguments of `cuzk prove`.
#[derive(Args)]
pub struct ProveArgs {
    /// Parameter file (`cuzk gen params --circuit SPEC --out FILE`). Without it, INSECURE
    /// parameters are generated in-process first (not timed as proving).
    #[arg(long)]
    pub params: Option<PathBuf>,
    /// The circuit: `synthetic:constraints=2^16,inputs=4,aux=1.0,a=1.0,b=0.25,bool=0.92,seed=7`
    /// (every key optional) or `sha256:blocks=N,seed=S`.
    #[arg(long)]
    pub circuit: CircuitSpec,
    /// Seed of the blinding factors r, s.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Toxic-waste seed when generating parameters in-process.
    #[arg(long, default_value_t = 0)]
    pub setup_seed: u64,
    /// Skip the subgroup checks when reading `--params` (trusted files only; on-curve is always checked).
    #[arg(long)]
    pub trusted: bool,
    /// Prove this many times (each run is timed and printed).
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
}

/// Runs `cuzk prove`.
pub fn run(args: ProveArgs) -> anyhow::Result<()> {
    Ok(prove::run(&ProveOptions {
        params: args.params,
        circuit: args.circuit,
        seed: args.seed,
        setup_seed: args.setup_seed,
        trusted: args.trusted,
        repeat: args.repeat,
    })?)
}
