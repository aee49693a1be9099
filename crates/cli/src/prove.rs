//! `cuzk prove`: synthesizes one circuit, proves it in-process on the CPU backend and prints
//! the time of each phase (synthesis, H's NTTs, each MSM), then verifies the proof.
use anyhow::Context;
use clap::Args;
use cuzk_groth16::{
    prover::{random_blinding, CpuProver},
    recorder::{Recorder, RecorderMode},
    setup::generate_params,
    synthetic::CircuitSpec,
    verifier::{verify_proof, PreparedVerifyingKey},
    Srs,
};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::{path::PathBuf, time::Instant};

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

/// VmHWM (peak RSS) of this process in MiB, where /proc is available.
pub fn peak_rss_mib() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: f64 = s
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

fn load_params(args: &ProveArgs) -> anyhow::Result<Srs> {
    let t = Instant::now();
    let srs = match &args.params {
        Some(path) => crate::params_io::read(path, !args.trusted)?,
        None => {
            eprintln!(
                "no --params given: generating INSECURE test parameters in-process (seed {})",
                args.setup_seed
            );
            let mut rng = ChaCha8Rng::seed_from_u64(args.setup_seed);
            generate_params(args.circuit, &mut rng)
                .with_context(|| format!("setup for {}", args.circuit))?
        }
    };
    println!(
        "params: {:.1} MiB of points, ready in {:.3} s",
        srs.size_bytes() as f64 / (1024.0 * 1024.0),
        t.elapsed().as_secs_f64()
    );
    Ok(srs)
}

/// Runs `cuzk prove`.
pub fn run(args: ProveArgs) -> anyhow::Result<()> {
    println!("circuit: {}", args.circuit);
    let srs = load_params(&args)?;
    let pvk = PreparedVerifyingKey::from(&srs.vk);
    let prover = CpuProver::new();
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let hint = args.circuit.approx_constraints();
    for run in 0..args.repeat.max(1) {
        let t = Instant::now();
        let recorder = Recorder::with_hints(RecorderMode::Full, hint, srs.vk.ic.len(), srs.l.len());
        let syn = Recorder::synthesize_into(recorder, args.circuit).context("synthesis")?;
        let t_syn = t.elapsed();
        let (n, aux, heap) = (syn.num_constraints, syn.aux.len(), syn.heap_bytes());
        let (r, s) = random_blinding(&mut rng);
        let t = Instant::now();
        let (pending, ts) = prover
            .start_timed(&srs, syn, r, s)
            .context("prove (start)")?;
        let t_start = t.elapsed();
        let (proof, tf) = prover
            .finish_timed(&srs, pending)
            .context("prove (finish)")?;
        let t_total = t.elapsed();
        let ok = verify_proof(&pvk, &proof, &args.circuit.public_inputs()).context("verify")?;
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        println!(
            "run {run}: {n} constraints, {aux} aux, recorder {:.1} MiB",
            heap as f64 / (1024.0 * 1024.0)
        );
        println!("  synthesis  {:>9.1} ms", ms(t_syn));
        println!("  ntt_h      {:>9.1} ms", ms(ts.ntt_h));
        println!("  msm_h      {:>9.1} ms", ms(ts.msm_h));
        println!("  msm_l      {:>9.1} ms", ms(ts.msm_l));
        println!("  msm_a      {:>9.1} ms", ms(ts.msm_a));
        println!("  msm_b_g1   {:>9.1} ms", ms(ts.msm_b_g1));
        println!("  start      {:>9.1} ms (a/b/c freed)", ms(t_start));
        println!("  msm_b_g2   {:>9.1} ms", ms(tf.msm_b_g2));
        println!("  assemble   {:>9.1} ms", ms(tf.assemble));
        println!("  prove      {:>9.1} ms (start + finish)", ms(t_total));
        println!("  verify     {}", if ok { "ok" } else { "FAILED" });
        println!("  proof      {}", hex_string(&proof.to_bytes()));
        if !ok {
            anyhow::bail!("the proof does not verify");
        }
    }
    if let Some(p) = peak_rss_mib() {
        println!("peak RSS: {p:.1} MiB");
    }
    Ok(())
}

fn hex_string(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
