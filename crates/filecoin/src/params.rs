//! Circuit ids ↔ the parameter files Filecoin uses (`v28-<circuit identifier>.params`, `.vk`
//! and `.meta` in `FIL_PROOFS_PARAMETER_CACHE`), blank circuits, and writing **insecure**
//! test parameters made by our generator under those names.
use std::path::{Path, PathBuf};

use bellpepper_core::Circuit;
use blstrs::Scalar;
use filecoin_proofs::{
    parameters::{public_params, window_post_public_params, winning_post_public_params},
    DefaultPieceHasher, MerkleTreeTrait, TreeRHasher,
};
use filecoin_proofs_api::{RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof};
use rand_core::RngCore;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::parameter_cache::{
    metadata_id, parameter_id, verifying_key_id, CacheableParameters,
};
use storage_proofs_porep::stacked::{StackedCompound, StackedDrg};
use storage_proofs_post::fallback::{FallbackPoSt, FallbackPoStCircuit, FallbackPoStCompound};
use storage_proofs_update::{
    EmptySectorUpdate, EmptySectorUpdateCircuit, EmptySectorUpdateCompound,
};

use crate::error::{FilecoinError, Result};
use crate::registry::{
    post_from_u64, seal_from_u64, update_from_u64, CircuitId, CircuitKind, SectorSize,
};

/// The environment variable naming the parameter directory (as in filecoin-proofs).
pub const PARAMETER_CACHE_ENV: &str = "FIL_PROOFS_PARAMETER_CACHE";

/// filecoin-proofs' default parameter directory.
pub const DEFAULT_PARAMETER_CACHE: &str = "/var/tmp/filecoin-proof-parameters";

/// The parameter directory: `$FIL_PROOFS_PARAMETER_CACHE`, else the Filecoin default.
pub fn parameter_cache_dir() -> PathBuf {
    std::env::var_os(PARAMETER_CACHE_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_PARAMETER_CACHE))
}

/// Points filecoin-proofs at the parameter directory `dir`: its verifiers (and the NI-PoRep
/// aggregation) read `.vk` files and the aggregation SRS from `FIL_PROOFS_PARAMETER_CACHE`,
/// which filecoin-proofs reads once per process, at first use. Call it before any thread
/// starts (it sets an environment variable) and before anything touches the Filecoin crates.
pub fn set_parameter_dir(dir: &Path) {
    std::env::set_var(PARAMETER_CACHE_ENV, dir);
}

/// Points filecoin-proofs' sealing caches (the SDR graph caches of `cuzk-testkit`'s test
/// sector, `FIL_PROOFS_CACHE_DIR`) at `dir` instead of `/var/tmp`. Same rule as
/// [`set_parameter_dir`]: before any thread starts.
pub fn set_cache_dir(dir: &Path) {
    std::env::set_var("FIL_PROOFS_CACHE_DIR", format!("{}/", dir.display()));
}

/// The file names of one circuit's parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamFiles {
    /// filecoin-proofs' cache identifier, e.g.
    /// `stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-<hash>`.
    pub cache_id: String,
    /// `v28-<cache_id>.params`.
    pub params: String,
    /// `v28-<cache_id>.vk`.
    pub vk: String,
    /// `v28-<cache_id>.meta`.
    pub meta: String,
}

impl ParamFiles {
    /// The `.params` path in `dir`.
    pub fn params_path(&self, dir: &Path) -> PathBuf {
        dir.join(&self.params)
    }

    /// The `.vk` path in `dir`.
    pub fn vk_path(&self, dir: &Path) -> PathBuf {
        dir.join(&self.vk)
    }

    /// The `.meta` path in `dir`.
    pub fn meta_path(&self, dir: &Path) -> PathBuf {
        dir.join(&self.meta)
    }
}

/// A registered proof whose circuit is `id` (the files are shared by every version of a
/// kind and size, so any representative gives the same identifier).
fn representative(id: CircuitId) -> Result<String> {
    let n = id.size.index();
    let ident = match id.kind {
        CircuitKind::PoRep => seal_from_u64(5 + n)?.circuit_identifier(),
        // Not `RegisteredUpdateProof::circuit_identifier`: in filecoin-proofs-api 19 it
        // returns the PoRep identifier; the update verifier uses this one.
        CircuitKind::Snap => return crate::with_tree!(id.size, snap_identifier(id.size)),
        CircuitKind::WinningPost => post_from_u64(n)?.circuit_identifier(),
        CircuitKind::WindowPost => post_from_u64(10 + n)?.circuit_identifier(),
    };
    ident.map_err(|e| FilecoinError::filecoin("computing the parameter identifier", e))
}

fn snap_identifier<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    size: SectorSize,
) -> Result<String> {
    let pp = storage_proofs_update::PublicParams::from_sector_size(size.bytes());
    Ok(<EmptySectorUpdateCompound<Tree> as CacheableParameters<
        EmptySectorUpdateCircuit<Tree>,
        _,
    >>::cache_identifier(&pp))
}

impl CircuitId {
    /// filecoin-proofs' cache identifier of this circuit (computed by the Filecoin crates).
    pub fn cache_identifier(&self) -> Result<String> {
        representative(*self)
    }

    /// The parameter file names of this circuit.
    pub fn param_files(&self) -> Result<ParamFiles> {
        let cache_id = self.cache_identifier()?;
        Ok(ParamFiles {
            params: parameter_id(&cache_id),
            vk: verifying_key_id(&cache_id),
            meta: metadata_id(&cache_id),
            cache_id,
        })
    }

    /// Parses a parameter file name (`v28-….params`, `.vk` or `.meta`) back to its circuit.
    pub fn from_param_file_name(name: &str) -> Option<CircuitId> {
        CircuitId::all().into_iter().find(|id| {
            id.param_files()
                .map(|f| f.params == name || f.vk == name || f.meta == name)
                .unwrap_or(false)
        })
    }
}

/// Receives a blank circuit of some concrete type (Rust has no generic closures).
pub trait CircuitVisitor {
    /// What the visit returns.
    type Output;
    /// Called once with the circuit.
    fn visit<C: Circuit<Scalar> + Send>(self, circuit: C) -> Self::Output;
}

/// Builds the blank circuit (no witness) of `id` and hands it to `visitor`.
pub fn with_blank_circuit<V: CircuitVisitor>(id: CircuitId, visitor: V) -> Result<V::Output> {
    let size = id.size;
    match id.kind {
        CircuitKind::PoRep => crate::with_tree!(size, blank_porep<V>(size, visitor)),
        CircuitKind::Snap => crate::with_tree!(size, blank_snap<V>(size, visitor)),
        CircuitKind::WinningPost => crate::with_tree!(size, blank_winning<V>(size, visitor)),
        CircuitKind::WindowPost => crate::with_tree!(size, blank_window<V>(size, visitor)),
    }
}

/// PoRep's public parameters at `size` (the interactive proof's: the circuit is the same).
fn porep_public_params<Tree: 'static + MerkleTreeTrait>(
    size: SectorSize,
) -> Result<storage_proofs_porep::stacked::PublicParams<Tree>> {
    let seal: RegisteredSealProof = seal_from_u64(5 + size.index())?;
    public_params::<Tree>(&seal.as_v1_config())
        .map_err(|e| FilecoinError::filecoin("PoRep public parameters", e))
}

fn blank_porep<Tree: 'static + MerkleTreeTrait, V: CircuitVisitor>(
    size: SectorSize,
    v: V,
) -> Result<V::Output> {
    let pp = porep_public_params::<Tree>(size)?;
    let c = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
        StackedDrg<'static, Tree, DefaultPieceHasher>,
        _,
    >>::blank_circuit(&pp);
    Ok(v.visit(c))
}

/// What is done with a circuit made of a preamble and alike parts ([`with_blank_parts`]).
pub trait PartsVisitor {
    /// What [`PartsVisitor::visit`] returns.
    type Output;
    /// Called once with the blank circuit of any number of parts, and the circuit's count.
    fn visit<C: Circuit<Scalar>>(
        self,
        with_parts: impl Fn(usize) -> C + Sync,
        parts: usize,
    ) -> Self::Output;
}

/// For circuits whose synthesis is a preamble and then alike parts, hands `visitor` the
/// blank circuit with any number of parts and the circuit's own count: PoRep (its
/// commitments and replica id, then one part per challenge; every blank challenge's part has
/// the same constraints). `None` for the other kinds.
pub fn with_blank_parts<V: PartsVisitor>(id: CircuitId, visitor: V) -> Result<Option<V::Output>> {
    let size = id.size;
    match id.kind {
        CircuitKind::PoRep => {
            crate::with_tree!(size, blank_porep_parts<V>(size, visitor)).map(Some)
        }
        _ => Ok(None),
    }
}

fn blank_porep_parts<Tree: 'static + MerkleTreeTrait, V: PartsVisitor>(
    size: SectorSize,
    v: V,
) -> Result<V::Output> {
    use storage_proofs_porep::stacked::Challenges;
    let pp = porep_public_params::<Tree>(size)?;
    let parts = pp.challenges.num_challenges_per_partition();
    let with_parts = |k: usize| {
        let mut pp = pp.clone();
        pp.challenges = match pp.challenges {
            Challenges::Interactive(_) => Challenges::new_interactive(k),
            Challenges::Synth(_) => Challenges::new_synthetic(k),
            Challenges::Ni(_) => Challenges::new_non_interactive(k),
        };
        <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
            StackedDrg<'static, Tree, DefaultPieceHasher>,
            _,
        >>::blank_circuit(&pp)
    };
    Ok(v.visit(with_parts, parts))
}

fn blank_snap<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>, V: CircuitVisitor>(
    size: SectorSize,
    v: V,
) -> Result<V::Output> {
    let _: RegisteredUpdateProof = update_from_u64(size.index())?;
    let pp = storage_proofs_update::PublicParams::from_sector_size(size.bytes());
    let c = <EmptySectorUpdateCompound<Tree> as CompoundProof<EmptySectorUpdate<Tree>, _>>::blank_circuit(&pp);
    Ok(v.visit(c))
}

fn blank_winning<Tree: 'static + MerkleTreeTrait, V: CircuitVisitor>(
    size: SectorSize,
    v: V,
) -> Result<V::Output> {
    let post: RegisteredPoStProof = post_from_u64(size.index())?;
    let pp = winning_post_public_params::<Tree>(&post.as_v1_config());
    blank_post::<Tree, V>(pp, "WinningPoSt public parameters", v)
}

fn blank_window<Tree: 'static + MerkleTreeTrait, V: CircuitVisitor>(
    size: SectorSize,
    v: V,
) -> Result<V::Output> {
    let post: RegisteredPoStProof = post_from_u64(10 + size.index())?;
    let pp = window_post_public_params::<Tree>(&post.as_v1_config());
    blank_post::<Tree, V>(pp, "WindowPoSt public parameters", v)
}

/// The blank PoSt circuit of public parameters `pp` (`what` names them in an error).
fn blank_post<Tree: 'static + MerkleTreeTrait, V: CircuitVisitor>(
    pp: anyhow::Result<storage_proofs_post::fallback::PublicParams>,
    what: &'static str,
    v: V,
) -> Result<V::Output> {
    let pp = pp.map_err(|e| FilecoinError::filecoin(what, e))?;
    let c = <FallbackPoStCompound<Tree> as CompoundProof<
        FallbackPoSt<'static, Tree>,
        FallbackPoStCircuit<Tree>,
    >>::blank_circuit(&pp);
    Ok(v.visit(c))
}

struct GenerateParams<'r, R: RngCore> {
    rng: &'r mut R,
}

impl<R: RngCore> CircuitVisitor for GenerateParams<'_, R> {
    type Output = Result<cuzk_groth16::Srs>;
    fn visit<C: Circuit<Scalar> + Send>(self, circuit: C) -> Self::Output {
        Ok(cuzk_groth16::setup::generate_params(circuit, self.rng)?)
    }
}

/// Generates **insecure** test parameters for `id` with our fast generator (toxic waste
/// from `rng`).
pub fn generate_test_params(id: CircuitId, rng: &mut impl RngCore) -> Result<cuzk_groth16::Srs> {
    with_blank_circuit(id, GenerateParams { rng })?
}

struct SectionsOf;

impl CircuitVisitor for SectionsOf {
    type Output = Result<cuzk_groth16::setup::Sections>;
    fn visit<C: Circuit<Scalar> + Send>(self, circuit: C) -> Self::Output {
        Ok(cuzk_groth16::setup::sections(circuit)?)
    }
}

/// The section counts of circuit `id`'s parameter file, from its blank circuit (no
/// matrices built: a 32 GiB PoRep partition takes about a minute of one core).
pub fn param_sections(id: CircuitId) -> Result<cuzk_groth16::setup::Sections> {
    with_blank_circuit(id, SectionsOf)?
}

/// Writes `srs` as circuit `id`'s `.params`, `.vk` and `.meta` in `dir` (the files
/// filecoin-proofs reads from `FIL_PROOFS_PARAMETER_CACHE`).
pub fn write_filecoin_params(
    id: CircuitId,
    srs: &cuzk_groth16::Srs,
    dir: &Path,
) -> Result<ParamFiles> {
    std::fs::create_dir_all(dir).map_err(|e| FilecoinError::io(dir, e))?;
    let files = id.param_files()?;
    cuzk_groth16::params::write_params(&files.params_path(dir), srs)
        .map_err(cuzk_groth16::Error::from)?;
    cuzk_groth16::params::write_vk(&files.vk_path(dir), srs.vk())
        .map_err(cuzk_groth16::Error::from)?;
    // filecoin-proofs' `CacheEntryMetadata`.
    let meta = format!("{{\"sector_size\":{}}}", id.size.bytes());
    let meta_path = files.meta_path(dir);
    std::fs::write(&meta_path, meta).map_err(|e| FilecoinError::io(meta_path, e))?;
    Ok(files)
}

/// Whether circuit `id`'s `.vk` in `dir` is the verifying key Filecoin published: its
/// BLAKE2b digest (truncated to 128 bits, as `paramfetch` and storage-proofs check it) equals
/// the one in storage-proofs' `parameters.json`. False for insecure test parameters,
/// timing-only ones, or a damaged file.
pub fn vk_is_published(id: CircuitId, dir: &Path) -> Result<bool> {
    let path = id.param_files()?.vk_path(dir);
    let bytes = std::fs::read(&path).map_err(|e| FilecoinError::io(&path, e))?;
    published(id, &bytes)
}

/// Whether `vk` (as a `.params` file's header holds it) is circuit `id`'s verifying key as
/// Filecoin published it ([`vk_is_published`], for the key a prover actually uses).
pub fn is_published_vk(id: CircuitId, vk: &cuzk_groth16::VerifyingKey) -> Result<bool> {
    let mut bytes = Vec::new();
    cuzk_groth16::params::write_vk_to(&mut bytes, vk)
        .map_err(|e| FilecoinError::filecoin("encoding a verifying key", e))?;
    published(id, &bytes)
}

fn published(id: CircuitId, vk_file: &[u8]) -> Result<bool> {
    let files = id.param_files()?;
    let digest = blake2b_simd::Params::new().hash(vk_file).to_hex();
    Ok(
        storage_proofs_core::parameter_cache::get_verifying_key_data(&files.cache_id)
            .is_some_and(|d| digest.get(..32) == Some(d.digest.as_str())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The blank circuits' section counts equal those of parameters generated from them (the
    /// two small 2 KiB circuits; `setup::sections` itself is checked against generated
    /// parameters in cuzk-groth16).
    #[test]
    fn param_sections_match_generated_parameters_at_2k() {
        use rand_chacha::ChaCha8Rng;
        use rand_core::SeedableRng;
        for id in ["wpost-2k", "winning-2k"] {
            let id: CircuitId = id.parse().unwrap();
            let s = param_sections(id).unwrap();
            let srs = generate_test_params(id, &mut ChaCha8Rng::seed_from_u64(1)).unwrap();
            let got = (
                srs.vk().ic.len(),
                srs.h().len(),
                srs.l().len(),
                srs.a().len(),
                srs.b_g1().len(),
            );
            assert_eq!((s.ic, s.h, s.l, s.a, s.b), got, "{id}");
            assert_eq!(s.b, srs.b_g2().len(), "{id}");
        }
    }

    /// The wpost-32g blank circuit's sections, counted with its 2,349 sectors on every core
    /// (the counter is extensible), have the circuit's counted shape. Minutes on a 2-core box:
    /// run with `--ignored`.
    #[test]
    #[ignore]
    fn wpost_32g_sections_are_counted_in_parallel_and_have_the_real_shape() {
        let id: CircuitId = "wpost-32g".parse().unwrap();
        let t0 = std::time::Instant::now();
        let s = param_sections(id).unwrap();
        eprintln!(
            "wpost-32g sections {s:?} counted in {:.1} s on {} threads",
            t0.elapsed().as_secs_f64(),
            rayon::current_num_threads()
        );
        let e = crate::MemoryEstimate::for_circuit(id);
        assert_eq!((s.constraints, s.ic, s.l), (e.constraints, e.inputs, e.aux));
        assert_eq!(s.h + 1, (e.constraints + e.inputs).next_power_of_two());
    }

    #[test]
    fn file_names_come_from_the_filecoin_crates() {
        let id: CircuitId = "porep-32g".parse().unwrap();
        let f = id.param_files().unwrap();
        // The production 32 GiB PoRep parameters' published name.
        assert_eq!(
            f.params,
            "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820.params"
        );
        assert!(f.vk.ends_with(".vk") && f.meta.ends_with(".meta"));
        assert_eq!(CircuitId::from_param_file_name(&f.vk), Some(id));
        let wpost = CircuitId::new(CircuitKind::WindowPost, SectorSize::S2KiB);
        let winning = CircuitId::new(CircuitKind::WinningPost, SectorSize::S2KiB);
        let a = wpost.param_files().unwrap();
        let b = winning.param_files().unwrap();
        assert!(
            a.params.starts_with("v28-proof-of-spacetime-fallback-"),
            "{a:?}"
        );
        assert_ne!(a.params, b.params);
        let snap = CircuitId::new(CircuitKind::Snap, SectorSize::S2KiB)
            .param_files()
            .unwrap();
        assert!(
            snap.params.starts_with("v28-empty-sector-update-"),
            "{snap:?}"
        );
    }

    #[test]
    fn every_circuit_is_in_the_published_parameter_manifest() {
        for id in CircuitId::all() {
            let f = id.param_files().unwrap();
            assert!(
                storage_proofs_core::parameter_cache::get_parameter_data(&f.cache_id).is_some(),
                "{id}: {} not in parameters.json",
                f.params
            );
            assert!(
                storage_proofs_core::parameter_cache::get_verifying_key_data(&f.cache_id).is_some()
            );
        }
    }

    #[test]
    fn every_version_of_a_circuit_shares_its_files() {
        for size in SectorSize::ALL {
            let n = size.index();
            let ids: Vec<String> = [n, 5 + n, 10 + n, 15 + n]
                .iter()
                .map(|&p| seal_from_u64(p).unwrap().circuit_identifier().unwrap())
                .collect();
            assert!(ids.iter().all(|i| i == &ids[0]), "{size}: {ids:?}");
            let w1 = post_from_u64(5 + n).unwrap().circuit_identifier().unwrap();
            let w2 = post_from_u64(10 + n).unwrap().circuit_identifier().unwrap();
            assert_eq!(w1, w2);
        }
    }
}
