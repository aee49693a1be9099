//! `cuzk selftest` against a real daemon on a unix socket with the 2 KiB insecure test
//! parameters: WindowPoSt and WinningPoSt proofs of a synthetic sector come back VALID by
//! filecoin-proofs' verifier, each written as JSON with its public inputs; a size whose
//! verifying key is not in the directory is an ERROR row, not a VALID one, and not a crash.
use cuzk_bench::selftest::{run, table, SelftestOptions, Verdict};
use cuzk_core::kinds::filecoin::FilecoinPlanner;
use cuzk_core::{Config, Engine};
use cuzk_filecoin::{ProofKind, SectorSize};
use cuzk_groth16::CpuProver;
use cuzk_server::{Daemon, ListenAddr, ServeOptions};
use cuzk_testkit::testdata::process_data;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selftest_proves_synthetic_sectors_and_filecoin_proofs_says_valid() {
    // The 2 KiB test data every test binary of the target dir shares (its parameters);
    // filecoin-proofs reads FIL_PROOFS_* once, so before anything touches it.
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let params = process_data(tmp).0.clone();
    let mut config = Config::default_for_machine();
    config.set_budget(2 << 30);
    config.params_dir = params.clone();
    let engine = Engine::new(
        config,
        vec![Arc::new(CpuProver::default())],
        Arc::new(FilecoinPlanner::new(params.clone())),
    )
    .expect("engine");
    let sock = tempfile::tempdir().unwrap();
    let d = Daemon::start(
        Arc::new(engine),
        ServeOptions::new(ListenAddr::Unix(sock.path().join("cuzk.sock"))),
    )
    .await
    .expect("daemon");
    let out = tempfile::tempdir().unwrap();
    let opts = SelftestOptions {
        kinds: vec![ProofKind::WindowPostPartition, ProofKind::WinningPost],
        sizes: vec![SectorSize::S2KiB, SectorSize::S8MiB],
        params_dir: params,
        out: Some(out.path().to_path_buf()),
        seed: 3,
        timeout: Duration::from_secs(600),
    };
    let dial = cuzk_server::client::Dial::new(d.addr().to_string());
    let rows = run(&dial, &opts).await.expect("selftest runs");
    let printed = table(&rows);
    eprintln!("{printed}");
    assert_eq!(rows.len(), 4);
    for r in &rows[..2] {
        assert_eq!(r.verdict, Verdict::Valid, "{r:?}");
        assert_eq!(r.partitions, 1);
        assert_eq!(r.published_vk, Some(false), "insecure test parameters");
        let file = r.file.as_ref().expect("a JSON record");
        let rec: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
        assert_eq!(rec["verdict"], "VALID");
        assert_eq!(rec["proof_hex"].as_str().unwrap().len(), 2 * 192);
        assert!(!rec["public_inputs"]["sectors"]
            .as_array()
            .unwrap()
            .is_empty());
        assert!(rec["note"].as_str().unwrap().contains("SYNTHETIC SECTOR"));
    }
    // 8 MiB: no verifying key in the 2 KiB directory.
    for r in &rows[2..] {
        match &r.verdict {
            Verdict::Error(why) => assert!(why.contains("no verifying key"), "{why}"),
            v => panic!("8 MiB without parameters: {v}"),
        }
        assert!(!r.valid());
    }
    assert!(printed.contains("VALID") && printed.contains("ERROR"));
    d.shutdown().await.expect("clean shutdown");
}
