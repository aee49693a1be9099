//! Native witness generation: the values a circuit's gadgets would allocate, computed without
//! the gadgets' per-bit costs (closures, `Option`s, linear combinations built and dropped), in
//! the circuit's own allocation order.
//!
//! - `sha256`: bellpepper's SHA-256 gadget, arm for arm.
//! - `poseidon`: neptune's Poseidon gadget and storage-proofs' Poseidon Merkle paths
//!   (insertion `pick`s, per-level hashes).
//! - `porep`: one PoRep challenge in the circuit's order: tree D (SHA-256), the parents'
//!   columns and tree C paths, the labels (SHA-256: about 80 % of a 32 GiB partition's
//!   constraints), the encoding and the tree R path.
//!
//! Every native path is checked against the gadget path: in the tests, and once per process
//! and circuit shape at run time (`porep_witness.rs`, `post/witness.rs`), where a mismatch is
//! logged as an error and turns the native path off for that shape ([`state`]).
pub(crate) mod porep;
pub(crate) mod poseidon;
pub(crate) mod sha256;
pub(crate) mod snap;

use bellpepper_core::SynthesisError;
use blstrs::Scalar as Fr;
use ff::{Field, PrimeField};

use cuzk_groth16::{NativeWitness, Recorder, Synthesized};
use rayon::prelude::*;

/// `cs`'s native witness handle (an error unless `cs` records witness only).
pub(crate) fn native(cs: &mut Recorder) -> Result<NativeWitness<'_>, SynthesisError> {
    cs.native_witness().ok_or(SynthesisError::Unsatisfiable)
}

/// The value of at most 254 bits, least significant first (`pack_bits`' allocation).
pub(crate) fn packed(bits: &[bool]) -> Fr {
    bits.iter()
        .rev()
        .fold(Fr::ZERO, |acc, &b| acc.double() + Fr::from(u64::from(b)))
}

/// Allocates `v` with the one constraint that defines it (`pick`, `mul`, a sum, an S-box
/// step): nearly every value the gadgets allocate comes with exactly one.
pub(crate) fn alloc(w: &mut NativeWitness<'_>, v: Fr) -> Fr {
    w.push(v);
    w.add_constraints(1);
    v
}

/// `multipack::pack_into_inputs`: `bits` (least significant first) packed into one public
/// input per 254, one constraint each.
pub(crate) fn pack_inputs(w: &mut NativeWitness<'_>, bits: &[bool]) {
    for chunk in bits.chunks(Fr::CAPACITY as usize) {
        w.push_input(packed(chunk));
        w.add_constraints(1);
    }
}

/// Appends `n` units (a partition's challenges or sectors) to `out` in order, computed on
/// rayon's threads by `unit(i, witness)`.
///
/// `per_unit` is each unit's aux count (every unit of a partition has the same shape). When
/// `exact` (from the circuit's counted shape), `out.aux` is grown once by `n × per_unit` on
/// every core and each unit writes straight into its own slice: no unit has a vector of its
/// own, and nothing is copied or freed afterwards (a 32 GiB PoRep partition's 4.2 GB of
/// values, which a sequential append took seconds to copy). A unit that does not fill its
/// slice exactly is an error, `out` left as it was. Otherwise each unit fills a vector of its
/// own (`per_unit` its capacity), appended in order.
pub(crate) fn units<F>(
    out: &mut Synthesized,
    n: usize,
    per_unit: usize,
    exact: bool,
    unit: F,
) -> Result<(), SynthesisError>
where
    F: Fn(usize, &mut NativeWitness<'_>) -> Result<(), SynthesisError> + Sync,
{
    let base = out.aux.len();
    let done = match Some(per_unit).filter(|&p| exact && p > 0 && n > 0) {
        Some(per) => {
            out.aux.par_extend(rayon::iter::repeat_n(Fr::ZERO, n * per));
            out.aux[base..]
                .par_chunks_mut(per)
                .enumerate()
                .map(|(i, dst)| {
                    let (mut inputs, mut constraints) = (Vec::new(), 0);
                    let mut w = NativeWitness::into_slice(dst, &mut inputs, &mut constraints);
                    unit(i, &mut w)?;
                    if !w.filled() {
                        return Err(SynthesisError::IoError(std::io::Error::other(format!(
                            "unit {i} of {n} did not hold exactly the {per} aux values of \
                             the circuit's counted shape"
                        ))));
                    }
                    Ok((Vec::new(), inputs, constraints))
                })
                .collect::<Result<Vec<_>, _>>()
        }
        None => (0..n)
            .into_par_iter()
            .map(|i| {
                let (mut aux, mut inputs, mut constraints) =
                    (Vec::with_capacity(per_unit), Vec::new(), 0);
                unit(
                    i,
                    &mut NativeWitness::growing(&mut aux, &mut inputs, &mut constraints),
                )?;
                Ok((aux, inputs, constraints))
            })
            .collect::<Result<Vec<_>, _>>(),
    };
    let parts = match done {
        Ok(parts) => parts,
        Err(e) => {
            out.aux.truncate(base);
            return Err(e);
        }
    };
    for (aux, inputs, constraints) in parts {
        out.aux.extend_from_slice(&aux);
        out.inputs.extend_from_slice(&inputs);
        out.num_constraints += constraints;
    }
    Ok(())
}

use sha256::Sink;

impl Sink for NativeWitness<'_> {
    fn bit(&mut self, value: bool) {
        self.push_bit(value);
        self.add_constraints(1);
    }

    fn constraints(&mut self, n: usize) {
        self.add_constraints(n);
    }
}

/// Whether a native witness is used for a circuit shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NativeState {
    /// Not yet compared with the gadgets in this process.
    Unchecked,
    /// Compared, equal.
    Checked,
    /// Compared, different: the gadgets from now on.
    Off,
}

/// A circuit shape: a type naming the kind and its tree, and a size (PoRep: its layers).
pub(crate) type NativeKey = (std::any::TypeId, usize);

static STATES: std::sync::Mutex<Vec<(NativeKey, NativeState)>> = std::sync::Mutex::new(Vec::new());

/// The native witness's state for `key` in this process.
pub(crate) fn state(key: NativeKey) -> NativeState {
    let table = STATES.lock().unwrap_or_else(|e| e.into_inner());
    table
        .iter()
        .find(|(k, _)| *k == key)
        .map_or(NativeState::Unchecked, |(_, s)| *s)
}

/// Records a check's outcome; `Off` is final (a later equal check does not turn it back on).
pub(crate) fn set_state(key: NativeKey, state: NativeState) {
    let mut table = STATES.lock().unwrap_or_else(|e| e.into_inner());
    match table.iter_mut().find(|(k, _)| *k == key) {
        Some((_, s)) => *s = if *s == NativeState::Off { *s } else { state },
        None => table.push((key, state)),
    }
}

/// A run-time check found the native witness of `circuit` different from its gadgets': the
/// shape's native path goes off, and that is counted and logged as an error.
pub(crate) fn mismatch(key: NativeKey, circuit: &str, detail: &str) {
    set_state(key, NativeState::Off);
    crate::partition::count_native_mismatch();
    tracing::error!(
        circuit,
        detail,
        "the native witness differs from the circuit's gadgets; the native path is off for \
         this circuit shape from now on, and its partitions are synthesized with the gadgets"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use cuzk_groth16::RecorderMode;

    /// Unit `i` of `per` values (`i`'s own), an input and a constraint each; unit 3 gives one
    /// value fewer when `short`.
    fn unit(i: usize, w: &mut NativeWitness<'_>, per: usize, short: bool) {
        let n = if short && i == 3 { per - 1 } else { per };
        for j in 0..n {
            w.push(Fr::from((i * 1000 + j) as u64));
        }
        w.push_input(Fr::from(i as u64));
        w.add_constraints(1);
    }

    fn lead() -> Synthesized {
        let mut r = Recorder::new(RecorderMode::WitnessOnly);
        let mut w = r.native_witness().unwrap();
        w.push(Fr::from(77));
        w.push_input(Fr::ONE);
        r.into_synthesized()
    }

    #[test]
    fn units_in_slices_equal_units_appended_in_order() {
        let (n, per) = (37, 5);
        let mut sliced = lead();
        units(&mut sliced, n, per, true, |i, w| {
            unit(i, w, per, false);
            Ok(())
        })
        .unwrap();
        let mut grown = lead();
        units(&mut grown, n, per, false, |i, w| {
            unit(i, w, per, false);
            Ok(())
        })
        .unwrap();
        assert_eq!(sliced.aux.len(), 1 + n * per);
        assert_eq!(sliced.aux, grown.aux);
        assert_eq!(sliced.inputs, grown.inputs);
        assert_eq!(sliced.inputs.len(), 1 + n);
        assert_eq!((sliced.num_constraints, grown.num_constraints), (n, n));
        // In order: unit 36's last value is the last.
        assert_eq!(sliced.aux.last(), Some(&Fr::from(36_004)));
    }

    #[test]
    fn a_unit_that_does_not_fill_its_slice_is_an_error_and_leaves_the_witness_as_it_was() {
        let mut w = lead();
        let before = (w.aux.clone(), w.inputs.clone(), w.num_constraints);
        let e = units(&mut w, 8, 4, true, |i, w| {
            unit(i, w, 4, true);
            Ok(())
        })
        .unwrap_err();
        assert!(e.to_string().contains("unit 3 of 8"), "{e}");
        assert_eq!((w.aux, w.inputs, w.num_constraints), before);
        // Grown, a short unit is just shorter: the circuit's shape check catches it later.
        let mut w = lead();
        units(&mut w, 8, 4, false, |i, w| {
            unit(i, w, 4, true);
            Ok(())
        })
        .unwrap();
        assert_eq!(w.aux.len(), 1 + 8 * 4 - 1);
    }
}
