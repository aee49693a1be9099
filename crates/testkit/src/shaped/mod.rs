//! **TIMING-ONLY** requests of the real sector shapes (32 GiB, 64 GiB) for every proof kind,
//! without a sealed sector: vanilla proofs built from the storage-proofs types with the real
//! structure (challenge counts, Merkle path lengths and arities, columns, parents, sector
//! counts) and random values, in exactly the wire encodings Curio sends. They pass request
//! decoding and planning and drive the real circuits' synthesis at full size, but **proofs
//! made from them do not verify**: they exist to measure time and memory.
//!
//! - a PoRep C2 request (C1 envelope) with every partition's vanilla proofs;
//! - SnapDeals: one partition proof per partition;
//! - WindowPoSt: one partition with the real sector count; WinningPoSt.
//!
//! [`ensure`] writes them with a manifest in [`crate::testdata`]'s format (so `cuzk bench
//! batch --input manifest.json` reads it), plus `"timing_only": true`, a note, and a
//! [`NOTE_FILE`]; every file name says `timing-only`. [`count_partition`] and
//! [`count_blank`] check the circuits' shapes without storing a witness.
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::testdata::{write_manifest, Manifest, RequestSpec, SectorFacts, MANIFEST};
use cuzk_filecoin::error::{FilecoinError, Result};
use cuzk_filecoin::registry::{ProofKind, SectorSize};
use cuzk_filecoin::request::ProofRequest;

mod count;
pub(crate) mod porep;
pub(crate) mod post;
pub(crate) mod snap;
pub(crate) mod tree;

pub use count::{
    count_blank, count_blank_post_sectors, count_circuit, count_partition, count_post_sectors,
    partition_signatures, Counts,
};

/// Version of these files. Distinct from [`crate::testdata::GENERATOR_VERSION`], so the
/// regular generator's cache check never takes a timing-only directory for real test data.
pub const GENERATOR_VERSION: u32 = 1_000_002;

/// What every timing-only artefact says.
pub const WARNING: &str = "TIMING-ONLY: random vanilla proofs of the real shapes; they drive \
    full-size synthesis for time and memory measurements, but proofs made from them DO NOT \
    VERIFY. Never use them where a proof matters.";

/// A plain-text note written beside the requests.
pub const NOTE_FILE: &str = "TIMING-ONLY-README.txt";

/// A timing-only manifest: [`Manifest`] (what the tools read) with the loud flag first.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ShapedManifest {
    /// Always true: these requests give proofs that do not verify.
    pub timing_only: bool,
    /// [`WARNING`].
    pub note: String,
    /// The regular manifest fields (no parameters are written).
    #[serde(flatten)]
    pub manifest: Manifest,
}

/// Options of [`ensure`].
#[derive(Clone, Debug)]
pub struct ShapedOptions {
    /// Output directory.
    pub out: PathBuf,
    /// Sector size (32 GiB or 64 GiB in practice; the smaller sizes work too).
    pub sector_size: SectorSize,
    /// Seed of every random value.
    pub seed: u64,
    /// Also a NI-PoRep request (`porep-ni`, [`ni_porep_request`]): at 32 GiB 126 partitions
    /// and a C1 output 12.6 times PoRep's.
    pub ni_porep: bool,
}

/// The public facts of the fictitious PoRep sector.
pub(crate) struct Facts {
    pub(crate) comm_r: [u8; 32],
    pub(crate) comm_d: [u8; 32],
    pub(crate) ticket: [u8; 32],
    pub(crate) seed: [u8; 32],
}

/// The four timing-only requests of one sector size.
#[derive(Debug)]
pub struct ShapedRequests {
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

/// 32 random bytes that are a canonical scalar (commitments, randomness, tickets).
pub(crate) fn random32(rng: &mut ChaCha8Rng) -> [u8; 32] {
    let mut b = [0u8; 32];
    rng.fill_bytes(&mut b);
    b[31] &= 0x3f;
    b
}

impl ShapedRequests {
    /// The requests with their manifest names.
    fn named(&self) -> [(&str, &ProofRequest); 4] {
        [
            ("porep", &self.porep),
            ("snap", &self.snap),
            ("wpost", &self.wpost),
            ("winning", &self.winning),
        ]
    }
}

/// Builds the four requests in memory, deterministically from `seed`.
pub fn requests(size: SectorSize, seed: u64) -> Result<ShapedRequests> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let miner_id = 1000 + rng.next_u64() % 9000;
    let sector_number = 1 + rng.next_u64() % 1000;
    let (porep, facts) = porep::request(size, miner_id, sector_number, &mut rng)?;
    let mut snap = snap::request(size, &mut rng)?;
    snap.miner_id = miner_id;
    snap.sector_number = sector_number;
    let wpost = post::request(ProofKind::WindowPostPartition, size, miner_id, &mut rng)?;
    let winning = post::request(ProofKind::WinningPost, size, miner_id, &mut rng)?;
    Ok(ShapedRequests {
        porep,
        snap,
        wpost,
        winning,
        sector: SectorFacts {
            comm_r: hex::encode(facts.comm_r),
            comm_d: hex::encode(facts.comm_d),
            ticket: hex::encode(facts.ticket),
            seed: hex::encode(facts.seed),
        },
    })
}

/// A timing-only NI-PoRep C2 request (`…V1_2_Feat_NonInteractivePoRep`) of one random
/// sector, deterministically from `seed` (its own sector: not [`requests`]' PoRep one). The
/// job aggregates its partition proofs (SnarkPack), which needs the aggregation SRS in the
/// parameter directory (`cuzk gen aggregation-srs`).
pub fn ni_porep_request(size: SectorSize, seed: u64) -> Result<ProofRequest> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x4e49_504f_5245_5000);
    let miner_id = 1000 + rng.next_u64() % 9000;
    let sector_number = 1 + rng.next_u64() % 1000;
    let num = porep::NI_POREP_FIRST + size.index();
    porep::request_of(size, num, miner_id, sector_number, &mut rng).map(|(r, _)| r)
}

/// The manifest in `opts.out` if it is a timing-only one for the same seed and size (and
/// NI-PoRep request or not) with every file intact.
pub fn cached(opts: &ShapedOptions) -> Option<ShapedManifest> {
    let bytes = fs::read(opts.out.join(MANIFEST)).ok()?;
    let m: ShapedManifest = serde_json::from_slice(&bytes).ok()?;
    let ok = m.timing_only
        && m.manifest.generator_version == GENERATOR_VERSION
        && m.manifest.seed == opts.seed
        && m.manifest.sector_size == opts.sector_size.bytes()
        && m.manifest.request("porep-ni").is_some() == opts.ni_porep
        && m.manifest.files.iter().all(|(name, len)| {
            fs::metadata(opts.out.join(name))
                .map(|md| md.len() == *len)
                .unwrap_or(false)
        });
    ok.then_some(m)
}

/// Returns the cached timing-only data in `opts.out` (and `true`), or generates it.
pub fn ensure(opts: &ShapedOptions) -> Result<(ShapedManifest, bool)> {
    match cached(opts) {
        Some(m) => Ok((m, true)),
        None => generate(opts).map(|m| (m, false)),
    }
}

/// Writes one file, recording its name and length.
pub(crate) fn write(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    files: &mut Vec<(String, u64)>,
) -> Result<()> {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        fs::create_dir_all(parent).map_err(|e| FilecoinError::io(parent, e))?;
    }
    fs::write(&p, bytes).map_err(|e| FilecoinError::io(&p, e))?;
    files.push((name.to_string(), bytes.len() as u64));
    Ok(())
}

/// The manifest entry of `req` with its files (named by the caller).
fn spec(kind: &str, req: &ProofRequest, single: Option<String>, many: Vec<String>) -> RequestSpec {
    RequestSpec {
        kind: kind.to_string(),
        proof_kind: req.kind().to_wire(),
        sector_size: req.sector_size().bytes(),
        registered_proof: req.registered_proof(),
        vanilla_proof_file: single,
        vanilla_proofs_files: many,
        sector_number: req.sector_number,
        miner_id: req.miner_id,
        randomness: hex::encode(&req.randomness),
        partition_index: req.partition_index,
        comm_r_old: hex::encode(&req.comm_r_old),
        comm_r_new: hex::encode(&req.comm_r_new),
        comm_d_new: hex::encode(&req.comm_d_new),
    }
}

/// Files written, with their lengths (a manifest's `files`).
pub(crate) type Files = Vec<(String, u64)>;

/// Writes each `(kind, request)`'s payload into `dir` under names tagged `tag` (PoRep's
/// envelope as `porep-{tag}-c1.json`, one `.bin` per vanilla proof of the others), and
/// returns the manifest entries and every file with its length.
pub(crate) fn write_requests<'a>(
    dir: &Path,
    tag: &str,
    requests: impl IntoIterator<Item = (&'a str, &'a ProofRequest)>,
) -> Result<(Vec<RequestSpec>, Files)> {
    let mut files = Vec::new();
    let mut specs = Vec::new();
    for (kind, req) in requests {
        if req.kind() == ProofKind::PoRepSealCommit {
            let name = format!("{kind}-{tag}-c1.json");
            write(dir, &name, &req.vanilla_proof, &mut files)?;
            specs.push(spec(kind, req, Some(name), Vec::new()));
            continue;
        }
        let mut names = Vec::with_capacity(req.vanilla_proofs.len());
        for (i, bytes) in req.vanilla_proofs.iter().enumerate() {
            let name = if req.vanilla_proofs.len() == 1 {
                format!("{kind}-{tag}-{i}.bin")
            } else {
                format!("{kind}-{tag}/{kind}-{tag}-{i:04}.bin")
            };
            write(dir, &name, bytes, &mut files)?;
            names.push(name);
        }
        specs.push(spec(kind, req, None, names));
    }
    Ok((specs, files))
}

/// [`write_requests`] of one sector's requests, and `note` as `note_file`; returns the
/// manifest entries and every file (the note's too).
pub(crate) fn write_set<'a>(
    dir: &Path,
    tag: &str,
    requests: impl IntoIterator<Item = (&'a str, &'a ProofRequest)>,
    note_file: &str,
    note: &str,
) -> Result<(Vec<RequestSpec>, Files)> {
    let (specs, mut files) = write_requests(dir, tag, requests)?;
    write(dir, note_file, note.as_bytes(), &mut files)?;
    Ok((specs, files))
}

/// Generates the requests into `opts.out` (no cache check; see [`ensure`]).
pub fn generate(opts: &ShapedOptions) -> Result<ShapedManifest> {
    let started = Instant::now();
    let dir = &opts.out;
    fs::create_dir_all(dir).map_err(|e| FilecoinError::io(dir, e))?;
    let _ = fs::remove_file(dir.join(MANIFEST));
    let r = requests(opts.sector_size, opts.seed)?;
    let ni = match opts.ni_porep {
        true => Some(ni_porep_request(opts.sector_size, opts.seed)?),
        false => None,
    };
    let seal_seconds = started.elapsed().as_secs_f64();

    let tag = format!("{}-timing-only", opts.sector_size.short());
    let note = format!(
        "{WARNING}\n\nSector size {}, seed {}. Requests: porep, snap, wpost, winning{}. No \
         parameters were written.\n",
        opts.sector_size,
        opts.seed,
        if ni.is_some() { ", porep-ni" } else { "" },
    );
    let extra = ni.as_ref().map(|r| ("porep-ni", r));
    let named = r.named().into_iter().chain(extra);
    let (specs, files) = write_set(dir, &tag, named, NOTE_FILE, &note)?;

    let manifest = ShapedManifest {
        timing_only: true,
        note: WARNING.to_string(),
        manifest: Manifest {
            generator_version: GENERATOR_VERSION,
            seed: opts.seed,
            sector_size: opts.sector_size.bytes(),
            sector: r.sector,
            requests: specs,
            params: Vec::new(),
            files,
            seal_seconds,
            total_seconds: started.elapsed().as_secs_f64(),
        },
    };
    write_manifest(dir, &manifest)?;
    Ok(manifest)
}
