//! A compiled circuit's matrices handed over a window at a time
//! ([`CompiledCircuit::stream_matrices`]): from host memory, or from the circuit's file
//! ([`CompiledCircuit::open_file`]) read by a thread of its own one window ahead, each window
//! hashed (in parallel, by pieces) and checked before it is handed on. A device copy is
//! filled so with one or two windows on the host instead of the whole 7 GiB of a 32 GiB
//! PoRep's matrices; [`CompiledCircuit::load_host_matrices`] reads them whole the same way.
use super::file::{array_digest, file_digest, CircuitFileError, Origin, PIECE};
use super::{CompiledCircuit, AUX};
use crate::read_ahead::read_ahead;
use rayon::prelude::*;
use std::io;

/// Which array of a matrix a window is from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatrixArray {
    /// Row starts: `rows + 1` values, from 0 to the matrix's terms, non-decreasing.
    RowStart,
    /// Each term's variable (an input index, or an aux index with [`AUX`] set).
    Cols,
    /// Each term's coefficient, as an index into [`CompiledCircuit::coeff_table`].
    Coeffs,
}

const ARRAYS: [MatrixArray; 3] = [
    MatrixArray::RowStart,
    MatrixArray::Cols,
    MatrixArray::Coeffs,
];

/// A run of values of one matrix's array, checked against the circuit's shape: every row
/// start in order (the first 0, the last the matrix's terms), every column and coefficient
/// index in range. Windows come in file order (A's row starts, columns, coefficients, then
/// B's, then C's), each array's from its start to its end.
#[derive(Clone, Copy, Debug)]
pub struct MatrixWindow<'a> {
    /// A (0), B (1) or C (2).
    pub matrix: usize,
    /// Which of its arrays.
    pub array: MatrixArray,
    /// Index of the first value within the array.
    pub start: usize,
    /// The values.
    pub values: &'a [u32],
}

/// The checks a window passes before it is handed on (a device reads by these indices).
struct Check {
    rows: usize,
    inputs: usize,
    aux: usize,
    table: usize,
    terms: [usize; 3],
    /// The last row start seen.
    prev: u32,
}

impl Check {
    fn window(&mut self, w: &MatrixWindow<'_>) -> Result<(), String> {
        let v = w.values;
        let ok = match w.array {
            MatrixArray::RowStart => {
                if w.start == 0 {
                    self.prev = 0;
                }
                let first_ok = v
                    .first()
                    .is_none_or(|&f| f >= self.prev && (w.start != 0 || f == 0));
                let ordered = v.par_windows(2).all(|p| p[0] <= p[1]);
                let end = w.start + v.len() == self.rows + 1;
                let last_ok = !end || v.last().map(|&l| l as usize) == Some(self.terms[w.matrix]);
                if let Some(&l) = v.last() {
                    self.prev = l;
                }
                first_ok && ordered && last_ok
            }
            MatrixArray::Cols => {
                let (inputs, aux) = (self.inputs, self.aux);
                v.par_iter().all(|&c| {
                    if c & AUX != 0 {
                        ((c & !AUX) as usize) < aux
                    } else {
                        (c as usize) < inputs
                    }
                })
            }
            MatrixArray::Coeffs => {
                let table = self.table;
                v.par_iter().all(|&k| (k as usize) < table)
            }
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "matrix {} {:?} values {}..{} are not a circuit of {} constraints, {} inputs, \
                 {} aux and {} coefficients",
                ["A", "B", "C"][w.matrix.min(2)],
                w.array,
                w.start,
                w.start + v.len(),
                self.rows,
                self.inputs,
                self.aux,
                self.table
            ))
        }
    }
}

/// One window of the file: array (0..9, file order), first value, values, file offset.
#[derive(Clone, Copy)]
struct Job {
    array: usize,
    start: usize,
    len: usize,
    at: u64,
}

impl CompiledCircuit {
    /// Values a window of [`CompiledCircuit::stream_matrices`] that a device upload asks for
    /// (64 MiB: four digest pieces, hashed in parallel).
    pub const STREAM_WINDOW: usize = 4 * PIECE;

    /// Host bytes a stream of [`CompiledCircuit::STREAM_WINDOW`] windows from the file holds
    /// at most: the window being read, one queued, the one handed over and its values.
    pub const STREAM_HOST_BYTES: u64 = 4 * 4 * Self::STREAM_WINDOW as u64;

    /// Whether the matrices are in the circuit's file only ([`CompiledCircuit::open_file`]),
    /// to be streamed or read from it.
    pub fn matrices_in_file(&self) -> bool {
        self.released && self.origin.is_some()
    }

    /// Whether the matrices can be handed over ([`CompiledCircuit::stream_matrices`]): held
    /// in host memory, or in the circuit's file.
    pub fn matrices_available(&self) -> bool {
        !self.released || self.origin.is_some()
    }

    /// Terms of A (0), B (1) or C (2), wherever the matrices are.
    pub fn terms(&self, which: usize) -> usize {
        self.terms[which.min(2)]
    }

    /// Hands every array of A, B and C to `f` in file order, about `window_values` values a
    /// window (rounded to the digest's pieces when read from the file), each window checked
    /// (see [`MatrixWindow`]). From the file, the windows are read one ahead by a thread of
    /// their own, and the file's digest is compared after the last: a mismatch is
    /// [`CircuitFileError::Corrupt`], so a caller keeps what it was given only on `Ok`.
    pub fn stream_matrices<E: From<CircuitFileError>>(
        &self,
        window_values: usize,
        mut f: impl FnMut(MatrixWindow<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut check = Check {
            rows: self.num_constraints,
            inputs: self.num_inputs,
            aux: self.num_aux,
            table: self.coeffs.len(),
            terms: self.terms,
            prev: 0,
        };
        if !self.released {
            let window = window_values.max(1);
            for (m, matrix) in [&self.a, &self.b, &self.c].into_iter().enumerate() {
                let arrays = [&matrix.row_start, &matrix.cols, &matrix.coeffs];
                for (array, values) in ARRAYS.into_iter().zip(arrays) {
                    for (i, chunk) in values.chunks(window).enumerate() {
                        let w = MatrixWindow {
                            matrix: m,
                            array,
                            start: i * window,
                            values: chunk,
                        };
                        check.window(&w).map_err(CircuitFileError::Malformed)?;
                        f(w)?;
                    }
                }
            }
            return Ok(());
        }
        let origin = self.origin.as_ref().ok_or(CircuitFileError::Released)?;
        let window = window_values.div_ceil(PIECE).max(1) * PIECE;
        let mut jobs = Vec::new();
        let mut at = origin.arrays_at;
        for (array, &size) in origin.sizes.iter().enumerate() {
            let size = size as usize;
            for start in (0..size).step_by(window) {
                let len = window.min(size - start);
                jobs.push(Job {
                    array,
                    start,
                    len,
                    at: at + 4 * start as u64,
                });
            }
            at += 4 * size as u64;
        }
        let mut pieces: Vec<Vec<[u8; 64]>> = vec![Vec::new(); 9];
        consume(origin, &jobs, &mut pieces, &mut check, &mut f)?;
        let arrays: Vec<[u8; 64]> = origin
            .sizes
            .iter()
            .zip(&pieces)
            .map(|(&n, p)| array_digest(n, p))
            .collect();
        let digest = file_digest(
            &origin.header,
            &origin.coeffs_digest,
            &arrays,
            &origin.densities_digest,
        );
        if digest != origin.stored {
            return Err(CircuitFileError::Corrupt {
                path: origin.path.clone(),
                why: "its digest does not match its contents".into(),
            }
            .into());
        }
        Ok(())
    }

    /// Reads the matrices of a circuit opened from its file ([`CompiledCircuit::open_file`])
    /// into host memory, checked as [`CompiledCircuit::stream_matrices`] checks them; returns
    /// the bytes now held (0 when they were held already). Nothing changes on an error.
    pub fn load_host_matrices(&mut self) -> Result<u64, CircuitFileError> {
        if !self.released {
            return Ok(0);
        }
        let sizes = self
            .origin
            .as_ref()
            .ok_or(CircuitFileError::Released)?
            .sizes;
        let mut arrays: Vec<Vec<u32>> = sizes
            .iter()
            .map(|&n| Vec::with_capacity(n as usize))
            .collect();
        self.stream_matrices::<CircuitFileError>(Self::STREAM_WINDOW, |w| {
            arrays[3 * w.matrix + w.array as usize].extend_from_slice(w.values);
            Ok(())
        })?;
        let mut it = arrays.into_iter();
        self.a = super::file::matrix_of(&mut it);
        self.b = super::file::matrix_of(&mut it);
        self.c = super::file::matrix_of(&mut it);
        self.released = false;
        Ok((self.a.bytes() + self.b.bytes() + self.c.bytes()) as u64)
    }
}

/// Every job's bytes, read ahead on a thread of their own, hashed by pieces, decoded, checked
/// and handed to `f`.
fn consume<E: From<CircuitFileError>>(
    origin: &Origin,
    jobs: &[Job],
    pieces: &mut [Vec<[u8; 64]>],
    check: &mut Check,
    f: &mut impl FnMut(MatrixWindow<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let io_err = |e: io::Error| {
        E::from(CircuitFileError::Io {
            path: origin.path.clone(),
            source: if e.kind() == io::ErrorKind::UnexpectedEof {
                io::Error::other("the file became shorter while it was read")
            } else {
                e
            },
        })
    };
    let extents: Vec<(u64, usize)> = jobs.iter().map(|j| (j.at, 4 * j.len)).collect();
    let mut values: Vec<u32> = Vec::new();
    read_ahead(&origin.file, &extents, io_err, |k, bytes| {
        let job = &jobs[k];
        pieces[job.array].extend(
            bytes
                .par_chunks(4 * PIECE)
                .map(|p| *blake2b_simd::blake2b(p).as_array())
                .collect::<Vec<_>>(),
        );
        values.clear();
        values.resize(job.len, 0);
        values
            .par_iter_mut()
            .zip(bytes.par_chunks_exact(4))
            .for_each(|(v, b)| *v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let w = MatrixWindow {
            matrix: job.array / 3,
            array: ARRAYS[job.array % 3],
            start: job.start,
            values: &values,
        };
        check.window(&w).map_err(|why| CircuitFileError::Corrupt {
            path: origin.path.clone(),
            why,
        })?;
        f(w)
    })
}
