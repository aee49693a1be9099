//! Which aux variables every satisfying witness holds as 0 or 1, read from the compiled
//! constraints alone (issue 29 item 3: a partition's witness bound from its circuit). A
//! deferred partition's compact witness ([`crate::CompactAux`]) keeps two bits for a value
//! that is 0 or 1 and a full scalar for any other, so the variables proved to be bits bound
//! its bytes before any partition has been synthesized and measured: a cold daemon on a small
//! box reserves what a 32 GiB PoRep partition can hold, not a full scalar per value.
//!
//! Two rules, applied in row order until a pass marks nothing new:
//! - **a bit's own constraint**: a row `(αv + a₀)·(βv + b₀) = γv + c₀` over one variable and
//!   ONE whose roots are exactly 0 and 1 (bellpepper's `AllocatedBit::alloc`, `(1 − v)·v = 0`;
//!   `v·v = v`);
//! - **a function of bits**: a row in which one aux variable `w` is not known to be a bit and
//!   appears in C alone, with every other term over ONE or at most [`MAX_BITS`] variables
//!   already known to be bits. The row fixes `w = (A·B − C')/γ`; it is computed for every
//!   assignment of those bits, and if it is 0 or 1 each time, `w` is a bit (AND, XOR, and
//!   SHA-256's Ch as bellpepper writes them). A bit made as the product of two others
//!   (`AllocatedBit::and`: `x·y = w`) is taken as that product where the row also reads `x`
//!   and `y` (SHA-256's Maj reads `b`, `c` and `b·c`).
//!
//! Both are sound: a variable is marked only when its constraints force 0 or 1. Both compute
//! over the integers with coefficients below 2^40 in magnitude ([`COEFF_BYTES`]) (a row with a
//! larger one is not read), so every sum and product is exact: an identity that holds over
//! the integers holds in the field.
use super::{Matrix, WordMap, AUX};
use crate::density::Density;
use blstrs::Scalar;
use ff::PrimeField;

/// The most bits a function-of-bits row may read freely (2^4 assignments tried).
pub(super) const MAX_BITS: usize = 4;
/// The most bits it may read in all, products of two others it reads included.
const MAX_READ: usize = 8;
/// Coefficients read have magnitudes below 2^(8·COEFF_BYTES) = 2^40: sums of a few terms
/// times each other stay far inside `i128`.
const COEFF_BYTES: usize = 5;
/// The most terms a linear combination of a row read may have.
const MAX_TERMS: usize = 8;
/// Passes over the rows at most (each marks what the rows before it allow; a circuit whose
/// bits are constrained after their use needs a second).
const MAX_PASSES: usize = 8;

/// The coefficient table as small integers (`None`: 2^40 or more in magnitude).
fn small(table: &[Scalar]) -> Vec<Option<i64>> {
    let fits = |s: &Scalar| {
        let repr = s.to_repr();
        let bytes = repr.as_ref();
        // Little-endian: a value below 2^40 has only its first COEFF_BYTES bytes set.
        bytes[COEFF_BYTES..].iter().all(|&b| b == 0).then(|| {
            bytes[..COEFF_BYTES]
                .iter()
                .rev()
                .fold(0i64, |a, &b| a << 8 | i64::from(b))
        })
    };
    table
        .iter()
        .map(|s| fits(s).or_else(|| fits(&-*s).map(|v| -v)))
        .collect()
}

/// One linear combination of a row: ONE's coefficient and its aux terms (coefficients below
/// 2^40 in magnitude; sums and products are taken in `i128`). Read in place, one per matrix
/// for the whole pass: returning it by value copied it three times a row.
#[derive(Default)]
struct Lc {
    one: i128,
    aux: [(u32, i64); MAX_TERMS],
    len: usize,
}

impl Lc {
    /// Reads row `r` of `m` into `self`; false if it reads an input other than ONE, a large
    /// coefficient, or too many terms.
    fn read(&mut self, m: &Matrix, r: usize, small: &[Option<i64>]) -> bool {
        let (from, to) = (m.row_start[r] as usize, m.row_start[r + 1] as usize);
        self.one = 0;
        self.len = 0;
        for t in from..to {
            let (col, Some(k)) = (m.cols[t], small[m.coeffs[t] as usize]) else {
                return false;
            };
            if col & AUX == 0 {
                if col != 0 {
                    return false;
                }
                self.one += i128::from(k);
            } else {
                if self.len == MAX_TERMS {
                    return false;
                }
                self.aux[self.len] = (col & !AUX, k);
                self.len += 1;
            }
        }
        true
    }

    fn terms(&self) -> &[(u32, i64)] {
        &self.aux[..self.len]
    }

    /// The coefficient of `v` (0 if absent).
    fn coeff(&self, v: u32) -> i128 {
        self.terms()
            .iter()
            .filter(|t| t.0 == v)
            .map(|t| i128::from(t.1))
            .sum()
    }

    /// The value with each variable's value from `val`.
    fn eval(&self, val: impl Fn(u32) -> i128) -> i128 {
        self.terms()
            .iter()
            .fold(self.one, |acc, &(v, k)| acc + i128::from(k) * val(v))
    }

    /// `Some(v)` if this is `1·v` alone.
    fn single(&self) -> Option<u32> {
        match (self.one, self.terms()) {
            (0, [(v, 1)]) => Some(*v),
            _ => None,
        }
    }
}

/// The aux variables of the circuit `[a, b, c]` (its coefficient `table`, `num_aux`
/// variables) that every satisfying assignment holds as 0 or 1.
pub(super) fn bounded_aux(m: [&Matrix; 3], table: &[Scalar], num_aux: usize) -> Density {
    let small = small(table);
    let rows = m[0].row_start.len().saturating_sub(1);
    let mut bits = Density::new(num_aux);
    let mut products = Products::default();
    let (mut a, mut b, mut c) = (Lc::default(), Lc::default(), Lc::default());
    for _ in 0..MAX_PASSES {
        let before = bits.count_ones();
        for r in 0..rows {
            if !(a.read(m[0], r, &small) && b.read(m[1], r, &small) && c.read(m[2], r, &small)) {
                continue;
            }
            if let Some(v) = own_constraint(&a, &b, &c) {
                bits.set(v as usize);
            } else if let Some(w) = function_of_bits(&a, &b, &c, &bits, &products) {
                bits.set(w as usize);
                if let (Some(x), Some(y), Some(_)) = (a.single(), b.single(), c.single()) {
                    products.insert(w, (x, y));
                }
            }
        }
        if bits.count_ones() == before {
            break;
        }
    }
    bits
}

/// `v` if the row is `(αv + a₀)·(βv + b₀) = γv + c₀` with roots exactly 0 and 1: the
/// product is `αβ·v² + (αb₀ + βa₀)·v + a₀b₀`, so `αb₀ + βa₀ − γ = −αβ` and `a₀b₀ = c₀`.
fn own_constraint(a: &Lc, b: &Lc, c: &Lc) -> Option<u32> {
    let v = a.terms().first()?.0;
    let only_v = |lc: &Lc| lc.terms().iter().all(|t| t.0 == v);
    if !(only_v(a) && only_v(b) && only_v(c)) {
        return None;
    }
    let (alpha, beta, gamma) = (a.coeff(v), b.coeff(v), c.coeff(v));
    let holds = alpha != 0
        && beta != 0
        && alpha * b.one + beta * a.one - gamma == -alpha * beta
        && a.one * b.one == c.one;
    holds.then_some(v)
}

/// Bits that are the product of two others, by variable.
type Products = WordMap<u32, (u32, u32)>;

/// `w` if the row fixes `w`, not yet known to be a bit and in C alone, as a function of ONE
/// and known bits, at most [`MAX_BITS`] of them free (the others products of two it reads),
/// that is 0 or 1 for every assignment of them.
fn function_of_bits(a: &Lc, b: &Lc, c: &Lc, known: &Density, products: &Products) -> Option<u32> {
    let mut w = None;
    let mut gamma = 0;
    for &(v, k) in c.terms() {
        if !known.get(v as usize) {
            if w.is_some_and(|w| w != v) {
                return None;
            }
            w = Some(v);
            gamma += i128::from(k);
        }
    }
    let w = w?;
    if gamma == 0 {
        return None;
    }
    let mut read = [0u32; MAX_READ];
    let mut n = 0;
    for &(v, _) in a.terms().iter().chain(b.terms()).chain(c.terms()) {
        if v == w {
            if a.coeff(w) != 0 || b.coeff(w) != 0 {
                return None;
            }
            continue;
        }
        if !known.get(v as usize) {
            return None;
        }
        if !read[..n].contains(&v) {
            if n == MAX_READ {
                return None;
            }
            read[n] = v;
            n += 1;
        }
    }
    let read = &read[..n];
    // A product of two bits the row reads is theirs; the other bits are free. Resolved once
    // per row (the map is not read inside the enumeration below).
    let product = |v: &u32| {
        products.get(v).copied().filter(|(x, y)| {
            read.contains(x)
                && read.contains(y)
                && !products.contains_key(x)
                && !products.contains_key(y)
        })
    };
    let mut of = [None; MAX_READ];
    let mut free = [0u32; MAX_BITS];
    let mut f = 0;
    for (i, v) in read.iter().enumerate() {
        of[i] = product(v);
        if of[i].is_none() {
            if f == MAX_BITS {
                return None;
            }
            free[f] = *v;
            f += 1;
        }
    }
    let free = &free[..f];
    // γ·w = A·B − C', C' being C without w (taken as 0).
    let forced = (0..1u32 << f).all(|s| {
        let bit = |v: u32| {
            free.iter()
                .position(|&u| u == v)
                .map_or(0, |i| i128::from(s >> i & 1))
        };
        let mut value = [0i128; MAX_READ];
        for (i, &v) in read.iter().enumerate() {
            value[i] = match of[i] {
                Some((x, y)) => bit(x) * bit(y),
                None => bit(v),
            };
        }
        let val = |v: u32| read.iter().position(|&u| u == v).map_or(0, |i| value[i]);
        let d = a.eval(val) * b.eval(val) - c.eval(val);
        d == 0 || d == gamma
    });
    forced.then_some(w)
}

#[cfg(test)]
mod tests {
    use super::super::CompiledCircuit;
    use bellpepper_core::boolean::{AllocatedBit, Boolean};
    use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError, Variable};
    use blstrs::Scalar;
    use ff::Field;

    /// bellpepper's bit gadgets beside variables that are not bits, each aux variable's
    /// expected answer recorded in allocation order.
    struct Gadgets;

    fn aux_index(v: Variable) -> usize {
        match v.get_unchecked() {
            bellpepper_core::Index::Aux(i) => i,
            bellpepper_core::Index::Input(_) => panic!("an input"),
        }
    }

    impl Gadgets {
        fn run<CS: ConstraintSystem<Scalar>>(
            cs: &mut CS,
        ) -> Result<Vec<(usize, bool)>, SynthesisError> {
            let mut expect = Vec::new();
            let bit = |cs: &mut CS, name: &str| -> Result<AllocatedBit, SynthesisError> {
                AllocatedBit::alloc(cs.namespace(|| name.to_string()), Some(true))
            };
            let (a, b, c) = (bit(cs, "a")?, bit(cs, "b")?, bit(cs, "c")?);
            for x in [&a, &b, &c] {
                expect.push((aux_index(x.get_variable()), true));
            }
            let x = AllocatedBit::xor(cs.namespace(|| "xor"), &a, &b)?;
            let y = AllocatedBit::and(cs.namespace(|| "and"), &a, &c)?;
            let z = AllocatedBit::nor(cs.namespace(|| "nor"), &b, &c)?;
            for v in [&x, &y, &z] {
                expect.push((aux_index(v.get_variable()), true));
            }
            let [ba, bb, bc] = [&a, &b, &c].map(|v| Boolean::from((*v).clone()));
            let ch = Boolean::sha256_ch(cs.namespace(|| "ch"), &ba, &bb, &bc)?;
            let maj = Boolean::sha256_maj(cs.namespace(|| "maj"), &ba, &bb, &bc)?;
            for v in [ch, maj] {
                let Boolean::Is(v) = v else {
                    panic!("a constant")
                };
                expect.push((aux_index(v.get_variable()), true));
            }
            // v·v = v: a bit.
            let v = cs.alloc(|| "idempotent", || Ok(Scalar::ONE))?;
            cs.enforce(|| "v·v = v", |lc| lc + v, |lc| lc + v, |lc| lc + v);
            expect.push((aux_index(v), true));
            // a + b: 0, 1 or 2, so not a bit though a function of bits.
            let sum = cs.alloc(|| "sum", || Ok(Scalar::from(2u64)))?;
            cs.enforce(
                || "sum is a + b",
                |lc| lc + CS::one(),
                |lc| lc + a.get_variable() + b.get_variable(),
                |lc| lc + sum,
            );
            expect.push((aux_index(sum), false));
            // A free value, and one that reads it: neither is a bit.
            let free = cs.alloc(|| "free", || Ok(Scalar::from(5u64)))?;
            expect.push((aux_index(free), false));
            let sq = cs.alloc(|| "square", || Ok(Scalar::from(25u64)))?;
            cs.enforce(
                || "square is free²",
                |lc| lc + free,
                |lc| lc + free,
                |lc| lc + sq,
            );
            expect.push((aux_index(sq), false));
            // (v − 2)·v = 0: roots 0 and 2.
            let two = cs.alloc(|| "zero or two", || Ok(Scalar::from(2u64)))?;
            cs.enforce(
                || "zero or two's roots",
                |lc| lc + two - (Scalar::from(2u64), CS::one()),
                |lc| lc + two,
                |lc| lc,
            );
            expect.push((aux_index(two), false));
            // A bit used before its own constraint: found on the second pass.
            let late = cs.alloc(|| "late", || Ok(Scalar::ONE))?;
            let product = cs.alloc(|| "product", || Ok(Scalar::ONE))?;
            cs.enforce(
                || "product is late·a",
                |lc| lc + late,
                |lc| lc + a.get_variable(),
                |lc| lc + product,
            );
            cs.enforce(
                || "late bit",
                |lc| lc + CS::one() - late,
                |lc| lc + late,
                |lc| lc,
            );
            expect.push((aux_index(late), true));
            expect.push((aux_index(product), true));
            Ok(expect)
        }
    }

    impl Circuit<Scalar> for Gadgets {
        fn synthesize<CS: ConstraintSystem<Scalar>>(
            self,
            cs: &mut CS,
        ) -> Result<(), SynthesisError> {
            Gadgets::run(cs).map(|_| ())
        }
    }

    #[test]
    fn bits_and_functions_of_bits_are_bounded_and_nothing_else() {
        let compiled = CompiledCircuit::compile("gadgets", Gadgets).unwrap();
        let map = compiled.bounded_aux_map().unwrap();
        let mut cs = bellpepper_core::test_cs::TestConstraintSystem::<Scalar>::new();
        let expect = Gadgets::run(&mut cs).unwrap();
        assert!(cs.is_satisfied());
        // (Maj allocates one intermediate product of its own, not listed.)
        assert_eq!(expect.len() + 1, compiled.num_aux());
        for (i, bounded) in expect {
            assert_eq!(map.get(i), bounded, "aux {i}");
        }
        assert_eq!(compiled.bounded_aux(), map.count_ones());
    }
}
