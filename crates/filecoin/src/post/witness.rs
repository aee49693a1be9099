//! A PoSt partition's witness computed natively, its sectors on every core.
//!
//! storage-proofs-post's `FallbackPoStCircuit` synthesizes its sectors one after another (or
//! in groups of sub-systems appended in order, which gives the same witness). Per sector
//! (`Sector::synthesize`): `comm_r_last`, `comm_c` and `comm_r` allocated, `comm_r` made an
//! input, `H(comm_c, comm_r_last)` (Poseidon of arity 2) and its equality with `comm_r`; then
//! per challenge a `PoRCircuit` of the tree R path: the leaf allocated, the ascent
//! (`native::poseidon::path`), its index bits packed into inputs, the root equality. Here each
//! sector is computed on a thread of its own, natively, into its own slice of the partition's
//! aux vector.
//!
//! The first partition of each tree shape in a process also synthesizes its first sector
//! with the crate's own gadgets and compares: a mismatch is logged as an error, turns the
//! native path off for the shape and sends the partition back to the gadgets (the caller's
//! fallback). Tested on real 2 KiB WindowPoSt and WinningPoSt (`tests/post_witness.rs`).
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::Field;
use filecoin_hashers::{Hasher, POSEIDON_CONSTANTS_2};
use filecoin_proofs::MerkleTreeTrait;
use storage_proofs_core::merkle::MerkleProofTrait;
use storage_proofs_post::fallback::{Sector, SectorProof};

use cuzk_groth16::{CompactAux, NativeWitness, Recorder, RecorderMode, Synthesized};

use super::{Domain, Shared};
use crate::native::{self, native, pack_inputs, poseidon, NativeState};

/// A PoSt circuit shape's key for the run-time check.
struct PostShape;

/// The public sector and the vanilla proof of each of the circuit's sector slots (a short
/// partition repeats its last public sector, as `FallbackPoStCompound::circuit` does).
type Slot<'a, Tree> = (
    &'a storage_proofs_post::fallback::PublicSector<Domain<Tree>>,
    &'a SectorProof<<Tree as MerkleTreeTrait>::Proof>,
);

fn slots<Tree: 'static + MerkleTreeTrait>(
    shared: &Shared<Tree>,
) -> Result<Vec<Slot<'_, Tree>>, SynthesisError> {
    let public = shared
        .pub_in
        .sectors
        .chunks(shared.pp.sector_count)
        .next()
        .ok_or(SynthesisError::Unsatisfiable)?;
    Ok(shared
        .partition_proof
        .sectors
        .iter()
        .enumerate()
        .map(|(i, p)| (&public[i.min(public.len() - 1)], p))
        .collect())
}

/// One sector slot, natively, into `w`.
fn sector<Tree: 'static + MerkleTreeTrait>(
    w: &mut NativeWitness<'_>,
    (public, proof): Slot<'_, Tree>,
) -> Result<(), SynthesisError> {
    let comm_r: Fr = public.comm_r.into();
    let comm_c: Fr = proof.comm_c.into();
    let comm_r_last: Fr = proof.comm_r_last.into();
    w.push(comm_r_last);
    w.push(comm_c);
    w.push(comm_r);
    // `inputize`: the input and its equality.
    w.push_input(comm_r);
    w.add_constraints(1);
    poseidon::hash(w, &[comm_c, comm_r_last], &*POSEIDON_CONSTANTS_2)?;
    w.add_constraints(1);
    for inclusion in &proof.inclusion_proofs {
        let leaf: Fr = inclusion.leaf().into();
        w.push(leaf);
        let (_, bits) = poseidon::path(w, leaf, &inclusion.as_options())?;
        pack_inputs(w, &bits);
        w.add_constraints(1);
    }
    Ok(())
}

/// What a sector's recording holds past its temporary ONE.
fn sector_values(w: &Synthesized) -> (Option<&CompactAux>, &[Fr], usize) {
    (w.compact.as_ref(), &w.inputs[1..], w.num_constraints)
}

/// A fresh witness-only recording (with a temporary ONE) sized for `aux` values.
fn record(
    aux: usize,
    f: impl FnOnce(&mut Recorder) -> Result<(), SynthesisError>,
) -> Result<Synthesized, SynthesisError> {
    let mut cs = Recorder::with_hints(RecorderMode::WitnessOnly, 0, 0, aux);
    cs.alloc_input(|| "temp ONE", || Ok(Fr::ONE))?;
    f(&mut cs)?;
    Ok(cs.into_synthesized())
}

/// The partition's witness-only recording into `recorder`, natively; `Err` sends the
/// partition to the gadgets (its native path is off, or a check failed). `total_aux` is the
/// circuit's aux count, `exact` when its shape was counted: every sector has the same shape,
/// so each sector then writes straight into its own slice of the partition's aux vector
/// (`native::units`).
pub(crate) fn witness<Tree: 'static + MerkleTreeTrait>(
    shared: &Shared<Tree>,
    mut recorder: Recorder,
    total_aux: usize,
    exact: bool,
) -> Result<Synthesized, SynthesisError> {
    if recorder.mode() != RecorderMode::WitnessOnly
        || <Tree::Hasher as Hasher>::name() != "poseidon_hasher"
    {
        return Err(SynthesisError::Unsatisfiable);
    }
    let key = (std::any::TypeId::of::<(PostShape, Tree)>(), 0);
    let state = native::state(key);
    if state == NativeState::Off {
        return Err(SynthesisError::Unsatisfiable);
    }
    let slots = slots(shared)?;
    let n = slots.len().max(1);
    let share = total_aux / n;
    let exact = exact && total_aux % n == 0;
    // The first partition of a shape: its first sector through the gadgets and natively,
    // each into a recording of its own.
    let check = || -> Result<Option<(Synthesized, Synthesized)>, SynthesisError> {
        if state != NativeState::Unchecked {
            return Ok(None);
        }
        let first = *slots.first().ok_or(SynthesisError::Unsatisfiable)?;
        let circuit = Sector::<Tree>::circuit(first.0, first.1)
            .map_err(|_| SynthesisError::AssignmentMissing)?;
        let (gadget, ours) = rayon::join(
            || record(share, |cs| (&circuit).synthesize(cs)),
            || record(share, |cs| sector::<Tree>(&mut native(cs)?, first)),
        );
        Ok(Some((gadget?, ours?)))
    };
    recorder.alloc_input(|| "", || Ok(Fr::ONE))?;
    let mut out = recorder.into_synthesized();
    let (all, checked) = rayon::join(
        || {
            native::units(&mut out, slots.len(), share, exact, |i, w| {
                sector::<Tree>(w, slots[i])
            })
        },
        check,
    );
    if let Some((gadget, ours)) = checked? {
        if sector_values(&ours) != sector_values(&gadget) {
            native::mismatch(
                key,
                std::any::type_name::<Tree>(),
                &format!(
                    "PoSt, the partition's first sector: {} aux values against the \
                     gadgets' {}",
                    ours.num_aux(),
                    gadget.num_aux()
                ),
            );
            return Err(SynthesisError::Unsatisfiable);
        }
        native::set_state(key, NativeState::Checked);
    }
    all?;
    crate::partition::count_native_partition();
    Ok(out)
}
