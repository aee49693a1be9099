//! `cuzk gen`: generators for test material (`gen params`: INSECURE test parameters).
use anyhow::Context;
use clap::{Args, Subcommand};
use cuzk_groth16::compiled::CompiledCircuit;
use cuzk_groth16::params::write_vk;
use cuzk_groth16::setup::{write_params_streamed, CpuPoints, PointMaker};
use cuzk_groth16::synthetic::CircuitSpec;
use cuzk_testkit::setup::write_insecure_params;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `cuzk gen`.
#[derive(Args)]
pub struct GenArgs {
    /// What to generate.
    #[command(subcommand)]
    pub cmd: GenCommand,
}

/// The `cuzk gen` subcommands.
#[derive(Subcommand)]
pub enum GenCommand {
    /// Generate INSECURE Groth16 test parameters, streamed to disk: for a real Filecoin
    /// circuit (`porep-32g`, `snap-32g`, `wpost-32g`, `winning-32g`, `porep-2k`, ...) under
    /// Filecoin's file names in the directory `--out` (with `.vk`, `.meta` and a note); for a
    /// synthetic circuit into the file `--out` and its `.vk` sibling. The toxic waste comes from
    /// the seed: anyone who knows it can forge proofs. For tests and self-tests only.
    Params(ParamsArgs),
    /// Seal a small sector with filecoin-proofs on the CPU and write one request per proof
    /// kind (PoRep C1 envelope, WinningPoSt, WindowPoSt, SnapDeals), a `manifest.json`, and
    /// INSECURE parameters for their circuits under Filecoin's file names (use the directory
    /// as `FIL_PROOFS_PARAMETER_CACHE`). Deterministic from the seed; reused when a manifest
    /// for the same seed and size is already there. With `--timing-only` (32GiB, 64GiB):
    /// requests of the real shapes with random values instead, no sealing, no parameters;
    /// proofs made from them do not verify. With `--synthetic-sector` (any size): requests of
    /// a sparse synthetic sector that the real circuits accept, in seconds, no sealing, no
    /// parameters: their proofs verify, but prove a sector that does not exist.
    Testdata(TestdataArgs),
    /// Write TIMING-ONLY parameters for a real Filecoin circuit (`porep-32g`, `snap-32g`,
    /// `wpost-32g`, `winning-32g`, ...) under Filecoin's file names: the exact section counts
    /// of its blank circuit, successive multiples of the generators for points. For
    /// benchmarks: proofs made with them DO NOT VERIFY, and `cuzk daemon` refuses them unless
    /// `[allow] timing_only = true`.
    TimingParams(TimingParamsArgs),
    /// Compile a Filecoin circuit's constraint matrices into the compiled cache that `cuzk
    /// daemon` opens at start instead of compiling (`[srs] compiled_cache`), keyed by its
    /// parameter file. For a box whose memory cannot hold a compile (a circuit walked whole:
    /// SnapDeals, the PoSts; PoRep is compiled from one challenge straight into the file,
    /// about two challenges' matrices in memory): run it once where it can, with the same
    /// parameter file, and copy the cache over (or share the directory). A file already there is checked whole
    /// (its digest, read a window at a time) and kept when intact; a stale or damaged one is
    /// compiled again.
    Compiled(CompiledArgs),
    /// Write an INSECURE SnarkPack aggregation SRS (bellperson's fake setup from the seed:
    /// whoever knows it can forge aggregates) under Filecoin's file name
    /// (`v28-fil-inner-product-v1.srs`) in `--out`, big enough for 128 proofs: what a
    /// NI-PoRep job's aggregation reads from the parameter directory, for tests and
    /// benchmarks where the ceremony's file is not at hand. Never for proofs that matter.
    AggregationSrs(AggregationSrsArgs),
}

/// Arguments of `cuzk gen aggregation-srs`.
#[derive(Args)]
pub struct AggregationSrsArgs {
    /// The parameter directory to write into.
    #[arg(long)]
    pub out: PathBuf,
    /// Seed of the toxic waste.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// Arguments of `cuzk gen compiled`.
#[derive(Args)]
pub struct CompiledArgs {
    /// The circuit id (`porep-32g`, `snap-32g`, `wpost-32g`, `winning-32g`, `porep-2k`, ...).
    #[arg(long)]
    pub circuit: String,
    /// The parameter directory (the daemon's `srs.params_dir`): the circuit's parameter file
    /// is the cache's key.
    #[arg(long)]
    pub params_dir: PathBuf,
    /// The cache directory (the daemon's `srs.compiled_cache_dir`); default
    /// `<params_dir>/cuzk-compiled`, as the daemon's.
    #[arg(long)]
    pub cache_dir: Option<PathBuf>,
}

/// Arguments of `cuzk gen timing-params`.
#[derive(Args)]
pub struct TimingParamsArgs {
    /// The circuit id (`porep-32g`, `snap-32g`, `wpost-32g`, `winning-32g`, `porep-2k`, ...).
    #[arg(long)]
    pub circuit: String,
    /// Output directory (use it as the daemon's `srs.params_dir`); the files inside carry
    /// Filecoin's names, so a note file beside them says what they are.
    #[arg(long)]
    pub out: PathBuf,
    /// Print the section counts and stop (no points, no files).
    #[arg(long)]
    pub count_only: bool,
}

/// Arguments of `cuzk gen testdata`.
#[derive(Args)]
pub struct TestdataArgs {
    /// Sector size: 2KiB (8MiB and up work but their parameters take far longer).
    #[arg(long, default_value = "2KiB")]
    pub sector_size: String,
    /// Output directory.
    #[arg(long)]
    pub out: PathBuf,
    /// Seed of the sector data, challenges and the parameters' toxic waste.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Write the requests only, no parameters.
    #[arg(long)]
    pub no_params: bool,
    /// Write TIMING-ONLY requests of the real 32GiB or 64GiB shapes instead (random vanilla
    /// proofs, no sealing, no parameters): they drive full-size synthesis, but proofs made
    /// from them DO NOT VERIFY.
    #[arg(long, conflicts_with = "synthetic_sector")]
    pub timing_only: bool,
    /// With `--timing-only`: also a TIMING-ONLY NI-PoRep request (`porep-ni`: 126
    /// partitions at 32 GiB, aggregated with SnarkPack; see `cuzk gen aggregation-srs`).
    #[arg(long, requires = "timing_only")]
    pub ni_porep: bool,
    /// Write the requests of a SYNTHETIC sparse sector instead (any size, 32GiB and 64GiB
    /// included; no sealing, no parameters): the real circuits accept them and their proofs
    /// VERIFY, but they prove a sector that was never sealed and are useless on chain.
    #[arg(long)]
    pub synthetic_sector: bool,
}

/// Arguments of `cuzk gen params`.
#[derive(Args)]
pub struct ParamsArgs {
    /// The circuit: a Filecoin circuit id (`porep-32g`, `snap-64g`, `wpost-2k`, ...), or
    /// `synthetic:constraints=2^16,inputs=4,aux=1.0,a=1.0,b=0.25,seed=7` (every key optional)
    /// or `sha256:blocks=N,seed=S`.
    #[arg(long)]
    pub circuit: String,
    /// For a Filecoin circuit, the output directory (use it as the daemon's
    /// `srs.params_dir` and as `FIL_PROOFS_PARAMETER_CACHE`); otherwise the output `.params`
    /// file, its verifying key beside it with the extension `.vk`.
    #[arg(long)]
    pub out: PathBuf,
    /// Seed of the toxic waste (the parameters are a deterministic function of it).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Make the points on the CPU even where a CUDA device is (by default a CUDA build uses
    /// device 0 when there is one).
    #[arg(long)]
    pub cpu: bool,
}

/// Runs `cuzk gen`.
pub fn run(args: GenArgs) -> anyhow::Result<()> {
    // Quiet unless RUST_LOG asks (`RUST_LOG=debug`: the compile's steps and their seconds).
    crate::daemon::init_logging_with_default(crate::daemon::LogFormat::Text, "warn");
    match args.cmd {
        GenCommand::Params(p) => run_params(p),
        GenCommand::Testdata(t) => run_testdata(t),
        GenCommand::TimingParams(t) => run_timing_params(t),
        GenCommand::Compiled(c) => run_compiled(c),
        GenCommand::AggregationSrs(a) => run_aggregation_srs(a),
    }
}

fn run_compiled(args: CompiledArgs) -> anyhow::Result<()> {
    use cuzk_filecoin::compiled::{compile_again, open_or_compile, Source, CACHE_SUBDIR};
    let id: cuzk_filecoin::CircuitId = args
        .circuit
        .parse()
        .map_err(|e| anyhow::anyhow!("--circuit {}: {e}", args.circuit))?;
    let params = id.param_files()?.params_path(&args.params_dir);
    anyhow::ensure!(
        params.is_file(),
        "no parameter file for {id} at {} (the cache is keyed by it)",
        params.display()
    );
    let dir = args
        .cache_dir
        .unwrap_or_else(|| args.params_dir.join(CACHE_SUBDIR));
    let t = Instant::now();
    let (c, mut source) = open_or_compile(id, &params, &dir)?;
    if matches!(source, Source::Cache) {
        // Opened from its header: the matrices pass once, their digest checked at the end.
        let checked = c.stream_matrices::<cuzk_groth16::compiled::CircuitFileError>(
            CompiledCircuit::STREAM_WINDOW,
            |_| Ok(()),
        );
        if let Err(e) = checked {
            println!("{id}: the cached file is damaged ({e}); compiling again");
            source = compile_again(id, &params, &dir, e.to_string())?.1;
        }
    }
    let secs = t.elapsed().as_secs_f64();
    let hwm =
        cuzk_core::peak_rss_bytes().map_or("?".into(), |b| format!("{:.2} GB", b as f64 / 1e9));
    match source {
        Source::Cache => println!(
            "{id}: cached and intact in {} ({:.1} s to check; peak RSS {hwm})",
            dir.display(),
            secs
        ),
        Source::Compiled { refused, stored } => {
            if let Some(why) = refused {
                println!("{id}: the cached file was not used: {why}");
            }
            stored.map_err(|why| anyhow::anyhow!("{id}: compiled, but not cached: {why}"))?;
            println!(
                "{id}: compiled and cached in {} ({:.1} s; peak RSS {hwm})",
                dir.display(),
                secs
            );
        }
    }
    Ok(())
}

/// The note written beside TIMING-ONLY parameters, whose file names cannot say it.
pub const TIMING_ONLY_NOTE_FILE: &str = "TIMING-ONLY-PARAMETERS-DO-NOT-VERIFY.txt";

fn run_timing_params(args: TimingParamsArgs) -> anyhow::Result<()> {
    let id: cuzk_filecoin::CircuitId = args
        .circuit
        .parse()
        .map_err(|e| anyhow::anyhow!("--circuit {}: {e}", args.circuit))?;
    eprintln!(
        "WARNING: TIMING-ONLY PARAMETERS for {id}: no trusted setup behind them; proofs made \
         with them DO NOT VERIFY"
    );
    let t = Instant::now();
    let s = cuzk_filecoin::params::param_sections(id)
        .with_context(|| format!("counting {id}'s blank circuit"))?;
    println!(
        "{id}: {} constraints; sections ic {} h {} l {} a {} b {} (counted in {:.1} s)",
        s.constraints,
        s.ic,
        s.h,
        s.l,
        s.a,
        s.b,
        t.elapsed().as_secs_f64()
    );
    if args.count_only {
        return Ok(());
    }
    let t = Instant::now();
    let srs = cuzk_testkit::timing::timing_only_srs_of(&s);
    println!(
        "points: {:.1} GiB in {:.1} s",
        srs.size_bytes() as f64 / (1u64 << 30) as f64,
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let files = cuzk_filecoin::params::write_filecoin_params(id, &srs, &args.out)
        .with_context(|| format!("writing into {}", args.out.display()))?;
    let note = args.out.join(TIMING_ONLY_NOTE_FILE);
    let text = format!(
        "{} in this directory are TIMING-ONLY parameters for {id} (written by `cuzk gen \
         timing-params`): the real file names and section counts, but points with no trusted \
         setup behind them (gamma = delta = the G2 generator). Proofs made with them DO NOT \
         VERIFY. cuzk daemon refuses them unless [allow] timing_only = true.\n",
        files.params
    );
    std::fs::write(&note, text).with_context(|| format!("writing {}", note.display()))?;
    println!(
        "wrote {} (+ .vk, .meta, {TIMING_ONLY_NOTE_FILE}) in {:.1} s",
        files.params_path(&args.out).display(),
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

fn run_testdata(args: TestdataArgs) -> anyhow::Result<()> {
    use cuzk_testkit::testdata::{cached, ensure, TestdataOptions};
    if args.timing_only {
        return run_timing_only(args);
    }
    if args.synthetic_sector {
        return run_synthetic_sector(args);
    }
    if !args.no_params {
        warn_insecure(args.seed);
    }
    let sector_size = cuzk_filecoin::SectorSize::parse(&args.sector_size)?;
    // filecoin-proofs reads its settings once per process: keep its parent cache beside
    // the output, before anything touches the Filecoin crates.
    cuzk_filecoin::params::set_cache_dir(&args.out);
    let opts = TestdataOptions {
        out: args.out.clone(),
        sector_size,
        seed: args.seed,
        params: !args.no_params,
    };
    let started = Instant::now();
    let reused = cached(&opts).is_some();
    let m =
        ensure(&opts).with_context(|| format!("generating test data in {}", args.out.display()))?;
    for r in &m.requests {
        let files: Vec<&str> = r
            .vanilla_proof_file
            .iter()
            .chain(&r.vanilla_proofs_files)
            .map(String::as_str)
            .collect();
        println!(
            "{:<8} registered_proof {:>2}  {}",
            r.kind,
            r.registered_proof,
            files.join(" ")
        );
    }
    for p in &m.params {
        println!(
            "{:<12} setup {:>7.1} s  {}",
            p.circuit_id, p.setup_seconds, p.params
        );
    }
    if reused {
        println!(
            "reused the data in {} (generated in {:.1} s); took {:.2} s",
            args.out.display(),
            m.total_seconds,
            started.elapsed().as_secs_f64()
        );
    } else {
        println!(
            "generated in {:.1} s (sealing and vanilla proofs {:.1} s)",
            m.total_seconds, m.seal_seconds
        );
    }
    println!("export FIL_PROOFS_PARAMETER_CACHE={}", args.out.display());
    Ok(())
}

/// `cuzk gen testdata --timing-only`: shape-true requests with random values.
fn run_timing_only(args: TestdataArgs) -> anyhow::Result<()> {
    use cuzk_filecoin::SectorSize;
    use cuzk_testkit::shaped::{ensure, ShapedOptions, WARNING};
    let sector_size = SectorSize::parse(&args.sector_size)?;
    if !matches!(sector_size, SectorSize::S32GiB | SectorSize::S64GiB) {
        anyhow::bail!(
            "--timing-only is for the real sector sizes (32GiB, 64GiB); for {sector_size} seal \
             real test data without it"
        );
    }
    eprintln!("WARNING: {WARNING}");
    std::env::set_var("FIL_PROOFS_CACHE_DIR", format!("{}/", args.out.display()));
    let opts = ShapedOptions {
        out: args.out.clone(),
        sector_size,
        seed: args.seed,
        ni_porep: args.ni_porep,
    };
    let started = Instant::now();
    let (m, reused) = ensure(&opts)
        .with_context(|| format!("generating timing-only requests in {}", args.out.display()))?;
    let m = &m.manifest;
    let lengths: std::collections::HashMap<&str, u64> =
        m.files.iter().map(|(n, len)| (n.as_str(), *len)).collect();
    for r in &m.requests {
        let files: Vec<&String> = r
            .vanilla_proof_file
            .iter()
            .chain(&r.vanilla_proofs_files)
            .collect();
        let bytes: u64 = files.iter().filter_map(|f| lengths.get(f.as_str())).sum();
        let first = files.first().map(|f| f.as_str()).unwrap_or("");
        let more = match files.len() {
            0 | 1 => String::new(),
            n => format!(" (+{} more)", n - 1),
        };
        println!(
            "{:<8} registered_proof {:>2}  {:>10}  {first}{more}",
            r.kind,
            r.registered_proof,
            human_size(bytes)
        );
    }
    if reused {
        println!(
            "reused the timing-only data in {} (generated in {:.1} s); took {:.2} s",
            args.out.display(),
            m.total_seconds,
            started.elapsed().as_secs_f64()
        );
    } else {
        println!("generated in {:.1} s", m.total_seconds);
    }
    println!("no parameters written: prove these with timing-only parameters of the real circuits");
    eprintln!("WARNING: {WARNING}");
    Ok(())
}

/// `cuzk gen aggregation-srs`: an INSECURE SnarkPack SRS under Filecoin's name.
fn run_aggregation_srs(args: AggregationSrsArgs) -> anyhow::Result<()> {
    let warning = "INSECURE aggregation SRS (known toxic waste: anyone who knows the seed can \
                   forge aggregates); for tests and benchmarks only";
    eprintln!("WARNING: {warning}");
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let started = Instant::now();
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let name = cuzk_testkit::testdata::write_test_aggregation_srs(&args.out, &mut rng)?;
    let path = args.out.join(&name);
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!(
        "{} ({}, {} proofs) in {:.1} s",
        path.display(),
        human_size(bytes),
        cuzk_testkit::testdata::AGGREGATION_SRS_PROOFS,
        started.elapsed().as_secs_f64()
    );
    eprintln!("WARNING: {warning}");
    Ok(())
}

/// `cuzk gen testdata --synthetic-sector`: requests of a sparse sector the circuits accept.
fn run_synthetic_sector(args: TestdataArgs) -> anyhow::Result<()> {
    use cuzk_testkit::sparse::{generate, verify_vanilla, SparseOptions, WARNING};
    let sector_size = cuzk_filecoin::SectorSize::parse(&args.sector_size)?;
    eprintln!("NOTE: {WARNING}");
    let started = Instant::now();
    let m = generate(&SparseOptions {
        out: args.out.clone(),
        sector_size,
        seed: args.seed,
    })
    .with_context(|| {
        format!(
            "generating synthetic-sector requests in {}",
            args.out.display()
        )
    })?;
    let m = &m.manifest;
    let lengths: std::collections::HashMap<&str, u64> =
        m.files.iter().map(|(n, len)| (n.as_str(), *len)).collect();
    for r in &m.requests {
        let req = r
            .load(&args.out)
            .with_context(|| format!("reading back the {} request", r.kind))?;
        let t = Instant::now();
        verify_vanilla(&req).with_context(|| format!("the {} request's vanilla proofs", r.kind))?;
        let bytes: u64 = r
            .vanilla_proof_file
            .iter()
            .chain(&r.vanilla_proofs_files)
            .filter_map(|f| lengths.get(f.as_str()))
            .sum();
        println!(
            "{:<8} registered_proof {:>2}  {:>10}  vanilla proofs verified in {:.2} s",
            r.kind,
            r.registered_proof,
            human_size(bytes),
            t.elapsed().as_secs_f64()
        );
    }
    println!(
        "generated in {:.1} s, checked in {:.1} s; no parameters written: prove these with the \
         circuits' real parameters or `cuzk gen params`' insecure ones",
        m.total_seconds,
        started.elapsed().as_secs_f64() - m.total_seconds
    );
    Ok(())
}

fn run_params(args: ParamsArgs) -> anyhow::Result<()> {
    warn_insecure(args.seed);
    let points = point_maker(args.cpu)?;
    println!("points made on {}", points.name());
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let started = Instant::now();
    let (params, vk, compile, setup) = match args.circuit.parse::<cuzk_filecoin::CircuitId>() {
        Ok(id) => {
            let w = write_insecure_params(id, &args.out, args.seed, &mut rng, points.as_ref())
                .with_context(|| format!("setup for {id}"))?;
            println!(
                "{id}: blank circuit compiled in {:.1} s ({} of matrices)",
                w.compile_seconds,
                human_size(w.compile_bytes as u64)
            );
            (
                w.files.params_path(&args.out),
                w.files.vk_path(&args.out),
                w.compile_seconds,
                w.setup,
            )
        }
        Err(_) => {
            let spec: CircuitSpec = args
                .circuit
                .parse()
                .map_err(|e| anyhow::anyhow!("--circuit {}: {e}", args.circuit))?;
            let t = Instant::now();
            let compiled = CompiledCircuit::compile(&args.circuit, spec)
                .with_context(|| format!("compiling {}", args.circuit))?;
            let compile = t.elapsed().as_secs_f64();
            let setup = write_params_streamed(compiled, &mut rng, &args.out, points.as_ref())
                .with_context(|| format!("setup for {}", args.circuit))?;
            let vk = args.out.with_extension("vk");
            write_vk(&vk, &setup.vk).with_context(|| "writing the verifying key")?;
            (args.out.clone(), vk, compile, setup)
        }
    };
    let (shape, t) = (setup.shape, setup.timings);
    println!(
        "shape: {} constraints, {} inputs (with ONE), {} aux, domain 2^{}",
        shape.constraints,
        shape.inputs,
        shape.aux,
        shape.domain.trailing_zeros()
    );
    println!(
        "setup: {:.1} s after the compile (evaluate {:.1} s, G1 {:.1} s, G2 {:.1} s), {:.1} s \
         in all",
        t.total.as_secs_f64(),
        t.evaluate.as_secs_f64(),
        t.g1.as_secs_f64(),
        t.g2.as_secs_f64(),
        compile + t.total.as_secs_f64()
    );
    println!(
        "wrote {} ({}) and {}; {:.1} s wall; peak RSS {}",
        params.display(),
        human_size(setup.bytes),
        vk.display(),
        started.elapsed().as_secs_f64(),
        cuzk_core::peak_rss_bytes()
            .map(human_size)
            .unwrap_or_else(|| "?".into())
    );
    warn_insecure(args.seed);
    Ok(())
}

/// The setup's point maker: CUDA device 0 when this build has CUDA and a device is there
/// (unless `cpu`), else every core.
fn point_maker(cpu: bool) -> anyhow::Result<Box<dyn PointMaker>> {
    if !cpu && !cuzk_cuda::devices().is_empty() {
        return Ok(Box::new(
            cuzk_cuda::GpuPoints::new(0).with_context(|| "opening CUDA device 0")?,
        ));
    }
    Ok(Box::new(CpuPoints::new()))
}

fn warn_insecure(seed: u64) {
    eprintln!(
        "WARNING: INSECURE TEST PARAMETERS. The toxic waste is derived from seed {seed}; \
         anyone who knows it can forge proofs. Use only for tests and benchmarks."
    );
}

fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}
