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

use cuzk_groth16::{CompactAux, NativeWitness, Recorder, Synthesized};
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

/// Appends `n` units (a partition's challenges or sectors) to `out`'s compact witness in
/// order, computed on rayon's threads by `unit(i, witness)`.
///
/// `per_unit` is each unit's aux count (every unit of a partition has the same shape): each
/// unit records into a compact assignment of its own with room for that many values (as bits,
/// and as full scalars in address space that is touched only as far as it is used). The units
/// run in waves of a few per thread, and each wave is appended in order on every core
/// ([`CompactAux::append_all`]) before the next starts: a witness that is nearly all full
/// scalars (WindowPoSt's sectors) then holds its units' copies for one wave only, not a second
/// whole witness. When `exact` (from the circuit's counted shape), a unit that does not hold
/// exactly `per_unit` values is an error. On any error `out` is left as it was. `out` must be
/// a witness-only recording (its aux held compact).
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
    let Synthesized {
        compact: Some(aux),
        inputs: out_inputs,
        num_constraints,
        ..
    } = out
    else {
        return Err(SynthesisError::IoError(std::io::Error::other(
            "a native witness needs a witness-only recording (its aux held compact)",
        )));
    };
    let (aux_len, inputs_len, constraints) = (aux.len(), out_inputs.len(), *num_constraints);
    let wave = (4 * rayon::current_num_threads()).max(1);
    let mut next = 0;
    while next < n {
        let ids = next..(next + wave).min(n);
        next = ids.end;
        let parts = ids
            .into_par_iter()
            .map(|i| {
                let (mut aux, mut inputs, mut constraints) = (
                    CompactAux::with_capacities(per_unit, per_unit),
                    Vec::new(),
                    0,
                );
                unit(
                    i,
                    &mut NativeWitness::new(&mut aux, &mut inputs, &mut constraints),
                )?;
                if exact && aux.len() != per_unit {
                    return Err(SynthesisError::IoError(std::io::Error::other(format!(
                        "unit {i} of {n} held {} aux values, not the {per_unit} of the \
                         circuit's counted shape",
                        aux.len()
                    ))));
                }
                Ok((aux, inputs, constraints))
            })
            .collect::<Result<Vec<_>, _>>();
        let parts = match parts {
            Ok(parts) => parts,
            Err(e) => {
                aux.truncate(aux_len);
                out_inputs.truncate(inputs_len);
                *num_constraints = constraints;
                return Err(e);
            }
        };
        let mut unit_aux = Vec::with_capacity(parts.len());
        for (a, inputs, constraints) in parts {
            unit_aux.push(a);
            out_inputs.extend_from_slice(&inputs);
            *num_constraints += constraints;
        }
        aux.append_all(unit_aux);
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

    /// Unit `i` of `per` values (`i`'s own, every third a bit), an input and a constraint
    /// each; unit `short` gives one value fewer.
    fn unit(i: usize, w: &mut NativeWitness<'_>, per: usize, short: Option<usize>) {
        let n = if short == Some(i) { per - 1 } else { per };
        for j in 0..n {
            w.push(value(i, j));
        }
        w.push_input(Fr::from(i as u64));
        w.add_constraints(1);
    }

    fn value(i: usize, j: usize) -> Fr {
        if j % 3 == 0 {
            Fr::from(((i + j) % 2) as u64)
        } else {
            Fr::from((i * 1000 + j) as u64)
        }
    }

    fn lead() -> Synthesized {
        let mut r = Recorder::new(RecorderMode::WitnessOnly);
        let mut w = r.native_witness().unwrap();
        w.push(Fr::from(77));
        w.push_input(Fr::ONE);
        r.into_synthesized()
    }

    #[test]
    fn units_are_appended_in_order_into_the_compact_witness() {
        // 37 units of 5 values: every unit after the first starts inside a 64-bit word.
        let (n, per) = (37, 5);
        let mut exact = lead();
        units(&mut exact, n, per, true, |i, w| {
            unit(i, w, per, None);
            Ok(())
        })
        .unwrap();
        let mut loose = lead();
        units(&mut loose, n, per, false, |i, w| {
            unit(i, w, per, None);
            Ok(())
        })
        .unwrap();
        assert_eq!(exact.compact, loose.compact);
        assert!(exact.aux.is_empty());
        let mut want = vec![Fr::from(77)];
        want.extend((0..n).flat_map(|i| (0..per).map(move |j| value(i, j))));
        assert_eq!(exact.compact.as_ref().map(|c| c.to_full()), Some(want));
        assert_eq!(exact.inputs, loose.inputs);
        assert_eq!(exact.inputs.len(), 1 + n);
        assert_eq!((exact.num_constraints, loose.num_constraints), (n, n));
    }

    #[test]
    fn a_unit_that_does_not_hold_its_count_is_an_error_and_leaves_the_witness_as_it_was() {
        // The short unit is in the first wave, then in the last, after others were appended.
        let n = 8 * rayon::current_num_threads() + 3;
        for short in [3, n - 2] {
            let mut w = lead();
            let before = (w.compact.clone(), w.inputs.clone(), w.num_constraints);
            let e = units(&mut w, n, 4, true, |i, w| {
                unit(i, w, 4, Some(short));
                Ok(())
            })
            .unwrap_err();
            assert!(
                e.to_string().contains(&format!("unit {short} of {n}")),
                "{e}"
            );
            assert_eq!((w.compact, w.inputs, w.num_constraints), before);
        }
        // Not exact, a short unit is just shorter: the circuit's shape check catches it later.
        let mut w = lead();
        units(&mut w, 8, 4, false, |i, w| {
            unit(i, w, 4, Some(3));
            Ok(())
        })
        .unwrap();
        assert_eq!(w.num_aux(), 1 + 8 * 4 - 1);
        // A full recording has no compact witness to append to.
        let mut full = Recorder::new(RecorderMode::Full).into_synthesized();
        assert!(units(&mut full, 1, 1, true, |_, w| {
            w.push(Fr::ONE);
            Ok(())
        })
        .is_err());
    }
}
