//! Shape checks for full-size circuits without their memory: a constraint system that only
//! counts (constraints, inputs, aux; nothing stored, so a 130 M-constraint PoRep partition
//! needs no 4 GB witness), the blank circuit's counts, the counts of a request's partition
//! circuit built from its vanilla proofs, and a structural signature of each partition's
//! vanilla proof (every list length and field, no values).
use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher as _;

use bellpepper_core::{Circuit, ConstraintSystem, Index, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::{
    as_safe_commitment, parameters::public_params, parameters::window_post_public_params,
    parameters::winning_post_public_params, partition_vanilla_proofs,
    single_partition_vanilla_proofs, DefaultPieceDomain, DefaultPieceHasher,
    FallbackPoStSectorProof, MerkleTreeTrait, SectorUpdateConfig, TreeRHasher, VanillaSealProof,
};
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use serde::Serialize;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_porep::stacked::{self, StackedCompound, StackedDrg};
use storage_proofs_post::fallback::{
    self, FallbackPoSt, FallbackPoStCircuit, FallbackPoStCompound,
};
use storage_proofs_update::{EmptySectorUpdate, EmptySectorUpdateCompound, PartitionProof};

use cuzk_filecoin::error::{FilecoinError, Result};
use cuzk_filecoin::params::{with_blank_circuit, CircuitVisitor};
use cuzk_filecoin::registry::{post_from_u64, CircuitId, CircuitKind, ProofKind, RegisteredProof};
use cuzk_filecoin::request::{bytes32, C1Envelope, ProofRequest};

/// The shape of a synthesized circuit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Constraints enforced.
    pub constraints: usize,
    /// Public inputs, counting ONE.
    pub inputs: usize,
    /// Auxiliary variables.
    pub aux: usize,
}

/// A constraint system that counts and stores nothing. Value closures are run (so a circuit
/// with a witness computes it, as it would for a prover); linear combinations are not built.
struct Counter {
    counts: Counts,
    /// Fail on the first missing value (a circuit that should carry a full witness).
    strict: bool,
    /// The first missing value's error, in strict mode.
    missing: Option<String>,
}

impl Counter {
    fn value<F>(&mut self, f: F)
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
    {
        if let Err(e) = f() {
            if self.strict && self.missing.is_none() {
                self.missing = Some(e.to_string());
            }
        }
    }
}

impl ConstraintSystem<Scalar> for Counter {
    type Root = Self;

    /// A sub-system for [`ConstraintSystem::extend`]; strict like every counter of a request's
    /// circuit (a blank circuit's sub-systems only miss values, which are not looked at).
    fn new() -> Self {
        Counter {
            counts: Counts::default(),
            strict: true,
            missing: None,
        }
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.value(f);
        self.counts.aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.counts.aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.value(f);
        self.counts.inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(
            self.counts.inputs - 1,
        )))
    }

    cuzk_groth16::enforce!(|self, _, _, _, _| {
        self.counts.constraints += 1;
    });

    cuzk_groth16::flat_namespaces!();

    /// Storage-proofs' PoSt circuits then synthesize their sectors on every core (a whole
    /// wpost-32g partition took ~9 min of one core).
    fn is_extensible() -> bool {
        true
    }

    /// Adds `other`'s counts; its input 0 (its temporary ONE) is ours.
    fn extend(&mut self, other: &Self) {
        self.counts.constraints += other.counts.constraints;
        self.counts.inputs += other.counts.inputs.saturating_sub(1);
        self.counts.aux += other.counts.aux;
        if self.strict && self.missing.is_none() {
            self.missing.clone_from(&other.missing);
        }
    }
}

/// Synthesizes `circuit` into a counter, with ONE allocated first as bellperson does. In
/// `strict` mode a missing witness value is an error.
pub fn count_circuit<C: Circuit<Scalar>>(circuit: C, strict: bool) -> Result<Counts> {
    let mut cs = Counter {
        counts: Counts::default(),
        strict,
        missing: None,
    };
    let fail = |e: SynthesisError| FilecoinError::Synthesis {
        partition: 0,
        message: e.to_string(),
    };
    cs.alloc_input(|| "ONE", || Ok(Scalar::ONE)).map_err(fail)?;
    circuit.synthesize(&mut cs).map_err(fail)?;
    match cs.missing {
        Some(message) => Err(FilecoinError::Synthesis {
            partition: 0,
            message,
        }),
        None => Ok(cs.counts),
    }
}

struct CountBlank;

impl CircuitVisitor for CountBlank {
    type Output = Result<Counts>;
    fn visit<C: Circuit<Scalar> + Send>(self, circuit: C) -> Self::Output {
        count_circuit(circuit, false)
    }
}

/// The counts of the blank circuit of `id` (what the parameters are made from).
pub fn count_blank(id: CircuitId) -> Result<Counts> {
    with_blank_circuit(id, CountBlank)?
}

/// The counts of partition `k`'s circuit of `req`, built from its vanilla proofs the way the
/// planner builds it and synthesized with its witness (strict: every value must be there).
/// PoSt requests have one partition (a WindowPoSt request's is its `partition_index`): `k`
/// must be 0.
pub fn count_partition(req: &ProofRequest, k: usize) -> Result<Counts> {
    let (_, size) = (req.registered(), req.sector_size());
    match req.kind() {
        ProofKind::PoRepSealCommit => cuzk_filecoin::with_tree!(size, porep_counts(req, k)),
        ProofKind::SnapDealsUpdate => cuzk_filecoin::with_tree!(size, snap_counts(req, k)),
        ProofKind::WindowPostPartition | ProofKind::WinningPost => {
            if k != 0 {
                return Err(FilecoinError::InvalidValue {
                    field: "partition",
                    reason: "a PoSt request has one partition".into(),
                });
            }
            cuzk_filecoin::with_tree!(size, post_counts(req, &[usize::MAX]))?
                .pop()
                .ok_or_else(|| no_partition(0))
        }
    }
}

/// The counts of a PoSt request's partition circuit restricted to its first `n` sector
/// sub-circuits, for each `n` in `prefixes`. A PoSt circuit is its sectors' sub-circuits
/// side by side, each of the same shape, so two such counts give the fixed and per-sector
/// parts of the whole (counting a full 32 GiB WindowPoSt partition takes minutes: its
/// Poseidon gadgets build about a billion terms).
pub fn count_post_sectors(req: &ProofRequest, prefixes: &[usize]) -> Result<Vec<Counts>> {
    let (_, size) = (req.registered(), req.sector_size());
    match req.kind() {
        ProofKind::WindowPostPartition | ProofKind::WinningPost => {
            cuzk_filecoin::with_tree!(size, post_counts(req, prefixes))
        }
        _ => Err(FilecoinError::InvalidValue {
            field: "proof_kind",
            reason: "only PoSt circuits are made of sector sub-circuits".into(),
        }),
    }
}

/// [`count_post_sectors`] for the blank circuit of `id` (a WinningPoSt or WindowPoSt id).
pub fn count_blank_post_sectors(id: CircuitId, prefixes: &[usize]) -> Result<Vec<Counts>> {
    let size = id.size;
    match id.kind {
        CircuitKind::WinningPost | CircuitKind::WindowPost => {
            cuzk_filecoin::with_tree!(size, blank_post_counts(id, prefixes))
        }
        _ => Err(FilecoinError::InvalidValue {
            field: "circuit_id",
            reason: "only PoSt circuits are made of sector sub-circuits".into(),
        }),
    }
}

fn blank_post_counts<Tree: 'static + MerkleTreeTrait>(
    id: CircuitId,
    prefixes: &[usize],
) -> Result<Vec<Counts>> {
    let winning = id.kind == CircuitKind::WinningPost;
    let n = if winning { 0 } else { 10 } + id.size.index();
    let config = post_from_u64(n)?.as_v1_config();
    let pp = if winning {
        winning_post_public_params::<Tree>(&config)
    } else {
        window_post_public_params::<Tree>(&config)
    }
    .map_err(fc("PoSt public parameters"))?;
    let circuit = <FallbackPoStCompound<Tree> as CompoundProof<
        FallbackPoSt<'static, Tree>,
        FallbackPoStCircuit<Tree>,
    >>::blank_circuit(&pp);
    prefixes
        .iter()
        .map(|&n| {
            let mut c = circuit.clone();
            c.sectors.truncate(n);
            count_circuit(c, false)
        })
        .collect()
}

fn fc(context: &'static str) -> impl Fn(anyhow::Error) -> FilecoinError {
    move |e| FilecoinError::filecoin(context, e)
}

fn phase1(req: &ProofRequest) -> Result<SealCommitPhase1Output> {
    let env = C1Envelope::parse(&req.vanilla_proof)?;
    serde_json::from_slice(&env.phase1_bytes()?).map_err(FilecoinError::Phase1Json)
}

fn porep_vanilla<Tree: 'static + MerkleTreeTrait>(
    p: SealCommitPhase1Output,
) -> Result<Vec<Vec<VanillaSealProof<Tree>>>> {
    p.vanilla_proofs.try_into().map_err(fc("vanilla_proofs"))
}

fn porep_counts<Tree: 'static + MerkleTreeTrait>(req: &ProofRequest, k: usize) -> Result<Counts> {
    let (RegisteredProof::Seal(seal), _) = (req.registered(), req.sector_size()) else {
        return Err(FilecoinError::filecoin(
            "registered_proof",
            "not a seal proof",
        ));
    };
    let p = phase1(req)?;
    let pp = public_params::<Tree>(&seal.as_v1_config()).map_err(fc("PoRep public parameters"))?;
    let replica: Scalar = p.replica_id.into();
    let pub_in = stacked::PublicInputs {
        replica_id: replica.into(),
        tau: Some(stacked::Tau {
            comm_d: DefaultPieceDomain::try_from_bytes(&p.comm_d).map_err(fc("comm_d"))?,
            comm_r: as_safe_commitment(&p.comm_r, "comm_r").map_err(fc("comm_r"))?,
        }),
        k: None,
        seed: Some(p.seed),
    };
    let vanilla = porep_vanilla::<Tree>(p)?;
    let proofs = vanilla.get(k).ok_or_else(|| no_partition(k))?;
    let circuit = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
        StackedDrg<'static, Tree, DefaultPieceHasher>,
        _,
    >>::circuit(&pub_in, (), proofs, &pp, Some(k))
    .map_err(fc("building the PoRep circuit"))?;
    count_circuit(circuit, true)
}

fn no_partition(k: usize) -> FilecoinError {
    FilecoinError::InvalidValue {
        field: "partition",
        reason: format!("the request has no partition {k}"),
    }
}

fn snap_counts<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    req: &ProofRequest,
    k: usize,
) -> Result<Counts> {
    let (RegisteredProof::Update(update), size) = (req.registered(), req.sector_size()) else {
        return Err(FilecoinError::filecoin(
            "registered_proof",
            "not an update proof",
        ));
    };
    let config = SectorUpdateConfig::from_porep_config(&update.as_v1_config());
    let pp = storage_proofs_update::PublicParams::from_sector_size(size.bytes());
    let bytes = req.vanilla_proofs.get(k).ok_or_else(|| no_partition(k))?;
    let proof: PartitionProof<Tree> =
        bincode::deserialize(bytes).map_err(|source| FilecoinError::VanillaDecode {
            field: "vanilla_proofs",
            index: k,
            source,
        })?;
    let r = |field: &'static str, b: &[u8]| -> Result<<TreeRHasher as Hasher>::Domain> {
        <TreeRHasher as Hasher>::Domain::try_from_bytes(&bytes32(field, b)?).map_err(fc(field))
    };
    let pub_in = storage_proofs_update::PublicInputs {
        k: usize::from(config.update_partitions),
        comm_r_old: r("comm_r_old", &req.comm_r_old)?,
        comm_d_new: DefaultPieceDomain::try_from_bytes(&bytes32("comm_d_new", &req.comm_d_new)?)
            .map_err(fc("comm_d_new"))?,
        comm_r_new: r("comm_r_new", &req.comm_r_new)?,
        h: config.h,
    };
    let circuit =
        <EmptySectorUpdateCompound<Tree> as CompoundProof<EmptySectorUpdate<Tree>, _>>::circuit(
            &pub_in,
            (),
            &proof,
            &pp,
            Some(k),
        )
        .map_err(fc("building the SnapDeals circuit"))?;
    count_circuit(circuit, true)
}

fn post_counts<Tree: 'static + MerkleTreeTrait>(
    req: &ProofRequest,
    prefixes: &[usize],
) -> Result<Vec<Counts>> {
    let (RegisteredProof::PoSt(post), _) = (req.registered(), req.sector_size()) else {
        return Err(FilecoinError::filecoin(
            "registered_proof",
            "not a PoSt proof",
        ));
    };
    let config = post.as_v1_config();
    let vanilla = req
        .vanilla_proofs
        .iter()
        .enumerate()
        .map(|(i, b)| {
            bincode::deserialize::<FallbackPoStSectorProof<Tree>>(b).map_err(|source| {
                FilecoinError::VanillaDecode {
                    field: "vanilla_proofs",
                    index: i,
                    source,
                }
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let randomness = as_safe_commitment(&bytes32("randomness", &req.randomness)?, "randomness")
        .map_err(fc("randomness"))?;
    let prover_id = as_safe_commitment(&req.prover_id(), "prover_id").map_err(fc("miner_id"))?;
    let sectors: Vec<fallback::PublicSector<_>> = vanilla
        .iter()
        .map(|p| fallback::PublicSector {
            id: p.sector_id,
            comm_r: p.comm_r,
        })
        .collect();
    let winning = req.kind() == ProofKind::WinningPost;
    let pp = if winning {
        winning_post_public_params::<Tree>(&config)
    } else {
        window_post_public_params::<Tree>(&config)
    }
    .map_err(fc("PoSt public parameters"))?;
    let inputs = |sectors: Vec<fallback::PublicSector<_>>, k| fallback::PublicInputs {
        randomness,
        prover_id,
        sectors,
        k,
    };
    let (partition_proof, pub_in) = if winning {
        let mut parts =
            partition_vanilla_proofs(&config, &pp, &inputs(sectors.clone(), None), 1, &vanilla)
                .map_err(fc("vanilla_proofs (WinningPoSt)"))?;
        let part = parts.pop().ok_or_else(|| no_partition(0))?;
        let repeated = (0..pp.sector_count)
            .flat_map(|_| sectors.iter().cloned())
            .collect();
        (part, inputs(repeated, None))
    } else {
        let k = req.partition_index as usize;
        let part = single_partition_vanilla_proofs(
            &config,
            &pp,
            &inputs(sectors.clone(), Some(k)),
            &vanilla,
        )
        .map_err(fc("vanilla_proofs (WindowPoSt)"))?;
        // Earlier partitions' sectors only fill positions (as the planner pads them).
        let first = sectors.first().cloned().ok_or_else(|| no_partition(k))?;
        let mut padded = vec![first; k * config.sector_count];
        padded.extend(sectors);
        (part, inputs(padded, None))
    };
    let k = if winning {
        0
    } else {
        req.partition_index as usize
    };
    let circuit = <FallbackPoStCompound<Tree> as CompoundProof<
        FallbackPoSt<'static, Tree>,
        FallbackPoStCircuit<Tree>,
    >>::circuit(&pub_in, Default::default(), &partition_proof, &pp, Some(k))
    .map_err(fc("building the PoSt circuit"))?;
    drop(partition_proof);
    prefixes
        .iter()
        .map(|&n| {
            let mut c = circuit.clone();
            c.sectors.truncate(n);
            count_circuit(c, true)
        })
        .collect()
}

/// A structural signature of each partition's vanilla proof: a hash of its serde shape
/// (field names and every list's length, no values). Equal signatures mean equal challenge
/// counts, path lengths, sibling counts, column heights and parent counts. PoRep: one per
/// partition of the C1 output; SnapDeals: one per partition proof; PoSt: one per sector.
pub fn partition_signatures(req: &ProofRequest) -> Result<Vec<u64>> {
    let (_, size) = (req.registered(), req.sector_size());
    match req.kind() {
        ProofKind::PoRepSealCommit => cuzk_filecoin::with_tree!(size, porep_signatures(req)),
        ProofKind::SnapDealsUpdate => cuzk_filecoin::with_tree!(size, snap_signatures(req)),
        ProofKind::WindowPostPartition | ProofKind::WinningPost => {
            cuzk_filecoin::with_tree!(size, post_signatures(req))
        }
    }
}

fn porep_signatures<Tree: 'static + MerkleTreeTrait>(req: &ProofRequest) -> Result<Vec<u64>> {
    porep_vanilla::<Tree>(phase1(req)?)?
        .iter()
        .map(signature)
        .collect()
}

fn snap_signatures<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    req: &ProofRequest,
) -> Result<Vec<u64>> {
    req.vanilla_proofs
        .iter()
        .map(|b| {
            let p: PartitionProof<Tree> = bincode::deserialize(b)
                .map_err(|e| FilecoinError::filecoin("vanilla_proofs", e))?;
            signature(&p)
        })
        .collect()
}

fn post_signatures<Tree: 'static + MerkleTreeTrait>(req: &ProofRequest) -> Result<Vec<u64>> {
    req.vanilla_proofs
        .iter()
        .map(|b| {
            let p: FallbackPoStSectorProof<Tree> = bincode::deserialize(b)
                .map_err(|e| FilecoinError::filecoin("vanilla_proofs", e))?;
            signature(&p.vanilla_proof)
        })
        .collect()
}

/// Hash of `v`'s JSON structure: object keys and array lengths, numbers as one token.
fn signature<T: Serialize>(v: &T) -> Result<u64> {
    let json = serde_json::to_value(v).map_err(|e| FilecoinError::filecoin("signature", e))?;
    let mut h = DefaultHasher::new();
    walk(&json, &mut h);
    Ok(h.finish())
}

fn walk(v: &serde_json::Value, h: &mut DefaultHasher) {
    use serde_json::Value;
    match v {
        Value::Null => h.write_u8(0),
        Value::Bool(_) => h.write_u8(1),
        Value::Number(_) => h.write_u8(2),
        Value::String(_) => h.write_u8(3),
        Value::Array(a) => {
            h.write_u8(4);
            h.write_usize(a.len());
            a.iter().for_each(|x| walk(x, h));
        }
        Value::Object(o) => {
            h.write_u8(5);
            h.write_usize(o.len());
            for (k, x) in o {
                h.write(k.as_bytes());
                walk(x, h);
            }
        }
    }
}
