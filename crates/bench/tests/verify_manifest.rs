//! Client-side verification of manifest requests (`cuzk bench batch --input manifest.json
//! --verify`): on the H200, 48 of 48 completed 8 MiB PoRep proofs were reported "did not
//! complete" because the verifying keys were looked for in the default parameter directory,
//! not the manifest's. One test function: it sets `FIL_PROOFS_PARAMETER_CACHE`, which is
//! process-wide.
use cuzk_bench::client::failures;
use cuzk_bench::report::{tally, Report, Row};
use cuzk_bench::request_file::{load, manifest_parameter_dir};
use cuzk_bench::verify::Check;
use cuzk_server::proto::ProofKind;
use cuzk_testkit::shaped::{ShapedManifest, WARNING};
use cuzk_testkit::testdata::{Manifest, ParamSpec, RequestSpec, SectorFacts};
use std::path::Path;
use std::time::Duration;

fn manifest(params: Vec<ParamSpec>) -> Manifest {
    Manifest {
        generator_version: 2,
        seed: 1,
        sector_size: 8 << 20,
        sector: SectorFacts {
            comm_r: "00".into(),
            comm_d: "00".into(),
            ticket: "00".into(),
            seed: "00".into(),
        },
        requests: vec![RequestSpec {
            kind: "wpost".into(),
            proof_kind: ProofKind::WindowPostPartition as i32,
            sector_size: 8 << 20,
            registered_proof: 11,
            vanilla_proof_file: None,
            vanilla_proofs_files: vec!["w0.bin".into()],
            sector_number: 0,
            miner_id: 1000,
            randomness: "0a".repeat(32),
            partition_index: 0,
            comm_r_old: String::new(),
            comm_r_new: String::new(),
            comm_d_new: String::new(),
        }],
        params,
        files: vec![],
        seal_seconds: 0.0,
        total_seconds: 0.0,
    }
}

fn row(status: &str, verified: Option<Check>) -> Row {
    Row {
        label: "porep".into(),
        job_id: "j".into(),
        status: status.into(),
        error: String::new(),
        queue_ms: 0,
        srs_ms: 0,
        synthesis_ms: 0,
        prover_ms: 0,
        total_ms: 0,
        proof_bytes: 1920,
        verified,
        done_at: Duration::ZERO,
    }
}

fn report(rows: Vec<Row>) -> Report {
    let (not_completed, rejected, not_checked) = tally(&rows);
    Report {
        rows,
        failed: not_completed + rejected,
        not_completed,
        rejected,
        not_checked,
        timing_only: false,
        wall: Duration::from_secs(1),
        concurrency: 1,
        status: Default::default(),
        sampled_peak_reserved: 0,
        sampled_peak_rss: 0,
        timeline: None,
        status_before: Default::default(),
        deadline: None,
    }
}

fn write(dir: &Path, json: Vec<u8>) -> std::path::PathBuf {
    std::fs::write(dir.join("w0.bin"), [9u8, 8, 7]).unwrap();
    let p = dir.join("manifest.json");
    std::fs::write(&p, json).unwrap();
    p
}

#[test]
fn completed_proofs_whose_keys_are_elsewhere_are_not_checked_rather_than_not_completed() {
    // A manifest with parameters: its directory is where the verifying keys are.
    let dir = tempfile::tempdir().unwrap();
    let params = vec![ParamSpec {
        circuit_id: "wpost-8m".into(),
        params: "v28-x.params".into(),
        vk: "v28-x.vk".into(),
        meta: "v28-x.meta".into(),
        setup_seconds: 0.0,
    }];
    let p = write(dir.path(), serde_json::to_vec(&manifest(params)).unwrap());
    assert_eq!(manifest_parameter_dir(&p).as_deref(), Some(dir.path()));

    // Filecoin's verifier looking elsewhere (the default directory, as on the H200): the
    // proof completed but cannot be checked, and says so; it is no failure.
    let elsewhere = tempfile::tempdir().unwrap();
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", elsewhere.path());
    let t = load(&p, Some("wpost")).unwrap();
    assert!(!t.timing_only);
    let c = t.verify(&[0u8; 192]);
    let Check::NotChecked(why) = &c else {
        panic!("expected not checked, got {c:?}")
    };
    assert!(why.contains("manifest's parameter directory"), "{why}");
    assert!(c.to_string().starts_with("completed, not checked: "), "{c}");

    let r = report(vec![row("COMPLETED", Some(c.clone())); 48]);
    assert_eq!((r.not_completed, r.rejected, r.not_checked), (0, 0, 48));
    failures(&r).expect("completed but not checked is not a failure");

    // Rejected and not completed stay failures, each named as such.
    let r = report(vec![
        row("COMPLETED", Some(Check::Rejected("no".into()))),
        row("FAILED", None),
        row("COMPLETED", Some(Check::Verified)),
    ]);
    assert_eq!((r.not_completed, r.rejected, r.not_checked), (1, 1, 0));
    let e = failures(&r).unwrap_err().to_string();
    assert!(
        e.contains("1 of 3 proofs did not complete") && e.contains("1 completed but were rejected"),
        "{e}"
    );

    // A manifest without parameters names no parameter directory.
    let bare = tempfile::tempdir().unwrap();
    let p = write(bare.path(), serde_json::to_vec(&manifest(vec![])).unwrap());
    assert_eq!(manifest_parameter_dir(&p), None);

    // A timing-only manifest is recognised: its proofs are reported as not checkable.
    let shaped = tempfile::tempdir().unwrap();
    let m = ShapedManifest {
        timing_only: true,
        note: WARNING.into(),
        manifest: manifest(vec![]),
    };
    let p = write(shaped.path(), serde_json::to_vec(&m).unwrap());
    let t = load(&p, Some("wpost")).unwrap();
    assert!(t.timing_only);
    assert!(t.label.contains("TIMING-ONLY"), "{}", t.label);
    let c = t.verify(&[0u8; 192]);
    assert!(
        matches!(&c, Check::NotChecked(why) if why.contains("timing-only")),
        "{c:?}"
    );
    let r = report(vec![row("COMPLETED", Some(c))]);
    failures(&r).expect("timing-only proofs are not failures");
}
