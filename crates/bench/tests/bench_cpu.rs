//! The pipeline benchmark on the CPU prover with synthetic circuits (ignored by default: it is
//! a benchmark, not a check). Run: `cargo test --release -p cuzk-bench --test bench_cpu --
//! --ignored --nocapture`; `CUZK_BENCH_SPEC`, `CUZK_BENCH_JOBS`, `CUZK_BENCH_C` and
//! `CUZK_BENCH_BUDGET` (e.g. `64MiB`) override the defaults.
use cuzk_bench::pipeline::{bench_pipeline, BenchOptions};
use cuzk_core::config::parse_size;
use cuzk_core::kinds::synthetic::SyntheticPlanner;
use cuzk_core::{Config, Engine};
use cuzk_groth16::CpuProver;
use std::sync::Arc;
use std::time::Duration;

fn env_or(key: &str, default: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| default.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: run explicitly with --ignored"]
async fn bench_cpu_pipeline() {
    let spec = env_or("CUZK_BENCH_SPEC", "synthetic:constraints=2^14,partitions=2");
    let jobs: usize = env_or("CUZK_BENCH_JOBS", "16").parse().unwrap();
    let c: usize = env_or("CUZK_BENCH_C", "8").parse().unwrap();
    let mut config = Config::default_for_machine();
    config.budget_bytes = parse_size(&env_or("CUZK_BENCH_BUDGET", "64MiB")).unwrap();
    config.request_buffer_bytes = 1 << 20;
    let engine = Engine::new(
        config,
        vec![Arc::new(CpuProver::new())],
        Arc::new(SyntheticPlanner::default()),
    )
    .unwrap();
    // Warm up: load the SRS and calibrate the working-set estimate outside the measurement.
    let warm = bench_pipeline(&engine, &BenchOptions::synthetic(&spec, 1, 1))
        .await
        .unwrap();
    assert_eq!(warm.completed, 1, "{warm}");
    engine.budget().reset_peak();
    let r = bench_pipeline(&engine, &BenchOptions::synthetic(&spec, jobs, c))
        .await
        .unwrap();
    println!("spec {spec}, {jobs} jobs, concurrency {c}\n{r}");
    assert_eq!(r.completed, jobs, "{r}");
    engine.shutdown(Duration::from_secs(10)).await;
}
