//! One PoRep partition's witness on every core: its challenges synthesized in parallel into one
//! witness, value for value what the circuit's own (sequential) synthesis gives.
//!
//! `StackedCircuit`'s synthesis allocates a prefix (the replica id and its bits, comm_d, comm_r,
//! comm_r_last, comm_c, the comm_r check), then each challenge in turn. A witness-only recording
//! keeps only the values and their order: no constraint is recorded, and the gadgets compute
//! every value from their own state, never from the constraint system. So, with the crate's own
//! `StackedCircuit::synthesize` throughout:
//! 1. the prefix runs once, alone (no challenges), into the partition's recorder;
//! 2. each challenge runs on a thread of its own, the prefix and that one challenge into a fresh
//!    recorder, whose leading values (the prefix's again: as many aux values, inputs and
//!    constraints as step 1 recorded past ONE) are dropped;
//! 3. the challenges' values (aux and inputs) are appended in challenge order, and their
//!    constraint counts added.
//!
//! The result is checked against the circuit's counted shape; a mismatch is an error (the
//! caller falls back to the sequential synthesis, loudly). Bit-exactness with the gadget path
//! is tested on real 2 KiB and 8 MiB data (`tests/porep_witness.rs`).
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use ff::Field;
use filecoin_hashers::Hasher;
use filecoin_proofs::{DefaultPieceHasher, MerkleTreeTrait, VanillaSealProof};
use rayon::prelude::*;
use storage_proofs_porep::stacked::{self, StackedCircuit};

use cuzk_groth16::{Recorder, RecorderMode, Synthesized};

type G = DefaultPieceHasher;
type Domain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;

/// What one partition's circuit is made of (the fields `StackedCompound::circuit` fills).
pub(crate) struct Pieces<'a, Tree: 'static + MerkleTreeTrait> {
    replica_id: Domain<Tree>,
    comm_d: Option<<G as Hasher>::Domain>,
    comm_r: Option<Domain<Tree>>,
    comm_r_last: Domain<Tree>,
    comm_c: Domain<Tree>,
    vanilla: &'a [VanillaSealProof<Tree>],
}

/// Counts of what a recording holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Counts {
    aux: usize,
    inputs: usize,
    constraints: usize,
}

fn counts(r: &Recorder) -> Counts {
    Counts {
        aux: r.num_aux(),
        inputs: r.num_inputs(),
        constraints: r.num_constraints(),
    }
}

impl<'a, Tree: 'static + MerkleTreeTrait> Pieces<'a, Tree> {
    /// The pieces of partition `vanilla`'s circuit, as `StackedCompound::circuit` makes them
    /// (with its consistency checks).
    pub(crate) fn new(
        pub_in: &stacked::PublicInputs<Domain<Tree>, <G as Hasher>::Domain>,
        vanilla: &'a [VanillaSealProof<Tree>],
    ) -> Result<Pieces<'a, Tree>, String> {
        let first = vanilla
            .first()
            .ok_or("cannot create a circuit with no vanilla proofs")?;
        let (comm_r_last, comm_c) = (first.comm_r_last(), first.comm_c());
        if !vanilla.iter().all(|p| p.comm_r_last() == comm_r_last) {
            return Err("inconsistent comm_r_lasts".into());
        }
        if !vanilla.iter().all(|p| p.comm_c() == comm_c) {
            return Err("inconsistent comm_cs".into());
        }
        Ok(Pieces {
            replica_id: pub_in.replica_id,
            comm_d: pub_in.tau.as_ref().map(|t| t.comm_d),
            comm_r: pub_in.tau.as_ref().map(|t| t.comm_r),
            comm_r_last,
            comm_c,
            vanilla,
        })
    }

    /// The circuit's own synthesis of the prefix and `challenges` into `cs`.
    fn synthesize(
        &self,
        cs: &mut Recorder,
        challenges: &[VanillaSealProof<Tree>],
    ) -> Result<(), SynthesisError> {
        StackedCircuit::<Tree, G>::synthesize(
            cs,
            Some(self.replica_id),
            self.comm_d,
            self.comm_r,
            Some(self.comm_r_last),
            Some(self.comm_c),
            challenges.iter().cloned().map(Into::into).collect(),
        )
    }

    /// The witness-only recording of the whole partition into `recorder` (fresh or reusing a
    /// finished partition's buffers), its challenges on rayon's threads. `total_aux` is the
    /// circuit's aux count (its counted shape): each challenge's recorder is sized to its share,
    /// so the challenges together hold one more copy of the witness, never a grown one. With a
    /// finished partition's a/b/c kept for reuse, that is exactly the proving phase's
    /// reservation (a/b/c plus twice the assignment).
    pub(crate) fn witness(
        self,
        mut recorder: Recorder,
        total_aux: usize,
    ) -> Result<Synthesized, SynthesisError> {
        if recorder.mode() != RecorderMode::WitnessOnly {
            return Err(SynthesisError::Unsatisfiable);
        }
        recorder.alloc_input(|| "", || Ok(Scalar::ONE))?;
        let before = counts(&recorder);
        self.synthesize(&mut recorder, &[])?;
        let after = counts(&recorder);
        // What the prefix records past ONE: each challenge's recording starts with it again.
        let lead = Counts {
            aux: after.aux - before.aux,
            inputs: after.inputs - before.inputs,
            constraints: after.constraints - before.constraints,
        };
        let share = lead.aux + total_aux.saturating_sub(after.aux) / self.vanilla.len().max(1);
        let parts: Vec<Synthesized> = self
            .vanilla
            .par_chunks(1)
            .map(|challenge| {
                let mut cs = Recorder::with_hints(RecorderMode::WitnessOnly, 0, 0, share);
                self.synthesize(&mut cs, challenge)?;
                let c = counts(&cs);
                if c.aux < lead.aux || c.inputs < lead.inputs || c.constraints < lead.constraints {
                    return Err(SynthesisError::Unsatisfiable);
                }
                Ok(cs.into_synthesized())
            })
            .collect::<Result<_, _>>()?;
        let mut out = recorder.into_synthesized();
        out.aux
            .reserve(parts.iter().map(|p| p.aux.len() - lead.aux).sum());
        for p in parts {
            out.aux.extend_from_slice(&p.aux[lead.aux..]);
            out.inputs.extend_from_slice(&p.inputs[lead.inputs..]);
            out.num_constraints += p.num_constraints - lead.constraints;
        }
        Ok(out)
    }
}
