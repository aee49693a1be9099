//! `cuzk selftest`: the arguments; the work is `cuzk_bench::selftest`.
use crate::client_bench::AddrArgs;
use anyhow::Context;
use clap::Args;
use cuzk_bench::request_file::parse_kind;
use cuzk_bench::selftest::{self, SelftestOptions};
use cuzk_filecoin::{ProofKind, SectorSize};
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `cuzk selftest`.
#[derive(Args)]
pub struct SelftestArgs {
    #[command(flatten)]
    addr: AddrArgs,
    /// The parameter directory whose verifying keys check the proofs: the daemon's
    /// `srs.params_dir` (real Filecoin parameters, or `cuzk gen params`' insecure ones).
    /// Default: `$FIL_PROOFS_PARAMETER_CACHE`, else /var/tmp/filecoin-proof-parameters.
    #[arg(long)]
    params: Option<PathBuf>,
    /// Proof kinds, comma-separated: porep, snap, wpost, winning.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "porep,snap,wpost,winning"
    )]
    kinds: Vec<String>,
    /// Sector sizes, comma-separated: 2KiB, 8MiB, 512MiB, 32GiB, 64GiB.
    #[arg(long, value_delimiter = ',', default_value = "32GiB")]
    sector_size: Vec<String>,
    /// Directory for one JSON file per proof: the proof, its public inputs and the verdict.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Seed of the synthetic sectors.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How long one proof may take, e.g. `30m`.
    #[arg(long, default_value = "30m")]
    timeout: String,
}

/// Runs `cuzk selftest`; fails unless every proof verified.
pub fn run(a: SelftestArgs) -> anyhow::Result<()> {
    let params = a
        .params
        .clone()
        .unwrap_or_else(cuzk_filecoin::params::parameter_cache_dir);
    // filecoin-proofs reads it once per process: before anything touches the Filecoin crates
    // and before the runtime's threads start.
    cuzk_filecoin::params::set_parameter_dir(&params);
    let kinds = a
        .kinds
        .iter()
        .map(|k| -> anyhow::Result<ProofKind> {
            let wire = parse_kind(k)? as i32;
            ProofKind::from_wire(wire)
                .map_err(|_| anyhow::anyhow!("--kinds: {k} is not a Filecoin proof kind"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let sizes = a
        .sector_size
        .iter()
        .map(|s| SectorSize::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    let timeout: Duration = humantime::parse_duration(&a.timeout)
        .with_context(|| format!("--timeout {}", a.timeout))?;
    eprintln!("NOTE: {}", cuzk_testkit::sparse::WARNING);
    let opts = SelftestOptions {
        kinds,
        sizes,
        params_dir: params,
        out: a.out.clone(),
        seed: a.seed,
        timeout,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    let dial = a.addr.dial()?;
    let rows = rt.block_on(selftest::run(&dial, &opts))?;
    print!("{}", selftest::table(&rows));
    println!(
        "proofs of a SYNTHETIC sector checked with filecoin-proofs against {}: they show the \
         daemon's proofs verify, and are useless on chain",
        opts.params_dir.display()
    );
    let bad = rows.iter().filter(|r| !r.valid()).count();
    anyhow::ensure!(bad == 0, "{bad} of {} proofs did not verify", rows.len());
    Ok(())
}
