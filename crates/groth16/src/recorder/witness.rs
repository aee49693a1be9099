//! Witness-only recording as a constraint-system type of its own.
//!
//! A circuit that splits its synthesis makes its sub-systems with `ConstraintSystem::new()`,
//! which knows nothing of the parent's mode (storage-proofs' WindowPoSt and WinningPoSt circuit
//! synthesizes groups of sectors in parallel that way, then `extend`s them into the parent).
//! With [`Recorder`] as the type, those sub-systems were full recorders: every gadget built
//! and evaluated its linear combinations, and the parent then dropped them. As a type of its
//! own, witness-only recording makes witness-only sub-systems.
use bellpepper_core::{ConstraintSystem, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;

use super::{Recorder, RecorderMode};

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

    /// Counts the constraint (the witness-only recorder runs none of the closures).
    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.0.enforce(annotation, a, b, c);
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }

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
/// have allocated and counted: either onto a recording's vectors ([`Recorder::native_witness`])
/// or, where the caller knows exactly how many values a piece of the witness holds, straight
/// into that piece's slice of the partition's aux vector ([`NativeWitness::into_slice`]), so
/// that pieces computed on several threads need no copy to be joined.
#[derive(Debug)]
pub struct NativeWitness<'a> {
    aux: Aux<'a>,
    inputs: &'a mut Vec<Scalar>,
    constraints: &'a mut usize,
}

#[derive(Debug)]
enum Aux<'a> {
    /// Appended to a vector.
    Grow(&'a mut Vec<Scalar>),
    /// Written into `dst` from `at` on; `at` counts past the end too (never written there).
    Slice { dst: &'a mut [Scalar], at: usize },
}

impl<'a> NativeWitness<'a> {
    /// A witness appended to `aux`, `inputs` and `constraints`.
    pub fn growing(
        aux: &'a mut Vec<Scalar>,
        inputs: &'a mut Vec<Scalar>,
        constraints: &'a mut usize,
    ) -> NativeWitness<'a> {
        NativeWitness {
            aux: Aux::Grow(aux),
            inputs,
            constraints,
        }
    }

    /// A witness whose aux values fill `dst` from its start (its inputs and constraints
    /// appended to `inputs` and `constraints`). [`NativeWitness::filled`] says whether exactly
    /// `dst.len()` values came; values past the end are counted, not written.
    pub fn into_slice(
        dst: &'a mut [Scalar],
        inputs: &'a mut Vec<Scalar>,
        constraints: &'a mut usize,
    ) -> NativeWitness<'a> {
        NativeWitness {
            aux: Aux::Slice { dst, at: 0 },
            inputs,
            constraints,
        }
    }

    /// Whether a slice witness received exactly its slice's length of values (a growing one
    /// always has).
    pub fn filled(&self) -> bool {
        match &self.aux {
            Aux::Grow(_) => true,
            Aux::Slice { dst, at } => *at == dst.len(),
        }
    }

    /// Appends an aux value.
    #[inline]
    pub fn push(&mut self, value: Scalar) {
        match &mut self.aux {
            Aux::Grow(aux) => aux.push(value),
            Aux::Slice { dst, at } => {
                if let Some(slot) = dst.get_mut(*at) {
                    *slot = value;
                }
                *at += 1;
            }
        }
    }

    /// Appends a 0/1 aux value.
    #[inline]
    pub fn push_bit(&mut self, value: bool) {
        self.push(if value { Scalar::ONE } else { Scalar::ZERO });
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
        (self.mode == RecorderMode::WitnessOnly).then(|| {
            let out = &mut self.out;
            NativeWitness::growing(&mut out.aux, &mut out.inputs, &mut out.num_constraints)
        })
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
        assert_eq!(w.aux, full.aux);
        assert_eq!(w.num_constraints, full.num_constraints);
        assert!(!w.has_evaluations());
    }

    #[test]
    fn a_slice_witness_fills_its_slice_and_says_when_it_did_not() {
        let values: Vec<Scalar> = (1..=4u64).map(Scalar::from).collect();
        let (mut inputs, mut constraints) = (Vec::new(), 0);
        let mut dst = vec![Scalar::ZERO; 4];
        let mut w = NativeWitness::into_slice(&mut dst, &mut inputs, &mut constraints);
        for &v in &values[..3] {
            w.push(v);
        }
        assert!(!w.filled(), "three of four values");
        w.push_input(Scalar::from(9));
        w.add_constraints(2);
        w.push(values[3]);
        assert!(w.filled());
        w.push_bit(true);
        assert!(!w.filled(), "a fifth value overflows a slice of four");
        assert_eq!(dst, values, "nothing is written past the end");
        assert_eq!((inputs, constraints), (vec![Scalar::from(9)], 2));

        // A growing one appends, as a recording's own handle does.
        let mut r = Recorder::new(RecorderMode::WitnessOnly);
        let mut w = r.native_witness().expect("witness-only");
        w.push_bit(true);
        w.push_input(Scalar::from(5));
        w.add_constraints(3);
        assert!(w.filled());
        assert_eq!(
            (r.num_aux(), r.num_inputs(), r.num_constraints()),
            (1, 1, 3)
        );
        assert!(Recorder::new(RecorderMode::Full).native_witness().is_none());
    }
}
