//! CPU prover benchmark: our prover against bellperson 0.26's CPU prover on the same synthetic
//! circuit and the same SRS, for several sizes in one run; prints both times, the ratio,
//! whether the proof bytes are identical, and our peak RSS against the bytes the inputs need.
//!
//! `cargo run --release -p cuzk-groth16 --example bench_cpu -- --sizes 14,16,18 [--reps 2]
//!  [--circuit synthetic:inputs=4,...]` — `2^k` is the evaluation-domain size: the circuit gets
//! `2^k − inputs − 1` constraints so that, with bellperson's input rows, the domain is exactly
//! `2^k`.
//!
//! Per size, the parent runs the (insecure) setup and writes the parameters to a temporary
//! `.params` file; a fresh child process (this binary with `--child`) reads them, resets its
//! peak-RSS counter, then synthesizes and proves, so its VmHWM is the prover's own peak (SRS +
//! recorder vectors + transients + process baseline) without the setup's leftovers. The parent
//! then times bellperson's `create_proof` with the same r, s and compares the bytes.
//!
//! Columns: `ours_syn`/`ours_prv` (s, best of reps), `bellp_tot` (s, synthesis included, best of
//! reps), `ratio` = (ours_syn + ours_prv) / bellp_tot, `peak_MiB` (child VmHWM during the first
//! run), `need_MiB` = SRS points + recorder vectors (assignment, a/b/c, densities), `x` =
//! peak/need, `same` = identical proof bytes.
// The bellperson conversions the parameter tests use.
#[path = "../tests/params_support/mod.rs"]
mod params_support;

use bellperson::groth16 as bp;
use blstrs::Scalar;
use cuzk_groth16::{
    params::{read_params, write_params, ReadOptions},
    prover::{random_blinding, CpuProver},
    recorder::RecorderMode,
    setup::generate_params,
    synthetic::SyntheticSpec,
};
use params_support::to_bellperson;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::{path::Path, process::Command, time::Instant};

/// A field of /proc/self/status in bytes (`VmHWM:`, `VmRSS:`).
fn status_bytes(key: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Resets VmHWM to the current RSS (Linux `clear_refs` mode 5).
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

fn fail(msg: String) -> ! {
    eprintln!("{msg}");
    std::process::exit(1)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The blinding factors both provers use for size `k`.
fn blinding(k: u32) -> (Scalar, Scalar) {
    random_blinding(&mut ChaCha8Rng::seed_from_u64(5000 + u64::from(k)))
}

/// Child: read the parameters, then synthesize and prove `reps` times; print one line.
fn child(path: &Path, spec: SyntheticSpec, k: u32, reps: usize) {
    let opts = ReadOptions {
        check_points: false,
        ..ReadOptions::default()
    };
    let (srs, stats) =
        read_params(path, &opts).unwrap_or_else(|e| fail(format!("read params: {e}")));
    eprintln!(
        "2^{k}: child read {:.0} MiB of params at {:.2} GB/s",
        mib(stats.bytes),
        stats.gbps()
    );
    let prover = CpuProver::new();
    let (r, s) = blinding(k);
    let (mut best_syn, mut best_prv) = (f64::MAX, f64::MAX);
    let (mut peak, mut need, mut rss0) = (0u64, 0u64, 0u64);
    let mut proof_hex = String::new();
    for rep in 0..reps {
        let measured = rep == 0 && reset_peak();
        if measured {
            rss0 = status_bytes("VmRSS:");
        }
        let t = Instant::now();
        let syn = spec
            .synthesize(RecorderMode::Full)
            .unwrap_or_else(|e| fail(format!("synthesis: {e}")));
        let t_syn = t.elapsed().as_secs_f64();
        need = srs.size_bytes() + syn.heap_bytes() as u64;
        let t = Instant::now();
        let (proof, timings) = prover
            .prove_timed(&srs, syn, r, s)
            .unwrap_or_else(|e| fail(format!("prove: {e}")));
        let t_prv = t.elapsed().as_secs_f64();
        if measured {
            peak = status_bytes("VmHWM:");
        }
        eprintln!("2^{k}: ours synth {:.1} ms, {timings}", t_syn * 1e3);
        if t_syn + t_prv < best_syn + best_prv {
            (best_syn, best_prv) = (t_syn, t_prv);
        }
        proof_hex = hex(&proof.to_bytes());
    }
    println!(
        "RESULT {best_syn} {best_prv} {peak} {need} {rss0} {} {proof_hex}",
        srs.size_bytes()
    );
}

fn main() {
    let mut sizes = vec![14u32, 16, 18];
    let mut reps = 1usize;
    let mut base = SyntheticSpec::default();
    let mut child_path: Option<String> = None;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let val = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--sizes" => {
                sizes = val
                    .split(',')
                    .filter_map(|s| s.trim().parse().ok())
                    .collect()
            }
            "--reps" => reps = val.parse().unwrap_or(1).max(1),
            "--circuit" => {
                base = val
                    .parse()
                    .unwrap_or_else(|e| fail(format!("bad --circuit: {e}")))
            }
            "--child" => child_path = Some(val),
            other => fail(format!(
                "unknown argument {other}; usage: --sizes 14,16,18 [--reps N] [--circuit synthetic:...]"
            )),
        }
        i += 2;
    }
    let spec_for = |k: u32| SyntheticSpec {
        constraints: (1usize << k).saturating_sub(base.inputs + 1),
        ..base
    };
    if let Some(path) = child_path {
        let k = sizes.first().copied().unwrap_or(14);
        child(Path::new(&path), spec_for(k), k, reps);
        return;
    }

    println!(
        "threads: rayon {}, cpus {}; circuit shape {}",
        rayon::current_num_threads(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        base
    );
    println!(
        "{:>4} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>9} {:>9} {:>6} {:>5}",
        "log2",
        "constr",
        "ours_syn",
        "ours_prv",
        "ours_tot",
        "bellp_tot",
        "ratio",
        "peak_MiB",
        "need_MiB",
        "x",
        "same"
    );
    let dir = tempfile::tempdir().unwrap_or_else(|e| fail(format!("tempdir: {e}")));
    let exe = std::env::current_exe().unwrap_or_else(|e| fail(format!("current_exe: {e}")));
    for &k in &sizes {
        let spec = spec_for(k);
        let circuit = spec.circuit();
        let mut rng = ChaCha8Rng::seed_from_u64(1000 + u64::from(k));
        let t = Instant::now();
        let srs = generate_params(circuit, &mut rng)
            .unwrap_or_else(|e| fail(format!("setup at 2^{k}: {e}")));
        let path = dir.path().join(format!("bench-{k}.params"));
        write_params(&path, &srs).unwrap_or_else(|e| fail(format!("write params: {e}")));
        eprintln!(
            "2^{k}: setup + write {:.1} s ({:.0} MiB of points)",
            t.elapsed().as_secs_f64(),
            mib(srs.size_bytes())
        );

        // Ours, in a fresh process.
        let out = Command::new(&exe)
            .args(["--child", &path.to_string_lossy()])
            .args(["--sizes", &k.to_string()])
            .args(["--reps", &reps.to_string()])
            .args(["--circuit", &base.to_string()])
            .stderr(std::process::Stdio::inherit())
            .output()
            .unwrap_or_else(|e| fail(format!("spawn child: {e}")));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let line = stdout
            .lines()
            .find(|l| l.starts_with("RESULT "))
            .unwrap_or_else(|| fail(format!("child failed: {stdout}")));
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 8 {
            fail(format!("bad child line: {line}"));
        }
        let num = |i: usize| f[i].parse::<f64>().unwrap_or(f64::NAN);
        let (syn, prv, peak, need) = (num(1), num(2), num(3), num(4));
        let ours_hex = f[7].to_string();
        let _ = std::fs::remove_file(&path);

        // bellperson, here.
        let params = to_bellperson(&srs);
        drop(srs);
        let (r, s) = blinding(k);
        let mut best_bp = f64::MAX;
        let mut same = true;
        for _ in 0..reps {
            let t = Instant::now();
            let p = bp::create_proof(circuit, &params, r, s)
                .unwrap_or_else(|e| fail(format!("bellperson: {e}")));
            let el = t.elapsed().as_secs_f64();
            eprintln!("2^{k}: bellperson {:.1} ms", el * 1e3);
            best_bp = best_bp.min(el);
            let mut b = Vec::new();
            same &= p.write(&mut b).is_ok() && hex(&b) == ours_hex;
        }
        let ours = syn + prv;
        println!(
            "{:>4} {:>9} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>7.3} {:>9.1} {:>9.1} {:>6.2} {:>5}",
            k,
            spec.constraints,
            syn,
            prv,
            ours,
            best_bp,
            ours / best_bp,
            peak / 1048576.0,
            need / 1048576.0,
            peak / need,
            same
        );
    }
}
