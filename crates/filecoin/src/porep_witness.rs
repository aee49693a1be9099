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
//! Step 2 is normally native (`native::porep`: each challenge's values computed without the
//! gadgets, no prefix to drop, and, where the circuit's shape was counted, written straight
//! into the challenge's own slice of the partition's aux vector, so step 3 copies nothing);
//! the crate's synthesis is the reference it is checked against once per process and circuit
//! shape, and the fallback when that check fails.
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

use cuzk_groth16::{CompactAux, Recorder, RecorderMode, Synthesized};

use crate::native::{self, NativeKey, NativeState};

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

/// What a native challenge's recorder holds before the challenge: nothing (it reads the
/// prefix's values, not its variables).
const NATIVE_LEAD: Counts = Counts {
    aux: 0,
    inputs: 0,
    constraints: 0,
};

/// One challenge's values, inputs and constraint count: its witness-only recording past the
/// lead (the prefix's values again, which each gadget challenge records first).
#[derive(Debug, PartialEq)]
struct Part {
    aux: CompactAux,
    inputs: Vec<Scalar>,
    constraints: usize,
}

impl Part {
    fn new(cs: Recorder, lead: Counts) -> Result<Part, SynthesisError> {
        let c = counts(&cs);
        if c.aux < lead.aux || c.inputs < lead.inputs || c.constraints < lead.constraints {
            return Err(SynthesisError::Unsatisfiable);
        }
        let mut w = cs.into_synthesized();
        let aux = match w.compact.take() {
            Some(aux) if lead.aux == 0 => aux,
            Some(aux) => aux.tail(lead.aux),
            None => return Err(SynthesisError::Unsatisfiable),
        };
        Ok(Part {
            aux,
            inputs: w.inputs.split_off(lead.inputs),
            constraints: w.num_constraints - lead.constraints,
        })
    }
}

/// A PoRep circuit shape: its tree type and layers.
fn native_key<Tree: 'static + MerkleTreeTrait>(vanilla: &[VanillaSealProof<Tree>]) -> NativeKey
where
    Domain<Tree>: serde::de::DeserializeOwned,
{
    let layers = vanilla
        .first()
        .and_then(|p| p.replica_column_proofs.drg_parents.first())
        .and_then(|c| native::porep::column_parts(c).ok())
        .map_or(0, |(rows, _)| rows.len());
    (std::any::TypeId::of::<Tree>(), layers)
}

/// The run-time check: the native challenges are kept (and the shape marked checked) when
/// the first equals the gadgets' `gadget[0]`; otherwise the shape's native path is turned
/// off, loudly, and `None` says to redo the partition with the gadgets.
fn reconcile<Tree>(key: NativeKey, native: Vec<Part>, gadget: Vec<Part>) -> Option<Vec<Part>> {
    match (native.first(), gadget.first()) {
        (Some(n), Some(g)) if n == g => {
            native::set_state(key, NativeState::Checked);
            Some(native)
        }
        (n, g) => {
            let first_difference = n.zip(g).and_then(|(n, g)| n.aux.first_difference(&g.aux));
            native::mismatch(
                key,
                std::any::type_name::<Tree>(),
                &format!(
                    "PoRep, the partition's first challenge: {:?} aux values against the \
                     gadgets' {:?}, first difference at {first_difference:?}",
                    n.map(|n| n.aux.len()),
                    g.map(|g| g.aux.len()),
                ),
            );
            None
        }
    }
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
    /// circuit's aux count, `exact` when its shape was counted.
    ///
    /// The challenges are computed natively (`native::porep`) unless that was found to differ
    /// from the gadgets for this circuit shape. Each native challenge records into a compact
    /// assignment of its own (bits as bits), appended in order (`native::units`); with an
    /// exact count, a challenge of another size is an error. The first partition of each shape in a process also runs its
    /// first challenge through the gadgets and natively into recordings of their own, beside
    /// the partition's native challenges, and compares them value for value: a mismatch is
    /// logged as an error, turns the native path off for the shape and redoes the partition
    /// with the gadgets, each challenge into a recorder sized to its share, appended in
    /// order.
    pub(crate) fn witness(
        self,
        mut recorder: Recorder,
        total_aux: usize,
        exact: bool,
    ) -> Result<Synthesized, SynthesisError>
    where
        Domain<Tree>: serde::de::DeserializeOwned,
    {
        if recorder.mode() != RecorderMode::WitnessOnly {
            return Err(SynthesisError::Unsatisfiable);
        }
        let t0 = std::time::Instant::now();
        recorder.alloc_input(|| "", || Ok(Scalar::ONE))?;
        let before = counts(&recorder);
        self.synthesize(&mut recorder, &[])?;
        let after = counts(&recorder);
        // What the prefix records past ONE: each gadget challenge's recording starts with it
        // again.
        let lead = Counts {
            aux: after.aux - before.aux,
            inputs: after.inputs - before.inputs,
            constraints: after.constraints - before.constraints,
        };
        let n = self.vanilla.len().max(1);
        let rest = total_aux.saturating_sub(after.aux);
        // Each challenge's aux count: exact when the circuit's shape was counted and shares
        // evenly among the challenges.
        let (per, exact) = (rest / n, exact && rest % n == 0);
        let share = lead.aux + per;
        let key = native_key::<Tree>(self.vanilla);
        let mut out = recorder.into_synthesized();
        let mark = (out.num_aux(), out.inputs.len(), out.num_constraints);
        let prefix = native::porep::Prefix::new(self.replica_id.into());
        let native_all = |out: &mut Synthesized| {
            native::units(out, self.vanilla.len(), per, exact, |i, w| {
                native::porep::challenge::<Tree>(w, &prefix, &self.vanilla[i])
            })
        };
        let native_done = match native::state(key) {
            NativeState::Off => false,
            NativeState::Checked => {
                native_all(&mut out)?;
                true
            }
            NativeState::Unchecked => {
                // Every challenge natively, and beside it the first challenge through the
                // gadgets and again natively (into a recording of its own), compared.
                let (all, check) = rayon::join(
                    || native_all(&mut out),
                    || {
                        rayon::join(
                            || self.native_first(per),
                            || self.gadget_parts(lead, share, 1),
                        )
                    },
                );
                let (first, gadget) = check;
                match reconcile::<Tree>(key, vec![first?], gadget?) {
                    Some(_) => {
                        all?;
                        true
                    }
                    None => false,
                }
            }
        };
        if native_done {
            crate::partition::count_native_partition();
        } else {
            let aux = out.compact.as_mut().ok_or(SynthesisError::Unsatisfiable)?;
            aux.truncate(mark.0);
            out.inputs.truncate(mark.1);
            out.num_constraints = mark.2;
            for p in self.gadget_parts(lead, share, self.vanilla.len())? {
                aux.append(&p.aux);
                out.inputs.extend_from_slice(&p.inputs);
                out.num_constraints += p.constraints;
            }
        }
        tracing::debug!(
            native = native_done,
            exact,
            ms = t0.elapsed().as_millis() as u64,
            "PoRep partition witness"
        );
        Ok(out)
    }

    /// The first `n` challenges through the crate's own synthesis (the prefix again, then
    /// dropped).
    fn gadget_parts(
        &self,
        lead: Counts,
        share: usize,
        n: usize,
    ) -> Result<Vec<Part>, SynthesisError> {
        self.vanilla[..n.min(self.vanilla.len())]
            .par_chunks(1)
            .map(|challenge| {
                let mut cs = Recorder::with_hints(RecorderMode::WitnessOnly, 0, 0, share);
                self.synthesize(&mut cs, challenge)?;
                Part::new(cs, lead)
            })
            .collect()
    }

    /// The first challenge computed natively into a recording of its own (the run-time
    /// check's side).
    fn native_first(&self, share: usize) -> Result<Part, SynthesisError>
    where
        Domain<Tree>: serde::de::DeserializeOwned,
    {
        let prefix = native::porep::Prefix::new(self.replica_id.into());
        let first = self.vanilla.first().ok_or(SynthesisError::Unsatisfiable)?;
        let mut cs = Recorder::with_hints(RecorderMode::WitnessOnly, 0, 0, share);
        native::porep::challenge::<Tree>(&mut native::native(&mut cs)?, &prefix, first)?;
        Part::new(cs, NATIVE_LEAD)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A challenge's recording of `values` after a lead of one aux value, with a constraint
    /// for each value.
    fn part(values: &[u64]) -> Part {
        let mut cs = Recorder::new(RecorderMode::WitnessOnly);
        let lead = cs.alloc(|| "", || Ok(Scalar::from(7))).unwrap();
        for &v in values {
            let x = cs.alloc(|| "", || Ok(Scalar::from(v))).unwrap();
            cs.enforce(|| "", |lc| lc + x, |lc| lc + lead, |lc| lc);
        }
        let lead = Counts {
            aux: 1,
            inputs: 0,
            constraints: 0,
        };
        Part::new(cs, lead).unwrap()
    }

    #[test]
    fn a_native_challenge_equal_to_the_gadgets_keeps_the_native_path_on() {
        let key = (std::any::TypeId::of::<u16>(), 1);
        let before = crate::partition::native_witness_mismatches();
        let kept = reconcile::<u16>(
            key,
            vec![part(&[1, 0, 5]), part(&[2])],
            vec![part(&[1, 0, 5])],
        );
        assert_eq!(kept.map(|k| k.len()), Some(2));
        assert_eq!(native::state(key), NativeState::Checked);
        assert_eq!(crate::partition::native_witness_mismatches(), before);
    }

    #[test]
    fn a_native_challenge_that_differs_turns_the_native_path_off_for_good() {
        let key = (std::any::TypeId::of::<u32>(), 1);
        let before = crate::partition::native_witness_mismatches();
        assert_eq!(native::state(key), NativeState::Unchecked);
        let redo = reconcile::<u32>(key, vec![part(&[1, 0, 5])], vec![part(&[1, 1, 5])]);
        assert!(
            redo.is_none(),
            "a differing value must send the partition to the gadgets"
        );
        assert_eq!(native::state(key), NativeState::Off);
        assert!(crate::partition::native_witness_mismatches() > before);
        // A different count is a mismatch too; and Off stays off after an equal check.
        assert!(reconcile::<u32>(key, vec![part(&[1, 0])], vec![part(&[1, 0, 5])]).is_none());
        native::set_state(key, NativeState::Checked);
        assert_eq!(native::state(key), NativeState::Off);
    }
}
