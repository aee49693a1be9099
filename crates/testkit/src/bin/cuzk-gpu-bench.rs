//! `cuzk-gpu-bench`: per-partition timings of the CUDA backend on PoRep-shaped partitions with
//! TIMING-ONLY parameters (proofs DO NOT VERIFY), optionally against the upstream
//! `supraseal-c2` prover, whose times come from `crates/cuda/supraseal-bench` run on the same
//! (deterministic) parameters and partitions.
//!
//! ```text
//! cuzk-gpu-bench devices
//! cuzk-gpu-bench bench --log-n 20,22,24,26 [--runs 3] [--pipeline 6] [--devices 0,1] [--workers 2,3]
//!                      [--supraseal-times 24:3.1,26:9.8]   # medians from supraseal-bench
//!                      [--tiers resident,streamed] [--stream] [--vram-budget GIB] [--chunk BASES]
//!                      [--no-page-lock] [--late-batch-additions] [--sppark-msm] [--sppark-h-msm]
//! ```
//!
//! SRS tiers: `resident` keeps the bases in VRAM; `streamed` (or `--stream`, short for
//! `--tiers streamed`) streams them from page-locked host memory per proof. Both tiers run on
//! the same parameters and partitions, one after the other. `--vram-budget` sets the device
//! budget (GiB; an SRS that does not fit streams), `--chunk` the bases per streamed chunk,
//! `--no-page-lock` streams through pinned staging copies instead of page-locking the SRS,
//! `--late-batch-additions` runs each query's batch addition right before its Pippenger
//! (`CudaOptions::early_batch_additions` off: the reference), `--sppark-msm` runs sppark's
//! own Pippenger, which sums each MSM's windows on the host inside the GPU phase
//! (`CudaOptions::queued_msm` off: the reference), `--sppark-h-msm` the H query's MSM by
//! sppark's kernels, queued, instead of the sorted Pippenger (`CudaOptions::sorted_msm` off).
//!
//! ```text
//! cuzk-gpu-bench gen-params --log-n 24 --out FILE   # TIMING-ONLY parameters
//! cuzk-gpu-bench msm --log-n 20,24,26,27 [--runs 3] [--bases-log 20] [--scalars random,mixed]
//! ```
//!
//! `msm` times one dense G1 MSM over 2^k − 1 points (the H query's count) by sppark's
//! `msm_t`, by the queued MSM (sppark's kernels) and by the sorted one (ours), in the same
//! run on the same inputs, and checks that the three results are equal. The points are
//! 2^`bases-log` distinct ones (P0 + i·Q, made on the host) tiled; `random` scalars are the
//! H polynomial's shape, `mixed` adds runs of 0, 1 and −1.
//!
//! ```text
//! cuzk-gpu-bench ntt --log-n 24,26,27 [--runs 3]
//! ```
//!
//! `ntt` times the H polynomial over a domain of 2^k (random a, b, c) by the six NTTs proofs
//! use and by the textbook seven, in the same run on the same inputs (device time, inputs and
//! H in VRAM), and checks that the two are equal.
use cuzk_cuda::{CudaOptions, CudaProver, PhaseTimings};
use cuzk_groth16::prover::random_blinding;
use cuzk_groth16::{ProverBackend, Scalar, Srs, Synthesized};
use cuzk_testkit::timing::{self, PartitionShape, NOT_VERIFYING};

/// What one pipelined run returns: wall seconds, interlock-held ms per device, proof bytes,
/// and each proof's phases (with the finish time in `total_ms` added).
type PipeOut = (f64, Vec<f64>, Vec<[u8; 192]>, Vec<PhaseTimings>);
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::sync::{Arc, Mutex};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => {}
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

fn opt<'a>(args: &'a [String], key: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == key)
        .and_then(|i| args.get(i + 1))
        .map(|s| s.as_str())
}

fn list(s: &str) -> Result<Vec<usize>, String> {
    s.split(',')
        .map(|x| x.trim().parse::<usize>().map_err(|e| format!("{x}: {e}")))
        .collect()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return f64::NAN;
    }
    v[v.len() / 2]
}

fn run(args: &[String]) -> Result<(), String> {
    match args.first().map(|s| s.as_str()) {
        Some("devices") => {
            for d in cuzk_cuda::devices() {
                println!(
                    "{}: {} ({:.1} GiB total, {:.1} GiB free)",
                    d.ordinal,
                    d.name,
                    d.vram_total as f64 / (1u64 << 30) as f64,
                    d.vram_free as f64 / (1u64 << 30) as f64
                );
            }
            Ok(())
        }
        Some("gen-params") => {
            let log_n: u32 = opt(args, "--log-n").unwrap_or("20").parse().map_err(|e| format!("{e}"))?;
            let out = opt(args, "--out").map(String::from).unwrap_or_else(|| timing::timing_only_file_name(log_n));
            eprintln!("WARNING: {NOT_VERIFYING}");
            let t = Instant::now();
            let srs = timing::timing_only_srs(&PartitionShape::porep_like(log_n));
            cuzk_groth16::params::write_params(std::path::Path::new(&out), &srs).map_err(|e| e.to_string())?;
            eprintln!("wrote {out} in {:.1} s", t.elapsed().as_secs_f64());
            Ok(())
        }
        Some("bench") => bench(args),
        Some("msm") => msm(args),
        Some("ntt") => ntt(args),
        _ => Err("usage: cuzk-gpu-bench devices | bench --log-n 20,22 [--runs 3] [--pipeline 6] [--devices 0] [--workers 2,3] [--supraseal-times 24:3.1,26:9.8] | gen-params --log-n N --out FILE | msm --log-n 20,24,27 [--runs 3] [--bases-log 20] [--scalars random,mixed] | ntt --log-n 24,27 [--runs 3]".into()),
    }
}

/// `cuzk-gpu-bench msm`: see the module's documentation.
fn msm(args: &[String]) -> Result<(), String> {
    use blstrs::{G1Affine, G1Projective};
    use ff::Field;
    use group::{Curve, Group};
    use rayon::prelude::*;
    let logs = list(opt(args, "--log-n").unwrap_or("20,24,26,27"))?;
    let runs: u32 = opt(args, "--runs")
        .unwrap_or("3")
        .parse()
        .map_err(|e| format!("{e}"))?;
    let lg_bases: u32 = opt(args, "--bases-log")
        .unwrap_or("20")
        .parse()
        .map_err(|e| format!("{e}"))?;
    let kinds: Vec<&str> = opt(args, "--scalars")
        .unwrap_or("random")
        .split(',')
        .collect();
    let gpu = CudaProver::new(0).map_err(|e| e.to_string())?;
    let t = Instant::now();
    let m = 1usize << lg_bases;
    let mut rng = ChaCha8Rng::seed_from_u64(30);
    let (p0, q) = (
        G1Projective::random(&mut rng),
        G1Projective::random(&mut rng),
    );
    let chunk = 1 << 12;
    let proj: Vec<G1Projective> = (0..m / chunk)
        .into_par_iter()
        .flat_map_iter(|j| {
            let mut p = p0 + q * Scalar::from((j * chunk) as u64);
            (0..chunk).map(move |_| {
                let here = p;
                p += q;
                here
            })
        })
        .collect();
    let mut bases = vec![G1Affine::default(); m];
    G1Projective::batch_normalize(&proj, &mut bases);
    eprintln!("{m} bases made in {:.1} s", t.elapsed().as_secs_f64());
    println!("dense G1 MSM, n = 2^k − 1 points ({m} distinct bases tiled), median of {runs} runs after a warm-up");
    println!("| k | scalars | sppark msm_t (wall) | queued (device / wall) | sorted (device / wall) | sppark msm_t ÷ sorted device | queued device ÷ sorted device | equal |");
    println!("|---|---|---|---|---|---|---|---|");
    for &k in &logs {
        let n = (1usize << k) - 1;
        for &kind in &kinds {
            let scalars: Vec<Scalar> = (0..n.div_ceil(chunk))
                .into_par_iter()
                .flat_map_iter(|j| {
                    let mut r = ChaCha8Rng::seed_from_u64(1 << 40 | j as u64);
                    let len = chunk.min(n - j * chunk);
                    (0..len)
                        .map(|i| match (kind, (j * chunk + i) % 97) {
                            ("mixed", 0) => Scalar::ZERO,
                            ("mixed", 1 | 2) => Scalar::ONE,
                            ("mixed", 3) => -Scalar::ONE,
                            _ => Scalar::random(&mut r),
                        })
                        .collect::<Vec<_>>()
                })
                .collect();
            let r = gpu
                .msm_time_g1(&bases, &scalars, runs)
                .map_err(|e| e.to_string())?;
            let [a, b, c] = r.points;
            let equal = a == b && b == c;
            println!(
                "| {k} | {kind} | {:.1} ms | {:.1} / {:.1} ms | {:.1} / {:.1} ms | **{:.2}×** | {:.2}× | {} |",
                r.wall_ms[0], r.device_ms[1], r.wall_ms[1], r.device_ms[2], r.wall_ms[2],
                r.wall_ms[0] / r.device_ms[2], r.device_ms[1] / r.device_ms[2],
                if equal { "yes" } else { "NO" }
            );
            if !equal {
                return Err(format!("2^{k} {kind}: the three MSMs differ"));
            }
        }
    }
    Ok(())
}

/// `cuzk-gpu-bench ntt`: see the module's documentation.
fn ntt(args: &[String]) -> Result<(), String> {
    use ff::Field;
    use rayon::prelude::*;
    let logs = list(opt(args, "--log-n").unwrap_or("24,26,27"))?;
    let runs: u32 = opt(args, "--runs")
        .unwrap_or("3")
        .parse()
        .map_err(|e| format!("{e}"))?;
    let gpu = CudaProver::new(0).map_err(|e| e.to_string())?;
    println!("the H polynomial over 2^k (random a, b, c), device time, median of {runs} runs after a warm-up");
    println!("| k | seven NTTs (reference) | six NTTs (proofs) | six ÷ seven | equal |");
    println!("|---|---|---|---|---|");
    for &k in &logs {
        let n = 1usize << k;
        let chunk = 1 << 16;
        let v = |seed: u64| -> Vec<Scalar> {
            (0..n.div_ceil(chunk))
                .into_par_iter()
                .flat_map_iter(|j| {
                    let mut r = ChaCha8Rng::seed_from_u64(seed << 32 | j as u64);
                    (0..chunk.min(n - j * chunk)).map(move |_| Scalar::random(&mut r))
                })
                .collect()
        };
        let (a, b, c) = (v(1), v(2), v(3));
        let h = gpu
            .h_time(k as u32, &a, &b, &c, runs)
            .map_err(|e| e.to_string())?;
        let equal = h.six == h.seven;
        println!(
            "| {k} | {:.1} ms | {:.1} ms | **{:.3}×** | {} |",
            h.device_ms[1],
            h.device_ms[0],
            h.device_ms[0] / h.device_ms[1],
            if equal { "yes" } else { "NO" }
        );
        if !equal {
            return Err(format!("2^{k}: six NTTs differ from seven"));
        }
    }
    Ok(())
}

fn rs(i: u64) -> (Scalar, Scalar) {
    let mut rng = ChaCha8Rng::seed_from_u64(1000 + i);
    random_blinding(&mut rng)
}

fn fmt_phases(t: &PhaseTimings) -> String {
    format!(
        "{} | plan {:.0} | upload {:.0} | free {:.0} | ntt_h {:.0} | msm_h {:.0} | msm_l {:.0} | msm_a {:.0} | msm_b_g1 {:.0} | msm_b_g2 {:.0} | exclusive {:.0} | host sums {:.0} | total {:.0} ms",
        if t.streamed { "streamed" } else { "resident" },
        t.plan_ms, t.upload_ms, t.free_ms, t.ntt_h_ms, t.msm_h_ms, t.msm_l_ms, t.msm_a_ms, t.msm_b_g1_ms, t.msm_b_g2_ms, t.exclusive_ms, t.host_sums_ms, t.total_ms
    )
}

/// Feeds `parts` to `workers_per_dev` threads on each device; returns (wall s, busy ms per device).
fn pipeline(
    provers: &[CudaProver],
    workers_per_dev: usize,
    srs: &Srs,
    parts: Vec<Synthesized>,
) -> Result<PipeOut, String> {
    let n = parts.len();
    let phases = Arc::new(Mutex::new(Vec::new()));
    let queue = Arc::new(Mutex::new(
        parts.into_iter().enumerate().collect::<Vec<_>>(),
    ));
    let results = Arc::new(Mutex::new(vec![None; n]));
    let busy0: Vec<f64> = provers.iter().map(|p| p.busy_ms()).collect();
    let t = Instant::now();
    std::thread::scope(|sc| {
        let mut hs = Vec::new();
        for p in provers {
            for _ in 0..workers_per_dev {
                let (queue, results, phases) = (queue.clone(), results.clone(), phases.clone());
                hs.push(sc.spawn(move || -> Result<(), String> {
                    loop {
                        let job = queue.lock().map_err(|e| e.to_string())?.pop();
                        let Some((i, part)) = job else { return Ok(()) };
                        let (r, s) = rs(i as u64);
                        let (pending, mut ph) =
                            p.start_timed(srs, part, r, s).map_err(|e| e.to_string())?;
                        let tf = Instant::now();
                        let proof = p.finish(srs, pending).map_err(|e| e.to_string())?;
                        ph.total_ms += tf.elapsed().as_secs_f64() * 1e3;
                        results.lock().map_err(|e| e.to_string())?[i] = Some(proof.to_bytes());
                        phases.lock().map_err(|e| e.to_string())?.push(ph);
                    }
                }));
            }
        }
        for h in hs {
            h.join().map_err(|_| "worker panicked".to_string())??;
        }
        Ok::<(), String>(())
    })?;
    let wall = t.elapsed().as_secs_f64();
    let busy: Vec<f64> = provers
        .iter()
        .zip(&busy0)
        .map(|(p, b)| p.busy_ms() - b)
        .collect();
    let res = Arc::try_unwrap(results)
        .map_err(|_| "results still shared")?
        .into_inner()
        .map_err(|e| e.to_string())?;
    let res: Option<Vec<[u8; 192]>> = res.into_iter().collect();
    let phases = Arc::try_unwrap(phases)
        .map_err(|_| "phases still shared")?
        .into_inner()
        .map_err(|e| e.to_string())?;
    Ok((wall, busy, res.ok_or("missing proof")?, phases))
}

/// Medians of each phase over pipelined proofs.
fn median_phases(v: &[PhaseTimings]) -> String {
    let m = |f: &dyn Fn(&PhaseTimings) -> f64| median(&mut v.iter().map(f).collect::<Vec<_>>());
    format!(
        "median per proof: plan {:.0} | upload {:.0} | free {:.0} | wait_lock {:.0} | exclusive {:.0} | start+finish {:.0} ms",
        m(&|t| t.plan_ms),
        m(&|t| t.upload_ms),
        m(&|t| t.free_ms),
        m(&|t| t.wait_lock_ms),
        m(&|t| t.exclusive_ms),
        m(&|t| t.total_ms)
    )
}

fn bench(args: &[String]) -> Result<(), String> {
    let sizes = list(opt(args, "--log-n").unwrap_or("20"))?;
    let runs = opt(args, "--runs")
        .unwrap_or("3")
        .parse::<usize>()
        .map_err(|e| e.to_string())?;
    let pipe_n = opt(args, "--pipeline")
        .unwrap_or("6")
        .parse::<usize>()
        .map_err(|e| e.to_string())?;
    let devs = list(opt(args, "--devices").unwrap_or("0"))?;
    // Workers per device; the first count fills the table, the others are printed only.
    let workers = list(opt(args, "--workers").unwrap_or("2"))?;
    let supra_times: Vec<(u32, f64)> = opt(args, "--supraseal-times")
        .unwrap_or("")
        .split(',')
        .filter(|x| !x.is_empty())
        .map(|x| {
            let (n, t) = x.split_once(':').ok_or(format!("{x}: want LOG:SECONDS"))?;
            Ok((
                n.parse().map_err(|e| format!("{e}"))?,
                t.parse().map_err(|e| format!("{e}"))?,
            ))
        })
        .collect::<Result<_, String>>()?;
    eprintln!("WARNING: {NOT_VERIFYING}");
    for d in cuzk_cuda::devices() {
        eprintln!(
            "device {}: {} ({} MiB free)",
            d.ordinal,
            d.name,
            d.vram_free >> 20
        );
    }
    let tiers: Vec<bool> = if args.iter().any(|a| a == "--stream") {
        vec![true]
    } else {
        opt(args, "--tiers")
            .unwrap_or("resident")
            .split(',')
            .map(|t| match t.trim() {
                "resident" => Ok(false),
                "streamed" => Ok(true),
                x => Err(format!("--tiers: {x}: want resident or streamed")),
            })
            .collect::<Result<_, _>>()?
    };
    let vram_budget = opt(args, "--vram-budget")
        .map(|g| g.parse::<f64>().map(|g| (g * (1u64 << 30) as f64) as u64))
        .transpose()
        .map_err(|e| format!("--vram-budget: {e}"))?;
    let chunk = opt(args, "--chunk")
        .map(|c| c.parse::<usize>())
        .transpose()
        .map_err(|e| format!("--chunk: {e}"))?
        .unwrap_or(cuzk_cuda::DEFAULT_STREAM_CHUNK_BASES);
    let mut table = Vec::new();
    for &log_n in &sizes {
        let log_n = log_n as u32;
        let shape = PartitionShape::porep_like(log_n);
        let t = Instant::now();
        let srs = timing::timing_only_srs(&shape);
        eprintln!(
            "[2^{log_n}] timing-only SRS in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        let t = Instant::now();
        let base = [
            timing::porep_like_partition(&shape, 1),
            timing::porep_like_partition(&shape, 2),
        ];
        eprintln!(
            "[2^{log_n}] partitions in {:.1} s",
            t.elapsed().as_secs_f64()
        );

        for &streamed in &tiers {
            let tier = if streamed { "streamed" } else { "resident" };
            let provers: Vec<CudaProver> = devs
                .iter()
                .map(|&d| {
                    CudaProver::with_options(
                        d,
                        CudaOptions {
                            vram_budget,
                            stream_chunk_bases: chunk,
                            force_streaming: streamed,
                            page_lock_host: !args.iter().any(|a| a == "--no-page-lock"),
                            early_batch_additions: !args
                                .iter()
                                .any(|a| a == "--late-batch-additions"),
                            queued_msm: !args.iter().any(|a| a == "--sppark-msm"),
                            sorted_msm: !args.iter().any(|a| a == "--sppark-h-msm"),
                        },
                    )
                })
                .collect::<Result<_, _>>()
                .map_err(|e| e.to_string())?;
            for p in &provers {
                p.trim();
            }
            let p0 = &provers[0];
            // One partition alone: warm-up (SRS upload) then `runs` timed proofs.
            let mut single = Vec::new();
            let mut phases = Vec::new();
            let mut ours_bytes = Vec::new();
            for i in 0..=runs {
                let part = base[i % 2].clone();
                let (r, s) = rs(i as u64 % 2);
                let t = Instant::now();
                let (pending, ph) = p0
                    .start_timed(&srs, part, r, s)
                    .map_err(|e| e.to_string())?;
                let proof = p0.finish(&srs, pending).map_err(|e| e.to_string())?;
                let dt = t.elapsed().as_secs_f64();
                eprintln!(
                    "[2^{log_n}] ours single #{i}: {dt:.3} s  ({})",
                    fmt_phases(&ph)
                );
                if i > 0 {
                    single.push(dt);
                    phases.push(ph);
                }
                if i < 2 {
                    ours_bytes.push(proof.to_bytes());
                }
            }
            let single_med = median(&mut single.clone());
            let ph_med = {
                let mut idx: Vec<usize> = (0..single.len()).collect();
                idx.sort_by(|a, b| single[*a].total_cmp(&single[*b]));
                phases[idx[idx.len() / 2]]
            };

            // Steady state: each device's 2 workers fed back to back. Warm-up first: SRS upload
            // on every device and both worker contexts per device.
            let warm: Vec<Synthesized> = (0..2 * provers.len())
                .map(|i| base[i % 2].clone())
                .collect();
            pipeline(
                &provers,
                workers.iter().copied().max().unwrap_or(2),
                &srs,
                warm,
            )?;
            let mut pipe_res = Vec::new();
            for (wi, &nw) in workers.iter().enumerate() {
                for ndev in [1usize, provers.len()] {
                    if ndev > 1 && pipe_res.len() == 1 && provers.len() == 1 {
                        break;
                    }
                    let n = pipe_n * ndev;
                    let parts: Vec<Synthesized> = (0..n).map(|i| base[i % 2].clone()).collect();
                    let (wall, busy, bytes, ph) = pipeline(&provers[..ndev], nw, &srs, parts)?;
                    for (i, b) in bytes.iter().enumerate() {
                        if i < 2 && *b != ours_bytes[i % 2] {
                            return Err(format!(
                                "2^{log_n}: pipelined proof {i} differs from the single run"
                            ));
                        }
                    }
                    let per = wall / n as f64;
                    let fr: Vec<String> = busy
                        .iter()
                        .map(|b| format!("{:.0}%", 100.0 * b / 1e3 / wall))
                        .collect();
                    eprintln!(
                    "[2^{log_n}] ours pipelined ({ndev} GPU x {nw} workers, {n} partitions): {wall:.2} s, {per:.3} s/partition, GPU busy {}; {}",
                    fr.join(" "),
                    median_phases(&ph)
                );
                    if wi == 0 {
                        pipe_res.push((ndev, per, fr.join(" ")));
                    }
                    if provers.len() == 1 {
                        break;
                    }
                }
            }

            // supraseal-c2 runs in its own binary (its sppark kernels clash with ours at link
            // time); its times are passed in with --supraseal-times.
            let supra = supra_times
                .iter()
                .find(|(n, _)| *n == log_n)
                .map(|(_, t)| *t);
            for (i, b) in ours_bytes.iter().enumerate() {
                println!("proof 2^{log_n} #{i}: {}", hex(b));
            }
            let ratio = supra.map(|s| single_med / s);
            let pipe1 = pipe_res[0].1;
            table.push(format!(
                "| 2^{log_n} {tier} | {single_med:.3} | {pipe1:.3} ({}) | {} | {} | {} | {} |",
                pipe_res[0].2,
                supra.map(|s| format!("{s:.3}")).unwrap_or("-".into()),
                ratio.map(|r| format!("{r:.2}")).unwrap_or("-".into()),
                supra
                    .map(|s| format!("{:.2}", pipe1 / s))
                    .unwrap_or("-".into()),
                pipe_res
                    .get(1)
                    .map(|(n, p, f)| format!(
                        "{n} GPUs: {p:.3} s ({f}); throughput x{:.2}",
                        pipe1 / p
                    ))
                    .unwrap_or("-".into()),
            ));
            table.push(format!(
                "|   phases 2^{log_n} {tier} (median single run) | {} |",
                fmt_phases(&ph_med)
            ));
        }
        drop(srs);
    }
    println!("| size | ours single (s) | ours 2 workers (s/partition, GPU busy) | supraseal-c2 (s) | single ratio | 2-worker ratio | multi-GPU |");
    println!("|---|---|---|---|---|---|---|");
    for l in table {
        println!("{l}");
    }
    Ok(())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
