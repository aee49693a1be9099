//! The arguments of `cuzk bench gpus` (multi-GPU scaling of the engine on PoRep-shaped
//! partitions with TIMING-ONLY parameters); the bench itself is `cuzk_bench::gpus`.
use clap::Args;
use cuzk_bench::gpus::{self, GpusOptions};

/// Arguments of `cuzk bench gpus`.
#[derive(Args)]
pub struct GpusArgs {
    /// Partition sizes as powers of two (constraints + inputs = 2^k).
    #[arg(long, value_delimiter = ',', default_values_t = vec![24u32, 26])]
    pub log_n: Vec<u32>,
    /// GPU counts to compare (the first k visible devices), one engine each.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1usize, 2])]
    pub gpus: Vec<usize>,
    /// Measured partitions per GPU (after the warm-up).
    #[arg(long, default_value_t = 12)]
    pub partitions_per_gpu: usize,
    /// Warm-up partitions per GPU (SRS upload, first allocations), not measured.
    #[arg(long, default_value_t = 4)]
    pub warmup_per_gpu: usize,
    /// Prover workers per GPU.
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    /// Finished partitions' buffer sets the engine keeps for reuse (0: free them).
    #[arg(long, default_value_t = 4)]
    pub reuse_buffers: usize,
    /// Partitions per submitted job.
    #[arg(long, default_value_t = 4)]
    pub job_partitions: usize,
    /// Partitions synthesized (copied) at once per GPU; with the channel and the workers this
    /// bounds the partitions in flight.
    #[arg(long, default_value_t = 2)]
    pub synthesis_per_gpu: usize,
    /// Measured proofs per GPU left out of the steady-state rate (the pipeline's ramp-up).
    #[arg(long, default_value_t = 2)]
    pub skip_per_gpu: usize,
    /// How a partition is materialized: `handback` (reuse a finished partition's intact
    /// buffers, copy otherwise) or `copy` (always copy the template).
    #[arg(long, default_value = "handback")]
    pub feed: FeedArg,
}

/// How the bench materializes a pre-synthesized partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FeedArg {
    /// Hand an intact finished partition back; copy the template otherwise.
    Handback,
    /// Always copy the template.
    Copy,
}

/// Runs `cuzk bench gpus`.
pub fn run(args: GpusArgs) -> anyhow::Result<()> {
    let opts = GpusOptions {
        log_n: args.log_n,
        gpus: args.gpus,
        partitions_per_gpu: args.partitions_per_gpu,
        warmup_per_gpu: args.warmup_per_gpu,
        workers: args.workers,
        reuse_buffers: args.reuse_buffers,
        job_partitions: args.job_partitions,
        synthesis_per_gpu: args.synthesis_per_gpu,
        skip_per_gpu: args.skip_per_gpu,
        feed: match args.feed {
            FeedArg::Handback => gpus::Feed::Handback,
            FeedArg::Copy => gpus::Feed::Copy,
        },
    };
    Ok(gpus::run(&opts)?)
}
