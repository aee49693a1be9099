//! Timing-only PoRep C1 output: every partition's vanilla proofs built from the
//! storage-proofs types with the real structure — challenges derived from the seed as the
//! real prover derives them, DRG and expander parents from the real graph, tree D, C and R
//! paths of the real lengths and arities, 11-row columns, labeling and encoding proofs — and
//! random values, serialized with the serde encoding of `SealCommitPhase1Output`.
use std::any::Any;

use blstrs::Scalar;
use filecoin_hashers::{Domain, HashFunction, Hasher};
use filecoin_proofs::{
    parameters::public_params, DefaultPieceDomain, MerkleTreeTrait, VanillaSealProof,
};
use filecoin_proofs_api::seal::{SealCommitPhase1Output, VanillaSealProof as ApiVanillaProofs};
use filecoin_proofs_api::RegisteredSealProof;
use rand_chacha::ChaCha8Rng;
use storage_proofs_core::drgraph::Graph;
use storage_proofs_core::merkle::MerkleProof;
use storage_proofs_porep::stacked::{
    self, generate_replica_id, Column, ColumnProof, EncodingProof, LabelingProof,
    ReplicaColumnProof, TOTAL_PARENTS,
};

pub(crate) use super::tree::TreeProof;
use super::tree::{sha_node, Shape};
use super::{random32, Facts};
use cuzk_filecoin::error::{FilecoinError, Result};
use cuzk_filecoin::registry::{prover_id_from_miner_id, seal_from_u64, ProofKind, SectorSize};
use cuzk_filecoin::request::{C1Envelope, ProofRequest};

pub(crate) type TreeDomain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;

/// The Go-side `RegisteredSealProof` of the timing-only PoRep request (`…V1_1`).
pub(crate) fn registered_proof(size: SectorSize) -> u64 {
    5 + size.index()
}

/// The Go-side number of `StackedDrg2KiBV1_2_Feat_NonInteractivePoRep`; the other sizes
/// follow it.
pub(crate) const NI_POREP_FIRST: u64 = 15;

/// A PoRep C2 request (C1 envelope) for one random sector of `size`.
pub(super) fn request(
    size: SectorSize,
    miner_id: u64,
    sector_number: u64,
    rng: &mut ChaCha8Rng,
) -> Result<(ProofRequest, Facts)> {
    request_of(size, registered_proof(size), miner_id, sector_number, rng)
}

/// [`request`] under the registered proof `num` (the interactive or the NI-PoRep one).
pub(super) fn request_of(
    size: SectorSize,
    num: u64,
    miner_id: u64,
    sector_number: u64,
    rng: &mut ChaCha8Rng,
) -> Result<(ProofRequest, Facts)> {
    let seal = seal_from_u64(num)?;
    let prover_id = prover_id_from_miner_id(miner_id);
    let (phase1, facts) =
        cuzk_filecoin::with_tree!(size, c1_output(size, seal, prover_id, sector_number, rng))?;
    Ok((
        c2_request(size, num, miner_id, sector_number, phase1)?,
        facts,
    ))
}

/// The PoRep C2 request (C1 envelope) around `phase1`.
pub(crate) fn c2_request(
    size: SectorSize,
    registered_proof: u64,
    miner_id: u64,
    sector_number: u64,
    phase1: SealCommitPhase1Output,
) -> Result<ProofRequest> {
    let json = serde_json::to_vec(&phase1)
        .map_err(|e| FilecoinError::filecoin("encoding a C1 output", e))?;
    drop(phase1);
    let mut req = ProofRequest::new(ProofKind::PoRepSealCommit, size.bytes(), registered_proof)?;
    req.vanilla_proof = C1Envelope::new(sector_number, size.bytes(), &json).to_json();
    req.sector_number = sector_number;
    req.miner_id = miner_id;
    Ok(req)
}

/// Random columns of `layers` rows: the column proof of node `x` in tree C (root `comm_c`).
fn column<Tree: 'static + MerkleTreeTrait>(
    x: u32,
    layers: usize,
    shape: &Shape,
    comm_c: TreeDomain<Tree>,
    rng: &mut ChaCha8Rng,
) -> Result<ColumnProof<TreeProof<Tree>>> {
    let rows = (0..layers).map(|_| Domain::random(rng)).collect();
    let col = Column::<Tree::Hasher>::new(x, rows)
        .map_err(|e| FilecoinError::filecoin("timing-only column", e))?;
    // The leaf of tree C is the column's hash, as in the real tree.
    let leaf: TreeDomain<Tree> = col.hash().into();
    let path = shape.random_path(x as usize, rng);
    ColumnProof::from_column(col, MerkleProof::from_parts(leaf, comm_c, path))
        .map_err(|e| FilecoinError::filecoin("timing-only column proof", e))
}

/// `parents` repeated to the label hash's `TOTAL_PARENTS` inputs, as the prover does.
pub(crate) fn repeat_parents<D: Copy>(parents: &[D]) -> Vec<D> {
    parents
        .iter()
        .copied()
        .cycle()
        .take(TOTAL_PARENTS)
        .collect()
}

/// The values every challenge proof of the sector shares.
struct Sector<Tree: MerkleTreeTrait> {
    comm_d: DefaultPieceDomain,
    comm_c: TreeDomain<Tree>,
    comm_r_last: TreeDomain<Tree>,
    layers: usize,
    shape_r: Shape,
    shape_d: Shape,
}

/// One challenge's vanilla proof.
fn challenge_proof<Tree: 'static + MerkleTreeTrait>(
    pp: &stacked::PublicParams<Tree>,
    s: &Sector<Tree>,
    challenge: usize,
    rng: &mut ChaCha8Rng,
) -> Result<VanillaSealProof<Tree>> {
    let g = |e: anyhow::Error| FilecoinError::filecoin("PoRep graph parents", e);
    let mut drg = vec![0u32; pp.graph.base_graph().degree()];
    pp.graph
        .base_graph()
        .parents(challenge, &mut drg)
        .map_err(g)?;
    let mut exp = vec![0u32; pp.graph.expansion_degree()];
    pp.graph.expanded_parents(challenge, &mut exp).map_err(g)?;

    let col = |x: u32, rng: &mut ChaCha8Rng| column::<Tree>(x, s.layers, &s.shape_r, s.comm_c, rng);
    let c_x = col(challenge as u32, rng)?;
    let drg_parents = drg
        .iter()
        .map(|&p| col(p, rng))
        .collect::<Result<Vec<_>>>()?;
    let exp_parents = exp
        .iter()
        .map(|&p| col(p, rng))
        .collect::<Result<Vec<_>>>()?;

    // Label parents come from the parents' columns: layer 1 hashes the DRG parents' layer-1
    // labels; layer l > 1 the DRG parents' layer-l and the expander parents' layer-(l-1) labels.
    let node = |p: &ColumnProof<TreeProof<Tree>>, layer: usize| -> Result<TreeDomain<Tree>> {
        p.get_node_at_layer(layer)
            .copied()
            .map_err(|e| FilecoinError::filecoin("timing-only column", e))
    };
    let mut labeling_proofs = Vec::with_capacity(s.layers);
    let mut last_parents = Vec::new();
    for layer in 1..=s.layers {
        let mut parents = drg_parents
            .iter()
            .map(|p| node(p, layer))
            .collect::<Result<Vec<_>>>()?;
        if layer > 1 {
            for p in &exp_parents {
                parents.push(node(p, layer - 1)?);
            }
        }
        let full = repeat_parents(&parents);
        labeling_proofs.push(LabelingProof::<Tree::Hasher>::new(
            layer as u32,
            challenge as u64,
            full.clone(),
        ));
        last_parents = full;
    }
    let encoding_proof =
        EncodingProof::<Tree::Hasher>::new(s.layers as u32, challenge as u64, last_parents);

    // The replica node is the data node encoded with the last layer's label (key + data).
    let data_leaf = sha_node(rng);
    let key: Scalar = node(&c_x, s.layers)?.into();
    let data: Scalar = data_leaf.into();
    let replica_leaf: TreeDomain<Tree> = (key + data).into();

    Ok(stacked::Proof {
        comm_d_proofs: MerkleProof::from_parts(
            data_leaf,
            s.comm_d,
            s.shape_d.sha_path(challenge, rng),
        ),
        comm_r_last_proof: MerkleProof::from_parts(
            replica_leaf,
            s.comm_r_last,
            s.shape_r.random_path(challenge, rng),
        ),
        replica_column_proofs: ReplicaColumnProof {
            c_x,
            drg_parents,
            exp_parents,
        },
        labeling_proofs,
        encoding_proof,
    })
}

/// The commit-phase-1 output of a random sector, as filecoin-proofs-api's type.
fn c1_output<Tree: 'static + MerkleTreeTrait>(
    size: SectorSize,
    seal: RegisteredSealProof,
    prover_id: [u8; 32],
    sector_number: u64,
    rng: &mut ChaCha8Rng,
) -> Result<(SealCommitPhase1Output, Facts)> {
    let config = seal.as_v1_config();
    let pp = public_params::<Tree>(&config)
        .map_err(|e| FilecoinError::filecoin("PoRep public parameters", e))?;
    let nodes = pp.graph.size();
    let ticket = random32(rng);
    let seed = random32(rng);
    let comm_d = sha_node(rng);
    let comm_c: TreeDomain<Tree> = Domain::random(rng);
    let comm_r_last: TreeDomain<Tree> = Domain::random(rng);
    let comm_r = <Tree::Hasher as Hasher>::Function::hash2(&comm_c, &comm_r_last);
    let replica_id = generate_replica_id::<Tree::Hasher, _>(
        &prover_id,
        sector_number,
        &ticket,
        comm_d,
        &config.porep_id,
    );
    let pub_in: stacked::PublicInputs<TreeDomain<Tree>, DefaultPieceDomain> =
        stacked::PublicInputs {
            replica_id,
            tau: Some(stacked::Tau { comm_d, comm_r }),
            k: None,
            seed: Some(seed),
        };
    let sector = Sector::<Tree> {
        comm_d,
        comm_c,
        comm_r_last,
        layers: pp.num_layers,
        shape_r: Shape::of::<Tree>(nodes),
        shape_d: Shape::binary(nodes),
    };
    let partitions = usize::from(config.partitions);
    let mut vanilla: Vec<Vec<VanillaSealProof<Tree>>> = Vec::with_capacity(partitions);
    for k in 0..partitions {
        let challenges = pub_in.challenges(&pp.challenges, nodes, Some(k));
        vanilla.push(
            challenges
                .into_iter()
                .map(|c| challenge_proof(&pp, &sector, c, rng))
                .collect::<Result<_>>()?,
        );
    }
    phase1_output(size, seal, vanilla, &pub_in, comm_r, ticket)
}

/// The C1 output holding `vanilla` (a sector's proofs, `pub_in` its replica id, comm_d and
/// seed), and the sector's public facts.
pub(crate) fn phase1_output<Tree: 'static + MerkleTreeTrait>(
    size: SectorSize,
    seal: RegisteredSealProof,
    vanilla: Vec<Vec<VanillaSealProof<Tree>>>,
    pub_in: &stacked::PublicInputs<TreeDomain<Tree>, DefaultPieceDomain>,
    comm_r: TreeDomain<Tree>,
    ticket: [u8; 32],
) -> Result<(SealCommitPhase1Output, Facts)> {
    let missing = || FilecoinError::filecoin("a C1 output", "no comm_d or seed");
    let comm_d = pub_in.tau.as_ref().ok_or_else(missing)?.comm_d;
    let seed = pub_in.seed.ok_or_else(missing)?;
    let comm_r_bytes: [u8; 32] = comm_r.into_bytes().try_into().unwrap_or_default();
    let comm_d_bytes: [u8; 32] = comm_d.into_bytes().try_into().unwrap_or_default();
    let facts = Facts {
        comm_r: comm_r_bytes,
        comm_d: comm_d_bytes,
        ticket,
        seed,
    };
    let replica_fr: Scalar = pub_in.replica_id.into();
    let output = SealCommitPhase1Output {
        registered_proof: seal,
        vanilla_proofs: to_api(size, vanilla)?,
        comm_r: comm_r_bytes,
        comm_d: comm_d_bytes,
        replica_id: replica_fr.into(),
        seed,
        ticket,
    };
    Ok((output, facts))
}

/// filecoin-proofs-api's per-size enum around the vanilla proofs (`Tree` is the shape
/// `with_tree!` picked for `size`, so the downcast cannot fail).
pub(crate) fn to_api<Tree: 'static + MerkleTreeTrait>(
    size: SectorSize,
    proofs: Vec<Vec<VanillaSealProof<Tree>>>,
) -> Result<ApiVanillaProofs> {
    let any: Box<dyn Any> = Box::new(proofs);
    let wrong = |_| {
        FilecoinError::filecoin(
            "timing-only PoRep",
            "the tree shape does not match the sector size",
        )
    };
    Ok(match size {
        SectorSize::S2KiB => ApiVanillaProofs::StackedDrg2KiBV1(*any.downcast().map_err(wrong)?),
        SectorSize::S8MiB => ApiVanillaProofs::StackedDrg8MiBV1(*any.downcast().map_err(wrong)?),
        SectorSize::S512MiB => {
            ApiVanillaProofs::StackedDrg512MiBV1(*any.downcast().map_err(wrong)?)
        }
        SectorSize::S32GiB => ApiVanillaProofs::StackedDrg32GiBV1(*any.downcast().map_err(wrong)?),
        SectorSize::S64GiB => ApiVanillaProofs::StackedDrg64GiBV1(*any.downcast().map_err(wrong)?),
    })
}
