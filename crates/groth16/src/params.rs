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
//! Reading ([`read_params`]) reads the file in windows (see [`ReadOptions::window_bytes`]),
//! each in parallel pieces, and decodes each window in parallel, so no more than one window
//! of file bytes sits in the process beside the decoded points. With [`ReadOptions::check_points`] (the default) the subgroup check is
//! nearly all of the cost (about 140x the decoding alone, measured on a 182 MB file); turn
//! it off for files whose integrity is established otherwise (a digest, or generated
//! locally). Writing ([`write_params`], [`write_vk`]) is buffered and atomic (a temporary
//! file in the same directory, then a rename).
//!
//! # Releasing the host copy
//!
//! An [`Srs`] read from a file remembers where each section lies in it. A prover backend that
//! keeps its own copy of the points (a GPU's VRAM) lets its owner drop the host vectors with
//! [`Srs::release_host_points`]; the few points the host still needs afterwards are read
//! back from the file, one at a time ([`Srs::g1_at`], [`Srs::g2_at`]). The section lengths
//! stay known ([`Srs::counts`]).
//!
//! Such a copy need not pass through the host at all: [`read_params_header`] reads the
//! verifying key and the section counts only, and [`Srs::stream_points`] then hands the
//! points over a window at a time, decoded as they are read, for a backend to copy
//! ([`crate::ProverBackend::begin_resident`]). [`Srs::load_host_points`] reads them in when
//! no backend can hold them.
use crate::error::ParamsError;
use blstrs::{G1Affine, G2Affine};
use std::fs::File;
use std::path::{Path, PathBuf};

mod read;
mod stream;
pub(crate) mod wire;
mod write;

pub use read::{
    read_params, read_params_from_bytes, read_params_header, read_vk, read_vk_from_bytes,
    LoadStats, ReadOptions,
};
pub use stream::{WireSection, WireWindow, WIRE_READ_WINDOWS, WIRE_UPLOAD_WINDOWS};
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

/// The lengths of an SRS's five point sections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrsCounts {
    /// H bases (domain size − 1).
    pub h: usize,
    /// L bases (one per aux variable).
    pub l: usize,
    /// A bases (inputs, then aux variables dense in A).
    pub a: usize,
    /// B bases in G1 (inputs, then aux variables dense in B).
    pub b_g1: usize,
    /// B bases in G2 (the same variables as `b_g1`).
    pub b_g2: usize,
}

/// The G1 sections of an SRS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum G1Section {
    /// The H bases.
    H,
    /// The L bases.
    L,
    /// The A bases.
    A,
    /// The B bases in G1.
    BG1,
}

impl G1Section {
    /// The section's points in `counts`.
    pub fn count(self, counts: &SrsCounts) -> usize {
        match self {
            G1Section::H => counts.h,
            G1Section::L => counts.l,
            G1Section::A => counts.a,
            G1Section::BG1 => counts.b_g1,
        }
    }

    /// The section's name in the file layout (`h`, `l`, `a`, `b_g1`).
    pub fn name(self) -> &'static str {
        match self {
            G1Section::H => "h",
            G1Section::L => "l",
            G1Section::A => "a",
            G1Section::BG1 => "b_g1",
        }
    }
}

/// One window of an SRS's points, handed over by [`Srs::stream_points`].
#[derive(Clone, Copy, Debug)]
pub enum PointsWindow<'a> {
    /// Points `start..start + points.len()` of a G1 section.
    G1 {
        /// The section.
        section: G1Section,
        /// Index of the first point in the section.
        start: usize,
        /// The points.
        points: &'a [G1Affine],
    },
    /// Points `start..start + points.len()` of the B bases in G2.
    G2 {
        /// Index of the first point in the section.
        start: usize,
        /// The points.
        points: &'a [G2Affine],
    },
}

/// Where the points of an SRS read from a file lie in it (the byte offset of each section's
/// first point: h, l, a, b_g1, b_g2), with the file kept open, so points can be read again
/// after the host copy is released.
#[derive(Debug)]
pub(crate) struct FileOrigin {
    pub(crate) file: File,
    pub(crate) path: PathBuf,
    pub(crate) offsets: [u64; 5],
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
    counts: SrsCounts,
    /// Set when read from a file ([`read_params`]).
    origin: Option<FileOrigin>,
    /// The vectors above were dropped ([`Srs::release_host_points`]).
    released: bool,
    id: u64,
    /// Aux variables its circuit's constraints hold to 0 or 1 ([`Srs::set_bounded_aux`]).
    bounded_aux: std::sync::OnceLock<usize>,
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
        let counts = SrsCounts {
            h: h.len(),
            l: l.len(),
            a: a.len(),
            b_g1: b_g1.len(),
            b_g2: b_g2.len(),
        };
        Srs {
            backend_cache: std::sync::OnceLock::new(),
            vk,
            h,
            l,
            a,
            b_g1,
            b_g2,
            counts,
            origin: None,
            released: false,
            id,
            bounded_aux: std::sync::OnceLock::new(),
        }
    }

    /// Parameters whose points are in `origin`'s file only, as `counts` says (for
    /// [`read_params_header`]): no host copy, as if released.
    pub(crate) fn in_file(vk: VerifyingKey, counts: SrsCounts, origin: FileOrigin) -> Srs {
        let mut srs = Srs::new(
            vk,
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
        );
        srs.counts = counts;
        srs.origin = Some(origin);
        srs.released = true;
        srs
    }

    /// Hands every point to `f`, a window at a time, in file order (h, l, a, b_g1, then
    /// b_g2): from the host copy when there is one (windows of up to
    /// [`ReadOptions::window_bytes`], nothing read), else read from the file and decoded as
    /// `opts` says, one window of points in memory at a time. A bad point in the file ends it
    /// with [`ParamsError::BadPoint`] before `f` sees its window; an error from `f` ends it
    /// too. This is how a backend fills its own copy (in VRAM) without the host ever holding
    /// all the points.
    pub fn stream_points<E: From<ParamsError>>(
        &self,
        opts: &ReadOptions,
        mut f: impl FnMut(PointsWindow<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.released {
            let origin = self.origin.as_ref().ok_or(no_point("h", 0, 0))?;
            return read::stream_sections(origin, &self.counts, opts, &mut f);
        }
        let g1 = (opts.window_bytes / std::mem::size_of::<G1Affine>()).max(1);
        for (section, v) in [
            (G1Section::H, &self.h),
            (G1Section::L, &self.l),
            (G1Section::A, &self.a),
            (G1Section::BG1, &self.b_g1),
        ] {
            for (i, points) in v.chunks(g1).enumerate() {
                f(PointsWindow::G1 {
                    section,
                    start: i * g1,
                    points,
                })?;
            }
        }
        let g2 = (opts.window_bytes / std::mem::size_of::<G2Affine>()).max(1);
        for (i, points) in self.b_g2.chunks(g2).enumerate() {
            f(PointsWindow::G2 {
                start: i * g2,
                points,
            })?;
        }
        Ok(())
    }

    /// Reads the points into host memory, for parameters without a host copy (read with
    /// [`read_params_header`], or released): decoded and checked as `opts` says. Returns the
    /// bytes now held; 0 when the host copy was there already. Nothing changes on an error.
    pub fn load_host_points(&mut self, opts: &ReadOptions) -> Result<u64, ParamsError> {
        if !self.released {
            return Ok(0);
        }
        let origin = self.origin.as_ref().ok_or(no_point("h", 0, 0))?;
        let s = read::read_sections(origin, &self.counts, opts)?;
        let before = self.size_bytes();
        self.h = s.h;
        self.l = s.l;
        self.a = s.a;
        self.b_g1 = s.b_g1;
        self.b_g2 = s.b_g2;
        self.released = false;
        Ok(self.size_bytes() - before)
    }

    /// Host bytes [`Srs::stream_points`] holds at once with `opts`: for points still in the
    /// file, one window of file bytes and its decoded points (a section smaller than the
    /// window needs less); 0 when the host copy is held (its windows are slices of it).
    pub fn stream_host_bytes(&self, opts: &ReadOptions) -> u64 {
        if !self.released {
            return 0;
        }
        // The wire and in-memory sizes are equal (96 and 192 bytes): bytes and points alike.
        2 * self.wire_window_bytes(opts)
    }

    /// Bytes of the five point sections when held in memory (by [`Srs::counts`]; the same
    /// whether the host copy is held or not).
    pub fn points_bytes(&self) -> u64 {
        let c = self.counts;
        (c.h + c.l + c.a + c.b_g1) as u64 * std::mem::size_of::<G1Affine>() as u64
            + c.b_g2 as u64 * std::mem::size_of::<G2Affine>() as u64
    }

    pub(crate) fn set_origin(&mut self, origin: FileOrigin) {
        self.origin = Some(origin);
    }

    /// The lengths of the point sections (also after [`Srs::release_host_points`]).
    pub fn counts(&self) -> SrsCounts {
        self.counts
    }

    /// Records that every satisfying witness of these parameters' circuit holds `bounded` of
    /// its aux variables to 0 or 1 (`CompiledCircuit::bounded_aux`, read from the constraints).
    /// Set once: a later call with another count is ignored (the circuit does not change).
    pub fn set_bounded_aux(&self, bounded: usize) {
        let _ = self.bounded_aux.set(bounded.min(self.counts.l));
    }

    /// The count [`Srs::set_bounded_aux`] recorded, if any.
    pub fn bounded_aux(&self) -> Option<usize> {
        self.bounded_aux.get().copied()
    }

    /// The most values of a satisfying witness that are neither 0 nor 1, the inputs counted
    /// whatever they are: `None` until [`Srs::set_bounded_aux`]. A backend sizes its per-proof
    /// buffers for this many full scalars (the rest of a witness is bits); a witness with more
    /// does not satisfy the circuit.
    pub fn free_values_bound(&self) -> Option<usize> {
        // (one L point per aux variable: `counts.l` is the circuit's aux count)
        let bounded = self.bounded_aux()?;
        Some(self.vk.ic.len() + self.counts.l - bounded)
    }

    /// The file these parameters were read from, if they were.
    pub fn file_path(&self) -> Option<&Path> {
        self.origin.as_ref().map(|o| o.path.as_path())
    }

    /// Whether [`Srs::release_host_points`] would free the host copy (the parameters were read
    /// from a file, which stays open, and are still held).
    pub fn can_release_host_points(&self) -> bool {
        self.origin.is_some() && !self.released
    }

    /// Drops the host copy of the points (for a backend that holds its own copy, e.g. in
    /// VRAM) and returns the bytes freed. Possible only for parameters read from a file
    /// (else nothing happens and 0 is returned). Afterwards the slice accessors ([`Srs::h`]
    /// ...) return empty slices, [`Srs::counts`] still gives the lengths, and [`Srs::g1_at`] /
    /// [`Srs::g2_at`] read single points back from the file.
    pub fn release_host_points(&mut self) -> u64 {
        if !self.can_release_host_points() {
            return 0;
        }
        let before = self.size_bytes();
        self.h = Vec::new();
        self.l = Vec::new();
        self.a = Vec::new();
        self.b_g1 = Vec::new();
        self.b_g2 = Vec::new();
        self.released = true;
        before - self.size_bytes()
    }

    /// Whether the host copy of the points was released.
    pub fn host_points_released(&self) -> bool {
        self.released
    }

    /// Point `i` of a G1 section: from the host copy, or read from the file once released.
    pub fn g1_at(&self, section: G1Section, i: usize) -> Result<G1Affine, ParamsError> {
        let (held, count, k) = match section {
            G1Section::H => (&self.h, self.counts.h, 0),
            G1Section::L => (&self.l, self.counts.l, 1),
            G1Section::A => (&self.a, self.counts.a, 2),
            G1Section::BG1 => (&self.b_g1, self.counts.b_g1, 3),
        };
        if !self.released {
            return held
                .get(i)
                .copied()
                .ok_or(no_point(section.name(), i, count));
        }
        self.read_point(section.name(), k, i, count)
    }

    /// Point `i` of the B bases in G2: from the host copy, or read from the file once
    /// released.
    pub fn g2_at(&self, i: usize) -> Result<G2Affine, ParamsError> {
        if !self.released {
            return self
                .b_g2
                .get(i)
                .copied()
                .ok_or(no_point("b_g2", i, self.counts.b_g2));
        }
        self.read_point("b_g2", 4, i, self.counts.b_g2)
    }

    fn read_point<P: wire::WirePoint>(
        &self,
        section: &'static str,
        k: usize,
        i: usize,
        count: usize,
    ) -> Result<P, ParamsError> {
        use std::os::unix::fs::FileExt;
        let o = self.origin.as_ref().ok_or(no_point(section, i, 0))?;
        if i >= count {
            return Err(no_point(section, i, count));
        }
        let offset = o.offsets[k] + (i * P::SIZE) as u64;
        let mut buf = [0u8; 192];
        let buf = &mut buf[..P::SIZE];
        o.file
            .read_exact_at(buf, offset)
            .map_err(|source| ParamsError::Io {
                path: o.path.clone(),
                source,
            })?;
        // Read back one at a time, so checked fully: the file may have changed since.
        P::decode(buf, true).map_err(|reason| ParamsError::BadPoint {
            section,
            index: i,
            offset,
            reason,
        })
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

    /// Bytes of point data held in memory (the verifying key's alone once the host copy is
    /// released).
    pub fn size_bytes(&self) -> u64 {
        let g1 = std::mem::size_of::<G1Affine>() as u64;
        let g2 = std::mem::size_of::<G2Affine>() as u64;
        let n_g1 = (self.h.len() + self.l.len() + self.a.len() + self.b_g1.len() + self.vk.ic.len())
            as u64;
        n_g1 * g1 + self.b_g2.len() as u64 * g2
    }
}

fn no_point(section: &'static str, index: usize, count: usize) -> ParamsError {
    ParamsError::NoSuchPoint {
        section,
        index,
        count,
    }
}
