//! Requests of a synthetic sparse sector at 8 MiB through the real daemon and gRPC client:
//! PoRep, WindowPoSt and WinningPoSt are proved with INSECURE 8 MiB parameters made by the
//! streamed setup (`cuzk_testkit::setup::ensure_insecure_params`, shared by the target dir)
//! and verified by filecoin-proofs' own verifier. (SnapDeals at 8 MiB, four partitions of
//! 10 M constraints, would take about twenty minutes of this CPU prover: its partitions are
//! checked against the real circuit in `cuzk-filecoin`'s `tests/sparse.rs`, and its proof on
//! the GPU by `cuzk selftest`.)
mod common;

use common::completed;
use cuzk_core::kinds::filecoin::FilecoinPlanner;
use cuzk_filecoin::params::set_parameter_dir;
use cuzk_filecoin::{CircuitId, ProofKind, SectorSize};
use cuzk_groth16::CpuProver;
use cuzk_server::proto::ProveRequest;
use cuzk_testkit::setup::ensure_insecure_params;
use cuzk_testkit::sparse::request;
use std::path::Path;
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sparse_8m_porep_and_post_are_proved_and_verify_with_filecoin_proofs() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cuzk-params-8m");
    // filecoin-proofs reads the directory once per process: before anything touches it.
    set_parameter_dir(&dir);
    let ids: Vec<CircuitId> = ["porep-8m", "wpost-8m", "winning-8m"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    let t = std::time::Instant::now();
    ensure_insecure_params(&ids, &dir, 8).expect("8 MiB parameters");
    eprintln!(
        "8 MiB parameters ready in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let planner = Arc::new(FilecoinPlanner::new(dir.clone()));
    let params = dir.clone();
    let d = common::start_with_backends(
        common::Transport::Unix,
        planner,
        vec![Arc::new(CpuProver::default())],
        move |c, _| {
            c.params_dir = params;
            c.budget_bytes = 6 << 30;
        },
    )
    .await;
    let mut c = d.client.clone();
    for kind in [
        ProofKind::PoRepSealCommit,
        ProofKind::WindowPostPartition,
        ProofKind::WinningPost,
    ] {
        let (req, _) = request(kind, SectorSize::S8MiB, 8, None).expect("sparse request");
        let t = std::time::Instant::now();
        let mut wire = cuzk_server::client::submit_request(&req);
        wire.request_id = format!("sparse-8m-{kind}");
        let r = c
            .prove(ProveRequest { submit: Some(wire) })
            .await
            .unwrap_or_else(|e| panic!("{kind}: {e}"))
            .into_inner()
            .result
            .expect("a result");
        assert_eq!(r.status, completed(), "{kind}: {}", r.error_message);
        cuzk_filecoin::plan(&req)
            .expect("plan")
            .verify(&r.proof)
            .unwrap_or_else(|e| panic!("{kind} 8 MiB: proof does not verify: {e}"));
        eprintln!(
            "{kind} 8 MiB: proved and verified in {:.1} s",
            t.elapsed().as_secs_f64()
        );
    }
    d.stop().await;
}
