//! The constraint system used by setup: it records the A, B and C matrices compactly
//! (flat term arrays plus per-row term counts; coefficients stored only when not one) and
//! never evaluates assignments, so blank circuits work.
use bellpepper_core::{ConstraintSystem, Index, LinearCombination, Variable};
use blstrs::Scalar;
use ff::Field;

/// Marks an input variable in [`Matrix::vars`].
const INPUT: u32 = 1 << 31;
/// Marks a term whose coefficient is stored in [`Matrix::coeffs`] (otherwise it is one).
const HAS_COEFF: u32 = 1 << 30;
/// The variable index bits.
const INDEX: u32 = HAS_COEFF - 1;

/// One sparse matrix, row by row.
#[derive(Default)]
pub(crate) struct Matrix {
    /// Terms per row.
    pub(crate) row_len: Vec<u32>,
    /// Variable of each term, with the [`INPUT`] and [`HAS_COEFF`] flags.
    pub(crate) vars: Vec<u32>,
    /// Coefficients of the terms flagged [`HAS_COEFF`], in term order.
    pub(crate) coeffs: Vec<Scalar>,
}

/// A variable of a term, decoded.
#[derive(Clone, Copy)]
pub(crate) enum Var {
    /// Public input `i` (0 is ONE).
    Input(usize),
    /// Auxiliary variable `i`.
    Aux(usize),
}

impl Matrix {
    fn push_row(&mut self, lc: &LinearCombination<Scalar>, overflow: &mut bool) {
        let before = self.vars.len();
        for (var, coeff) in lc.iter() {
            // A zero coefficient does not make a variable dense (bellperson's prover skips
            // such terms when it tracks density), so it must not reach the matrix either.
            if bool::from(coeff.is_zero()) {
                continue;
            }
            let (flag, i) = match var.get_unchecked() {
                Index::Input(i) => (INPUT, i),
                Index::Aux(i) => (0, i),
            };
            if i > INDEX as usize {
                *overflow = true;
                continue;
            }
            if *coeff == Scalar::ONE {
                self.vars.push(flag | i as u32);
            } else {
                self.vars.push(flag | HAS_COEFF | i as u32);
                self.coeffs.push(*coeff);
            }
        }
        let n = self.vars.len() - before;
        if n > u32::MAX as usize {
            *overflow = true;
        }
        self.row_len.push(n as u32);
    }

    /// Calls `f(row, var, coeff)` for every term, in order.
    pub(crate) fn for_each(&self, mut f: impl FnMut(usize, Var, &Scalar)) {
        let one = Scalar::ONE;
        let mut t = 0usize;
        let mut c = 0usize;
        for (row, &n) in self.row_len.iter().enumerate() {
            for &v in &self.vars[t..t + n as usize] {
                let i = (v & INDEX) as usize;
                let var = if v & INPUT != 0 {
                    Var::Input(i)
                } else {
                    Var::Aux(i)
                };
                let coeff = if v & HAS_COEFF != 0 {
                    c += 1;
                    &self.coeffs[c - 1]
                } else {
                    &one
                };
                f(row, var, coeff);
            }
            t += n as usize;
        }
    }
}

/// The circuit's shape and matrices, as setup needs them.
#[derive(Default)]
pub(crate) struct Assembly {
    pub(crate) num_inputs: usize,
    pub(crate) num_aux: usize,
    pub(crate) a: Matrix,
    pub(crate) b: Matrix,
    pub(crate) c: Matrix,
    /// A variable index or row did not fit the compact encoding.
    pub(crate) overflow: bool,
}

impl Assembly {
    /// Rows enforced so far (circuit constraints, then the input constraints once added).
    pub(crate) fn num_rows(&self) -> usize {
        self.a.row_len.len()
    }

    /// Adds bellperson's `input_i * 1 = 0`-shaped rows: A holds input `i`, B and C are empty.
    /// They make the `ic` query linearly independent.
    pub(crate) fn add_input_constraints(&mut self) {
        for i in 0..self.num_inputs {
            let lc = LinearCombination::zero() + Variable::new_unchecked(Index::Input(i));
            self.a.push_row(&lc, &mut self.overflow);
            self.b.row_len.push(0);
            self.c.row_len.push(0);
        }
    }
}

impl ConstraintSystem<Scalar> for Assembly {
    type Root = Self;

    fn new() -> Self {
        Assembly::default()
    }

    crate::count_variables!(num_aux, num_inputs);

    crate::enforce!(|self, _, a, b, c| {
        let a = a(LinearCombination::zero());
        self.a.push_row(&a, &mut self.overflow);
        drop(a);
        let b = b(LinearCombination::zero());
        self.b.push_row(&b, &mut self.overflow);
        drop(b);
        let c = c(LinearCombination::zero());
        self.c.push_row(&c, &mut self.overflow);
    });

    crate::flat_namespaces!();
}
