//! Witness-only recording as a constraint-system type of its own.
//!
//! A circuit that splits its synthesis makes its sub-systems with `ConstraintSystem::new()`,
//! which knows nothing of the parent's mode (storage-proofs' WindowPoSt and WinningPoSt circuit
//! synthesizes groups of sectors in parallel that way, then `extend`s them into the parent).
//! With [`Recorder`] as the type, those sub-systems were full recorders: every gadget built
//! and evaluated its linear combinations, and the parent then dropped them. As a type of its
//! own, witness-only recording makes witness-only sub-systems.
use bellpepper_core::{ConstraintSystem, SynthesisError, Variable};
use blstrs::Scalar;

use super::{CompactAux, Recorder, RecorderMode};

/// A [`Recorder`] in [`RecorderMode::WitnessOnly`] whose `new()` sub-systems are witness-only
/// too.
#[derive(Debug)]
pub(super) struct WitnessCs(pub(super) Recorder);

impl ConstraintSystem<Scalar> for WitnessCs {
    type Root = Self;

    fn new() -> Self {
        WitnessCs(Recorder::new(RecorderMode::WitnessOnly))
    }

    fn alloc<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.0.alloc(annotation, f)
    }

    fn alloc_input<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.0.alloc_input(annotation, f)
    }

    crate::enforce!(
        /// Counts the constraint (the witness-only recorder runs none of the closures).
        |self, annotation, a, b, c| {
            self.0.enforce(annotation, a, b, c);
        }
    );

    crate::flat_namespaces!();

    fn is_extensible() -> bool {
        true
    }

    /// Appends `other`'s witness; its input 0 (its temporary ONE) is merged with ours.
    fn extend(&mut self, other: &Self) {
        self.0.extend(&other.0);
    }
}

/// Values a native witness computation appends to a witness-only recording, in the
/// circuit's allocation order, with the inputs and the constraints the skipped gadgets would
/// have allocated and counted: onto a recording's own ([`Recorder::native_witness`]), or onto
/// assignments of a piece's own ([`NativeWitness::new`]) that pieces computed on several
/// threads append in order. The aux values go to a [`CompactAux`]: bits stay bits.
#[derive(Debug)]
pub struct NativeWitness<'a> {
    aux: &'a mut CompactAux,
    inputs: &'a mut Vec<Scalar>,
    constraints: &'a mut usize,
}

impl<'a> NativeWitness<'a> {
    /// A witness appended to `aux`, `inputs` and `constraints`.
    pub fn new(
        aux: &'a mut CompactAux,
        inputs: &'a mut Vec<Scalar>,
        constraints: &'a mut usize,
    ) -> NativeWitness<'a> {
        NativeWitness {
            aux,
            inputs,
            constraints,
        }
    }

    /// Aux values appended so far (with what the target held before).
    pub fn num_aux(&self) -> usize {
        self.aux.len()
    }

    /// Appends an aux value.
    #[inline]
    pub fn push(&mut self, value: Scalar) {
        self.aux.push(value);
    }

    /// Appends a 0/1 aux value.
    #[inline]
    pub fn push_bit(&mut self, value: bool) {
        self.aux.push_bit(value);
    }

    /// Appends a public input (as `alloc_input` records it).
    pub fn push_input(&mut self, value: Scalar) {
        self.inputs.push(value);
    }

    /// Counts `n` constraints.
    #[inline]
    pub fn add_constraints(&mut self, n: usize) {
        *self.constraints += n;
    }
}

impl Recorder {
    /// A handle that appends natively computed values, or `None` unless this is a
    /// witness-only recording (a full recording needs every constraint's terms).
    pub fn native_witness(&mut self) -> Option<NativeWitness<'_>> {
        let out = &mut self.out;
        match (&self.mode, &mut out.compact) {
            (RecorderMode::WitnessOnly, Some(aux)) => Some(NativeWitness::new(
                aux,
                &mut out.inputs,
                &mut out.num_constraints,
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bellpepper_core::Circuit;
    use ff::Field;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Splits into `parts` sub-systems made with `CS::new()` when the system is extensible,
    /// as storage-proofs' PoSt circuit does; counts how many `enforce` closures ran.
    struct Split<'a> {
        parts: u64,
        closures: &'a AtomicUsize,
    }

    fn part<CS: ConstraintSystem<Scalar>>(
        cs: &mut CS,
        k: u64,
        closures: &AtomicUsize,
    ) -> Result<(), SynthesisError> {
        let x = cs.alloc_input(|| "x", || Ok(Scalar::from(k + 2)))?;
        let mut prev = cs.alloc(|| "p", || Ok(Scalar::from(k)))?;
        let mut val = Scalar::from(k);
        for i in 0..(3 + k) {
            let next_val = val * Scalar::from(k + 2) + Scalar::from(i);
            let next = cs.alloc(|| "n", || Ok(next_val))?;
            cs.enforce(
                || "step",
                |lc| {
                    closures.fetch_add(1, Ordering::Relaxed);
                    lc + prev
                },
                |lc| lc + x,
                |lc| lc + next - (Scalar::from(i), CS::one()),
            );
            prev = next;
            val = next_val;
        }
        Ok(())
    }

    impl Circuit<Scalar> for Split<'_> {
        fn synthesize<CS: ConstraintSystem<Scalar>>(
            self,
            cs: &mut CS,
        ) -> Result<(), SynthesisError> {
            if !CS::is_extensible() {
                return (0..self.parts).try_for_each(|k| part(cs, k, self.closures));
            }
            let mut subs = Vec::new();
            for k in 0..self.parts {
                let mut sub = CS::new();
                sub.alloc_input(|| "temp ONE", || Ok(Scalar::ONE))?;
                part(&mut sub, k, self.closures)?;
                subs.push(sub);
            }
            subs.iter().for_each(|sub| cs.extend(sub));
            Ok(())
        }
    }

    #[test]
    fn sub_systems_of_a_witness_only_recording_are_witness_only() {
        let full_closures = AtomicUsize::new(0);
        let full = Recorder::synthesize(
            Split {
                parts: 4,
                closures: &full_closures,
            },
            RecorderMode::Full,
        )
        .expect("full");
        assert!(full.is_satisfied());
        assert_eq!(full_closures.load(Ordering::Relaxed), full.num_constraints);

        let closures = AtomicUsize::new(0);
        let w = Recorder::synthesize(
            Split {
                parts: 4,
                closures: &closures,
            },
            RecorderMode::WitnessOnly,
        )
        .expect("witness");
        assert_eq!(
            closures.load(Ordering::Relaxed),
            0,
            "a witness-only recording's sub-systems built linear combinations"
        );
        assert_eq!(w.inputs, full.inputs);
        assert_eq!(w.compact, Some(CompactAux::from_full(&full.aux)));
        assert_eq!(w.num_constraints, full.num_constraints);
        assert!(!w.has_evaluations());
    }

    #[test]
    fn a_native_witness_appends_compact_to_its_recording() {
        let mut r = Recorder::new(RecorderMode::WitnessOnly);
        let mut w = r.native_witness().expect("witness-only");
        w.push_bit(true);
        w.push(Scalar::from(7));
        w.push(Scalar::ZERO);
        w.push_input(Scalar::from(5));
        w.add_constraints(3);
        assert_eq!(w.num_aux(), 3);
        assert_eq!(
            (r.num_aux(), r.num_inputs(), r.num_constraints()),
            (3, 1, 3)
        );
        let s = r.into_synthesized();
        assert!(s.aux.is_empty());
        assert_eq!(
            s.with_full_aux().aux,
            vec![Scalar::ONE, Scalar::from(7), Scalar::ZERO]
        );
        assert!(Recorder::new(RecorderMode::Full).native_witness().is_none());
    }
}
