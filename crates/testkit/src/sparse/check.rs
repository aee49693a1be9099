//! The vanilla check of a request: its vanilla proofs against its public inputs, with the
//! storage-proofs verifiers (`verify_all_partitions` of the stacked DRG, of the empty-sector
//! update and of fallback PoSt). Cheap at any sector size; a request that fails it cannot give
//! a proof that verifies, whatever the prover does.
use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::{
    as_safe_commitment, parameters::public_params, parameters::window_post_public_params,
    parameters::winning_post_public_params, partition_vanilla_proofs, DefaultPieceDomain,
    DefaultPieceHasher, FallbackPoStSectorProof, MerkleTreeTrait, TreeRHasher, VanillaSealProof,
};
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_porep::stacked::{self, StackedDrg};
use storage_proofs_post::fallback::{self, PublicSector};
use storage_proofs_update::constants::TreeRDomain;
use storage_proofs_update::{EmptySectorUpdate, PartitionProof, PublicParams};

use cuzk_filecoin::error::{FilecoinError, Result};
use cuzk_filecoin::registry::{RegisteredProof, SectorSize};
use cuzk_filecoin::request::{C1Envelope, ProofRequest};

/// Verifies the vanilla proofs of `req` (any Filecoin kind).
pub fn verify_vanilla(req: &ProofRequest) -> Result<()> {
    let (rp, size) = (req.registered(), req.sector_size());
    let ok = match rp {
        RegisteredProof::Seal(_) => cuzk_filecoin::with_tree!(size, porep(req)),
        RegisteredProof::Update(update) => {
            let h =
                filecoin_proofs::SectorUpdateConfig::from_porep_config(&update.as_v1_config()).h;
            cuzk_filecoin::with_tree!(size, snap(req, size, h))
        }
        RegisteredProof::PoSt(post) => {
            let winning = matches!(req.kind(), cuzk_filecoin::registry::ProofKind::WinningPost);
            cuzk_filecoin::with_tree!(size, post_proofs(req, post, winning))
        }
    }?;
    if ok {
        Ok(())
    } else {
        Err(FilecoinError::VerificationFailed {
            what: "the vanilla proofs",
        })
    }
}

fn failed(what: &'static str) -> impl Fn(anyhow::Error) -> FilecoinError {
    move |e| FilecoinError::filecoin(what, e)
}

fn porep<Tree: 'static + MerkleTreeTrait>(req: &ProofRequest) -> Result<bool> {
    let phase1: SealCommitPhase1Output =
        serde_json::from_slice(&C1Envelope::parse(&req.vanilla_proof)?.phase1_bytes()?)
            .map_err(FilecoinError::Phase1Json)?;
    let config = phase1.registered_proof.as_v1_config();
    let pp = public_params::<Tree>(&config).map_err(failed("PoRep public parameters"))?;
    let proofs: Vec<Vec<VanillaSealProof<Tree>>> = phase1
        .vanilla_proofs
        .try_into()
        .map_err(failed("the C1 output's vanilla proofs"))?;
    let replica: blstrs::Scalar = phase1.replica_id.into();
    let comm_r = as_safe_commitment(&phase1.comm_r, "comm_r").map_err(failed("comm_r"))?;
    let comm_d = DefaultPieceDomain::try_from_bytes(&phase1.comm_d).map_err(failed("comm_d"))?;
    let pub_in = stacked::PublicInputs::<<Tree::Hasher as Hasher>::Domain, DefaultPieceDomain> {
        replica_id: replica.into(),
        tau: Some(stacked::Tau { comm_d, comm_r }),
        k: None,
        seed: Some(phase1.seed),
    };
    StackedDrg::<Tree, DefaultPieceHasher>::verify_all_partitions(&pp, &pub_in, &proofs)
        .map_err(failed("verifying the PoRep vanilla proofs"))
}

fn snap<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    req: &ProofRequest,
    size: SectorSize,
    h: usize,
) -> Result<bool> {
    let proofs = req
        .vanilla_proofs
        .iter()
        .map(|b| bincode::deserialize::<PartitionProof<Tree>>(b))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| FilecoinError::filecoin("the SnapDeals partition proofs", e))?;
    let domain = |b: &[u8]| TreeRDomain::try_from_bytes(b);
    let pub_in = storage_proofs_update::PublicInputs {
        k: 0,
        comm_r_old: domain(&req.comm_r_old).map_err(failed("comm_r_old"))?,
        comm_d_new: Domain::try_from_bytes(&req.comm_d_new).map_err(failed("comm_d_new"))?,
        comm_r_new: domain(&req.comm_r_new).map_err(failed("comm_r_new"))?,
        h,
    };
    let pp = PublicParams::from_sector_size(size.bytes());
    EmptySectorUpdate::<Tree>::verify_all_partitions(&pp, &pub_in, &proofs)
        .map_err(failed("verifying the SnapDeals vanilla proofs"))
}

fn post_proofs<Tree: 'static + MerkleTreeTrait>(
    req: &ProofRequest,
    post: filecoin_proofs_api::RegisteredPoStProof,
    winning: bool,
) -> Result<bool> {
    let config = post.as_v1_config();
    let pp = if winning {
        winning_post_public_params::<Tree>(&config)
    } else {
        window_post_public_params::<Tree>(&config)
    }
    .map_err(failed("PoSt public parameters"))?;
    let vanilla = req
        .vanilla_proofs
        .iter()
        .map(|b| bincode::deserialize::<FallbackPoStSectorProof<Tree>>(b))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| FilecoinError::filecoin("a PoSt sector proof", e))?;
    let domain = |b: &[u8]| <Tree::Hasher as Hasher>::Domain::try_from_bytes(b);
    let pub_in = fallback::PublicInputs {
        randomness: domain(&req.randomness).map_err(failed("randomness"))?,
        prover_id: domain(&req.prover_id()).map_err(failed("prover_id"))?,
        sectors: vanilla
            .iter()
            .map(|p| PublicSector {
                id: p.sector_id,
                comm_r: p.comm_r,
            })
            .collect(),
        k: None,
    };
    // filecoin-proofs' own regrouping of sector proofs into the circuit's partition, which
    // ends with `FallbackPoSt::verify_all_partitions` (as the planner does).
    partition_vanilla_proofs(&config, &pp, &pub_in, 1, &vanilla)
        .map_err(failed("verifying the PoSt vanilla proofs"))?;
    Ok(true)
}

/// The public facts of a PoRep request that `verify_seal` takes besides the prover and
/// sector ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PorepPublic {
    /// comm_r.
    pub comm_r: [u8; 32],
    /// comm_d.
    pub comm_d: [u8; 32],
    /// The interactive seed.
    pub seed: [u8; 32],
    /// The ticket.
    pub ticket: [u8; 32],
}

/// The commitments, seed and ticket of a PoRep request's C1 output.
pub fn porep_public(req: &ProofRequest) -> Result<PorepPublic> {
    let phase1: SealCommitPhase1Output =
        serde_json::from_slice(&C1Envelope::parse(&req.vanilla_proof)?.phase1_bytes()?)
            .map_err(FilecoinError::Phase1Json)?;
    Ok(PorepPublic {
        comm_r: phase1.comm_r,
        comm_d: phase1.comm_d,
        seed: phase1.seed,
        ticket: phase1.ticket,
    })
}

/// The `(sector id, comm_r)` of every sector proof of a PoSt request.
pub fn post_sectors(req: &ProofRequest) -> Result<Vec<(u64, [u8; 32])>> {
    let (_, size) = (req.registered(), req.sector_size());
    cuzk_filecoin::with_tree!(size, post_sectors_tree(req))
}

fn post_sectors_tree<Tree: 'static + MerkleTreeTrait>(
    req: &ProofRequest,
) -> Result<Vec<(u64, [u8; 32])>> {
    req.vanilla_proofs
        .iter()
        .map(|b| {
            let p: FallbackPoStSectorProof<Tree> = bincode::deserialize(b)
                .map_err(|e| FilecoinError::filecoin("a PoSt sector proof", e))?;
            let comm_r: [u8; 32] = p.comm_r.into_bytes().try_into().unwrap_or_default();
            Ok((u64::from(p.sector_id), comm_r))
        })
        .collect()
}
