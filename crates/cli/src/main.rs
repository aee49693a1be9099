//! The `cuzk` binary: parses arguments, dispatches to a subcommand, maps errors to exit codes.
#![forbid(unsafe_code)]

mod bench;
mod bench_gpus;
mod bench_pipeline;
mod client_bench;
mod daemon;
mod demo;
mod engine_setup;
mod gen;
mod prove;
mod selftest;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// cuzk: a Groth16 proving daemon for Filecoin.
#[derive(Parser)]
#[command(name = "cuzk", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate test data or (insecure) test parameters.
    Gen(gen::GenArgs),
    /// Prove one circuit in-process and print per-phase timings.
    Prove(prove::ProveArgs),
    /// Benchmarks.
    Bench(bench::BenchArgs),
    /// Run the proving daemon (gRPC cuzk.v1.ProvingEngine).
    Daemon(daemon::DaemonArgs),
    /// Prove a mixed batch through an embedded daemon and print the bench table.
    Demo(demo::DemoArgs),
    /// Print a running daemon's status.
    Status(client_bench::AddrArgs),
    /// Prove requests of a SYNTHETIC sparse sector of every kind and size asked through a
    /// running daemon, and check each proof with filecoin-proofs' verifier against a
    /// parameter directory's verifying keys; prints a table, fails unless all are VALID.
    /// Such proofs show that the daemon's proofs verify at real size, but they prove a sector
    /// that was never sealed: useless on chain.
    Selftest(selftest::SelftestArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Gen(args) => gen::run(args),
        Command::Prove(args) => prove::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Daemon(args) => daemon::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Status(args) => client_bench::run_status(args),
        Command::Selftest(args) => selftest::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
