//! Requests of every proof kind for a **synthetic sparse sector**, at any sector size (32 GiB
//! and 64 GiB included), whose witnesses satisfy the real Filecoin circuits: proofs made from
//! them with real (or insecure test) parameters verify with filecoin-proofs' own verifiers.
//! No sector is sealed and nothing is downloaded; a 32 GiB set takes seconds.
//!
//! - PoRep C2 (interactive `…V1_1`): [`porep`] builds the challenged columns, labels and
//!   sparse trees C, R and D.
//! - SnapDeals: [`snap`] builds uniform trees (challenges come from comm_r_new, so the trees
//!   cannot be sparse around them).
//! - WindowPoSt (a full partition of sectors) and WinningPoSt: the shape-true PoSt requests of
//!   [`crate::shaped`] already hash each challenged leaf to its sector's comm_r_last with
//!   comm_r = H(comm_c, comm_r_last); their challenges do not involve comm_r.
//!
//! Such proofs are proofs of a sector that was never sealed: useless on chain, where
//! interactive PoRep commits comm_r before the seed exists. They exist to check a prover at
//! real size ([`WARNING`]). A [`Fault`] breaks one value, for tests that must see a proof
//! fail.
use std::fs;
use std::path::PathBuf;
use std::time::Instant;

use filecoin_proofs::{FallbackPoStSectorProof, MerkleTreeTrait};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use serde::{Deserialize, Serialize};
use storage_proofs_core::merkle::{MerkleProof, MerkleProofTrait};

use crate::shaped::write_set;
use crate::testdata::{write_manifest, Manifest, SectorFacts, MANIFEST};
use cuzk_filecoin::error::{FilecoinError, Result};
use cuzk_filecoin::registry::{ProofKind, SectorSize};
use cuzk_filecoin::request::ProofRequest;

mod check;
mod porep;
mod snap;
pub(crate) mod tree;

pub use check::{porep_public, post_sectors, verify_vanilla, PorepPublic};

/// Version of these files (apart from [`crate::testdata`]'s and [`crate::shaped`]'s).
pub const GENERATOR_VERSION: u32 = 2_000_001;

/// What every artefact of this module says.
pub const WARNING: &str = "SYNTHETIC SECTOR: requests built without sealing, from a sparse \
    sector whose commitments were chosen after its challenges were known. Proofs made from \
    them VERIFY under the circuits' verifying keys, which checks a prover at real size, but \
    they prove a sector that does not exist and are useless on chain.";

/// A plain-text note written beside the requests.
pub const NOTE_FILE: &str = "SYNTHETIC-SECTOR-README.txt";

/// One broken value, for tests that must see the proof fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// PoRep: one parent column's label differs from the label its child was computed from
    /// (every Merkle path still hashes to its root).
    ParentLabel,
    /// The first challenge's replica inclusion proof (tree R; SnapDeals: tree R new; PoSt: the
    /// first sector's first challenge) has one sibling changed (its value plus one).
    PathSibling,
    /// The first challenge's replica inclusion proof puts the leaf at a neighbouring position
    /// of its lowest level (PoRep and PoSt, whose circuits take the challenge as a public
    /// input; SnapDeals' circuit derives the positions from comm_r_new itself, and in its
    /// uniform trees a moved leaf still hashes to the root, so this is no fault there).
    PathPosition,
}

/// `path` (a tree R inclusion path, lowest level first) with `fault` applied, if it is a
/// path fault.
pub(crate) fn break_path<D: filecoin_hashers::Domain>(
    fault: Option<Fault>,
    path: &mut [(Vec<D>, usize)],
) {
    let Some((siblings, pos)) = path.first_mut() else {
        return;
    };
    match fault {
        Some(Fault::PathSibling) => {
            let v: blstrs::Scalar = siblings[0].into();
            siblings[0] = (v + blstrs::Scalar::from(1u64)).into();
        }
        Some(Fault::PathPosition) => *pos = (*pos + 1) % (siblings.len() + 1),
        _ => {}
    }
}

/// A manifest of sparse requests: [`Manifest`] (what the tools read) with the flag first.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SparseManifest {
    /// Always true: the requests are of a synthetic sector.
    pub synthetic_sector: bool,
    /// [`WARNING`].
    pub note: String,
    /// The regular manifest fields (no parameters are written).
    #[serde(flatten)]
    pub manifest: Manifest,
}

/// The four requests of one synthetic sector.
#[derive(Debug)]
pub struct SparseRequests {
    /// PoRep C2 (`vanilla_proof` is the C1 envelope).
    pub porep: ProofRequest,
    /// SnapDeals (one `vanilla_proofs` entry per partition).
    pub snap: ProofRequest,
    /// WindowPoSt partition 0 with a full partition of sectors.
    pub wpost: ProofRequest,
    /// WinningPoSt.
    pub winning: ProofRequest,
    /// The PoRep sector's commitments, ticket and seed.
    pub sector: SectorFacts,
}

/// The seeded values every request of a set shares.
struct Ids {
    miner_id: u64,
    sector_number: u64,
}

fn ids(rng: &mut ChaCha8Rng) -> Ids {
    Ids {
        miner_id: 1000 + rng.next_u64() % 9000,
        sector_number: 1 + rng.next_u64() % 1000,
    }
}

/// The RNG of `kind`'s request in the set of `seed`: each kind has a stream of its own, so
/// one kind is built alone exactly as in the whole set.
fn rng_for(seed: u64, kind: ProofKind) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_5a25_e000_0000);
    rng.set_stream(kind.to_wire() as u64);
    rng
}

/// The request of `kind` for the synthetic sector of `size` and `seed`, with `fault` if any;
/// for PoRep also its commitments, ticket and seed.
pub fn request(
    kind: ProofKind,
    size: SectorSize,
    seed: u64,
    fault: Option<Fault>,
) -> Result<(ProofRequest, Option<SectorFacts>)> {
    let Ids {
        miner_id,
        sector_number,
    } = ids(&mut ChaCha8Rng::seed_from_u64(seed));
    let rng = &mut rng_for(seed, kind);
    if fault == Some(Fault::ParentLabel) && kind != ProofKind::PoRepSealCommit {
        return Err(FilecoinError::filecoin(
            "sparse request fault",
            "only PoRep has parent labels",
        ));
    }
    if fault == Some(Fault::PathPosition) && kind == ProofKind::SnapDealsUpdate {
        return Err(FilecoinError::filecoin(
            "sparse request fault",
            "SnapDeals' circuit derives the path positions itself",
        ));
    }
    Ok(match kind {
        ProofKind::PoRepSealCommit => {
            let (req, f) = porep::request(size, miner_id, sector_number, fault, rng)?;
            let facts = SectorFacts {
                comm_r: hex::encode(f.comm_r),
                comm_d: hex::encode(f.comm_d),
                ticket: hex::encode(f.ticket),
                seed: hex::encode(f.seed),
            };
            (req, Some(facts))
        }
        ProofKind::SnapDealsUpdate => {
            let mut req = snap::request(size, fault, rng)?;
            req.miner_id = miner_id;
            req.sector_number = sector_number;
            (req, None)
        }
        ProofKind::WindowPostPartition | ProofKind::WinningPost => {
            let mut req = crate::shaped::post::request(kind, size, miner_id, rng)?;
            if let Some(fault) = fault {
                let first = req.vanilla_proofs.first_mut().ok_or_else(|| {
                    FilecoinError::filecoin("sparse PoSt fault", "no sector proof")
                })?;
                *first = cuzk_filecoin::with_tree!(size, break_post_path(first, fault))?;
            }
            (req, None)
        }
    })
}

/// A PoSt sector proof (bincode) whose first inclusion proof has `fault`.
fn break_post_path<Tree: 'static + MerkleTreeTrait>(bytes: &[u8], fault: Fault) -> Result<Vec<u8>> {
    let bad = |e: bincode::Error| FilecoinError::filecoin("sparse PoSt fault", e);
    let mut proof: FallbackPoStSectorProof<Tree> = bincode::deserialize(bytes).map_err(bad)?;
    let sector = proof.vanilla_proof.sectors.first_mut().ok_or_else(|| {
        FilecoinError::filecoin("sparse PoSt fault", "a sector proof without sectors")
    })?;
    let p = sector.inclusion_proofs.first_mut().ok_or_else(|| {
        FilecoinError::filecoin("sparse PoSt fault", "a sector proof without challenges")
    })?;
    let mut path = p.path();
    break_path(Some(fault), &mut path);
    *p = MerkleProof::from_parts(p.leaf(), p.root(), path);
    bincode::serialize(&proof).map_err(bad)
}

/// The four requests of the synthetic sector of `size` and `seed`.
pub fn requests(size: SectorSize, seed: u64) -> Result<SparseRequests> {
    let (porep, sector) = request(ProofKind::PoRepSealCommit, size, seed, None)?;
    let (snap, _) = request(ProofKind::SnapDealsUpdate, size, seed, None)?;
    let (wpost, _) = request(ProofKind::WindowPostPartition, size, seed, None)?;
    let (winning, _) = request(ProofKind::WinningPost, size, seed, None)?;
    Ok(SparseRequests {
        porep,
        snap,
        wpost,
        winning,
        sector: sector.unwrap_or_else(|| SectorFacts {
            comm_r: String::new(),
            comm_d: String::new(),
            ticket: String::new(),
            seed: String::new(),
        }),
    })
}

/// Options of [`generate`].
#[derive(Clone, Debug)]
pub struct SparseOptions {
    /// Output directory.
    pub out: PathBuf,
    /// Sector size.
    pub sector_size: SectorSize,
    /// Seed of every value.
    pub seed: u64,
}

/// Writes the four requests of a synthetic sector into `opts.out` with a manifest in
/// [`crate::testdata`]'s format (so `cuzk bench batch --input manifest.json` reads it) and
/// [`NOTE_FILE`]; every file name says `synthetic-sector`. No parameters are written.
pub fn generate(opts: &SparseOptions) -> Result<SparseManifest> {
    let started = Instant::now();
    let dir = &opts.out;
    fs::create_dir_all(dir).map_err(|e| FilecoinError::io(dir, e))?;
    let _ = fs::remove_file(dir.join(MANIFEST));
    let r = requests(opts.sector_size, opts.seed)?;
    let built = started.elapsed().as_secs_f64();

    let tag = format!("{}-synthetic-sector", opts.sector_size.short());
    let note = format!(
        "{WARNING}\n\nSector size {}, seed {}. Requests: porep, snap, wpost, winning. Prove \
         them with the circuits' parameters (real, or `cuzk gen params`' insecure ones) and \
         verify with filecoin-proofs against the same directory's verifying keys.\n",
        opts.sector_size, opts.seed,
    );
    let named = [
        ("porep", &r.porep),
        ("snap", &r.snap),
        ("wpost", &r.wpost),
        ("winning", &r.winning),
    ];
    let (specs, files) = write_set(dir, &tag, named, NOTE_FILE, &note)?;
    let manifest = SparseManifest {
        synthetic_sector: true,
        note: WARNING.to_string(),
        manifest: Manifest {
            generator_version: GENERATOR_VERSION,
            seed: opts.seed,
            sector_size: opts.sector_size.bytes(),
            sector: r.sector,
            requests: specs,
            params: Vec::new(),
            files,
            seal_seconds: built,
            total_seconds: started.elapsed().as_secs_f64(),
        },
    };
    write_manifest(dir, &manifest)?;
    Ok(manifest)
}
