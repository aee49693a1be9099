//! A compiled circuit on disk, so that a daemon's start (or an SRS reload) reads its matrices
//! instead of compiling the blank circuit again (porep-32g: ~2 minutes on one core).
//!
//! The file is written beside its final name and renamed over it once synced, so a reader
//! never sees half a file. It carries a caller's key (the circuit and its parameter file, say)
//! and [`FORMAT_VERSION`]; a different key or version is *stale*. Its length follows from the
//! counts in its header, and a BLAKE2b digest of the header and of every array (in parallel,
//! 4 Mi values a piece) ends it: a short file or a changed byte is *corrupt*. Either way the
//! caller compiles again and never uses it.
//!
//! Layout (little-endian): `MAGIC`, version `u32`, key length `u32`, key; constraints,
//! inputs, aux, coefficients (`u64` each); per matrix A, B, C: row starts and terms (`u64`);
//! the coefficients (32 bytes each, canonical); per matrix its row starts, columns and
//! coefficient indices (`u32` each); the 64-byte digest.
use super::{CompiledCircuit, Matrix};
use blstrs::Scalar;
use ff::PrimeField;
use rayon::prelude::*;
use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};

/// Bumped whenever the layout or the meaning of a compiled circuit changes.
pub const FORMAT_VERSION: u32 = 1;

const MAGIC: &[u8; 8] = b"CUZKCMP\0";

/// Values hashed per piece of the digest.
const PIECE: usize = 1 << 22;

/// Why a circuit file was not used.
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
}

/// The digest of an array of `u32`: BLAKE2b of each piece's little-endian bytes (in
/// parallel), then of the pieces' digests.
fn digest_u32(v: &[u32]) -> [u8; 64] {
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
    let mut h = blake2b_simd::State::new();
    h.update(&(v.len() as u64).to_le_bytes());
    for p in &pieces {
        h.update(p);
    }
    *h.finalize().as_array()
}

/// The file's digest: of its header bytes, its coefficients and every array.
fn digest(header: &[u8], coeffs: &[u8], arrays: &[&[u32]]) -> [u8; 64] {
    let parts: Vec<[u8; 64]> = arrays.par_iter().map(|a| digest_u32(a)).collect();
    let mut h = blake2b_simd::State::new();
    h.update(header);
    h.update(blake2b_simd::blake2b(coeffs).as_bytes());
    for p in &parts {
        h.update(p);
    }
    *h.finalize().as_array()
}

fn header(c: &CompiledCircuit, key: &str) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(MAGIC);
    h.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    h.extend_from_slice(&(key.len() as u32).to_le_bytes());
    h.extend_from_slice(key.as_bytes());
    for n in [c.num_constraints, c.num_inputs, c.num_aux, c.coeffs.len()] {
        h.extend_from_slice(&(n as u64).to_le_bytes());
    }
    for m in [&c.a, &c.b, &c.c] {
        h.extend_from_slice(&(m.row_start.len() as u64).to_le_bytes());
        h.extend_from_slice(&(m.cols.len() as u64).to_le_bytes());
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

fn read_u32s(r: &mut impl Read, n: usize) -> io::Result<Vec<u32>> {
    let mut out = Vec::with_capacity(n);
    let mut buf = vec![0u8; 4 << 20];
    while out.len() < n {
        let k = (n - out.len()).min(1 << 20);
        r.read_exact(&mut buf[..4 * k])?;
        out.extend(
            buf[..4 * k]
                .chunks_exact(4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        );
    }
    Ok(out)
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
        let arrays = self.arrays();
        crate::atomic::write_atomic(path, 8 << 20, |w| {
            w.write_all(&header)?;
            w.write_all(&coeffs)?;
            for a in &arrays {
                write_u32s(w, a)?;
            }
            w.write_all(&digest(&header, &coeffs, &arrays))
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

    /// Reads a circuit [`CompiledCircuit::write_file`] wrote with `key`; `name` is for errors.
    /// A missing, stale, short or damaged file is an error saying which: never a circuit.
    pub fn read_file(
        path: &Path,
        key: &str,
        name: &str,
    ) -> Result<CompiledCircuit, CircuitFileError> {
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
        let mut r = BufReader::with_capacity(8 << 20, file);
        let short = |e: io::Error| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                corrupt(format!("truncated at {len} bytes"))
            } else {
                io_err(e)
            }
        };
        let mut fixed = [0u8; 16];
        r.read_exact(&mut fixed).map_err(short)?;
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
        r.read_exact(&mut got_key).map_err(short)?;
        if got_key != key.as_bytes() {
            return Err(stale(format!(
                "written for `{}`, asked for `{key}`",
                String::from_utf8_lossy(&got_key)
            )));
        }
        let mut counts = [0u8; 80];
        r.read_exact(&mut counts).map_err(short)?;
        let n: Vec<u64> = counts
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
            .collect();
        let (constraints, inputs, aux, ncoeffs) = (n[0], n[1], n[2], n[3]);
        let sizes = [n[4], n[5], n[5], n[6], n[7], n[7], n[8], n[9], n[9]];
        // The length the counts imply, checked before any big allocation.
        let expected = ncoeffs
            .checked_mul(32)
            .and_then(|c| c.checked_add(16 + key_len + 80))
            .and_then(|x| {
                sizes
                    .iter()
                    .try_fold(x, |acc, &s| acc.checked_add(s.checked_mul(4)?))
            })
            .and_then(|x| x.checked_add(64));
        if expected != Some(len) {
            return Err(corrupt(format!(
                "{len} bytes, its header says {}",
                expected.map_or("an impossible length".into(), |e| e.to_string())
            )));
        }
        let mut coeff_bytes = vec![0u8; 32 * ncoeffs as usize];
        r.read_exact(&mut coeff_bytes).map_err(short)?;
        let mut arrays = Vec::with_capacity(9);
        for &s in &sizes {
            arrays.push(read_u32s(&mut r, s as usize).map_err(short)?);
        }
        let mut stored = [0u8; 64];
        r.read_exact(&mut stored).map_err(short)?;
        let mut header = Vec::with_capacity(96 + key_len as usize);
        header.extend_from_slice(&fixed);
        header.extend_from_slice(&got_key);
        header.extend_from_slice(&counts);
        let views: Vec<&[u32]> = arrays.iter().map(|a| a.as_slice()).collect();
        if digest(&header, &coeff_bytes, &views) != stored {
            return Err(corrupt("its digest does not match its contents".into()));
        }
        let coeffs = coeff_bytes
            .chunks_exact(32)
            .map(|b| {
                let mut repr = <Scalar as PrimeField>::Repr::default();
                repr.as_mut().copy_from_slice(b);
                Option::<Scalar>::from(Scalar::from_repr(repr))
            })
            .collect::<Option<Vec<Scalar>>>()
            .ok_or_else(|| corrupt("a coefficient is not a canonical scalar".into()))?;
        let mut it = arrays.into_iter();
        let mut matrix = || Matrix {
            row_start: it.next().unwrap_or_default(),
            cols: it.next().unwrap_or_default(),
            coeffs: it.next().unwrap_or_default(),
        };
        let (a, b, c) = (matrix(), matrix(), matrix());
        CompiledCircuit::from_parts(
            name,
            [a, b, c],
            coeffs,
            (constraints as usize, inputs as usize, aux as usize),
        )
        .map_err(corrupt)
    }
}
