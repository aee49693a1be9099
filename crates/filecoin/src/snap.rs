//! SnapDeals: decodes the per-partition vanilla proofs and the three commitments, plans one
//! `EmptySectorUpdateCircuit` per partition; verification goes through filecoin-proofs'
//! `verify_empty_sector_update_proof`.
use std::sync::Arc;

use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::{DefaultPieceDomain, MerkleTreeTrait, SectorUpdateConfig, TreeRHasher};
use filecoin_proofs_api::RegisteredUpdateProof;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_update::{
    EmptySectorUpdate, EmptySectorUpdateCompound, PartitionProof, PublicInputs, PublicParams,
};

use cuzk_groth16::{Recorder, RecorderMode, Synthesized};

use crate::commcid::{commitment, Commitment};
use crate::error::{FilecoinError, Result};
use crate::partition::{MemoryEstimate, PartitionJob, ProofPlan, Synthesis, VerifyFn};
use crate::registry::{CircuitId, CircuitKind, RegisteredProof};
use crate::request::{check_scalar, ProofRequest};

struct Shared<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> {
    pub_in: PublicInputs,
    pp: PublicParams,
    vanilla: Vec<PartitionProof<Tree>>,
}

type C<T> = EmptySectorUpdateCompound<T>;

fn build<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    shared: &Shared<Tree>,
    k: usize,
) -> Result<storage_proofs_update::EmptySectorUpdateCircuit<Tree>> {
    <C<Tree> as CompoundProof<EmptySectorUpdate<Tree>, _>>::circuit(
        &shared.pub_in,
        (),
        &shared.vanilla[k],
        &shared.pp,
        Some(k),
    )
    .map_err(|e| FilecoinError::filecoin("building the SnapDeals circuit", e))
}

/// A SnapDeals circuit shape's key for the run-time check of the native witness.
struct SnapShape;

/// Partition `k`'s witness-only recording, natively (`native::snap`: the challenges on every
/// core). The first partition of each tree shape in a process is checked first: the same
/// circuit cut to its first challenge (`challenge_count` 1) is recorded both natively and by
/// the circuit's own gadgets, and compared. A mismatch turns the native path off for the
/// shape (logged as an error), and from then on the gadgets record its partitions.
fn native_witness<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    shared: &Shared<Tree>,
    k: usize,
    recorder: Recorder,
    total_aux: usize,
    exact: bool,
) -> Result<Synthesized> {
    use crate::native::{self, NativeState};
    let failed = |message: String| FilecoinError::Synthesis {
        partition: k,
        message,
    };
    let circuit = build(shared, k)?;
    let key = (std::any::TypeId::of::<(SnapShape, Tree)>(), 0);
    if native::state(key) == NativeState::Unchecked {
        let mut first = build(shared, k)?;
        first.pub_params.challenge_count = 1;
        first.priv_inputs.challenge_proofs.truncate(1);
        let ours =
            native::snap::witness(&first, Recorder::new(RecorderMode::WitnessOnly), 0, false);
        let gadgets = Recorder::synthesize(first, RecorderMode::WitnessOnly)
            .map_err(|e| failed(e.to_string()))?;
        match ours {
            Ok(ours)
                if ours.compact == gadgets.compact
                    && ours.inputs == gadgets.inputs
                    && ours.num_constraints == gadgets.num_constraints =>
            {
                native::set_state(key, NativeState::Checked)
            }
            ours => native::mismatch(
                key,
                std::any::type_name::<Tree>(),
                &format!(
                    "SnapDeals partition {k} cut to its first challenge: {:?} aux values \
                     against the gadgets' {}",
                    ours.map(|o| o.num_aux()),
                    gadgets.num_aux(),
                ),
            ),
        }
    }
    if native::state(key) == NativeState::Off {
        return Recorder::synthesize_into(recorder, circuit).map_err(|e| failed(e.to_string()));
    }
    let out = native::snap::witness(&circuit, recorder, total_aux, exact)
        .map_err(|e| failed(format!("native SnapDeals witness: {e}")))?;
    crate::partition::count_native_partition();
    Ok(out)
}

/// Plans a SnapDeals request.
pub(crate) fn plan<S: Synthesis>(req: &ProofRequest) -> Result<ProofPlan<S::Work>> {
    let (rp, size) = (req.registered(), req.sector_size());
    let RegisteredProof::Update(update) = rp else {
        return Err(FilecoinError::Filecoin {
            context: "decoding registered_proof",
            message: "not an update proof".into(),
        });
    };
    // Raw, or as CIDs (Curio's sealing pipeline sends `cid.Bytes()`).
    let comm_r_old = commitment("comm_r_old", &req.comm_r_old, Commitment::Sealed)?;
    let comm_r_new = commitment("comm_r_new", &req.comm_r_new, Commitment::Sealed)?;
    let comm_d_new = commitment("comm_d_new", &req.comm_d_new, Commitment::Unsealed)?;
    check_scalar("comm_r_old", &comm_r_old, true)?;
    check_scalar("comm_r_new", &comm_r_new, true)?;
    check_scalar("comm_d_new", &comm_d_new, true)?;
    crate::with_tree!(
        size,
        plan_tree<S>(req, update, comm_r_old, comm_r_new, comm_d_new)
    )
}

fn plan_tree<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>, S: Synthesis>(
    req: &ProofRequest,
    update: RegisteredUpdateProof,
    comm_r_old: [u8; 32],
    comm_r_new: [u8; 32],
    comm_d_new: [u8; 32],
) -> Result<ProofPlan<S::Work>> {
    let config = SectorUpdateConfig::from_porep_config(&update.as_v1_config());
    let partitions = usize::from(config.update_partitions);
    if req.vanilla_proofs.len() != partitions {
        return Err(FilecoinError::WrongCount {
            field: "vanilla_proofs".into(),
            expected: format!("{partitions} (partitions of {update:?})"),
            got: req.vanilla_proofs.len(),
        });
    }
    let pp = PublicParams::from_sector_size(u64::from(config.sector_size));
    let mut vanilla = Vec::with_capacity(partitions);
    for (k, bytes) in req.vanilla_proofs.iter().enumerate() {
        let p: PartitionProof<Tree> =
            bincode::deserialize(bytes).map_err(|source| FilecoinError::VanillaDecode {
                field: "vanilla_proofs",
                index: k,
                source,
            })?;
        if p.apex_leafs.len() != pp.apex_leaf_count {
            return Err(FilecoinError::WrongCount {
                field: format!("vanilla_proofs[{k}].apex_leafs"),
                expected: pp.apex_leaf_count.to_string(),
                got: p.apex_leafs.len(),
            });
        }
        if p.challenge_proofs.len() != pp.challenge_count {
            return Err(FilecoinError::WrongCount {
                field: format!("vanilla_proofs[{k}].challenge_proofs"),
                expected: pp.challenge_count.to_string(),
                got: p.challenge_proofs.len(),
            });
        }
        vanilla.push(p);
    }

    let domain = |field: &'static str, b: &[u8; 32]| {
        <TreeRHasher as Hasher>::Domain::try_from_bytes(b)
            .map_err(|e| FilecoinError::filecoin(field, e))
    };
    let pub_in = PublicInputs {
        k: partitions,
        comm_r_old: domain("comm_r_old", &comm_r_old)?,
        comm_d_new: DefaultPieceDomain::try_from_bytes(&comm_d_new)
            .map_err(|e| FilecoinError::filecoin("comm_d_new", e))?,
        comm_r_new: domain("comm_r_new", &comm_r_new)?,
        h: config.h,
    };

    let circuit_id = CircuitId::new(
        CircuitKind::Snap,
        RegisteredProof::Update(update).sector_size(),
    );
    let estimate = MemoryEstimate::for_circuit(circuit_id);
    let mut all_inputs = Vec::with_capacity(partitions);
    for k in 0..partitions {
        all_inputs.push(
            <C<Tree> as CompoundProof<EmptySectorUpdate<Tree>, _>>::generate_public_inputs(
                &pub_in,
                &pp,
                Some(k),
            )
            .map_err(|e| FilecoinError::filecoin("SnapDeals public inputs", e))?,
        );
    }
    let shared = Arc::new(Shared {
        pub_in,
        pp,
        vanilla,
    });
    let jobs = all_inputs
        .into_iter()
        .enumerate()
        .map(|(k, public_inputs)| {
            let (for_build, for_witness) = (Arc::clone(&shared), Arc::clone(&shared));
            let witness = move |recorder| {
                native_witness(&for_witness, k, recorder, estimate.aux, estimate.exact)
            };
            PartitionJob {
                circuit_id,
                partition: k,
                circuit_partition: k,
                public_inputs,
                estimate,
                synthesize: S::work_with_witness(
                    k,
                    estimate,
                    move || build(&for_build, k),
                    witness,
                ),
            }
        })
        .collect();

    let verifier: VerifyFn = Box::new(move |proof: &[u8]| {
        crate::partition::check_proof_len(proof, partitions)?;
        crate::partition::verdict(
            "verify_empty_sector_update_proof",
            filecoin_proofs_api::update::verify_empty_sector_update_proof(
                update, proof, comm_r_old, comm_r_new, comm_d_new,
            ),
        )
    });

    Ok(ProofPlan {
        kind: req.kind(),
        registered_proof: RegisteredProof::Update(update),
        circuit_id,
        jobs,
        verifier,
        finisher: None,
    })
}
