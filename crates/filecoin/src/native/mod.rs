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

use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::{Field, PrimeField};

use cuzk_groth16::{NativeWitness, Recorder};

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
pub(crate) fn pack_inputs(cs: &mut Recorder, bits: &[bool]) -> Result<(), SynthesisError> {
    for chunk in bits.chunks(Fr::CAPACITY as usize) {
        let v = packed(chunk);
        cs.alloc_input(|| "", || Ok(v))?;
        native(cs)?.add_constraints(1);
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
