//! The constraint recorder: a `bellpepper_core::ConstraintSystem` that records what a Groth16
//! prover needs (assignments, A/B/C evaluated at each constraint, density bitmaps).
//!
//! Each linear combination is evaluated straight into one scalar while it is iterated, so
//! `enforce` allocates nothing beyond the circuit's own `LinearCombination`s and the amortised
//! growth of the output vectors (none at all when [`Recorder::with_hints`] was given true hints).
use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar;
use ff::Field;
use std::sync::Arc;

use crate::compiled::CompiledCircuit;
pub use crate::density::Density;

mod compact;
mod witness;
pub use compact::CompactAux;
pub use witness::NativeWitness;

/// What a [`Recorder`] records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecorderMode {
    /// Assignments, A/B/C evaluations and densities: everything a prover needs.
    Full,
    /// Assignments only; `enforce` does no work (for witness generation).
    WitnessOnly,
}

/// The output of synthesis: the input of a prover.
///
/// `a`, `b`, `c` hold one evaluation per constraint, followed by one per input
/// (bellperson's `input_i * 1 = 0` constraints that make the IC query linearly independent),
/// so their length is `num_constraints + inputs.len()`. They are not padded to the domain.
#[derive(Clone, Debug, Default)]
pub struct Synthesized {
    /// Input assignment; `inputs[0]` is ONE.
    pub inputs: Vec<Scalar>,
    /// Auxiliary (witness) assignment; empty when it is held compact (`compact`).
    pub aux: Vec<Scalar>,
    /// The aux assignment of a witness-only recording, its 0/1 values as bits
    /// ([`CompactAux`]); `None` in a full recording, whose `aux` holds every value.
    pub compact: Option<CompactAux>,
    /// A evaluated at each constraint (then the input constraints).
    pub a: Vec<Scalar>,
    /// B evaluated at each constraint (then zeros for the input constraints).
    pub b: Vec<Scalar>,
    /// C evaluated at each constraint (then zeros for the input constraints).
    pub c: Vec<Scalar>,
    /// Aux variables that appear in some A.
    pub a_aux_density: Density,
    /// Input variables that appear in some B.
    pub b_input_density: Density,
    /// Aux variables that appear in some B.
    pub b_aux_density: Density,
    /// Constraints enforced by the circuit (not counting the input constraints).
    pub num_constraints: usize,
    /// Set when a/b/c are *deferred* ([`CompiledCircuit::defer`]): `a`, `b`, `c` and the
    /// densities are empty and the prover evaluates these matrices against the witness (the
    /// CUDA backend on its device; the CPU prover on the host, [`Synthesized::evaluated`]).
    pub compiled: Option<Arc<CompiledCircuit>>,
}

const SCALAR_BYTES: usize = std::mem::size_of::<Scalar>();

impl Synthesized {
    /// Heap bytes held by all vectors (capacity-based).
    pub fn heap_bytes(&self) -> usize {
        (self.inputs.capacity() + self.aux.capacity()) * SCALAR_BYTES
            + self.compact_bytes()
            + self.abc_bytes()
            + self.a_aux_density.heap_bytes()
            + self.b_input_density.heap_bytes()
            + self.b_aux_density.heap_bytes()
    }

    /// Heap bytes held by the compact aux assignment.
    pub fn compact_bytes(&self) -> usize {
        self.compact.as_ref().map_or(0, CompactAux::heap_bytes)
    }

    /// Number of aux variables, in whichever form the assignment is held.
    pub fn num_aux(&self) -> usize {
        self.compact
            .as_ref()
            .map_or(self.aux.len(), CompactAux::len)
    }

    /// The aux assignment in compact form: the recording's own, or made from the full one.
    pub fn compact_aux(&self) -> std::borrow::Cow<'_, CompactAux> {
        match &self.compact {
            Some(c) => std::borrow::Cow::Borrowed(c),
            None => std::borrow::Cow::Owned(CompactAux::from_full(&self.aux)),
        }
    }

    /// This recording with its aux assignment as full scalars (expanded from the compact
    /// form, on every core, when it is held that way).
    pub fn with_full_aux(mut self) -> Synthesized {
        if let Some(c) = self.compact.take() {
            self.aux = c.to_full();
        }
        self
    }

    /// Heap bytes held by `a`, `b` and `c` (capacity-based): what `start` releases.
    pub fn abc_bytes(&self) -> usize {
        (self.a.capacity() + self.b.capacity() + self.c.capacity()) * SCALAR_BYTES
    }

    /// Whether `a`, `b`, `c` are present (false after witness-only synthesis).
    pub fn has_evaluations(&self) -> bool {
        self.a.len() == self.num_constraints + self.inputs.len()
            && self.b.len() == self.a.len()
            && self.c.len() == self.a.len()
    }

    /// The evaluation-domain size the prover will use: the next power of two of `a.len()`.
    pub fn domain_size(&self) -> usize {
        (self.num_constraints + self.inputs.len())
            .max(1)
            .next_power_of_two()
    }

    /// Checks that every constraint is satisfied: `a[i]·b[i] == c[i]` (for debugging tests).
    pub fn is_satisfied(&self) -> bool {
        self.has_evaluations()
            && self
                .a
                .iter()
                .zip(&self.b)
                .zip(&self.c)
                .take(self.num_constraints)
                .all(|((a, b), c)| *a * b == *c)
    }
}

/// A `ConstraintSystem` that records a Groth16 prover's input (see [`Synthesized`]).
#[derive(Debug)]
pub struct Recorder {
    mode: RecorderMode,
    out: Synthesized,
    bad_reference: bool,
}

impl Recorder {
    /// An empty recorder.
    pub fn new(mode: RecorderMode) -> Recorder {
        Recorder {
            mode,
            out: Synthesized {
                compact: (mode == RecorderMode::WitnessOnly).then(CompactAux::default),
                ..Synthesized::default()
            },
            bad_reference: false,
        }
    }

    /// A recorder preallocated for a circuit of the given shape (`inputs` counts ONE). The
    /// a/b/c vectors are reserved up to the evaluation-domain size so the prover's NTTs can
    /// pad them in place without reallocating. A witness-only recorder records the aux
    /// assignment compact ([`CompactAux`]: bits for `aux` values reserved).
    pub fn with_hints(
        mode: RecorderMode,
        constraints: usize,
        inputs: usize,
        aux: usize,
    ) -> Recorder {
        let full = mode == RecorderMode::Full;
        let mut out = Synthesized {
            inputs: Vec::with_capacity(inputs),
            aux: Vec::with_capacity(if full { aux } else { 0 }),
            compact: (!full).then(|| CompactAux::with_capacity(aux)),
            ..Synthesized::default()
        };
        if full {
            let domain = (constraints + inputs).max(1).next_power_of_two();
            out.a = Vec::with_capacity(domain);
            out.b = Vec::with_capacity(domain);
            out.c = Vec::with_capacity(domain);
            out.a_aux_density = Density::with_capacity(aux);
            out.b_aux_density = Density::with_capacity(aux);
            out.b_input_density = Density::with_capacity(inputs);
        }
        Recorder {
            mode,
            out,
            bad_reference: false,
        }
    }

    /// Synthesizes `circuit` the way bellperson does: ONE is allocated as input 0 first.
    pub fn synthesize<C: Circuit<Scalar>>(
        circuit: C,
        mode: RecorderMode,
    ) -> Result<Synthesized, SynthesisError> {
        Recorder::synthesize_into(Recorder::new(mode), circuit)
    }

    /// [`Recorder::with_hints`], recording into the allocations of `spent`: a finished
    /// partition's buffers (e.g. handed back by
    /// [`crate::ProverBackend::start_reusing`]), so the pages are not faulted in again and
    /// nothing is unmapped in between. Every vector is cleared first; capacities only grow
    /// where the hints ask for more. In witness-only mode the a/b/c and full aux allocations
    /// ride along (still empty) for whatever evaluates them afterwards, and the assignment is
    /// recorded compact.
    pub fn reusing(
        mode: RecorderMode,
        spent: Synthesized,
        constraints: usize,
        inputs: usize,
        aux: usize,
    ) -> Recorder {
        fn fresh(mut v: Vec<Scalar>, cap: usize) -> Vec<Scalar> {
            v.clear();
            v.reserve(cap);
            v
        }
        fn fresh_density(mut d: Density, cap: usize) -> Density {
            d.words.clear();
            d.words.reserve(cap.div_ceil(64));
            d.len = 0;
            d
        }
        let domain = (constraints + inputs).max(1).next_power_of_two();
        let abc = if mode == RecorderMode::Full {
            domain
        } else {
            0
        };
        let dens = |n| if mode == RecorderMode::Full { n } else { 0 };
        let out = Synthesized {
            inputs: fresh(spent.inputs, inputs),
            aux: fresh(spent.aux, dens(aux)),
            compact: (mode == RecorderMode::WitnessOnly).then(|| CompactAux::with_capacity(aux)),
            a: fresh(spent.a, abc),
            b: fresh(spent.b, abc),
            c: fresh(spent.c, abc),
            a_aux_density: fresh_density(spent.a_aux_density, dens(aux)),
            b_input_density: fresh_density(spent.b_input_density, dens(inputs)),
            b_aux_density: fresh_density(spent.b_aux_density, dens(aux)),
            num_constraints: 0,
            compiled: None,
        };
        Recorder {
            mode,
            out,
            bad_reference: false,
        }
    }

    /// Like [`Recorder::synthesize`], into a recorder made with [`Recorder::with_hints`].
    pub fn synthesize_into<C: Circuit<Scalar>>(
        mut recorder: Recorder,
        circuit: C,
    ) -> Result<Synthesized, SynthesisError> {
        recorder.alloc_input(|| "", || Ok(Scalar::ONE))?;
        if recorder.mode == RecorderMode::WitnessOnly {
            // As its own type, so that sub-systems the circuit makes are witness-only too.
            let mut cs = witness::WitnessCs(recorder);
            circuit.synthesize(&mut cs)?;
            recorder = cs.0;
        } else {
            circuit.synthesize(&mut recorder)?;
        }
        if recorder.bad_reference {
            return Err(SynthesisError::AssignmentMissing);
        }
        Ok(recorder.into_synthesized())
    }

    /// The mode this recorder was created with.
    pub fn mode(&self) -> RecorderMode {
        self.mode
    }

    /// Whether some constraint referenced a variable that was never allocated (such a
    /// reference evaluates to zero; [`Recorder::synthesize`] turns it into an error).
    pub fn has_bad_reference(&self) -> bool {
        self.bad_reference
    }

    /// Constraints enforced so far.
    pub fn num_constraints(&self) -> usize {
        self.out.num_constraints
    }

    /// Aux variables allocated so far.
    pub fn num_aux(&self) -> usize {
        self.out.num_aux()
    }

    /// Inputs allocated so far (ONE included once allocated).
    pub fn num_inputs(&self) -> usize {
        self.out.inputs.len()
    }

    /// Heap bytes held so far (capacity-based).
    pub fn heap_bytes(&self) -> usize {
        self.out.heap_bytes()
    }

    /// Finishes recording: in full mode, appends bellperson's input constraints
    /// (`a = input_i`, `b = c = 0`).
    pub fn into_synthesized(self) -> Synthesized {
        let mut out = self.out;
        if self.mode == RecorderMode::Full {
            let n = out.inputs.len();
            out.a.reserve_exact(n);
            out.b.reserve_exact(n);
            out.c.reserve_exact(n);
            out.a.extend_from_slice(&out.inputs);
            out.b.resize(out.b.len() + n, Scalar::ZERO);
            out.c.resize(out.c.len() + n, Scalar::ZERO);
        }
        out
    }

    /// Evaluates `lc`, marking the variables with a non-zero coefficient in the densities
    /// (bellperson's rule; the generator drops the zero polynomials of the others).
    #[inline]
    fn eval(
        lc: &LinearCombination<Scalar>,
        inputs: &[Scalar],
        aux: &[Scalar],
        input_density: Option<&mut Density>,
        aux_density: Option<&mut Density>,
        bad: &mut bool,
    ) -> Scalar {
        let mut acc = Scalar::ZERO;
        Self::eval_terms(lc.iter_inputs(), inputs, input_density, bad, &mut acc);
        Self::eval_terms(lc.iter_aux(), aux, aux_density, bad, &mut acc);
        acc
    }

    /// Adds Σ coeff·value over `terms` (variables of one kind, their values in `values`) to
    /// `acc`, marking each variable with a non-zero coefficient in `density`; a variable past
    /// `values` sets `bad`.
    #[inline]
    fn eval_terms<'a>(
        terms: impl Iterator<Item = (&'a usize, &'a Scalar)>,
        values: &[Scalar],
        mut density: Option<&mut Density>,
        bad: &mut bool,
        acc: &mut Scalar,
    ) {
        for (&i, coeff) in terms {
            if bool::from(coeff.is_zero()) {
                continue;
            }
            match values.get(i) {
                Some(v) if *coeff == Scalar::ONE => *acc += v,
                Some(v) => *acc += *v * coeff,
                None => *bad = true,
            }
            if let Some(d) = density.as_deref_mut() {
                d.set(i);
            }
        }
    }
}

impl ConstraintSystem<Scalar> for Recorder {
    type Root = Self;

    fn new() -> Self {
        Recorder::new(RecorderMode::Full)
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let value = f()?;
        match &mut self.out.compact {
            Some(c) => c.push(value),
            None => self.out.aux.push(value),
        }
        if self.mode == RecorderMode::Full {
            self.out.a_aux_density.push(false);
            self.out.b_aux_density.push(false);
        }
        Ok(Variable::new_unchecked(Index::Aux(self.out.num_aux() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.out.inputs.push(f()?);
        if self.mode == RecorderMode::Full {
            self.out.b_input_density.push(false);
        }
        Ok(Variable::new_unchecked(Index::Input(
            self.out.inputs.len() - 1,
        )))
    }

    crate::enforce!(|self, _, a, b, c| {
        self.out.num_constraints += 1;
        if self.mode == RecorderMode::WitnessOnly {
            return;
        }
        let out = &mut self.out;
        let bad = &mut self.bad_reference;
        let lc = a(LinearCombination::zero());
        // Inputs are dense in A anyway (the input constraints), so only aux is tracked.
        let va = Recorder::eval(
            &lc,
            &out.inputs,
            &out.aux,
            None,
            Some(&mut out.a_aux_density),
            bad,
        );
        drop(lc);
        let lc = b(LinearCombination::zero());
        let vb = Recorder::eval(
            &lc,
            &out.inputs,
            &out.aux,
            Some(&mut out.b_input_density),
            Some(&mut out.b_aux_density),
            bad,
        );
        drop(lc);
        let lc = c(LinearCombination::zero());
        let vc = Recorder::eval(&lc, &out.inputs, &out.aux, None, None, bad);
        out.a.push(va);
        out.b.push(vb);
        out.c.push(vc);
    });

    crate::flat_namespaces!();

    /// Sub-systems made with `new()` (full mode, with their own ONE as input 0) can be
    /// synthesized in parallel and appended with [`ConstraintSystem::extend`], as bellperson's
    /// prover allows (storage-proofs' Window PoSt circuit does this).
    fn is_extensible() -> bool {
        true
    }

    /// Appends `other`'s variables and constraints; its input 0 (its temporary ONE) is merged
    /// with ours.
    fn extend(&mut self, other: &Self) {
        let out = &mut self.out;
        let o = &other.out;
        out.num_constraints += o.num_constraints;
        out.inputs
            .extend_from_slice(o.inputs.get(1..).unwrap_or(&[]));
        match (&mut out.compact, &o.compact) {
            (Some(ours), Some(theirs)) => ours.append(theirs),
            (Some(ours), None) => o.aux.iter().for_each(|v| ours.push(*v)),
            (None, Some(theirs)) => out.aux.extend(theirs.iter()),
            (None, None) => out.aux.extend_from_slice(&o.aux),
        }
        self.bad_reference |= other.bad_reference;
        if self.mode == RecorderMode::Full {
            if other.mode == RecorderMode::Full {
                out.a.extend_from_slice(&o.a);
                out.b.extend_from_slice(&o.b);
                out.c.extend_from_slice(&o.c);
                out.a_aux_density.extend(&o.a_aux_density);
                out.b_aux_density.extend(&o.b_aux_density);
                if o.b_input_density.get(0) {
                    out.b_input_density.set(0);
                }
                out.b_input_density.extend_from(&o.b_input_density, 1);
            } else {
                // A witness-only part cannot supply evaluations: mark the result unusable
                // for proving (the prover then reports missing evaluations).
                out.a.clear();
            }
        }
    }
}

#[cfg(test)]
mod tests;
