//! Pre-compiled constraint matrices: walk a circuit shape's blank circuit once, keep its
//! A, B, C as sparse matrices, and then synthesize each proof as *witness only* (no
//! `LinearCombination` is built) followed by a sparse matrix–vector product: on the host
//! ([`CompiledCircuit::evaluate`], parallel) or, deferred, by the prover's device
//! ([`CompiledCircuit::defer`]: the CUDA backend keeps the matrices resident in VRAM and makes
//! a/b/c there, so the host never holds them).
//!
//! Why: for the Filecoin circuits most of a bellpepper constraint system's time goes into the
//! gadgets building `LinearCombination`s (heap vectors, sorted inserts) for every
//! constraint — a cost every `ConstraintSystem` pays, bellperson's included. The structure is
//! the same for every proof of a circuit shape (the Groth16 parameters are made from the blank
//! circuit), so it can be recorded once and replayed.
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::density::Density;
use crate::error::CompileError;
use bellpepper_core::{Circuit, ConstraintSystem, LinearCombination};
use blstrs::Scalar;
use ff::{Field, PrimeField};

mod bounded;
mod evaluate;
mod file;
mod repeat;
#[cfg(test)]
mod repeat_tests;
mod stream;
#[cfg(test)]
mod stream_tests;
#[cfg(test)]
mod tests;

pub use file::{CircuitFileError, FORMAT_VERSION};
pub use stream::{MatrixArray, MatrixWindow};

/// Marks an aux variable in a column index (inputs have the bit clear).
pub const AUX: u32 = 1 << 31;
/// Coefficient-table slot of 1 (every table starts with it).
pub const COEFF_ONE: u32 = 0;
/// Coefficient-table slot of −1.
pub const COEFF_MINUS_ONE: u32 = 1;

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

    /// Appends the rows of `other`, a sub-system's matrix: its columns moved by `shift`, its
    /// coefficient indices through `remap`. False if an index overflows.
    fn append(&mut self, other: &Matrix, remap: &[u32], shift: Shift) -> bool {
        let base = self.cols.len() as u64;
        let mut ok = true;
        self.cols.reserve(other.cols.len());
        for &col in &other.cols {
            let moved = shift.col(col);
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

/// Where a sub-system's or a repeated part's variables land in the whole system: its inputs
/// from `inputs_from` on move up by `inputs_by`, its aux from `aux_from` on by `aux_by`;
/// those below are the whole system's own (ONE, or the preamble's variables: `repeat.rs`).
#[derive(Clone, Copy, Debug)]
struct Shift {
    inputs_from: u64,
    inputs_by: u64,
    aux_from: u64,
    aux_by: u64,
}

impl Shift {
    /// The index `col` (its [`AUX`] bit says which kind) moves to, without the bit.
    fn col(&self, col: u32) -> u64 {
        let i = u64::from(col & !AUX);
        let (from, by) = match col & AUX != 0 {
            true => (self.aux_from, self.aux_by),
            false => (self.inputs_from, self.inputs_by),
        };
        if i >= from {
            i + by
        } else {
            i
        }
    }
}

/// A hasher for keys no adversary chooses (a circuit's variable indices and its own
/// coefficients): a multiply and a rotate per 8-byte word, where SipHash spent a tenth of a
/// SnapDeals 32 GiB compile hashing coefficients.
#[derive(Clone, Copy, Default)]
struct WordHasher(u64);

impl WordHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl std::hash::Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        // The low bits pick the bucket: fold the well-mixed high half into them.
        self.0 ^ (self.0 >> 32)
    }
}

/// A `HashMap` hashed by [`WordHasher`].
type WordMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<WordHasher>>;

#[derive(Debug, Default)]
struct CoeffTable {
    values: Vec<Scalar>,
    index: WordMap<[u8; 32], u32>,
}

impl CoeffTable {
    fn new() -> CoeffTable {
        let mut t = CoeffTable::default();
        t.insert(&Scalar::ONE);
        t.insert(&-Scalar::ONE);
        t
    }

    /// Takes `other`'s coefficients in its order; returns where each of its slots is here.
    fn merge(&mut self, other: &CoeffTable) -> Vec<u32> {
        other.values.iter().map(|c| self.index(c)).collect()
    }

    /// The slot of `c`, added if new. Most terms' coefficients are 1 or −1 (bits, sums,
    /// equalities): those two are compared, not hashed.
    fn index(&mut self, c: &Scalar) -> u32 {
        for slot in [COEFF_ONE, COEFF_MINUS_ONE] {
            if self.values[slot as usize] == *c {
                return slot;
            }
        }
        self.insert(c)
    }

    fn insert(&mut self, c: &Scalar) -> u32 {
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
pub struct CompiledCircuit {
    /// State a prover backend attaches to this circuit, at most once (the CUDA backend's
    /// device copies of the matrices, freed when this circuit is dropped). Declared first:
    /// fields drop in declaration order.
    backend_cache: OnceLock<Box<dyn std::any::Any + Send + Sync>>,
    id: u64,
    a: Matrix,
    b: Matrix,
    c: Matrix,
    coeffs: Vec<Scalar>,
    num_constraints: usize,
    num_inputs: usize,
    num_aux: usize,
    /// Aux variables the constraints hold to 0 or 1 in every satisfying witness (`bounded.rs`).
    bounded_aux: usize,
    /// The matrices' host copy was dropped ([`CompiledCircuit::release_host_matrices`]), or
    /// never read ([`CompiledCircuit::open_file`]).
    released: bool,
    /// The file the matrices can be read from again, when the circuit was opened from one.
    origin: Option<file::Origin>,
    /// Terms of A, B and C (also once the host copy is released).
    terms: [usize; 3],
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
        // A sub-system's input 0 is its temporary ONE, which is our ONE.
        let shift = Shift {
            inputs_from: 1,
            inputs_by: (self.inputs as u64).saturating_sub(1),
            aux_from: 0,
            aux_by: self.aux as u64,
        };
        let remap = self.table.merge(&other.table);
        let mut ok = true;
        for (m, o) in [
            (&mut self.a, &other.a),
            (&mut self.b, &other.b),
            (&mut self.c, &other.c),
        ] {
            ok &= m.append(o, &remap, shift);
        }
        self.inputs += other.inputs.saturating_sub(1);
        self.aux += other.aux;
        self.overflow |= other.overflow || !ok;
    }

    crate::count_variables!(aux, inputs);

    crate::enforce!(|self, _, a, b, c| {
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
    });

    crate::flat_namespaces!();
}

impl Compiler {
    /// Records `circuit`'s synthesis (`name` is for errors).
    fn record<C: Circuit<Scalar>>(name: &str, circuit: C) -> Result<Compiler, CompileError> {
        let mut cs = Compiler::new();
        // ONE is input 0, as in bellperson and our recorder.
        cs.alloc_input(|| "", || Ok(Scalar::ONE))
            .and_then(|_| circuit.synthesize(&mut cs))
            .map_err(|source| CompileError::Synthesis {
                circuit: name.to_string(),
                source,
            })?;
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

static NEXT_COMPILED_ID: AtomicU64 = AtomicU64::new(1);

impl std::fmt::Debug for CompiledCircuit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledCircuit")
            .field("id", &self.id)
            .field("constraints", &self.num_constraints())
            .field("inputs", &self.num_inputs)
            .field("aux", &self.num_aux)
            .field(
                "terms",
                &[self.a.cols.len(), self.b.cols.len(), self.c.cols.len()],
            )
            .field("coeffs", &self.coeffs.len())
            .finish()
    }
}

/// One of A, B, C as its compressed rows: what a device copies.
#[derive(Clone, Copy, Debug)]
pub struct MatrixView<'a> {
    /// `row_start[i]..row_start[i + 1]` are row `i`'s terms (one more entry than rows).
    pub row_start: &'a [u32],
    /// Variable of each term: an input index, or an aux index with [`AUX`] set.
    pub cols: &'a [u32],
    /// Coefficient of each term, as an index into [`CompiledCircuit::coeff_table`].
    pub coeffs: &'a [u32],
}

impl CompiledCircuit {
    /// Walks `circuit` (a blank one will do: values are ignored) and records its A, B, C;
    /// `name` is for errors.
    pub fn compile<C: Circuit<Scalar>>(
        name: &str,
        circuit: C,
    ) -> Result<CompiledCircuit, CompileError> {
        let start = std::time::Instant::now();
        let cs = Compiler::record(name, circuit)?;
        let walked = start.elapsed().as_secs_f64();
        let compiled = CompiledCircuit::from_compiler(name, cs)?;
        tracing::debug!(
            circuit = name,
            walked_s = walked,
            bounded_and_densities_s = start.elapsed().as_secs_f64() - walked,
            "circuit compiled"
        );
        Ok(compiled)
    }

    fn from_compiler(name: &str, mut cs: Compiler) -> Result<CompiledCircuit, CompileError> {
        if cs.overflow || cs.aux >= AUX as usize {
            return Err(CompileError::TooLarge {
                circuit: name.to_string(),
            });
        }
        // Held for as long as the SRS: give back what the vectors' growth over-allocated.
        for m in [&mut cs.a, &mut cs.b, &mut cs.c] {
            m.row_start.shrink_to_fit();
            m.cols.shrink_to_fit();
            m.coeffs.shrink_to_fit();
        }
        let num_constraints = cs.a.row_start.len() - 1;
        let bounded = bounded::bounded_aux([&cs.a, &cs.b, &cs.c], &cs.table.values, cs.aux);
        Ok(CompiledCircuit::assemble(
            [cs.a, cs.b, cs.c],
            cs.table.values,
            (num_constraints, cs.inputs, cs.aux),
            bounded.count_ones(),
        ))
    }

    fn assemble(
        [a, b, c]: [Matrix; 3],
        coeffs: Vec<Scalar>,
        (num_constraints, num_inputs, num_aux): (usize, usize, usize),
        bounded_aux: usize,
    ) -> CompiledCircuit {
        let a_aux_density = density(&a, num_aux, true);
        let b_input_density = density(&b, num_inputs, false);
        let b_aux_density = density(&b, num_aux, true);
        let terms = [a.cols.len(), b.cols.len(), c.cols.len()];
        CompiledCircuit {
            backend_cache: OnceLock::new(),
            id: NEXT_COMPILED_ID.fetch_add(1, Ordering::Relaxed),
            a,
            b,
            c,
            num_constraints,
            coeffs,
            num_inputs,
            num_aux,
            bounded_aux,
            released: false,
            origin: None,
            terms,
            a_aux_density,
            b_input_density,
            b_aux_density,
        }
    }

    /// A circuit whose matrices stay in `origin`'s file (`file.rs`).
    fn in_file(
        origin: file::Origin,
        coeffs: Vec<Scalar>,
        (num_constraints, num_inputs, num_aux, bounded_aux): (usize, usize, usize, usize),
        terms: [usize; 3],
        [a_aux_density, b_input_density, b_aux_density]: [Density; 3],
    ) -> CompiledCircuit {
        CompiledCircuit {
            backend_cache: OnceLock::new(),
            id: NEXT_COMPILED_ID.fetch_add(1, Ordering::Relaxed),
            a: Matrix::default(),
            b: Matrix::default(),
            c: Matrix::default(),
            num_constraints,
            coeffs,
            num_inputs,
            num_aux,
            bounded_aux,
            released: true,
            origin: Some(origin),
            terms,
            a_aux_density,
            b_input_density,
            b_aux_density,
        }
    }

    /// Process-unique identity, so backends can key device copies on it.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// State a prover backend attaches to this circuit, at most once; dropped with it.
    pub fn backend_cache(&self) -> &OnceLock<Box<dyn std::any::Any + Send + Sync>> {
        &self.backend_cache
    }

    /// Inputs of the circuit (ONE included).
    pub fn num_inputs(&self) -> usize {
        self.num_inputs
    }

    /// Aux variables of the circuit.
    pub fn num_aux(&self) -> usize {
        self.num_aux
    }

    /// Aux variables that every satisfying witness holds as 0 or 1, as the constraints
    /// prove them (`bounded.rs`): a partition's compact witness holds a full scalar for at
    /// most `num_aux() - bounded_aux()` of its aux values.
    pub fn bounded_aux(&self) -> usize {
        self.bounded_aux
    }

    /// Which aux variables [`CompiledCircuit::bounded_aux`] counts, found again from the
    /// host matrices (`None` once they are released); for tests.
    pub fn bounded_aux_map(&self) -> Option<Density> {
        (!self.released)
            .then(|| bounded::bounded_aux([&self.a, &self.b, &self.c], &self.coeffs, self.num_aux))
    }

    /// Drops the host copy of A, B and C (the devices hold theirs: `ProverBackend::
    /// make_matrices_resident`); returns the bytes freed. The shape, the densities and the
    /// coefficient table stay. From then on [`CompiledCircuit::evaluate`] refuses (a/b/c can
    /// only be made where the matrices are), [`CompiledCircuit::defer`] still works, and
    /// [`CompiledCircuit::matrix`] views are empty.
    pub fn release_host_matrices(&mut self) -> u64 {
        let freed = (self.a.bytes() + self.b.bytes() + self.c.bytes()) as u64;
        for m in [&mut self.a, &mut self.b, &mut self.c] {
            *m = Matrix::default();
        }
        self.released = true;
        freed
    }

    /// Drops the host copy of one matrix (A 0, B 1, C 2) once its user is done with it (the
    /// streamed setup walks each once); returns the bytes freed. As after
    /// [`CompiledCircuit::release_host_matrices`], [`CompiledCircuit::evaluate`] refuses from
    /// then on and that matrix's view is empty.
    pub fn release_matrix(&mut self, which: usize) -> u64 {
        let m = match which {
            0 => &mut self.a,
            1 => &mut self.b,
            _ => &mut self.c,
        };
        let freed = m.bytes() as u64;
        *m = Matrix::default();
        self.released = true;
        freed
    }

    /// Whether the matrices' host copy was dropped.
    pub fn host_matrices_released(&self) -> bool {
        self.released
    }

    /// A (0), B (1) or C (2) as compressed rows (empty once released).
    pub fn matrix(&self, which: usize) -> MatrixView<'_> {
        let m = [&self.a, &self.b, &self.c][which.min(2)];
        MatrixView {
            row_start: &m.row_start,
            cols: &m.cols,
            coeffs: &m.coeffs,
        }
    }

    /// The distinct coefficients; slot [`COEFF_ONE`] is 1 and [`COEFF_MINUS_ONE`] is −1.
    pub fn coeff_table(&self) -> &[Scalar] {
        &self.coeffs
    }

    /// (A's aux, B's inputs, B's aux) densities: the variables each query has a base for.
    pub fn densities(&self) -> (&Density, &Density, &Density) {
        (
            &self.a_aux_density,
            &self.b_input_density,
            &self.b_aux_density,
        )
    }

    /// Constraints of the circuit.
    pub fn num_constraints(&self) -> usize {
        self.num_constraints
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
}
