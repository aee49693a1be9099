//! Requests of a synthetic sparse sector: their vanilla proofs verify with storage-proofs'
//! own verifiers at every size, 32 GiB and 64 GiB included, they plan like any request, they
//! are a deterministic function of the seed, and each fault makes the check fail. (Their
//! SNARKs, proved through the daemon and verified by filecoin-proofs, are checked in
//! `crates/server/tests/sparse_grpc.rs`.)
use cuzk_filecoin::{ProofKind, SectorSize};
use cuzk_testkit::sparse::{request, requests, verify_vanilla, Fault};

const KINDS: [ProofKind; 4] = [
    ProofKind::PoRepSealCommit,
    ProofKind::SnapDealsUpdate,
    ProofKind::WindowPostPartition,
    ProofKind::WinningPost,
];

fn check_size(size: SectorSize, kinds: &[ProofKind]) {
    for &kind in kinds {
        let t = std::time::Instant::now();
        let (req, facts) = request(kind, size, 11, None).unwrap();
        let built = t.elapsed();
        verify_vanilla(&req).unwrap_or_else(|e| panic!("{kind} {size}: {e}"));
        let plan = cuzk_filecoin::plan(&req).unwrap_or_else(|e| panic!("{kind} {size}: {e}"));
        assert!(plan.partitions() >= 1);
        assert_eq!(facts.is_some(), kind == ProofKind::PoRepSealCommit);
        eprintln!(
            "{kind} {size}: built in {:.2} s, {} partitions, checked in {:.2} s",
            built.as_secs_f64(),
            plan.partitions(),
            (t.elapsed() - built).as_secs_f64()
        );
    }
}

#[test]
fn sparse_requests_pass_the_vanilla_verifiers_at_2k_and_8m() {
    check_size(SectorSize::S2KiB, &KINDS);
    check_size(SectorSize::S8MiB, &KINDS);
}

#[test]
fn sparse_requests_pass_the_vanilla_verifiers_at_32g() {
    check_size(SectorSize::S32GiB, &KINDS);
}

#[test]
fn sparse_porep_and_snap_pass_the_vanilla_verifiers_at_64g() {
    check_size(
        SectorSize::S64GiB,
        &[ProofKind::PoRepSealCommit, ProofKind::SnapDealsUpdate],
    );
}

#[test]
fn each_fault_fails_the_vanilla_check() {
    for size in [SectorSize::S2KiB, SectorSize::S32GiB] {
        let (req, _) = request(
            ProofKind::PoRepSealCommit,
            size,
            11,
            Some(Fault::ParentLabel),
        )
        .unwrap();
        assert!(verify_vanilla(&req).is_err(), "parent label at {size}");
        for kind in KINDS {
            if kind == ProofKind::WindowPostPartition && size == SectorSize::S32GiB {
                continue; // 2,349 sectors: the 2 KiB case covers the fault
            }
            for fault in [Fault::PathSibling, Fault::PathPosition] {
                // SnapDeals' circuit derives positions itself; storage-proofs' vanilla PoRep
                // check does not hash tree R's path (the circuit does: the daemon's proof of
                // such a request fails, `crates/server/tests/sparse.rs`).
                if (fault == Fault::PathPosition && kind == ProofKind::SnapDealsUpdate)
                    || (fault == Fault::PathSibling && kind == ProofKind::PoRepSealCommit)
                {
                    continue;
                }
                let (req, _) = request(kind, size, 11, Some(fault)).unwrap();
                assert!(
                    verify_vanilla(&req).is_err(),
                    "{fault:?} in {kind} at {size}"
                );
            }
        }
    }
    let bad = |kind, fault| request(kind, SectorSize::S2KiB, 1, Some(fault)).is_err();
    assert!(bad(ProofKind::WinningPost, Fault::ParentLabel));
    assert!(bad(ProofKind::SnapDealsUpdate, Fault::PathPosition));
}

/// Each PoRep and SnapDeals fault, recorded by the real circuit at 2 KiB, leaves some
/// constraint unsatisfied (the unbroken request satisfies them all): no prover can make a
/// proof of it that verifies. (Through the daemon: `crates/server/tests/sparse.rs`.)
#[test]
fn porep_and_snap_faults_leave_a_constraint_of_the_real_circuit_unsatisfied() {
    use cuzk_groth16::RecorderMode;
    let cases = [
        (ProofKind::PoRepSealCommit, None, true),
        (ProofKind::PoRepSealCommit, Some(Fault::ParentLabel), false),
        (ProofKind::PoRepSealCommit, Some(Fault::PathSibling), false),
        (ProofKind::PoRepSealCommit, Some(Fault::PathPosition), false),
        (ProofKind::SnapDealsUpdate, None, true),
        (ProofKind::SnapDealsUpdate, Some(Fault::PathSibling), false),
    ];
    for (kind, fault, satisfied) in cases {
        let (req, _) = request(kind, SectorSize::S2KiB, 13, fault).unwrap();
        let mut plan = cuzk_filecoin::plan(&req).unwrap();
        let all = plan
            .take_jobs()
            .into_iter()
            .all(|job| job.run(RecorderMode::Full).unwrap().is_satisfied());
        assert_eq!(all, satisfied, "{kind} {fault:?}");
    }
}

#[test]
fn sparse_requests_are_a_function_of_the_seed_and_kinds_are_built_alone_alike() {
    let a = requests(SectorSize::S2KiB, 5).unwrap();
    let b = requests(SectorSize::S2KiB, 5).unwrap();
    let c = requests(SectorSize::S2KiB, 6).unwrap();
    assert_eq!(a.porep, b.porep);
    assert_eq!(a.snap, b.snap);
    assert_eq!(a.wpost, b.wpost);
    assert_eq!(a.winning, b.winning);
    assert_ne!(a.porep, c.porep);
    assert_ne!(a.snap, c.snap);
    let (alone, _) = request(ProofKind::SnapDealsUpdate, SectorSize::S2KiB, 5, None).unwrap();
    assert_eq!(alone, a.snap);
}

/// SnapDeals at 8 MiB (four partitions of 10 M constraints; proved on the GPU by `cuzk
/// selftest`, too slow for the CPU prover here): every partition of the sparse request,
/// recorded in full by the real circuit, satisfies every constraint, with the public inputs
/// the plan computes. A broken path does not.
#[test]
fn sparse_8m_snap_deals_partitions_satisfy_the_real_circuit() {
    use cuzk_groth16::RecorderMode;
    for (fault, satisfied) in [(None, true), (Some(Fault::PathSibling), false)] {
        let (req, _) = request(ProofKind::SnapDealsUpdate, SectorSize::S8MiB, 12, fault).unwrap();
        let mut plan = cuzk_filecoin::plan(&req).unwrap();
        let jobs = plan.take_jobs();
        assert_eq!(jobs.len(), 4);
        for job in jobs.into_iter().take(if satisfied { 4 } else { 1 }) {
            let t = std::time::Instant::now();
            let k = job.partition;
            let expected = job.public_inputs.clone();
            let s = job.run(RecorderMode::Full).unwrap();
            assert_eq!(
                &s.inputs[1..],
                &expected[..],
                "partition {k}: public inputs"
            );
            assert_eq!(s.is_satisfied(), satisfied, "partition {k}, {fault:?}");
            eprintln!(
                "snap 8 MiB partition {k} ({fault:?}): recorded and checked in {:.1} s",
                t.elapsed().as_secs_f64()
            );
        }
    }
}
