//! Groth16 proving parameters ("SRS") and verifying keys in bellperson's/Filecoin's file layout.
//!
//! # Layout (checked against bellperson 0.26 `Parameters::write` / `VerifyingKey::write`)
//!
//! All points are uncompressed affine encodings (blst/zcash serialization): 96 bytes in G1,
//! 192 bytes in G2, big-endian coordinates, flag bits in the top three bits of the first byte
//! (bit 6 set = point at infinity, then all other bits are zero).
//!
//! ```text
//! .vk      alpha_g1 (G1) beta_g1 (G1) beta_g2 (G2) gamma_g2 (G2) delta_g1 (G1) delta_g2 (G2)
//!          u32 BE count, then `ic`: count G1 points           -- end of file
//! .params  the .vk layout above (the `ic` count travels with the vk), then
//!          u32 BE count + G1 points  `h`     (domain size - 1 of them)
//!          u32 BE count + G1 points  `l`     (one per aux variable)
//!          u32 BE count + G1 points  `a`     (inputs, then aux variables dense in A)
//!          u32 BE count + G1 points  `b_g1`  (inputs, then aux variables dense in B)
//!          u32 BE count + G2 points  `b_g2`  (same variables as `b_g1`)  -- end of file
//! ```
//!
//! There is no header, no version and no trailer; bytes after `b_g2` are an error here
//! ([`crate::error::ParamsError::TrailingBytes`]). bellperson refuses the point at infinity
//! in `ic`, `h`, `l`, `a`, `b_g1` and `b_g2` (its generator never writes one), so do we; the
//! six fixed verifying-key points may be anything that decodes.
//!
//! Counts: a count that needs more bytes than the whole file holds, `ic` with no points (ONE
//! is always an input) or `h` with a count that is not 2^k − 1 give
//! [`crate::error::ParamsError::BadCount`]; a plausible count whose points run past the end
//! of the file gives [`crate::error::ParamsError::Truncated`].
//!
//! Reading ([`read_params`]) maps the file in windows (see [`ReadOptions::window_bytes`]) and
//! decodes each window in parallel, so the file's pages never all sit in memory beside the
//! decoded points. With [`ReadOptions::check_points`] (the default) the subgroup check is
//! nearly all of the cost (about 140x the decoding alone, measured on a 182 MB file); turn
//! it off for files whose integrity is established otherwise (a digest, or generated
//! locally). Writing ([`write_params`], [`write_vk`]) is buffered and atomic (a temporary
//! file in the same directory, then a rename).
use blstrs::{G1Affine, G2Affine};

mod read;
mod wire;
mod write;

pub use read::{
    read_params, read_params_from_bytes, read_vk, read_vk_from_bytes, LoadStats, ReadOptions,
};
pub use write::{write_params, write_params_to, write_vk, write_vk_to};

/// A Groth16 verifying key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyingKey {
    /// α in G1.
    pub alpha_g1: G1Affine,
    /// β in G1.
    pub beta_g1: G1Affine,
    /// β in G2.
    pub beta_g2: G2Affine,
    /// γ in G2.
    pub gamma_g2: G2Affine,
    /// δ in G1.
    pub delta_g1: G1Affine,
    /// δ in G2.
    pub delta_g2: G2Affine,
    /// (β·u_i(τ) + α·v_i(τ) + w_i(τ)) / γ for each public input (including ONE).
    pub ic: Vec<G1Affine>,
}

impl VerifyingKey {
    /// Whether these are TIMING-ONLY parameters (γ = δ = the G2 generator), as the benchmark
    /// generators write them. A real setup draws γ and δ at random, so it never has this
    /// marker; proofs made with such parameters do not verify.
    pub fn is_timing_only(&self) -> bool {
        use group::prime::PrimeCurveAffine;
        self.gamma_g2 == G2Affine::generator() && self.delta_g2 == G2Affine::generator()
    }
}

/// Groth16 proving parameters for one circuit shape.
///
/// The fields are private: [`Srs::id`] is a key prover backends trust for device-resident
/// copies, and backends page-lock the vectors by address, so nothing may swap or resize a
/// vector behind them. Build one with [`Srs::new`], which assigns a fresh id.
#[derive(Debug)]
pub struct Srs {
    /// State a prover backend attaches to these parameters, at most once (e.g. the CUDA
    /// backend's page-locked registration of the vectors below). Declared before the vectors
    /// on purpose: fields drop in declaration order, so whatever is cached here (and refers
    /// to the vectors' memory) is dropped while the vectors are still alive.
    backend_cache: std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>,
    vk: VerifyingKey,
    h: Vec<G1Affine>,
    l: Vec<G1Affine>,
    a: Vec<G1Affine>,
    b_g1: Vec<G1Affine>,
    b_g2: Vec<G2Affine>,
    id: u64,
}

static NEXT_SRS_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Srs {
    /// Assembles parameters and gives them a fresh process-unique [`Srs::id`].
    pub fn new(
        vk: VerifyingKey,
        h: Vec<G1Affine>,
        l: Vec<G1Affine>,
        a: Vec<G1Affine>,
        b_g1: Vec<G1Affine>,
        b_g2: Vec<G2Affine>,
    ) -> Srs {
        let id = NEXT_SRS_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Srs {
            backend_cache: std::sync::OnceLock::new(),
            vk,
            h,
            l,
            a,
            b_g1,
            b_g2,
            id,
        }
    }

    /// Process-unique identity, so backends can key device-resident copies on it.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The verifying key.
    pub fn vk(&self) -> &VerifyingKey {
        &self.vk
    }

    /// τ^i·Z(τ)/δ for i in 0..domain-1.
    pub fn h(&self) -> &[G1Affine] {
        &self.h
    }

    /// (β·u_i + α·v_i + w_i)/δ for each aux variable.
    pub fn l(&self) -> &[G1Affine] {
        &self.l
    }

    /// u_i(τ) for every input, then for the aux variables in the A density.
    pub fn a(&self) -> &[G1Affine] {
        &self.a
    }

    /// v_i(τ) in G1 for inputs and aux variables in the B density.
    pub fn b_g1(&self) -> &[G1Affine] {
        &self.b_g1
    }

    /// v_i(τ) in G2 for inputs and aux variables in the B density.
    pub fn b_g2(&self) -> &[G2Affine] {
        &self.b_g2
    }

    /// State a prover backend attaches to these parameters, at most once. It is dropped
    /// before the vectors it may refer to.
    pub fn backend_cache(&self) -> &std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>> {
        &self.backend_cache
    }

    /// Bytes of point data held in memory.
    pub fn size_bytes(&self) -> u64 {
        let g1 = std::mem::size_of::<G1Affine>() as u64;
        let g2 = std::mem::size_of::<G2Affine>() as u64;
        let n_g1 = (self.h.len() + self.l.len() + self.a.len() + self.b_g1.len() + self.vk.ic.len())
            as u64;
        n_g1 * g1 + self.b_g2.len() as u64 * g2
    }
}
