//! Pre-compiled constraint matrices: walk a circuit shape's blank circuit once, keep its
//! A, B, C as sparse matrices, and then synthesize each proof as *witness only* (no
//! `LinearCombination` is built) followed by a parallel sparse matrix–vector product.
//!
//! Why: for the Filecoin circuits most of a bellpepper constraint system's time goes into the
//! gadgets building `LinearCombination`s (heap vectors, sorted inserts) for every
//! constraint — a cost every `ConstraintSystem` pays, bellperson's included. The structure is
//! the same for every proof of a circuit shape (the Groth16 parameters are made from the blank
//! circuit), so it can be recorded once and replayed.
use std::collections::HashMap;

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use cuzk_groth16::{Density, Synthesized};
use ff::{Field, PrimeField};
use rayon::prelude::*;

use crate::error::{FilecoinError, Result};
use crate::params::{with_blank_circuit, CircuitVisitor};
use crate::registry::CircuitId;

/// Marks an aux variable in a column index (inputs have the bit clear).
const AUX: u32 = 1 << 31;
/// Coefficient-table slots with a fast path.
const COEFF_ONE: u32 = 0;
const COEFF_MINUS_ONE: u32 = 1;

/// One of A, B, C in compressed-row form.
#[derive(Clone, Debug, Default)]
struct Matrix {
    /// `row_start[i]..row_start[i + 1]` are row `i`'s terms.
    row_start: Vec<u32>,
    /// Variable of each term (`AUX` bit set for aux).
    cols: Vec<u32>,
    /// Coefficient-table index of each term.
    coeffs: Vec<u32>,
}

impl Matrix {
    fn push_row(&mut self, lc: &LinearCombination<Scalar>, table: &mut CoeffTable) -> bool {
        for (&i, c) in lc.iter_inputs() {
            if !bool::from(c.is_zero()) {
                self.cols.push(i as u32);
                self.coeffs.push(table.index(c));
            }
        }
        for (&i, c) in lc.iter_aux() {
            if !bool::from(c.is_zero()) {
                self.cols.push(i as u32 | AUX);
                self.coeffs.push(table.index(c));
            }
        }
        let end = self.cols.len();
        self.row_start.push(end as u32);
        end < u32::MAX as usize
    }

    fn bytes(&self) -> usize {
        4 * (self.row_start.capacity() + self.cols.capacity() + self.coeffs.capacity())
    }

    /// Appends the rows of `other`, a sub-system's matrix: its input 0 (the sub-system's
    /// temporary ONE) is our ONE, its other inputs follow our `inputs`, its aux follow our
    /// `aux`, and its coefficient indices go through `remap`. False if an index overflows.
    fn append(&mut self, other: &Matrix, remap: &[u32], inputs: usize, aux: usize) -> bool {
        let base = self.cols.len() as u64;
        let mut ok = true;
        self.cols.reserve(other.cols.len());
        for &col in &other.cols {
            let moved = if col & AUX != 0 {
                u64::from(col & !AUX) + aux as u64
            } else if col == 0 {
                0
            } else {
                u64::from(col) - 1 + inputs as u64
            };
            ok &= moved < u64::from(AUX);
            self.cols.push(moved as u32 | (col & AUX));
        }
        self.coeffs
            .extend(other.coeffs.iter().map(|&k| remap[k as usize]));
        self.row_start
            .reserve(other.row_start.len().saturating_sub(1));
        for &start in other.row_start.iter().skip(1) {
            let moved = base + u64::from(start);
            ok &= moved < u64::from(u32::MAX);
            self.row_start.push(moved as u32);
        }
        ok
    }
}

#[derive(Debug, Default)]
struct CoeffTable {
    values: Vec<Scalar>,
    index: HashMap<[u8; 32], u32>,
}

impl CoeffTable {
    fn new() -> CoeffTable {
        let mut t = CoeffTable::default();
        t.index(&Scalar::ONE);
        t.index(&-Scalar::ONE);
        t
    }

    fn index(&mut self, c: &Scalar) -> u32 {
        let key = c.to_repr();
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let i = self.values.len() as u32;
        self.values.push(*c);
        self.index.insert(key, i);
        i
    }
}

/// The recorded constraint system of one circuit shape.
#[derive(Debug)]
pub struct CompiledCircuit {
    a: Matrix,
    b: Matrix,
    c: Matrix,
    coeffs: Vec<Scalar>,
    num_inputs: usize,
    num_aux: usize,
    a_aux_density: Density,
    b_input_density: Density,
    b_aux_density: Density,
}

/// Records the structure of whatever circuit it is handed (values are ignored).
struct Compiler {
    a: Matrix,
    b: Matrix,
    c: Matrix,
    table: CoeffTable,
    inputs: usize,
    aux: usize,
    overflow: bool,
}

impl ConstraintSystem<Scalar> for Compiler {
    type Root = Self;

    /// An empty system: no input yet (the root allocates ONE, a sub-system its temporary ONE).
    fn new() -> Self {
        let matrix = || Matrix {
            row_start: vec![0],
            ..Matrix::default()
        };
        Compiler {
            a: matrix(),
            b: matrix(),
            c: matrix(),
            table: CoeffTable::new(),
            inputs: 0,
            aux: 0,
            overflow: false,
        }
    }

    /// Circuits that split their synthesis (storage-proofs' PoSt circuit: groups of sectors
    /// in parallel) compile on every core; [`Compiler::extend`] appends in the order the
    /// circuit's own sequential synthesis would have recorded.
    fn is_extensible() -> bool {
        true
    }

    fn extend(&mut self, other: &Self) {
        let remap: Vec<u32> = other
            .table
            .values
            .iter()
            .map(|c| self.table.index(c))
            .collect();
        let (inputs, aux) = (self.inputs, self.aux);
        let mut ok = true;
        for (m, o) in [
            (&mut self.a, &other.a),
            (&mut self.b, &other.b),
            (&mut self.c, &other.c),
        ] {
            ok &= m.append(o, &remap, inputs, aux);
        }
        self.inputs += other.inputs.saturating_sub(1);
        self.aux += other.aux;
        self.overflow |= other.overflow || !ok;
    }

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let ok = self
            .a
            .push_row(&a(LinearCombination::zero()), &mut self.table)
            & self
                .b
                .push_row(&b(LinearCombination::zero()), &mut self.table)
            & self
                .c
                .push_row(&c(LinearCombination::zero()), &mut self.table);
        self.overflow |= !ok;
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
}

struct Compile;

impl CircuitVisitor for Compile {
    type Output = std::result::Result<Compiler, SynthesisError>;
    fn visit<C: bellpepper_core::Circuit<Scalar> + Send>(self, circuit: C) -> Self::Output {
        let mut cs = Compiler::new();
        // ONE is input 0, as in bellperson and our recorder.
        cs.alloc_input(|| "", || Ok(Scalar::ONE))?;
        circuit.synthesize(&mut cs)?;
        Ok(cs)
    }
}

fn density(m: &Matrix, len: usize, aux: bool) -> Density {
    let mut d = Density::new(len);
    for &col in &m.cols {
        if (col & AUX != 0) == aux {
            d.set((col & !AUX) as usize);
        }
    }
    d
}

impl CompiledCircuit {
    /// Walks the blank circuit of `id` and records its A, B, C.
    pub fn compile(id: CircuitId) -> Result<CompiledCircuit> {
        let cs = with_blank_circuit(id, Compile)?.map_err(|e| FilecoinError::Synthesis {
            partition: 0,
            message: format!("compiling {id}: {e}"),
        })?;
        CompiledCircuit::from_compiler(&id.to_string(), cs)
    }

    fn from_compiler(name: &str, mut cs: Compiler) -> Result<CompiledCircuit> {
        if cs.overflow || cs.aux >= AUX as usize {
            return Err(FilecoinError::Synthesis {
                partition: 0,
                message: format!("{name} is too large for 32-bit term indices"),
            });
        }
        // Held for as long as the SRS: give back what the vectors' growth over-allocated.
        for m in [&mut cs.a, &mut cs.b, &mut cs.c] {
            m.row_start.shrink_to_fit();
            m.cols.shrink_to_fit();
            m.coeffs.shrink_to_fit();
        }
        let a_aux_density = density(&cs.a, cs.aux, true);
        let b_input_density = density(&cs.b, cs.inputs, false);
        let b_aux_density = density(&cs.b, cs.aux, true);
        Ok(CompiledCircuit {
            a: cs.a,
            b: cs.b,
            c: cs.c,
            coeffs: cs.table.values,
            num_inputs: cs.inputs,
            num_aux: cs.aux,
            a_aux_density,
            b_input_density,
            b_aux_density,
        })
    }

    /// Constraints of the circuit.
    pub fn num_constraints(&self) -> usize {
        self.a.row_start.len() - 1
    }

    /// Bytes the matrices and densities hold.
    pub fn heap_bytes(&self) -> usize {
        self.a.bytes()
            + self.b.bytes()
            + self.c.bytes()
            + 32 * self.coeffs.len()
            + self.a_aux_density.heap_bytes()
            + self.b_input_density.heap_bytes()
            + self.b_aux_density.heap_bytes()
    }

    /// Completes a witness-only synthesis (`RecorderMode::WitnessOnly`) of a circuit of this
    /// shape into what a full recording gives: a/b/c (plus bellperson's input rows) and the
    /// densities.
    pub fn evaluate(&self, mut witness: Synthesized) -> Result<Synthesized> {
        if witness.inputs.len() != self.num_inputs
            || witness.aux.len() != self.num_aux
            || witness.num_constraints != self.num_constraints()
        {
            return Err(FilecoinError::Synthesis {
                partition: 0,
                message: format!(
                    "witness shape ({} inputs, {} aux, {} constraints) is not the compiled one ({}, {}, {})",
                    witness.inputs.len(),
                    witness.aux.len(),
                    witness.num_constraints,
                    self.num_inputs,
                    self.num_aux,
                    self.num_constraints()
                ),
            });
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
        Ok(witness)
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

#[cfg(test)]
mod tests {
    use super::*;
    use bellpepper_core::Circuit;
    use cuzk_groth16::{Recorder, RecorderMode};

    /// `parts` independent gadgets with varied coefficients, inputs and ONE in every matrix;
    /// in sub-systems made with `CS::new()` when `split` and the system is extensible (as
    /// storage-proofs' PoSt circuit does), else inline.
    #[derive(Clone, Copy)]
    struct Parts {
        parts: u64,
        split: bool,
    }

    fn part<CS: ConstraintSystem<Scalar>>(
        cs: &mut CS,
        k: u64,
    ) -> std::result::Result<(), SynthesisError> {
        let x = cs.alloc_input(|| "x", || Ok(Scalar::from(k + 2)))?;
        let mut prev = cs.alloc(|| "p", || Ok(Scalar::from(k % 2)))?;
        let mut val = Scalar::from(k % 2);
        for i in 0..(4 + k) {
            let coeff = Scalar::from(3 + (i + k) % 5);
            let next_val = val * Scalar::from(k + 2) * coeff + Scalar::from(i);
            let next = cs.alloc(|| "n", || Ok(next_val))?;
            cs.enforce(
                || "step",
                |lc| lc + (coeff, prev),
                |lc| lc + x,
                |lc| lc + next - (Scalar::from(i), CS::one()),
            );
            prev = next;
            val = next_val;
        }
        cs.enforce(
            || "one",
            |lc| lc + CS::one(),
            |lc| lc + CS::one() + x,
            |lc| lc + x + CS::one(),
        );
        Ok(())
    }

    impl Circuit<Scalar> for Parts {
        fn synthesize<CS: ConstraintSystem<Scalar>>(
            self,
            cs: &mut CS,
        ) -> std::result::Result<(), SynthesisError> {
            if !(self.split && CS::is_extensible()) {
                return (0..self.parts).try_for_each(|k| part(cs, k));
            }
            let mut subs = Vec::new();
            for k in 0..self.parts {
                let mut sub = CS::new();
                sub.alloc_input(|| "temp ONE", || Ok(Scalar::ONE))?;
                part(&mut sub, k)?;
                subs.push(sub);
            }
            subs.iter().for_each(|sub| cs.extend(sub));
            Ok(())
        }
    }

    fn compile(circuit: Parts) -> CompiledCircuit {
        let cs = Compile.visit(circuit).expect("compile");
        CompiledCircuit::from_compiler("parts", cs).expect("compiled")
    }

    #[test]
    fn a_circuit_compiled_in_sub_systems_evaluates_as_its_full_recording() {
        for parts in [1, 3, 6] {
            let full = Recorder::synthesize(
                Parts {
                    parts,
                    split: false,
                },
                RecorderMode::Full,
            )
            .expect("full");
            assert!(full.is_satisfied());
            for split in [false, true] {
                let compiled = compile(Parts { parts, split });
                assert_eq!(compiled.num_constraints(), full.num_constraints);
                let witness =
                    Recorder::synthesize(Parts { parts, split }, RecorderMode::WitnessOnly)
                        .expect("witness");
                let got = compiled.evaluate(witness).expect("evaluate");
                assert_eq!(got.inputs, full.inputs, "parts {parts} split {split}");
                assert_eq!(got.aux, full.aux);
                assert_eq!(got.a, full.a, "parts {parts} split {split}");
                assert_eq!(got.b, full.b);
                assert_eq!(got.c, full.c);
                assert_eq!(got.a_aux_density, full.a_aux_density);
                assert_eq!(got.b_input_density, full.b_input_density);
                assert_eq!(got.b_aux_density, full.b_aux_density);
            }
        }
    }
}
