//! 32 GiB-shaped TIMING-ONLY requests, on the CPU and without parameter files: generated and
//! written with their manifest, read back, accepted by decoding and planning with the real
//! partition counts, and with partition circuits of the real shape. 64 GiB requests are
//! generated and planned too.
//!
//! Shape check: a partition circuit, built from the request's vanilla proofs and synthesized
//! with its whole witness into a counting constraint system (nothing stored), must have the
//! constraint, input and aux counts of the blank circuit of its kind, which must be the
//! figures the planner's estimates carry (counted once from the real circuits). What is
//! counted, to keep this near three minutes of one core:
//! - PoRep and SnapDeals: partition 0 is counted fully (about 40 s and 25 s, as long again
//!   for the blank circuit); the other partitions are checked structurally: their vanilla
//!   proofs have exactly partition 0's structure (challenge counts, path lengths and sibling
//!   counts, column heights, parent counts), which is all the circuit's shape depends on.
//! - WindowPoSt (one partition of 2,349 sectors): a full count takes over four minutes (its
//!   Poseidon gadgets build about a billion terms), so the circuit and the blank circuit are
//!   counted with their first one and two sector sub-circuits, every sector's vanilla proof
//!   is checked to have the same structure, and the fixed part plus 2,349 per-sector parts
//!   must give the real counts. `-- --ignored` runs the full count as well.
//! - WinningPoSt: counted fully, and also through the planner's own synthesis closure.
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Instant;

use cuzk_filecoin::MemoryEstimate;
use cuzk_filecoin::{plan, CircuitId, CircuitKind, ProofKind, ProofRequest, SectorSize};
use cuzk_groth16::RecorderMode;
use cuzk_testkit::shaped::{self, Counts, ShapedManifest, ShapedOptions};
use cuzk_testkit::testdata::Manifest;

const SEED: u64 = 0x5eed_32a1;
const SIZE: SectorSize = SectorSize::S32GiB;

/// The generated directory and its manifest (generated afresh once per test binary).
fn data() -> &'static (PathBuf, ShapedManifest) {
    static DATA: OnceLock<(PathBuf, ShapedManifest)> = OnceLock::new();
    DATA.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cuzk-shaped-32g");
        let _ = std::fs::remove_dir_all(&dir);
        let t = Instant::now();
        let m = shaped::generate(&ShapedOptions {
            out: dir.clone(),
            sector_size: SIZE,
            seed: SEED,
            ni_porep: false,
        })
        .expect("generating the timing-only requests");
        eprintln!(
            "generated the 32 GiB timing-only requests in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        (dir, m)
    })
}

fn request(kind: &str) -> ProofRequest {
    let (dir, m) = data();
    m.manifest
        .request(kind)
        .unwrap_or_else(|| panic!("no {kind} request"))
        .load(dir)
        .unwrap()
}

/// The planner's figures for `id` (counted from the real blank circuits).
fn known(id: CircuitId) -> Counts {
    let e = MemoryEstimate::for_circuit(id);
    assert!(e.exact, "{id}: no counted figures");
    Counts {
        constraints: e.constraints,
        inputs: e.inputs,
        aux: e.aux,
    }
}

/// Plans `req`; checks the partition count, the circuit id and every partition's number of
/// public inputs.
fn check_plan(req: &ProofRequest, kind: CircuitKind, partitions: usize) {
    let id = CircuitId::new(kind, SIZE);
    let t = Instant::now();
    let p = plan(req).unwrap_or_else(|e| panic!("{id}: planning failed: {e}"));
    eprintln!("{id}: planned in {:.1} s", t.elapsed().as_secs_f64());
    assert_eq!(p.partitions(), partitions, "{id}: partitions");
    assert_eq!(p.circuit_id, id);
    for job in &p.jobs {
        assert_eq!(job.circuit_id, id);
        assert_eq!(
            job.public_inputs.len() + 1,
            known(id).inputs,
            "{id}: inputs"
        );
    }
}

/// Counts partition `k` of `req` and the blank circuit; both must equal the known figures.
fn check_counts(req: &ProofRequest, kind: CircuitKind, k: usize) {
    let id = CircuitId::new(kind, SIZE);
    let t = Instant::now();
    let ours = shaped::count_partition(req, k).unwrap();
    let t_ours = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let blank = shaped::count_blank(id).unwrap();
    eprintln!(
        "{id}: partition {k} {ours:?} counted in {t_ours:.1} s, the blank circuit in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    assert_eq!(ours, blank, "{id}: partition {k} against the blank circuit");
    assert_eq!(
        blank,
        known(id),
        "{id}: the blank circuit against the known figures"
    );
}

/// Every partition's vanilla proof has the same structure.
fn check_structure(req: &ProofRequest, entries: usize) {
    let sigs = shaped::partition_signatures(req).unwrap();
    assert_eq!(sigs.len(), entries);
    assert!(
        sigs.iter().all(|s| *s == sigs[0]),
        "vanilla proofs of different structure"
    );
}

#[test]
fn manifest_says_timing_only_and_is_read_as_test_data() {
    let (dir, m) = data();
    assert!(m.timing_only);
    assert!(m.note.contains("TIMING-ONLY") && m.note.contains("DO NOT VERIFY"));
    assert!(m.manifest.params.is_empty());
    let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    assert!(text.trim_start().starts_with("{\n  \"timing_only\": true"));
    // The bench reads the regular manifest type from the same file.
    let plain: Manifest = serde_json::from_str(&text).unwrap();
    assert_eq!(plain, m.manifest);
    for (name, _) in &m.manifest.files {
        let file = name.rsplit('/').next().unwrap();
        assert!(
            file.contains("timing-only") || file.contains("TIMING-ONLY"),
            "{name}"
        );
    }
    assert!(std::fs::read_to_string(dir.join(shaped::NOTE_FILE))
        .unwrap()
        .contains("DO NOT VERIFY"));
    let kinds: Vec<(&str, u64)> = m
        .manifest
        .requests
        .iter()
        .map(|r| (r.kind.as_str(), r.registered_proof))
        .collect();
    assert_eq!(
        kinds,
        [("porep", 8), ("snap", 3), ("wpost", 13), ("winning", 3)]
    );
    // Reused when asked again with the same seed and size; not for another seed.
    let opts = ShapedOptions {
        out: dir.clone(),
        sector_size: SIZE,
        seed: SEED,
        ni_porep: false,
    };
    assert_eq!(shaped::cached(&opts).as_ref(), Some(m));
    assert!(shaped::cached(&ShapedOptions { seed: 1, ..opts }).is_none());
}

#[test]
fn porep_32g_plans_10_partitions_of_the_real_circuit() {
    let req = request("porep");
    check_plan(&req, CircuitKind::PoRep, 10);
    check_structure(&req, 10);
    check_counts(&req, CircuitKind::PoRep, 0);
}

#[test]
fn snap_32g_plans_16_partitions_of_the_real_circuit() {
    let req = request("snap");
    assert_eq!(req.vanilla_proofs.len(), 16);
    check_plan(&req, CircuitKind::Snap, 16);
    check_structure(&req, 16);
    check_counts(&req, CircuitKind::Snap, 0);
}

#[test]
fn wpost_32g_plans_one_partition_of_2349_sectors_of_the_real_circuit() {
    let id = CircuitId::new(CircuitKind::WindowPost, SIZE);
    let req = request("wpost");
    let sectors = req.vanilla_proofs.len();
    assert_eq!(sectors, 2349);
    check_plan(&req, CircuitKind::WindowPost, 1);
    check_structure(&req, sectors);
    let t = Instant::now();
    let ours = shaped::count_post_sectors(&req, &[1, 2]).unwrap();
    let blank = shaped::count_blank_post_sectors(id, &[1, 2]).unwrap();
    eprintln!(
        "{id}: 1 and 2 sectors {ours:?} counted in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    assert_eq!(ours, blank);
    let per = |f: fn(&Counts) -> usize| f(&ours[1]) - f(&ours[0]);
    let whole = |f: fn(&Counts) -> usize| f(&ours[0]) - per(f) + sectors * per(f);
    let total = Counts {
        constraints: whole(|c| c.constraints),
        inputs: whole(|c| c.inputs),
        aux: whole(|c| c.aux),
    };
    assert_eq!(total, known(id), "{id}: fixed + {sectors} sectors");
}

#[test]
#[ignore = "counts a full WindowPoSt partition and its blank circuit: 4.5 min on 2 cores"]
fn wpost_32g_full_count() {
    check_counts(&request("wpost"), CircuitKind::WindowPost, 0);
}

#[test]
fn winning_32g_plans_the_real_circuit() {
    let req = request("winning");
    assert_eq!(req.vanilla_proofs.len(), 1);
    check_plan(&req, CircuitKind::WinningPost, 1);
    check_counts(&req, CircuitKind::WinningPost, 0);
    // The planner's own synthesis closure builds the circuit that was counted.
    let counted = shaped::count_partition(&req, 0).unwrap();
    let mut p = plan(&req).unwrap();
    let s = p
        .take_jobs()
        .remove(0)
        .run(RecorderMode::WitnessOnly)
        .unwrap();
    assert_eq!(
        (s.num_constraints, s.inputs.len(), s.num_aux()),
        (counted.constraints, counted.inputs, counted.aux)
    );
}

#[test]
fn requests_64g_plan_with_the_real_partition_and_sector_counts() {
    let t = Instant::now();
    let r = shaped::requests(SectorSize::S64GiB, SEED).unwrap();
    eprintln!(
        "built the 64 GiB timing-only requests in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    assert_eq!(r.wpost.vanilla_proofs.len(), 2300);
    for (req, kind, partitions) in [
        (&r.porep, ProofKind::PoRepSealCommit, 10),
        (&r.snap, ProofKind::SnapDealsUpdate, 16),
        (&r.wpost, ProofKind::WindowPostPartition, 1),
        (&r.winning, ProofKind::WinningPost, 1),
    ] {
        assert_eq!(req.kind(), kind);
        let p = plan(req).unwrap_or_else(|e| panic!("{kind}: planning failed: {e}"));
        assert_eq!(p.partitions(), partitions, "{kind}");
        assert_eq!(p.circuit_id.size, SectorSize::S64GiB);
    }
    check_structure(&r.porep, 10);
    check_structure(&r.snap, 16);
    // The cheap one is counted: the 64 GiB trees have a top level of arity 2.
    let id = CircuitId::new(CircuitKind::WinningPost, SectorSize::S64GiB);
    let ours = shaped::count_partition(&r.winning, 0).unwrap();
    assert_eq!(ours, shaped::count_blank(id).unwrap());
    assert_ne!(ours, known(CircuitId::new(CircuitKind::WinningPost, SIZE)));
}

/// Issue 29 item 5: the TIMING-ONLY NI-PoRep request plans the PoRep circuit with NI-PoRep's
/// partition count (13 at 2 KiB, as the sealed test sector's), each partition of the blank
/// circuit's shape, and a plan that aggregates its partition proofs.
#[test]
fn ni_porep_requests_plan_the_porep_circuit_with_ni_partition_counts() {
    let size = SectorSize::S2KiB;
    let req = shaped::ni_porep_request(size, SEED).unwrap();
    assert_eq!(
        req.registered_proof(),
        15,
        "StackedDrg2KiBV1_2_Feat_NonInteractivePoRep"
    );
    let p = plan(&req).unwrap();
    let id = CircuitId::new(CircuitKind::PoRep, size);
    assert_eq!((p.partitions(), p.circuit_id), (13, id));
    assert!(
        p.finisher.is_some(),
        "NI-PoRep's partition proofs are aggregated"
    );
    let blank = shaped::count_blank(id).unwrap();
    for k in [0, 12] {
        assert_eq!(
            shaped::count_partition(&req, k).unwrap(),
            blank,
            "partition {k}"
        );
    }
    // Deterministic from the seed, and another sector than the interactive request's.
    assert_eq!(shaped::ni_porep_request(size, SEED).unwrap(), req);
    let interactive = shaped::requests(size, SEED).unwrap().porep;
    assert_ne!(interactive.sector_number, 0);
    assert_ne!(interactive.vanilla_proof, req.vanilla_proof);
}

/// The 32 GiB NI-PoRep request: 126 partitions of porep-32g, aggregated. Ignored in the
/// suite (a 620 MiB C1 output: ~15 s and ~2 GB to build, as long again to plan on 2 cores);
/// `cargo test --release -p cuzk-filecoin --test shaped -- --ignored ni_porep_32g`.
#[test]
#[ignore = "a 620 MiB C1 output: ~2 GB and half a minute on 2 cores"]
fn ni_porep_32g_plans_126_partitions_of_the_real_circuit() {
    let t = Instant::now();
    let req = shaped::ni_porep_request(SIZE, SEED).unwrap();
    eprintln!(
        "NI-PoRep 32 GiB: C1 envelope {} bytes, built in {:.1} s",
        req.vanilla_proof.len(),
        t.elapsed().as_secs_f64()
    );
    assert_eq!(req.registered_proof(), 18);
    check_plan(&req, CircuitKind::PoRep, 126);
    assert!(plan(&req).unwrap().finisher.is_some());
    check_structure(&req, 126);
}
