//! `cuzk demo` (README command 1), past its setup: the mixed batch of Filecoin requests on the
//! cached test sector, and a run that serves an engine on a temporary unix socket, proves the
//! batch through the real gRPC client, verifies every proof on the client side and prints the
//! bench table.
use crate::client::{run_load, LoadOptions};
use crate::error::{invalid, Result, Step};
use crate::request_file::{self, Template};
use cuzk_core::Engine;
use cuzk_server::{Daemon, ListenAddr, ServeOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Seed of the demo's test sector (and its insecure parameters).
pub const TESTDATA_SEED: u64 = 1;

/// The mixed batch the demo proves: one request of each Filecoin kind (PoRep C2, SnapDeals,
/// WindowPoSt, WinningPoSt) on the cached 2 KiB test sector (generated on the first run:
/// sealing plus insecure parameters), each checked on the client with Filecoin's verifier.
pub fn filecoin_batch(cache: &Path) -> Result<Vec<Template>> {
    use cuzk_testkit::testdata::{ensure, TestdataOptions};
    println!(
        "  test data: {} (first run: seals a 2 KiB sector and writes insecure parameters)",
        cache.display()
    );
    let opts = TestdataOptions {
        out: cache.to_path_buf(),
        sector_size: cuzk_filecoin::SectorSize::S2KiB,
        seed: TESTDATA_SEED,
        params: true,
    };
    let manifest = ensure(&opts).step("generating the test sector and parameters")?;
    let mut out = Vec::new();
    // NI-PoRep (13 partitions, then aggregated) is left out of the demo's batch to keep it
    // quick on a CPU; its end-to-end test is in crates/filecoin/tests/kinds.rs.
    for spec in manifest.requests.iter().filter(|s| s.kind != "porep-ni") {
        let mut t = request_file::filecoin_template(spec, cache)?;
        t.label = format!("{}-2k", spec.kind);
        out.push(t);
    }
    if out.is_empty() {
        return Err(invalid!(
            "the test-data manifest in {} lists no requests",
            cache.display()
        ));
    }
    Ok(out)
}

/// How the demo's batch is run.
#[derive(Clone, Debug)]
pub struct DemoOptions {
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Requests in total (the batch is repeated round-robin).
    pub jobs: usize,
    /// Where the run's timeline SVG goes.
    pub timeline: PathBuf,
    /// After the batch, keep the daemon running until Ctrl-C.
    pub serve: bool,
}

/// Serves `engine` on a temporary unix socket, proves `templates` through it and prints the
/// report; fails when a proof failed or did not verify.
pub async fn run(engine: Arc<Engine>, templates: Vec<Template>, opts: &DemoOptions) -> Result<()> {
    let sock_dir = tempfile::Builder::new()
        .prefix("cuzk-demo-")
        .tempdir()
        .step("creating a temporary directory for the socket")?;
    let listen = ListenAddr::Unix(sock_dir.path().join("cuzk.sock"));
    let mut serve = ServeOptions::new(listen);
    serve.drain_timeout = Duration::from_secs(30);
    let daemon = Daemon::start(engine, serve).await?;
    let addr = daemon.addr().to_string();
    println!("  daemon: listening on {addr}");
    println!("  proving (the first request of each circuit also runs its test setup)...");
    let load = LoadOptions {
        concurrency: opts.concurrency,
        jobs: opts.jobs,
        verify: true,
        timeline: Some(opts.timeline.clone()),
        progress: true,
        deadline: None,
    };
    let report = match run_load(
        &cuzk_server::client::Dial::new(addr.as_str()),
        templates,
        &load,
    )
    .await
    {
        Ok(r) => r,
        Err(e) => {
            let _ = daemon.shutdown().await;
            return Err(e);
        }
    };
    report.print();
    if opts.serve {
        println!();
        println!("daemon still running at {addr}; try:");
        println!(
            "  cuzk bench batch --addr {addr} --kind synthetic -c 4 -j 12 --verify --timeline out.svg"
        );
        println!("Ctrl-C stops it.");
        tokio::signal::ctrl_c().await.step("waiting for Ctrl-C")?;
    }
    daemon.shutdown().await?;
    crate::client::failures(&report)?;
    if report.not_checked > 0 {
        return Err(invalid!(
            "{} of {} proofs completed but could not be checked",
            report.not_checked,
            report.rows.len()
        ));
    }
    println!("demo: all {} proofs verified", report.rows.len());
    Ok(())
}
