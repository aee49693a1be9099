//! Evaluating a compiled circuit against a witness: on the host ([`CompiledCircuit::evaluate`],
//! a parallel sparse matrix–vector product over value classes), or deferred to the prover
//! ([`CompiledCircuit::defer`], [`Synthesized::evaluated`]).
use std::sync::Arc;

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use super::{CompiledCircuit, Matrix, AUX, COEFF_MINUS_ONE, COEFF_ONE};
use crate::density::Density;
use crate::error::ProveError;
use crate::recorder::Synthesized;

impl CompiledCircuit {
    /// Completes a witness-only synthesis (`RecorderMode::WitnessOnly`) of a circuit of this
    /// shape into what a full recording gives: a/b/c (plus bellperson's input rows) and the
    /// densities.
    pub fn evaluate(&self, mut witness: Synthesized) -> Result<Synthesized, ProveError> {
        self.check_witness(&witness)?;
        if self.released {
            return Err(ProveError::Unavailable(
                "the compiled matrices' host copy was released (the devices hold them): a/b/c \
                 can only be made on a device"
                    .into(),
            ));
        }
        // A compact witness is expanded first (into the full aux allocation it may carry
        // along): the host prover needs every value.
        if let Some(compact) = witness.compact.take() {
            compact.to_full_into(&mut witness.aux);
        }
        let n = self.num_constraints();
        let rows = n + witness.inputs.len();
        // Most aux values of Filecoin circuits are bits: classify once, so a term on a 0 is
        // skipped and a term on a 1 adds its coefficient, with no field multiplication.
        let class = classify(&witness.aux);
        // The witness-only recording carries a/b/c allocations along (empty) when it reused a
        // finished partition's buffers: evaluate into those.
        let mut bufs = [
            std::mem::take(&mut witness.a),
            std::mem::take(&mut witness.b),
            std::mem::take(&mut witness.c),
        ];
        for v in &mut bufs {
            v.clear();
            v.resize(rows, Scalar::ZERO);
        }
        let [mut a, mut b, mut c] = bufs;
        let (inputs, aux) = (&witness.inputs, &witness.aux);
        let z = Operands {
            inputs,
            aux,
            class: &class,
        };
        rayon::join(
            || {
                rayon::join(
                    || self.eval(&self.a, &z, &mut a[..n]),
                    || self.eval(&self.b, &z, &mut b[..n]),
                )
            },
            || self.eval(&self.c, &z, &mut c[..n]),
        );
        a[n..].copy_from_slice(inputs);
        witness.a = a;
        witness.b = b;
        witness.c = c;
        witness.a_aux_density = self.a_aux_density.clone();
        witness.b_input_density = self.b_input_density.clone();
        witness.b_aux_density = self.b_aux_density.clone();
        witness.compiled = None;
        Ok(witness)
    }

    /// Completes a witness-only synthesis into a circuit whose a/b/c are *deferred*: they stay
    /// unevaluated (and unallocated) and the circuit carries these matrices instead, for a
    /// prover that makes a/b/c itself (the CUDA backend, on its device) or evaluates them
    /// on the host first ([`Synthesized::evaluated`], the CPU prover). The densities are
    /// the compiled ones ([`Synthesized::densities`]); the witness's own stay empty.
    pub fn defer(self: &Arc<Self>, mut witness: Synthesized) -> Result<Synthesized, ProveError> {
        self.check_witness(&witness)?;
        witness.a = Vec::new();
        witness.b = Vec::new();
        witness.c = Vec::new();
        witness.a_aux_density = Density::default();
        witness.b_input_density = Density::default();
        witness.b_aux_density = Density::default();
        witness.compiled = Some(self.clone());
        Ok(witness)
    }

    fn check_witness(&self, w: &Synthesized) -> Result<(), ProveError> {
        for (what, expected, got) in [
            (
                "inputs of the compiled circuit",
                self.num_inputs,
                w.inputs.len(),
            ),
            ("aux of the compiled circuit", self.num_aux, w.num_aux()),
            (
                "constraints of the compiled circuit",
                self.num_constraints(),
                w.num_constraints,
            ),
        ] {
            if expected != got {
                return Err(ProveError::ShapeMismatch {
                    what,
                    expected,
                    got,
                });
            }
        }
        Ok(())
    }

    /// Fills `out` with M·z, one value per row of `m`.
    fn eval(&self, m: &Matrix, z: &Operands<'_>, out: &mut [Scalar]) {
        const CHUNK: usize = 1 << 14;
        out.par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(ci, chunk)| {
                let first = ci * CHUNK;
                for (j, slot) in chunk.iter_mut().enumerate() {
                    let r = first + j;
                    let (s, e) = (m.row_start[r] as usize, m.row_start[r + 1] as usize);
                    let mut acc = Scalar::ZERO;
                    for t in s..e {
                        let col = m.cols[t];
                        let (v, class) = if col & AUX != 0 {
                            let i = (col & !AUX) as usize;
                            (&z.aux[i], z.class[i])
                        } else {
                            (&z.inputs[col as usize], OTHER)
                        };
                        match (class, m.coeffs[t]) {
                            (ZERO, _) => {}
                            (ONE, COEFF_ONE) => acc += Scalar::ONE,
                            (ONE, COEFF_MINUS_ONE) => acc -= Scalar::ONE,
                            (ONE, k) => acc += self.coeffs[k as usize],
                            (_, COEFF_ONE) => acc += v,
                            (_, COEFF_MINUS_ONE) => acc -= v,
                            (_, k) => acc += *v * self.coeffs[k as usize],
                        }
                    }
                    *slot = acc;
                }
            });
    }
}

/// Value classes of the assignment (one byte per aux variable).
const ZERO: u8 = 0;
const ONE: u8 = 1;
const OTHER: u8 = 2;

/// The assignment a matrix is multiplied with.
struct Operands<'a> {
    inputs: &'a [Scalar],
    aux: &'a [Scalar],
    class: &'a [u8],
}

fn classify(aux: &[Scalar]) -> Vec<u8> {
    let mut class = vec![OTHER; aux.len()];
    class
        .par_chunks_mut(1 << 16)
        .zip(aux.par_chunks(1 << 16))
        .for_each(|(c, v)| {
            for (c, v) in c.iter_mut().zip(v) {
                *c = if bool::from(v.is_zero()) {
                    ZERO
                } else if *v == Scalar::ONE {
                    ONE
                } else {
                    OTHER
                };
            }
        });
    class
}

impl Synthesized {
    /// Whether a/b/c are deferred to the prover ([`CompiledCircuit::defer`]).
    pub fn is_deferred(&self) -> bool {
        self.compiled.is_some() && self.a.is_empty()
    }

    /// This circuit with a/b/c evaluated on the host (its deferred matrices evaluated, in
    /// parallel), or as it is when they are not deferred.
    pub fn evaluated(self) -> Result<Synthesized, ProveError> {
        match self.compiled.clone() {
            Some(c) if self.a.is_empty() => c.evaluate(self),
            _ => Ok(self),
        }
    }

    /// (A's aux, B's inputs, B's aux) densities: the compiled circuit's when a/b/c are
    /// deferred, else this circuit's own.
    pub fn densities(&self) -> (&Density, &Density, &Density) {
        match &self.compiled {
            Some(c) if self.a.is_empty() => c.densities(),
            _ => (
                &self.a_aux_density,
                &self.b_input_density,
                &self.b_aux_density,
            ),
        }
    }
}
