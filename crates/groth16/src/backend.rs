//! The joint every prover builds against: [`ProverBackend`], split into `start` (the heavy
//! part, which consumes and frees a/b/c) and `finish` (the B G2 MSM if still outstanding, and
//! proof assembly); a proof between the two ([`Pending`]); and an SRS being copied into a
//! backend's own memory ([`ResidentUpload`]). The engine (`cuzk-core`) and the CUDA prover
//! (`cuzk-cuda`) meet here; the CPU backend is in `prover.rs`.

use crate::{
    error::ProveError,
    params::Srs,
    proof::Proof,
    recorder::{Density, Synthesized},
};
use blstrs::{G1Projective, G2Projective, Scalar};
use std::time::Duration;

/// The B-in-G2 part of a proof in progress.
#[derive(Debug)]
pub enum PendingG2 {
    /// Already computed: Σ b_i·B_G2_i over inputs and dense aux (no β, no s·δ).
    Done(G2Projective),
    /// Still to compute in `finish`: the scalars and densities it needs.
    Deferred {
        /// Input assignment.
        inputs: Vec<Scalar>,
        /// Aux assignment.
        aux: Vec<Scalar>,
        /// Inputs that appear in B.
        b_input_density: Density,
        /// Aux variables that appear in B.
        b_aux_density: Density,
    },
}

/// A proof after `start`: the G1 sums are done, a/b/c are freed.
#[derive(Debug)]
pub struct Pending {
    /// Blinding factor r.
    pub r: Scalar,
    /// Blinding factor s.
    pub s: Scalar,
    /// Σ a_i·A_i over inputs and dense aux (no α, no r·δ).
    pub a_g1: G1Projective,
    /// Σ b_i·B_G1_i over inputs and dense aux (no β, no s·δ).
    pub b_g1: G1Projective,
    /// Σ h_i·H_i + Σ aux_i·L_i.
    pub h_l: G1Projective,
    /// B in G2.
    pub b_g2: PendingG2,
}

impl Pending {
    /// Heap bytes this pending proof holds, for a memory budget: a fixed 1024 for the value
    /// itself, plus, while the B G2 MSM is deferred, the capacity of the assignment it keeps
    /// (32 bytes a scalar) and of its two density bitmaps (8 bytes a word).
    pub fn heap_bytes(&self) -> u64 {
        const FIXED: u64 = 1024;
        match &self.b_g2 {
            PendingG2::Done(_) => FIXED,
            PendingG2::Deferred {
                inputs,
                aux,
                b_input_density,
                b_aux_density,
            } => {
                FIXED
                    + 32 * (inputs.capacity() + aux.capacity()) as u64
                    + 8 * (b_input_density.words.capacity() + b_aux_density.words.capacity()) as u64
            }
        }
    }
}

/// A copy of an SRS's points being filled in a backend's own memory, a window at a time
/// ([`ProverBackend::begin_resident`]). Dropped before [`ResidentUpload::finish`], it is
/// abandoned: what it holds is freed, and the backend has no copy.
pub trait ResidentUpload: Send {
    /// Copies one window of points (every window of every section is handed over once).
    fn put(&mut self, window: crate::params::PointsWindow<'_>) -> Result<(), ProveError>;

    /// Copies one window of points as the file encodes them ([`Srs::stream_wire`]; every
    /// window of every section is handed over once, in file order), decoding them on the way.
    /// A point that does not decode is [`ProveError::Params`] with
    /// [`crate::ParamsError::BadPoint`] ([`crate::params::WireWindow::bad_point`]), reported
    /// by this call, a later one or [`ResidentUpload::finish`]; the copy is then not used.
    /// Holds at most [`crate::params::WIRE_UPLOAD_WINDOWS`] windows of host bytes of its own.
    /// The default decodes on the host ([`crate::params::WireWindow::decode`]) and calls
    /// [`ResidentUpload::put`].
    fn put_wire(&mut self, window: crate::params::WireWindow<'_>) -> Result<(), ProveError> {
        window.decode(|points| self.put(points))?
    }

    /// Completes the copy after the last window: `Ok(true)` when the backend now holds the
    /// SRS for as long as it lives.
    fn finish(self: Box<Self>) -> Result<bool, ProveError>;
}

/// A Groth16 prover backend with a split API.
///
/// `start` does the heavy work and drops the circuit's a/b/c before it returns, so a caller
/// can release the memory that covered them; `finish` completes the proof and is cheap enough
/// to run off the prover's critical path.
pub trait ProverBackend: Send + Sync {
    /// A short name for logs and status (`cpu`, `cuda:0`).
    fn name(&self) -> String;

    /// Heavy part: H via NTTs and the G1 MSMs. Consumes `circuit`.
    fn start(
        &self,
        srs: &Srs,
        circuit: Synthesized,
        r: Scalar,
        s: Scalar,
    ) -> Result<Pending, ProveError>;

    /// Completes a proof: the B G2 MSM if deferred, then assembly.
    fn finish(&self, srs: &Srs, pending: Pending) -> Result<Proof, ProveError>;

    /// Whether the backend serializes its device-exclusive phase itself (a lock held around
    /// its kernels only), so the engine's prover interlock, which covers the whole `start`
    /// (host-side preparation included), is not needed and is turned off. Default `false`.
    fn locks_device_itself(&self) -> bool {
        false
    }

    /// The memory of the backend's device as (total, free) bytes, for status reports; `None`
    /// for a backend without a device of its own (the CPU prover).
    fn device_memory(&self) -> Option<(u64, u64)> {
        None
    }

    /// The total time the backend's device has spent in its exclusive phase (the kernels, under
    /// the backend's own device lock) since the device was opened, as the backend measures it:
    /// the device's busy time, which never exceeds wall time however many workers share the
    /// device. `None` (the default) for a backend without a figure of its own; the engine then
    /// measures the time its own device interlock was held, when that is on.
    fn device_busy(&self) -> Option<Duration> {
        None
    }

    /// Whether the backend makes deferred a/b/c ([`crate::CompiledCircuit::defer`]) itself,
    /// from matrices it keeps on its device, so synthesis should hand it circuits with a/b/c
    /// deferred rather than evaluate them on the host. Default `false`: every backend accepts
    /// deferred circuits (the CPU prover evaluates them on the host first), but only one
    /// that answers `true` saves the host their bytes.
    fn evaluates_abc(&self) -> bool {
        false
    }

    /// Host bytes that `start` holds at its peak for `circuit` beyond the circuit's own
    /// vectors (their capacities), for a backend whose host layout differs from the CPU
    /// prover's: counted from this circuit, so a partition reserves what its `start` will
    /// really hold. `None` (the default, and the CPU prover's answer): the CPU prover's layout,
    /// a/b/c padded to the domain on the host and the assignments converted once more.
    fn start_host_bytes(&self, _circuit: &Synthesized) -> Option<u64> {
        None
    }

    /// Makes a copy of `srs`'s points of the backend's own (e.g. in VRAM) that lasts as long as
    /// `srs` does, so that its owner may release the host copy
    /// ([`Srs::release_host_points`]). `Ok(true)` when such a copy now exists: from then on
    /// the backend proves with `srs` without its host vectors, reading the few points the host
    /// needs through [`Srs::g1_at`] / [`Srs::g2_at`]. `Ok(false)` (the default, and the CPU
    /// prover's answer) when the backend needs the host copy.
    fn make_resident(&self, _srs: &Srs) -> Result<bool, ProveError> {
        Ok(false)
    }

    /// Begins a copy of `srs`'s points of the backend's own (e.g. in VRAM), to be filled a
    /// window at a time ([`Srs::stream_points`]): for parameters whose points are still in
    /// their file ([`crate::params::read_params_header`]), so the host never holds them all.
    /// The owner hands every window to [`ResidentUpload::put`], then calls
    /// [`ResidentUpload::finish`]; dropping the upload before `finish` abandons it and frees
    /// what it took. Once finished, the copy lasts as long as `srs` does, as with
    /// [`ProverBackend::make_resident`]. `Ok(None)` (the default, and the CPU prover's answer)
    /// when the backend cannot hold one, so the owner reads the points into host memory.
    fn begin_resident<'a>(
        &'a self,
        _srs: &'a Srs,
    ) -> Result<Option<Box<dyn ResidentUpload + 'a>>, ProveError> {
        Ok(None)
    }

    /// Device bytes the backend holds now for the SRS `srs_id` ([`Srs::id`]): its resident
    /// copy in the backend's own memory, for status reports. 0 (the default) when it holds
    /// none, or has no memory of its own.
    fn resident_bytes(&self, _srs_id: u64) -> u64 {
        0
    }

    /// Makes a copy of `compiled`'s matrices of the backend's own (in VRAM, beside `srs`) that
    /// lasts as long as `compiled` does, so that its owner may drop their host copy
    /// ([`crate::CompiledCircuit::release_host_matrices`]) or never read them from their file
    /// (the copy is filled by [`crate::CompiledCircuit::stream_matrices`], a window at a
    /// time, from wherever they are). `Ok(true)` when such a copy now exists. `Ok(false)` (the default, and the CPU prover's answer) when the backend needs
    /// the host copy.
    fn make_matrices_resident(
        &self,
        _srs: &Srs,
        _compiled: &crate::CompiledCircuit,
    ) -> Result<bool, ProveError> {
        Ok(false)
    }

    /// Device bytes the backend holds now for compiled constraint matrices first used with
    /// the SRS `srs_id` (resident for deferred a/b/c), for status reports. 0 (the default)
    /// when it holds none.
    fn resident_matrices_bytes(&self, _srs_id: u64) -> u64 {
        0
    }

    /// `start`, handing the circuit's buffers back instead of freeing them, so the caller can
    /// reuse their allocations for the next partition (no page faults, no unmapping). The
    /// returned vectors keep their capacity; their contents are unspecified. Backends that
    /// consume the buffers (or cannot tell when the device is done reading them) return
    /// `None`, which is the default.
    fn start_reusing(
        &self,
        srs: &Srs,
        circuit: Synthesized,
        r: Scalar,
        s: Scalar,
    ) -> Result<(Pending, Option<Synthesized>), ProveError> {
        self.start(srs, circuit, r, s).map(|p| (p, None))
    }

    /// `start` for several circuits of one shape.
    fn start_batch(
        &self,
        srs: &Srs,
        circuits: Vec<Synthesized>,
        blinding: &[(Scalar, Scalar)],
    ) -> Result<Vec<Pending>, ProveError> {
        if circuits.len() != blinding.len() {
            return Err(ProveError::ShapeMismatch {
                what: "blinding factors",
                expected: circuits.len(),
                got: blinding.len(),
            });
        }
        circuits
            .into_iter()
            .zip(blinding)
            .map(|(c, &(r, s))| self.start(srs, c, r, s))
            .collect()
    }

    /// `finish` for several pending proofs.
    fn finish_batch(&self, srs: &Srs, pending: Vec<Pending>) -> Result<Vec<Proof>, ProveError> {
        pending.into_iter().map(|p| self.finish(srs, p)).collect()
    }

    /// One-shot: `start` then `finish`.
    fn prove(
        &self,
        srs: &Srs,
        circuit: Synthesized,
        r: Scalar,
        s: Scalar,
    ) -> Result<Proof, ProveError> {
        let pending = self.start(srs, circuit, r, s)?;
        self.finish(srs, pending)
    }
}
