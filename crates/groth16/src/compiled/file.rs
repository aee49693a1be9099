//! A compiled circuit on disk, so that a daemon's start (or an SRS reload) reads its matrices
//! instead of compiling the blank circuit again (porep-32g walked whole: ~2 minutes on one
//! core; compiled from one challenge, `repeat.rs`, it is written here directly).
//!
//! The file is written beside its final name and renamed over it once synced, so a reader
//! never sees half a file. It carries a caller's key (the circuit and its parameter file, say)
//! and [`FORMAT_VERSION`]; a different key or version is *stale*. Its length follows from the
//! counts in its header, and a BLAKE2b digest of the header, the coefficients, every array (in
//! pieces of 4 Mi values) and the densities ends it: a short file or a changed byte is
//! *corrupt*. Either way the caller compiles again and never uses it.
//!
//! [`CompiledCircuit::open_file`] reads only the header, the coefficient table and the
//! densities (tens of MiB at 32 GiB); the matrices stay in the file until they are streamed a
//! window at a time ([`CompiledCircuit::stream_matrices`], `stream.rs`: to a device, which
//! then holds them) or read whole ([`CompiledCircuit::load_host_matrices`]). Either way the
//! digest is checked as they pass, and a mismatch stops them before the last window is
//! handed over: the host never holds 7 GiB of matrices on their way to VRAM.
//!
//! Layout (little-endian): `MAGIC`, version `u32`, key length `u32`, key; constraints,
//! inputs, aux, coefficients, aux held to 0 or 1 (`u64` each); per matrix A, B, C: row starts and terms (`u64`);
//! the coefficients (32 bytes each, canonical); per matrix its row starts, columns and
//! coefficient indices (`u32` each); the densities of A's aux, B's inputs and B's aux (`u64`
//! words); the 64-byte digest.
use super::{CompiledCircuit, Matrix, AUX};
use crate::density::Density;
use blstrs::Scalar;
use ff::PrimeField;
use rayon::prelude::*;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Bumped whenever the layout or the meaning of a compiled circuit changes (2: the densities
/// are stored, so a circuit opens without reading its matrices; 3: the count of aux
/// variables the constraints hold to 0 or 1, `bounded.rs`).
pub const FORMAT_VERSION: u32 = 3;

const MAGIC: &[u8; 8] = b"CUZKCMP\0";

/// Bytes of the header's counts: five, then each matrix's row starts and terms (`u64` each).
const COUNTS_BYTES: usize = 8 * (5 + 6);

/// Values hashed per piece of an array's digest.
pub(super) const PIECE: usize = 1 << 22;

/// Why a circuit file was not used, or its matrices could not be streamed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CircuitFileError {
    /// There is no file.
    #[error("no compiled circuit at {0}")]
    Missing(PathBuf),
    /// It could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// It is of another format version or another key (another circuit or parameter file).
    #[error("{path} is stale: {why}")]
    Stale {
        /// The file.
        path: PathBuf,
        /// What differs.
        why: String,
    },
    /// It is truncated or damaged.
    #[error("{path} is corrupt: {why}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The circuit's matrices are neither in host memory nor in a file (released after a
    /// compile): there is nothing to stream.
    #[error("the compiled matrices' host copy was released and they have no file")]
    Released,
    /// Matrices held in memory are not a circuit of their shape (never from our compiler).
    #[error("compiled matrices malformed: {0}")]
    Malformed(String),
}

/// Where an opened circuit's matrices are: its file (held open, so a cache rewritten
/// meanwhile, by rename, does not change what is read), and what its digest needs besides
/// them.
pub(super) struct Origin {
    pub(super) path: PathBuf,
    pub(super) file: File,
    /// The header's bytes, as hashed.
    pub(super) header: Vec<u8>,
    pub(super) coeffs_digest: [u8; 64],
    pub(super) densities_digest: [u8; 64],
    /// File offset of the first array (A's row starts).
    pub(super) arrays_at: u64,
    /// Values of each array, in file order.
    pub(super) sizes: [u64; 9],
    /// The digest the file ends with.
    pub(super) stored: [u8; 64],
}

/// The digest of an array of `u32`: BLAKE2b of each piece's little-endian bytes (in
/// parallel), then of the array's length and the pieces' digests.
pub(super) fn digest_u32(v: &[u32]) -> [u8; 64] {
    let pieces: Vec<[u8; 64]> = v
        .par_chunks(PIECE)
        .map(|piece| {
            let mut h = blake2b_simd::State::new();
            let mut buf = [0u8; 4096];
            for chunk in piece.chunks(1024) {
                for (b, x) in buf.chunks_exact_mut(4).zip(chunk) {
                    b.copy_from_slice(&x.to_le_bytes());
                }
                h.update(&buf[..4 * chunk.len()]);
            }
            *h.finalize().as_array()
        })
        .collect();
    array_digest(v.len() as u64, &pieces)
}

/// An array's digest from its length and its pieces' digests.
pub(super) fn array_digest(len: u64, pieces: &[[u8; 64]]) -> [u8; 64] {
    let mut h = blake2b_simd::State::new();
    h.update(&len.to_le_bytes());
    for p in pieces {
        h.update(p);
    }
    *h.finalize().as_array()
}

/// The file's digest: of its header bytes, its coefficients', arrays' and densities' digests.
pub(super) fn file_digest(
    header: &[u8],
    coeffs: &[u8; 64],
    arrays: &[[u8; 64]],
    densities: &[u8; 64],
) -> [u8; 64] {
    let mut h = blake2b_simd::State::new();
    h.update(header);
    h.update(coeffs);
    for p in arrays {
        h.update(p);
    }
    h.update(densities);
    *h.finalize().as_array()
}

pub(super) fn blake(bytes: &[u8]) -> [u8; 64] {
    *blake2b_simd::blake2b(bytes).as_array()
}

fn header(c: &CompiledCircuit, key: &str) -> Vec<u8> {
    let counts = [
        c.num_constraints,
        c.num_inputs,
        c.num_aux,
        c.coeffs.len(),
        c.bounded_aux,
    ]
    .map(|n| n as u64);
    let [a, b, c] = [&c.a, &c.b, &c.c].map(|m| [m.row_start.len() as u64, m.cols.len() as u64]);
    header_of(key, counts, [a, b, c])
}

/// The header of a circuit of `counts` (constraints, inputs, aux, coefficients, aux held to
/// 0 or 1) whose A, B and C hold `shapes` (row starts, terms).
pub(super) fn header_of(key: &str, counts: [u64; 5], shapes: [[u64; 2]; 3]) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(MAGIC);
    h.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    h.extend_from_slice(&(key.len() as u32).to_le_bytes());
    h.extend_from_slice(key.as_bytes());
    for n in counts.into_iter().chain(shapes.into_iter().flatten()) {
        h.extend_from_slice(&n.to_le_bytes());
    }
    h
}

fn write_u32s(w: &mut impl Write, v: &[u32]) -> io::Result<()> {
    let mut buf = vec![0u8; 4 << 20];
    for chunk in v.chunks(1 << 20) {
        for (b, x) in buf.chunks_exact_mut(4).zip(chunk) {
            b.copy_from_slice(&x.to_le_bytes());
        }
        w.write_all(&buf[..4 * chunk.len()])?;
    }
    Ok(())
}

/// The densities' bytes: A's aux, B's inputs, B's aux, each its words.
pub(super) fn density_bytes(ds: [&Density; 3]) -> Vec<u8> {
    ds.iter()
        .flat_map(|d| d.words.iter().flat_map(|w| w.to_le_bytes()))
        .collect()
}

/// Words of a density over `len` variables.
fn words(len: u64) -> u64 {
    len.div_ceil(64)
}

impl CompiledCircuit {
    /// Writes this circuit to `path` with `key` (what the reader must ask for), atomically: a
    /// temporary file beside it, synced, then renamed. Refuses a circuit whose matrices were
    /// released. A failure leaves no file behind.
    pub fn write_file(&self, path: &Path, key: &str) -> Result<(), CircuitFileError> {
        let io_err = |source: io::Error| CircuitFileError::Io {
            path: path.to_path_buf(),
            source,
        };
        if self.released {
            return Err(io_err(io::Error::other(
                "the matrices' host copy was released",
            )));
        }
        let header = header(self, key);
        let coeffs: Vec<u8> = self.coeffs.iter().flat_map(|c| c.to_repr()).collect();
        let densities = density_bytes([
            &self.a_aux_density,
            &self.b_input_density,
            &self.b_aux_density,
        ]);
        let arrays = self.arrays();
        let digests: Vec<[u8; 64]> = arrays.par_iter().map(|a| digest_u32(a)).collect();
        let digest = file_digest(&header, &blake(&coeffs), &digests, &blake(&densities));
        crate::atomic::write_atomic(path, 8 << 20, |w| {
            w.write_all(&header)?;
            w.write_all(&coeffs)?;
            for a in &arrays {
                write_u32s(w, a)?;
            }
            w.write_all(&densities)?;
            w.write_all(&digest)
        })
        .map_err(io_err)
    }

    /// Removes the temporary files that writers of `path` killed mid-write left behind
    /// ([`crate::atomic::remove_orphaned_temporaries`]); returns how many went.
    pub fn remove_orphaned_temporaries(path: &Path) -> usize {
        crate::atomic::remove_orphaned_temporaries(path)
    }

    /// A's, B's and C's row starts, columns and coefficient indices, in file order.
    fn arrays(&self) -> [&[u32]; 9] {
        let (a, b, c) = (&self.a, &self.b, &self.c);
        [
            &a.row_start,
            &a.cols,
            &a.coeffs,
            &b.row_start,
            &b.cols,
            &b.coeffs,
            &c.row_start,
            &c.cols,
            &c.coeffs,
        ]
    }

    /// Reads a circuit [`CompiledCircuit::write_file`] wrote with `key`, matrices included
    /// ([`CompiledCircuit::open_file`], then [`CompiledCircuit::load_host_matrices`]). A
    /// missing, stale, short or damaged file is an error saying which: never a circuit.
    pub fn read_file(path: &Path, key: &str) -> Result<CompiledCircuit, CircuitFileError> {
        let mut c = CompiledCircuit::open_file(path, key)?;
        c.load_host_matrices()?;
        Ok(c)
    }

    /// Opens a circuit [`CompiledCircuit::write_file`] wrote with `key`, leaving its matrices
    /// in the file: the header, the coefficient table and the densities are read, and the
    /// file's length checked against its counts. Its matrices are then streamed
    /// ([`CompiledCircuit::stream_matrices`]) or read ([`CompiledCircuit::load_host_matrices`]),
    /// checked against the digest as they pass. A missing, stale or short file, or a damaged
    /// header, table or densities (found when the matrices pass), is an error saying which.
    pub fn open_file(path: &Path, key: &str) -> Result<CompiledCircuit, CircuitFileError> {
        Self::open_inner(path, key, false)?.ok_or(CircuitFileError::Released)
    }

    /// Whether [`CompiledCircuit::open_file`] would open `path` as far as its header says
    /// (format, key, length): a few hundred bytes read, for sizing a load before it is made.
    pub fn probe_file(path: &Path, key: &str) -> Result<(), CircuitFileError> {
        Self::open_inner(path, key, true).map(|_| ())
    }

    /// [`CompiledCircuit::open_file`]; `probe`: stop after the header's checks (`None`).
    fn open_inner(
        path: &Path,
        key: &str,
        probe: bool,
    ) -> Result<Option<CompiledCircuit>, CircuitFileError> {
        let io_err = |source: io::Error| CircuitFileError::Io {
            path: path.to_path_buf(),
            source,
        };
        let corrupt = |why: String| CircuitFileError::Corrupt {
            path: path.to_path_buf(),
            why,
        };
        let stale = |why: String| CircuitFileError::Stale {
            path: path.to_path_buf(),
            why,
        };
        let file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(CircuitFileError::Missing(path.to_path_buf()))
            }
            Err(e) => return Err(io_err(e)),
        };
        let len = file.metadata().map_err(io_err)?.len();
        let read_at = |buf: &mut [u8], at: u64| {
            file.read_exact_at(buf, at).map_err(|e| {
                if e.kind() == io::ErrorKind::UnexpectedEof {
                    corrupt(format!("truncated at {len} bytes"))
                } else {
                    io_err(e)
                }
            })
        };
        let mut fixed = [0u8; 16];
        read_at(&mut fixed, 0)?;
        if &fixed[..8] != MAGIC {
            return Err(corrupt("not a compiled circuit (magic)".into()));
        }
        let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let version = word(&fixed[8..12]);
        if version != FORMAT_VERSION {
            return Err(stale(format!(
                "format version {version}, this build reads {FORMAT_VERSION}"
            )));
        }
        let key_len = word(&fixed[12..16]) as u64;
        if key_len > 4096 || key_len > len {
            return Err(corrupt(format!("a {key_len}-byte key")));
        }
        let mut got_key = vec![0u8; key_len as usize];
        read_at(&mut got_key, 16)?;
        if got_key != key.as_bytes() {
            return Err(stale(format!(
                "written for `{}`, asked for `{key}`",
                String::from_utf8_lossy(&got_key)
            )));
        }
        let mut counts = [0u8; COUNTS_BYTES];
        read_at(&mut counts, 16 + key_len)?;
        let n: Vec<u64> = counts
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
            .collect();
        let (constraints, inputs, aux, ncoeffs, bounded) = (n[0], n[1], n[2], n[3], n[4]);
        let sizes = [n[5], n[6], n[6], n[7], n[8], n[8], n[9], n[10], n[10]];
        if [n[5], n[7], n[9]].iter().any(|&r| r != constraints + 1)
            || aux >= u64::from(AUX)
            || bounded > aux
            || inputs == 0
            || ncoeffs < 2
        {
            return Err(corrupt(format!(
                "its header's shape: {constraints} constraints, {inputs} inputs, {aux} aux \
                 ({bounded} held to 0 or 1), {ncoeffs} coefficients, row starts {} {} {}",
                n[5], n[7], n[9]
            )));
        }
        let densities_len = 8 * (2 * words(aux) + words(inputs));
        let coeffs_at = 16 + key_len + COUNTS_BYTES as u64;
        let arrays_at = ncoeffs
            .checked_mul(32)
            .and_then(|c| c.checked_add(coeffs_at));
        let densities_at = arrays_at.and_then(|x| {
            sizes
                .iter()
                .try_fold(x, |acc, &s| acc.checked_add(s.checked_mul(4)?))
        });
        // The length the counts imply, checked before any big allocation.
        let expected = densities_at
            .and_then(|x| x.checked_add(densities_len))
            .and_then(|x| x.checked_add(64));
        let (Some(arrays_at), Some(densities_at), Some(expected)) =
            (arrays_at, densities_at, expected)
        else {
            return Err(corrupt(format!(
                "{len} bytes, its header's counts overflow"
            )));
        };
        if expected != len {
            return Err(corrupt(format!("{len} bytes, its header says {expected}")));
        }
        if probe {
            return Ok(None);
        }
        let mut coeff_bytes = vec![0u8; 32 * ncoeffs as usize];
        read_at(&mut coeff_bytes, coeffs_at)?;
        let mut density_raw = vec![0u8; densities_len as usize];
        read_at(&mut density_raw, densities_at)?;
        let mut stored = [0u8; 64];
        read_at(&mut stored, len - 64)?;
        let coeffs = coeff_bytes
            .chunks_exact(32)
            .map(|b| {
                let mut repr = <Scalar as PrimeField>::Repr::default();
                repr.as_mut().copy_from_slice(b);
                Option::<Scalar>::from(Scalar::from_repr(repr))
            })
            .collect::<Option<Vec<Scalar>>>()
            .ok_or_else(|| corrupt("a coefficient is not a canonical scalar".into()))?;
        let mut rest = density_raw
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()));
        let mut density = |len: u64| Density {
            words: rest.by_ref().take(words(len) as usize).collect(),
            len: len as usize,
        };
        let (a_aux, b_input, b_aux) = (density(aux), density(inputs), density(aux));
        let mut header = Vec::with_capacity(96 + key_len as usize);
        header.extend_from_slice(&fixed);
        header.extend_from_slice(&got_key);
        header.extend_from_slice(&counts);
        let origin = Origin {
            path: path.to_path_buf(),
            file,
            header,
            coeffs_digest: blake(&coeff_bytes),
            densities_digest: blake(&density_raw),
            arrays_at,
            sizes,
            stored,
        };
        Ok(Some(CompiledCircuit::in_file(
            origin,
            coeffs,
            (
                constraints as usize,
                inputs as usize,
                aux as usize,
                bounded as usize,
            ),
            [sizes[1] as usize, sizes[4] as usize, sizes[7] as usize],
            [a_aux, b_input, b_aux],
        )))
    }
}

/// `Matrix` from its three arrays (the order of the file).
pub(super) fn matrix_of(arrays: &mut impl Iterator<Item = Vec<u32>>) -> Matrix {
    Matrix {
        row_start: arrays.next().unwrap_or_default(),
        cols: arrays.next().unwrap_or_default(),
        coeffs: arrays.next().unwrap_or_default(),
    }
}
