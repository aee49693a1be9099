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
//! and circuit shape at run time (`porep_witness.rs`), where a mismatch is logged as an error
//! and turns the native path off for that shape.
pub(crate) mod porep;
pub(crate) mod poseidon;
pub(crate) mod sha256;

use cuzk_groth16::NativeWitness;

impl sha256::Sink for NativeWitness<'_> {
    fn bit(&mut self, value: bool) {
        self.push_bit(value);
        self.add_constraints(1);
    }

    fn constraints(&mut self, n: usize) {
        self.add_constraints(n);
    }
}
