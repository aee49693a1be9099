//! The Filecoin circuits' pre-compiled constraint matrices ([`cuzk_groth16::compiled`]): each
//! circuit id's blank circuit walked once, its A, B, C kept as sparse matrices, and every
//! partition then synthesized witness-only and evaluated against them (on the host, or on
//! the prover's device when a/b/c are deferred).
use bellpepper_core::Circuit;
use blstrs::Scalar;
pub use cuzk_groth16::compiled::CompiledCircuit;

use crate::error::{FilecoinError, Result};
use crate::params::{with_blank_circuit, CircuitVisitor};
use crate::registry::CircuitId;

struct Compile(String);

impl CircuitVisitor for Compile {
    type Output = std::result::Result<CompiledCircuit, cuzk_groth16::CompileError>;
    fn visit<C: Circuit<Scalar> + Send>(self, circuit: C) -> Self::Output {
        CompiledCircuit::compile(&self.0, circuit)
    }
}

/// Walks the blank circuit of `id` and records its A, B, C.
pub fn compile(id: CircuitId) -> Result<CompiledCircuit> {
    with_blank_circuit(id, Compile(id.to_string()))?.map_err(|e| FilecoinError::Synthesis {
        partition: 0,
        message: e.to_string(),
    })
}
