//! The commit-phase-1 output of a synthetic sparse sector that the real PoRep circuit accepts
//! (interactive PoRep, `…V1_1`), built without sealing:
//!
//! - the data is all zero, so tree D is the empty sector's tree (comm_d = z_height);
//! - the challenges come from the replica id and the seed, as the prover derives them;
//! - every node a challenge touches (the challenge, its 6 DRG and 8 expander parents) has one
//!   column of 11 labels: a challenged node's labels are computed layer by layer from its
//!   parents' labels exactly as SDR labeling does, every other node's are random;
//! - tree C holds those columns' hashes, tree R the challenged nodes' replica values
//!   (key + data = the last layer's label), both lazy ([`LazyTree`]), with
//!   comm_r = H(comm_c, comm_r_last).
//!
//! The circuit never re-derives a parent's labels, so this satisfies it. It forges nothing on
//! chain: comm_r is chosen after the seed is known, which interactive PoRep rules out.
use std::collections::{BTreeMap, BTreeSet};

use filecoin_hashers::sha256::{Sha256Domain, Sha256Hasher};
use filecoin_hashers::{Domain, HashFunction, Hasher};
use filecoin_proofs::{parameters::public_params, DefaultPieceDomain, MerkleTreeTrait};
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use filecoin_proofs_api::RegisteredSealProof;
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};
use storage_proofs_core::drgraph::Graph;
use storage_proofs_core::merkle::MerkleProof;
use storage_proofs_porep::stacked::{
    self, generate_replica_id, Challenges, Column, ColumnProof, EncodingProof, LabelingProof,
    ReplicaColumnProof,
};

use super::tree::LazyTree;
use super::{break_path, Fault};
use crate::shaped::porep::{
    c2_request, phase1_output, registered_proof, repeat_parents, TreeDomain, TreeProof,
};
use crate::shaped::tree::Shape;
use crate::shaped::{random32, Facts};
use cuzk_filecoin::error::{FilecoinError, Result};
use cuzk_filecoin::registry::{prover_id_from_miner_id, seal_from_u64, SectorSize};
use cuzk_filecoin::request::ProofRequest;

/// A PoRep C2 request (C1 envelope) for a sparse sector of `size`.
pub(super) fn request(
    size: SectorSize,
    miner_id: u64,
    sector_number: u64,
    fault: Option<Fault>,
    rng: &mut ChaCha8Rng,
) -> Result<(ProofRequest, Facts)> {
    let num = registered_proof(size);
    let seal = seal_from_u64(num)?;
    let prover_id = prover_id_from_miner_id(miner_id);
    let (phase1, facts) = cuzk_filecoin::with_tree!(
        size,
        c1_output(size, seal, prover_id, sector_number, fault, rng)
    )?;
    Ok((
        c2_request(size, num, miner_id, sector_number, phase1)?,
        facts,
    ))
}

/// SDR's label of `node` in `layer` (1-based) from its parents' labels, repeated to the hash's
/// 37 inputs: SHA-256(replica_id ‖ layer u32 BE ‖ node u64 BE ‖ 20 zero bytes ‖ parents),
/// truncated into the field.
fn label<D: Domain>(replica_id: &D, layer: u32, node: u64, parents: &[D]) -> D {
    let mut prefix = [0u8; 64];
    prefix[..32].copy_from_slice(replica_id.as_ref());
    prefix[32..36].copy_from_slice(&layer.to_be_bytes());
    prefix[36..44].copy_from_slice(&node.to_be_bytes());
    let mut h = Sha256::new();
    h.update(prefix);
    for p in parents {
        h.update(p.as_ref());
    }
    let mut out: [u8; 32] = h.finalize().into();
    out[31] &= 0x3f;
    D::try_from_bytes(&out).unwrap_or_default()
}

/// The parents of one challenged node.
struct Parents {
    drg: Vec<u32>,
    exp: Vec<u32>,
}

impl Parents {
    /// The label hash's parents of `layer`: the DRG parents' labels of that layer, then (above
    /// layer 1) the expander parents' labels of the layer below, repeated to 37.
    fn labels<D: Copy>(&self, layer: usize, labels: &BTreeMap<u32, Vec<D>>) -> Vec<D> {
        let mut parents: Vec<D> = self.drg.iter().map(|p| labels[p][layer - 1]).collect();
        if layer > 1 {
            parents.extend(self.exp.iter().map(|p| labels[p][layer - 2]));
        }
        repeat_parents(&parents)
    }
}

/// The commit-phase-1 output of a sparse sector, as filecoin-proofs-api's type.
fn c1_output<Tree: 'static + MerkleTreeTrait>(
    size: SectorSize,
    seal: RegisteredSealProof,
    prover_id: [u8; 32],
    sector_number: u64,
    fault: Option<Fault>,
    rng: &mut ChaCha8Rng,
) -> Result<(SealCommitPhase1Output, Facts)> {
    let config = seal.as_v1_config();
    let pp = public_params::<Tree>(&config)
        .map_err(|e| FilecoinError::filecoin("PoRep public parameters", e))?;
    if !matches!(pp.challenges, Challenges::Interactive(_)) {
        return Err(FilecoinError::filecoin(
            "sparse PoRep",
            "only interactive PoRep challenges can be met by a sparse sector",
        ));
    }
    let nodes = pp.graph.size();
    let layers = pp.num_layers;
    let ticket = random32(rng);
    let seed = random32(rng);

    // Tree D: all-zero data.
    let mut tree_d =
        LazyTree::<Sha256Hasher>::uniform(Shape::binary(nodes), Sha256Domain::default());
    let comm_d: DefaultPieceDomain = tree_d.root();
    let replica_id = generate_replica_id::<Tree::Hasher, _>(
        &prover_id,
        sector_number,
        &ticket,
        comm_d,
        &config.porep_id,
    );
    let mut pub_in: stacked::PublicInputs<TreeDomain<Tree>, DefaultPieceDomain> =
        stacked::PublicInputs {
            replica_id,
            tau: None,
            k: None,
            seed: Some(seed),
        };
    let partitions = usize::from(config.partitions);
    let challenges: Vec<Vec<usize>> = (0..partitions)
        .map(|k| pub_in.challenges(&pp.challenges, nodes, Some(k)))
        .collect();

    // Every challenged node's parents, and every node with a column.
    let g = |e: anyhow::Error| FilecoinError::filecoin("PoRep graph parents", e);
    let challenged: BTreeSet<u32> = challenges.iter().flatten().map(|&c| c as u32).collect();
    let mut parents = BTreeMap::new();
    for &c in &challenged {
        let mut drg = vec![0u32; pp.graph.base_graph().degree()];
        pp.graph
            .base_graph()
            .parents(c as usize, &mut drg)
            .map_err(g)?;
        let mut exp = vec![0u32; pp.graph.expansion_degree()];
        pp.graph.expanded_parents(c as usize, &mut exp).map_err(g)?;
        parents.insert(c, Parents { drg, exp });
    }
    let mut labels: BTreeMap<u32, Vec<TreeDomain<Tree>>> = BTreeMap::new();
    for p in parents.values() {
        for &x in p.drg.iter().chain(&p.exp) {
            if !challenged.contains(&x) && !labels.contains_key(&x) {
                labels.insert(x, Vec::new());
            }
        }
    }
    for rows in labels.values_mut() {
        *rows = (0..layers).map(|_| Domain::random(rng)).collect();
    }
    // Challenged nodes' labels, layer by layer; within a layer in node order, since a DRG
    // parent comes before its child and an expander parent's label is of the layer below.
    for &c in &challenged {
        labels.insert(c, Vec::with_capacity(layers));
    }
    for layer in 1..=layers {
        for &c in &challenged {
            let hashed = parents[&c].labels(layer, &labels);
            let l = label(&replica_id, layer as u32, u64::from(c), &hashed);
            if let Some(rows) = labels.get_mut(&c) {
                rows.push(l);
            }
        }
    }
    if fault == Some(Fault::ParentLabel) {
        // A column that disagrees with the label its child was computed from: the first DRG
        // parent (in challenge order) that is not itself challenged.
        let p = challenges
            .iter()
            .flatten()
            .flat_map(|c| parents[&(*c as u32)].drg.iter())
            .find(|p| !challenged.contains(p))
            .copied()
            .ok_or_else(|| {
                FilecoinError::filecoin("sparse PoRep fault", "every DRG parent is challenged")
            })?;
        if let Some(rows) = labels.get_mut(&p) {
            rows[0] = Domain::random(rng);
        }
    }

    // Tree C over the columns' hashes, tree R over the challenged replica values.
    let shape = Shape::of::<Tree>(nodes);
    let mut tree_c = LazyTree::<Tree::Hasher>::uniform(shape.clone(), Domain::random(rng));
    let mut columns = BTreeMap::new();
    for (&x, rows) in &labels {
        let col = Column::<Tree::Hasher>::new(x, rows.clone())
            .map_err(|e| FilecoinError::filecoin("sparse column", e))?;
        tree_c.set(x as usize, col.hash().into());
        columns.insert(x, col);
    }
    let mut tree_r = LazyTree::<Tree::Hasher>::uniform(shape, Domain::random(rng));
    for &c in &challenged {
        // The replica node: key (the last layer's label) + data (zero).
        tree_r.set(c as usize, labels[&c][layers - 1]);
    }
    let comm_c = tree_c.root();
    let comm_r_last = tree_r.root();
    let comm_r = <Tree::Hasher as Hasher>::Function::hash2(&comm_c, &comm_r_last);

    let mut column_proof = |x: u32| -> Result<ColumnProof<TreeProof<Tree>>> {
        let (leaf, path) = tree_c.proof(x as usize);
        ColumnProof::from_column(
            columns[&x].clone(),
            MerkleProof::from_parts(leaf, comm_c, path),
        )
        .map_err(|e| FilecoinError::filecoin("sparse column proof", e))
    };
    let mut vanilla = Vec::with_capacity(partitions);
    for (k, partition) in challenges.iter().enumerate() {
        let mut proofs = Vec::with_capacity(partition.len());
        for (i, &c) in partition.iter().enumerate() {
            let p = &parents[&(c as u32)];
            let c_x = column_proof(c as u32)?;
            let drg_parents = p
                .drg
                .iter()
                .map(|&x| column_proof(x))
                .collect::<Result<Vec<_>>>()?;
            let exp_parents = p
                .exp
                .iter()
                .map(|&x| column_proof(x))
                .collect::<Result<Vec<_>>>()?;
            let labeling_proofs: Vec<_> = (1..=layers)
                .map(|layer| {
                    let hashed = p.labels(layer, &labels);
                    LabelingProof::<Tree::Hasher>::new(layer as u32, c as u64, hashed)
                })
                .collect();
            let encoding_proof = EncodingProof::<Tree::Hasher>::new(
                layers as u32,
                c as u64,
                p.labels(layers, &labels),
            );
            let (data_leaf, path_d) = tree_d.proof(c);
            let (replica_leaf, mut path_r) = tree_r.proof(c);
            if k == 0 && i == 0 {
                break_path(fault, &mut path_r);
            }
            proofs.push(stacked::Proof {
                comm_d_proofs: MerkleProof::from_parts(data_leaf, comm_d, path_d),
                comm_r_last_proof: MerkleProof::from_parts(replica_leaf, comm_r_last, path_r),
                replica_column_proofs: ReplicaColumnProof {
                    c_x,
                    drg_parents,
                    exp_parents,
                },
                labeling_proofs,
                encoding_proof,
            });
        }
        vanilla.push(proofs);
    }

    pub_in.tau = Some(stacked::Tau { comm_d, comm_r });
    phase1_output::<Tree>(size, seal, vanilla, &pub_in, comm_r, ticket)
}
