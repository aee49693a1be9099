//! Test data: seals a small sector with filecoin-proofs on the CPU (PC1, PC2, C1 — none of
//! which needs Groth16 parameters), derives WinningPoSt/WindowPoSt vanilla proofs and a
//! SnapDeals update from it, writes one request per kind plus a manifest, and writes
//! **insecure** parameters for those circuits, made by our generator, under Filecoin's file
//! names (so `FIL_PROOFS_PARAMETER_CACHE=DIR` makes filecoin-proofs' verifiers use them).
//!
//! Deterministic from a seed. Cached: if `DIR/manifest.json` was written by the same
//! generator version for the same seed and size, and every file it lists still has its
//! recorded length, nothing is regenerated. A lock file serializes concurrent callers.
use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::Instant;

use filecoin_proofs_api::seal::{
    add_piece, seal_commit_phase1, seal_pre_commit_phase1, seal_pre_commit_phase2,
};
use filecoin_proofs_api::{
    post, update, PrivateReplicaInfo, RegisteredPoStProof, RegisteredSealProof, SectorId,
    UnpaddedBytesAmount,
};
use fs2::FileExt;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use serde::{Deserialize, Serialize};

use cuzk_filecoin::error::{FilecoinError, Result};
use cuzk_filecoin::params::write_filecoin_params;
use cuzk_filecoin::registry::{
    prover_id_from_miner_id, CircuitId, CircuitKind, ProofKind, RegisteredProof, SectorSize,
};
use cuzk_filecoin::request::{C1Envelope, ProofRequest};

/// Bump when the generated files change meaning.
pub const GENERATOR_VERSION: u32 = 2;

/// File name of the manifest in the output directory.
pub const MANIFEST: &str = "manifest.json";

/// One request, as files and fields (what a client would send).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct RequestSpec {
    /// `porep`, `snap`, `wpost` or `winning`.
    pub kind: String,
    /// Wire `ProofKind` number.
    pub proof_kind: i32,
    /// Sector size in bytes.
    pub sector_size: u64,
    /// Go-side registered proof number.
    pub registered_proof: u64,
    /// File holding `vanilla_proof` (PoRep envelope), if any.
    pub vanilla_proof_file: Option<String>,
    /// Files holding `vanilla_proofs`, in order.
    pub vanilla_proofs_files: Vec<String>,
    /// `sector_number`.
    pub sector_number: u64,
    /// `miner_id`.
    pub miner_id: u64,
    /// `randomness`, hex.
    pub randomness: String,
    /// `partition_index`.
    pub partition_index: u32,
    /// `comm_r_old`, hex.
    pub comm_r_old: String,
    /// `comm_r_new`, hex.
    pub comm_r_new: String,
    /// `comm_d_new`, hex.
    pub comm_d_new: String,
}

/// Parameters written for one circuit.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ParamSpec {
    /// Circuit id (`porep-2k`, ...).
    pub circuit_id: String,
    /// `.params` file name.
    pub params: String,
    /// `.vk` file name.
    pub vk: String,
    /// `.meta` file name.
    pub meta: String,
    /// Seconds our generator took.
    pub setup_seconds: f64,
}

/// The sector's public facts (for tests that verify with other inputs).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct SectorFacts {
    /// comm_r, hex.
    pub comm_r: String,
    /// comm_d, hex.
    pub comm_d: String,
    /// Ticket, hex.
    pub ticket: String,
    /// Interactive seed, hex.
    pub seed: String,
}

/// What the generator wrote.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    /// [`GENERATOR_VERSION`] of the writer.
    pub generator_version: u32,
    /// The seed.
    pub seed: u64,
    /// Sector size in bytes.
    pub sector_size: u64,
    /// The sealed sector's public facts.
    pub sector: SectorFacts,
    /// One request per kind: `porep`, `winning`, `wpost`, `snap`.
    pub requests: Vec<RequestSpec>,
    /// Parameters, one per circuit.
    pub params: Vec<ParamSpec>,
    /// Every file written with its length (for the cache check).
    pub files: Vec<(String, u64)>,
    /// Seconds: sealing and vanilla proofs.
    pub seal_seconds: f64,
    /// Seconds: everything.
    pub total_seconds: f64,
}

impl Manifest {
    /// The request spec of a kind (`porep`, `snap`, `wpost`, `winning`).
    pub fn request(&self, kind: &str) -> Option<&RequestSpec> {
        self.requests.iter().find(|r| r.kind == kind)
    }
}

impl RequestSpec {
    /// Loads the request's files from `dir` into a [`ProofRequest`].
    pub fn load(&self, dir: &Path) -> Result<ProofRequest> {
        let read = |name: &str| {
            let p = dir.join(name);
            fs::read(&p).map_err(|e| FilecoinError::io(p, e))
        };
        let hex = |field: &'static str, s: &str| {
            hex::decode(s).map_err(|e| FilecoinError::InvalidValue {
                field,
                reason: e.to_string(),
            })
        };
        let mut req = ProofRequest::new(
            ProofKind::from_wire(self.proof_kind)?,
            self.sector_size,
            self.registered_proof,
        )?;
        if let Some(f) = &self.vanilla_proof_file {
            req.vanilla_proof = read(f)?;
        }
        for f in &self.vanilla_proofs_files {
            req.vanilla_proofs.push(read(f)?);
        }
        req.sector_number = self.sector_number;
        req.miner_id = self.miner_id;
        req.randomness = hex("randomness", &self.randomness)?;
        req.partition_index = self.partition_index;
        req.comm_r_old = hex("comm_r_old", &self.comm_r_old)?;
        req.comm_r_new = hex("comm_r_new", &self.comm_r_new)?;
        req.comm_d_new = hex("comm_d_new", &self.comm_d_new)?;
        Ok(req)
    }
}

/// Options of [`generate`].
#[derive(Clone, Debug)]
pub struct TestdataOptions {
    /// Output directory.
    pub out: PathBuf,
    /// Sector size (only 2 KiB is practical on a small machine: parameters for 8 MiB PoRep
    /// take far longer).
    pub sector_size: SectorSize,
    /// Seed of everything random.
    pub seed: u64,
    /// Also write parameters (the slow part).
    pub params: bool,
}

/// Seed of the 2 KiB test data that every test binary of a target dir shares.
pub const SHARED_SEED: u64 = 0x5eed_2c1d;

/// The directory of the shared 2 KiB test data under `tmp` (a target's
/// `CARGO_TARGET_TMPDIR`).
pub fn shared_dir(tmp: &Path) -> PathBuf {
    tmp.join("cuzk-testdata-2k")
}

/// The shared 2 KiB test data under `tmp` (parameters included): generated on first use,
/// reused after, safe from several processes at once (see [`ensure`]).
pub fn shared_2k(tmp: &Path) -> Result<(PathBuf, Manifest)> {
    let out = shared_dir(tmp);
    let m = ensure(&TestdataOptions {
        out: out.clone(),
        sector_size: SectorSize::S2KiB,
        seed: SHARED_SEED,
        params: true,
    })?;
    Ok((out, m))
}

/// [`shared_dir`] for a test process, with filecoin-proofs pointed at it (parameters and
/// caches) the first time: filecoin-proofs reads `FIL_PROOFS_*` once per process, so a test
/// calls this before anything touches the Filecoin crates.
pub fn process_dir(tmp: &Path) -> PathBuf {
    static ENV: std::sync::Once = std::sync::Once::new();
    let dir = shared_dir(tmp);
    ENV.call_once(|| {
        cuzk_filecoin::params::set_parameter_dir(&dir);
        cuzk_filecoin::params::set_cache_dir(&dir);
    });
    dir
}

/// [`shared_2k`] for a test process: generated (or found) once, after [`process_dir`].
/// Panics when the data cannot be made: a test cannot go on without it.
pub fn process_data(tmp: &Path) -> &'static (PathBuf, Manifest) {
    static DATA: std::sync::OnceLock<(PathBuf, Manifest)> = std::sync::OnceLock::new();
    DATA.get_or_init(|| {
        process_dir(tmp);
        shared_2k(tmp).expect("generating the 2 KiB test data")
    })
}

/// Returns the manifest in `opts.out` if it matches `opts` and its files are intact,
/// otherwise generates everything. Safe to call from several processes at once.
pub fn ensure(opts: &TestdataOptions) -> Result<Manifest> {
    with_dir_lock(&opts.out, || match cached(opts) {
        Some(m) => Ok(m),
        None => generate(opts),
    })
}

/// Runs `f` holding an exclusive lock on `dir/.lock` (created with `dir`), so processes that
/// share `dir` take turns.
pub(crate) fn with_dir_lock<T>(dir: &Path, f: impl FnOnce() -> Result<T>) -> Result<T> {
    fs::create_dir_all(dir).map_err(|e| FilecoinError::io(dir, e))?;
    let lock_path = dir.join(".lock");
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| FilecoinError::io(&lock_path, e))?;
    lock.lock_exclusive()
        .map_err(|e| FilecoinError::io(&lock_path, e))?;
    let result = f();
    // Dropping the file releases the lock too; unlock explicitly to report errors early.
    let _ = FileExt::unlock(&lock);
    result
}

/// The cached manifest, if it matches `opts` and every listed file has its recorded length.
pub fn cached(opts: &TestdataOptions) -> Option<Manifest> {
    let bytes = fs::read(opts.out.join(MANIFEST)).ok()?;
    let m: Manifest = serde_json::from_slice(&bytes).ok()?;
    if m.generator_version != GENERATOR_VERSION
        || m.seed != opts.seed
        || m.sector_size != opts.sector_size.bytes()
        || (opts.params && m.params.is_empty())
    {
        return None;
    }
    let intact = m.files.iter().all(|(name, len)| {
        fs::metadata(opts.out.join(name))
            .map(|md| md.len() == *len)
            .unwrap_or(false)
    });
    intact.then_some(m)
}

fn fc(context: &'static str) -> impl Fn(anyhow::Error) -> FilecoinError {
    move |e| FilecoinError::filecoin(context, e)
}

fn random32(rng: &mut ChaCha8Rng) -> [u8; 32] {
    let mut b = [0u8; 32];
    rng.fill_bytes(&mut b);
    // Keep it a canonical scalar (PoSt randomness must be one).
    b[31] &= 0x3f;
    b
}

fn write(dir: &Path, name: &str, bytes: &[u8], files: &mut Vec<(String, u64)>) -> Result<()> {
    let p = dir.join(name);
    fs::write(&p, bytes).map_err(|e| FilecoinError::io(&p, e))?;
    files.push((name.to_string(), bytes.len() as u64));
    Ok(())
}

fn touch(p: &Path) -> Result<()> {
    File::create(p)
        .map(|_| ())
        .map_err(|e| FilecoinError::io(p, e))
}

/// Writes a staged sector holding one random piece filling it; returns its piece info.
fn stage(
    rsp: RegisteredSealProof,
    path: &Path,
    rng: &mut ChaCha8Rng,
) -> Result<filecoin_proofs_api::PieceInfo> {
    let unpadded = u64::from(UnpaddedBytesAmount::from(
        filecoin_proofs_api::PaddedBytesAmount(u64::from(rsp.sector_size())),
    ));
    let mut data = vec![0u8; unpadded as usize];
    rng.fill_bytes(&mut data);
    let mut staged = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| FilecoinError::io(path, e))?;
    let (info, _) = add_piece(
        rsp,
        &data[..],
        &mut staged,
        UnpaddedBytesAmount(unpadded),
        &[],
    )
    .map_err(fc("add_piece"))?;
    Ok(info)
}

/// A sector sealed by [`seal_sector`].
struct SealedSector {
    cache: PathBuf,
    sealed: PathBuf,
    comm_r: [u8; 32],
    comm_d: [u8; 32],
    ticket: [u8; 32],
    seed: [u8; 32],
    /// Its commit-phase-1 output as a C2 request envelope.
    env: C1Envelope,
}

/// Seals one sector holding a random piece (PC1, PC2, C1) in `work` (files named with
/// `prefix`), drawing the piece, the ticket and the seed from `rng` in that order.
fn seal_sector(
    rsp: RegisteredSealProof,
    work: &Path,
    prefix: &str,
    prover_id: [u8; 32],
    sector_number: u64,
    rng: &mut ChaCha8Rng,
) -> Result<SealedSector> {
    let sector_id = SectorId::from(sector_number);
    let cache = work.join(format!("{prefix}cache"));
    fs::create_dir_all(&cache).map_err(|e| FilecoinError::io(&cache, e))?;
    let staged = work.join(format!("{prefix}staged"));
    let sealed = work.join(format!("{prefix}sealed"));
    let pieces = [stage(rsp, &staged, rng)?];
    touch(&sealed)?;
    let ticket = random32(rng);
    let seed = random32(rng);
    let pc1 = seal_pre_commit_phase1(
        rsp, &cache, &staged, &sealed, prover_id, sector_id, ticket, &pieces,
    )
    .map_err(fc("seal_pre_commit_phase1"))?;
    let pc2 = seal_pre_commit_phase2(pc1, &cache, &sealed).map_err(fc("seal_pre_commit_phase2"))?;
    let (comm_r, comm_d) = (pc2.comm_r, pc2.comm_d);
    let c1 = seal_commit_phase1(
        cache.as_path(),
        sealed.as_path(),
        prover_id,
        sector_id,
        ticket,
        seed,
        pc2,
        &pieces,
    )
    .map_err(fc("seal_commit_phase1"))?;
    let c1_json = serde_json::to_vec(&c1)
        .map_err(|e| FilecoinError::filecoin("encoding the C1 output", e))?;
    drop(c1);
    let sector_size = u64::from(rsp.sector_size());
    Ok(SealedSector {
        cache,
        sealed,
        comm_r,
        comm_d,
        ticket,
        seed,
        env: C1Envelope::new(sector_number, sector_size, &c1_json),
    })
}

/// Generates everything into `opts.out` (no cache check; see [`ensure`]).
pub fn generate(opts: &TestdataOptions) -> Result<Manifest> {
    let started = Instant::now();
    let dir = &opts.out;
    let size = opts.sector_size;
    let work = dir.join("work");
    if work.exists() {
        fs::remove_dir_all(&work).map_err(|e| FilecoinError::io(&work, e))?;
    }
    fs::create_dir_all(&work).map_err(|e| FilecoinError::io(&work, e))?;
    let _ = fs::remove_file(dir.join(MANIFEST));

    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let miner_id = 1000 + rng.next_u64() % 9000;
    let sector_number = 1 + rng.next_u64() % 1000;
    let prover_id = prover_id_from_miner_id(miner_id);
    let sector_id = SectorId::from(sector_number);
    let n = size.index();
    let seal_num = 5 + n; // StackedDrg…V1_1
    let RegisteredProof::Seal(rsp) = RegisteredProof::decode(ProofKind::PoRepSealCommit, seal_num)?
    else {
        return Err(FilecoinError::filecoin("testdata", "seal proof expected"));
    };

    // --- Seal (PC1, PC2, C1).
    let SealedSector {
        cache,
        sealed,
        comm_r,
        comm_d,
        ticket,
        seed,
        env,
    } = seal_sector(rsp, &work, "", prover_id, sector_number, &mut rng)?;

    let mut files = Vec::new();
    let mut requests = Vec::new();
    write(dir, "porep-c1.json", &env.to_json(), &mut files)?;
    let blank = |kind: &str, proof_kind: ProofKind, registered_proof: u64| RequestSpec {
        kind: kind.to_string(),
        proof_kind: proof_kind.to_wire(),
        sector_size: size.bytes(),
        registered_proof,
        vanilla_proof_file: None,
        vanilla_proofs_files: Vec::new(),
        sector_number,
        miner_id,
        randomness: String::new(),
        partition_index: 0,
        comm_r_old: String::new(),
        comm_r_new: String::new(),
        comm_d_new: String::new(),
    };
    requests.push(RequestSpec {
        vanilla_proof_file: Some("porep-c1.json".into()),
        ..blank("porep", ProofKind::PoRepSealCommit, seal_num)
    });

    // --- PoSt vanilla proofs from the sealed replica.
    for (kind, proof_kind, num) in [
        ("winning", ProofKind::WinningPost, n),
        ("wpost", ProofKind::WindowPostPartition, 10 + n),
    ] {
        let RegisteredProof::PoSt(post_proof) = RegisteredProof::decode(proof_kind, num)? else {
            return Err(FilecoinError::filecoin("testdata", "PoSt proof expected"));
        };
        let randomness = random32(&mut rng);
        let vanilla = post_vanilla(
            post_proof,
            comm_r,
            &cache,
            &sealed,
            sector_id,
            prover_id,
            &randomness,
        )?;
        let name = format!("{kind}-vanilla-0.bin");
        write(dir, &name, &vanilla, &mut files)?;
        requests.push(RequestSpec {
            vanilla_proofs_files: vec![name],
            randomness: hex::encode(randomness),
            ..blank(kind, proof_kind, num)
        });
    }

    // --- SnapDeals: encode new data into the sealed sector, prove each partition.
    let update_proof = cuzk_filecoin::registry::update_from_u64(n)?;
    let snap_staged = work.join("snap-staged");
    let new_replica = work.join("snap-replica");
    let new_cache = work.join("snap-cache");
    fs::create_dir_all(&new_cache).map_err(|e| FilecoinError::io(&new_cache, e))?;
    // The new replica is written in place and must already have the sector's size.
    File::create(&new_replica)
        .and_then(|f| f.set_len(size.bytes()))
        .map_err(|e| FilecoinError::io(&new_replica, e))?;
    let snap_piece = stage(rsp, &snap_staged, &mut rng)?;
    let encoded = update::empty_sector_update_encode_into(
        update_proof,
        &new_replica,
        &new_cache,
        &sealed,
        &cache,
        &snap_staged,
        &[snap_piece],
    )
    .map_err(fc("empty_sector_update_encode_into"))?;
    let partition_proofs = update::generate_partition_proofs(
        update_proof,
        comm_r,
        encoded.comm_r_new,
        encoded.comm_d_new,
        &sealed,
        &cache,
        &new_replica,
        &new_cache,
    )
    .map_err(fc("generate_partition_proofs"))?;
    let mut snap_files = Vec::new();
    for (k, p) in partition_proofs.iter().enumerate() {
        let name = format!("snap-vanilla-{k}.bin");
        write(dir, &name, &p.0, &mut files)?;
        snap_files.push(name);
    }
    requests.push(RequestSpec {
        vanilla_proofs_files: snap_files,
        comm_r_old: hex::encode(comm_r),
        comm_r_new: hex::encode(encoded.comm_r_new),
        comm_d_new: hex::encode(encoded.comm_d_new),
        ..blank("snap", ProofKind::SnapDealsUpdate, n)
    });
    // --- NI-PoRep: a second sector sealed with the non-interactive registered proof (its
    // partitions use the interactive PoRep circuit and parameters; the proof is their
    // SnarkPack aggregate).
    let ni_num = 15 + n; // StackedDrg…V1_2_Feat_NonInteractivePoRep
    let RegisteredProof::Seal(ni_rsp) =
        RegisteredProof::decode(ProofKind::PoRepSealCommit, ni_num)?
    else {
        return Err(FilecoinError::filecoin("testdata", "seal proof expected"));
    };
    let ni_sector = sector_number + 1;
    let ni_env = seal_sector(ni_rsp, &work, "ni-", prover_id, ni_sector, &mut rng)?.env;
    write(dir, "porep-ni-c1.json", &ni_env.to_json(), &mut files)?;
    requests.push(RequestSpec {
        vanilla_proof_file: Some("porep-ni-c1.json".into()),
        sector_number: ni_sector,
        ..blank("porep-ni", ProofKind::PoRepSealCommit, ni_num)
    });

    let seal_seconds = started.elapsed().as_secs_f64();
    fs::remove_dir_all(&work).map_err(|e| FilecoinError::io(&work, e))?;

    // --- Parameters (ours, insecure) under Filecoin's names.
    let mut params = Vec::new();
    if opts.params {
        let mut prng = ChaCha8Rng::seed_from_u64(opts.seed ^ 0x7061_7261_6d73);
        for kind in [
            CircuitKind::WindowPost,
            CircuitKind::WinningPost,
            CircuitKind::Snap,
            CircuitKind::PoRep,
        ] {
            let id = CircuitId::new(kind, size);
            let t = Instant::now();
            let srs = cuzk_filecoin::params::generate_test_params(id, &mut prng)?;
            let f = write_filecoin_params(id, &srs, dir)?;
            drop(srs);
            for name in [&f.params, &f.vk, &f.meta] {
                let p = dir.join(name);
                let len = fs::metadata(&p)
                    .map_err(|e| FilecoinError::io(&p, e))?
                    .len();
                files.push((name.clone(), len));
            }
            let setup_seconds = t.elapsed().as_secs_f64();
            tracing::info!(circuit = %id, seconds = setup_seconds, "wrote test parameters");
            params.push(ParamSpec {
                circuit_id: id.to_string(),
                params: f.params,
                vk: f.vk,
                meta: f.meta,
                setup_seconds,
            });
        }
        let srs = write_test_aggregation_srs(dir, &mut prng)?;
        let len = fs::metadata(dir.join(&srs))
            .map_err(|e| FilecoinError::io(dir.join(&srs), e))?
            .len();
        files.push((srs, len));
    }

    let manifest = Manifest {
        generator_version: GENERATOR_VERSION,
        seed: opts.seed,
        sector_size: size.bytes(),
        sector: SectorFacts {
            comm_r: hex::encode(comm_r),
            comm_d: hex::encode(comm_d),
            ticket: hex::encode(ticket),
            seed: hex::encode(seed),
        },
        requests,
        params,
        files,
        seal_seconds,
        total_seconds: started.elapsed().as_secs_f64(),
    };
    write_manifest(dir, &manifest)?;
    Ok(manifest)
}

/// Writes `manifest` as `dir/manifest.json`, through a temporary file and a rename, so a
/// reader never sees half a manifest.
pub(crate) fn write_manifest<T: Serialize>(dir: &Path, manifest: &T) -> Result<()> {
    let json = serde_json::to_vec_pretty(manifest)
        .map_err(|e| FilecoinError::filecoin("writing the manifest", e))?;
    let tmp = dir.join(format!("{MANIFEST}.tmp"));
    fs::write(&tmp, json).map_err(|e| FilecoinError::io(&tmp, e))?;
    fs::rename(&tmp, dir.join(MANIFEST)).map_err(|e| FilecoinError::io(dir.join(MANIFEST), e))
}

/// One sector's PoSt vanilla proof (bincode, as filecoin-proofs-api produces it).
fn post_vanilla(
    post_proof: RegisteredPoStProof,
    comm_r: [u8; 32],
    cache: &Path,
    sealed: &Path,
    sector_id: SectorId,
    prover_id: [u8; 32],
    randomness: &[u8; 32],
) -> Result<Vec<u8>> {
    let replica = PrivateReplicaInfo::new(
        post_proof,
        comm_r,
        cache.to_path_buf(),
        sealed.to_path_buf(),
    );
    let challenges =
        post::generate_fallback_sector_challenges(post_proof, randomness, &[sector_id], prover_id)
            .map_err(fc("generate_fallback_sector_challenges"))?;
    let ch = challenges.get(&sector_id).ok_or_else(|| {
        FilecoinError::filecoin("generate_fallback_sector_challenges", "no challenges")
    })?;
    post::generate_single_vanilla_proof(post_proof, sector_id, &replica, ch)
        .map_err(fc("generate_single_vanilla_proof"))
}

/// File name of the SnarkPack aggregation SRS in Filecoin's parameter cache.
pub fn aggregation_srs_file_name() -> String {
    use storage_proofs_core::parameter_cache::{SRS_KEY_EXT, SRS_SHARED_KEY_NAME, VERSION};
    format!("v{VERSION}-{SRS_SHARED_KEY_NAME}.{SRS_KEY_EXT}")
}

/// Proofs an aggregation SRS of [`write_test_aggregation_srs`] takes at most (NI-PoRep 32 GiB
/// aggregates 126).
pub const AGGREGATION_SRS_PROOFS: usize = 128;

/// Writes an INSECURE SnarkPack aggregation SRS (bellperson's fake setup from `rng`: whoever
/// knows the seed can forge aggregates) under Filecoin's name, big enough for
/// [`AGGREGATION_SRS_PROOFS`] proofs.
/// Production uses the ceremony's `v28-fil-inner-product-v1.srs`. Returns the file name.
pub fn write_test_aggregation_srs(dir: &Path, rng: &mut ChaCha8Rng) -> Result<String> {
    let srs = bellperson::groth16::aggregate::setup_fake_srs::<blstrs::Bls12, _>(
        rng,
        AGGREGATION_SRS_PROOFS,
    );
    let name = aggregation_srs_file_name();
    let path = dir.join(&name);
    let mut bytes = Vec::new();
    srs.write(&mut bytes)
        .map_err(|e| FilecoinError::io(&path, e))?;
    fs::write(&path, &bytes).map_err(|e| FilecoinError::io(&path, e))?;
    Ok(name)
}
