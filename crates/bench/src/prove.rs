//! `cuzk prove`: synthesizes one circuit, proves it in-process on the CPU backend and prints
//! the time of each phase (synthesis, H's NTTs, each MSM), then verifies the proof.
use crate::error::{invalid, Result, Step};
use cuzk_core::peak_rss_bytes;
use cuzk_groth16::{
    params::{read_params, ReadOptions},
    prover::{random_blinding, CpuProver},
    recorder::{Recorder, RecorderMode},
    setup::generate_params,
    synthetic::CircuitSpec,
    verifier::{verify_proof, PreparedVerifyingKey},
    Srs,
};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What `cuzk prove` proves, and how.
#[derive(Clone, Debug)]
pub struct ProveOptions {
    /// Parameter file; without it, INSECURE parameters are generated in-process first (not
    /// timed as proving).
    pub params: Option<PathBuf>,
    /// The circuit.
    pub circuit: CircuitSpec,
    /// Seed of the blinding factors r, s.
    pub seed: u64,
    /// Toxic-waste seed when generating parameters in-process.
    pub setup_seed: u64,
    /// Skip the subgroup checks when reading `params` (trusted files only).
    pub trusted: bool,
    /// Prove this many times (each run is timed and printed).
    pub repeat: usize,
}

/// Reads a `.params` file and prints the load's throughput; points are always checked to be
/// on the curve, `check_points` adds the subgroup check.
fn read_params_file(path: &Path, check_points: bool) -> Result<Srs> {
    let opts = ReadOptions {
        check_points,
        ..ReadOptions::default()
    };
    let (srs, stats) =
        read_params(path, &opts).with_step(|| format!("reading {}", path.display()))?;
    println!(
        "params: read {} ({:.1} MiB) in {:.3} s, {:.3} GB/s{}",
        path.display(),
        stats.bytes as f64 / (1024.0 * 1024.0),
        stats.elapsed.as_secs_f64(),
        stats.gbps(),
        if check_points {
            ""
        } else {
            " (point checks off)"
        }
    );
    Ok(srs)
}

fn load_params(args: &ProveOptions) -> Result<Srs> {
    let t = Instant::now();
    let srs = match &args.params {
        Some(path) => read_params_file(path, !args.trusted)?,
        None => {
            eprintln!(
                "no --params given: generating INSECURE test parameters in-process (seed {})",
                args.setup_seed
            );
            let mut rng = ChaCha8Rng::seed_from_u64(args.setup_seed);
            generate_params(args.circuit, &mut rng)
                .with_step(|| format!("setup for {}", args.circuit))?
        }
    };
    println!(
        "params: {:.1} MiB of points, ready in {:.3} s",
        srs.size_bytes() as f64 / (1024.0 * 1024.0),
        t.elapsed().as_secs_f64()
    );
    Ok(srs)
}

/// Runs `cuzk prove`: prints each run's phase timings and proof, and fails if a proof does
/// not verify.
pub fn run(args: &ProveOptions) -> Result<()> {
    println!("circuit: {}", args.circuit);
    let srs = load_params(args)?;
    let pvk = PreparedVerifyingKey::from(srs.vk());
    let prover = CpuProver::new();
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let hint = args.circuit.approx_constraints();
    for run in 0..args.repeat.max(1) {
        let t = Instant::now();
        let recorder =
            Recorder::with_hints(RecorderMode::Full, hint, srs.vk().ic.len(), srs.l().len());
        let syn = Recorder::synthesize_into(recorder, args.circuit).step("synthesis")?;
        let t_syn = t.elapsed();
        let (n, aux, heap) = (syn.num_constraints, syn.num_aux(), syn.heap_bytes());
        let (r, s) = random_blinding(&mut rng);
        let t = Instant::now();
        let (pending, ts) = prover.start_timed(&srs, syn, r, s).step("prove (start)")?;
        let t_start = t.elapsed();
        let (proof, tf) = prover.finish_timed(&srs, pending).step("prove (finish)")?;
        let t_total = t.elapsed();
        let ok = verify_proof(&pvk, &proof, &args.circuit.public_inputs()).step("verify")?;
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
            return Err(invalid!("the proof does not verify"));
        }
    }
    if let Some(p) = peak_rss_bytes() {
        println!("peak RSS: {:.1} MiB", p as f64 / (1024.0 * 1024.0));
    }
    Ok(())
}

fn hex_string(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
