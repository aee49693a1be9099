//! Compiling a circuit that is a preamble and then the same part over and over, from two
//! small compiles: storage-proofs' PoRep circuit is its commitments and replica id, then one
//! part per challenge, and in the blank circuit every challenge's part has the same
//! constraints, only over variables of its own. So the circuit with no part gives the
//! preamble, the circuit with one part gives a part, and the whole circuit's matrices are the
//! preamble followed by the part `n` times, the k-th copy's own variables moved up by k
//! parts' worth: what the sequential compile records, bit for bit (the tests compare files,
//! at 2 KiB and 8 MiB in the suite and 32 GiB by hand). porep-32g: two compiles of one
//! challenge's 1/18 instead of the whole, on two threads.
//!
//! [`CompiledCircuit::compile_repeated`] builds the matrices in host memory;
//! [`CompiledCircuit::compile_repeated_to_file`] writes the compiled-circuit file
//! (`file.rs`) straight from the template, every piece of every array made, hashed and
//! written on its own core: the host holds the template, never the matrices.
use super::file::{self, PIECE};
use super::{bounded, CompiledCircuit, Compiler, Matrix, Shift, AUX};
use crate::density::Density;
use crate::error::CompileError;
use bellpepper_core::Circuit;
use blstrs::Scalar;
use ff::PrimeField;
use rayon::prelude::*;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Values converted and written at a time.
const WRITE_VALUES: usize = 1 << 18;

impl CompiledCircuit {
    /// Host bytes each thread of [`CompiledCircuit::compile_repeated_to_file`] holds while it
    /// writes: a digest piece of values and its bytes a chunk at a time.
    pub const REPEAT_THREAD_HOST_BYTES: u64 = 4 * (PIECE + WRITE_VALUES) as u64;
}

/// The circuit with one part, and where its preamble ends.
struct Template {
    /// The preamble and one part.
    one: Compiler,
    /// The preamble's rows, and its terms in A, B, C.
    pre_rows: usize,
    pre_terms: [usize; 3],
    /// A part's rows and terms.
    part_rows: usize,
    part_terms: [usize; 3],
    /// The preamble's inputs (ONE included) and aux: a part's own variables come after.
    base: (usize, usize),
    /// A part's own inputs and aux.
    own: (usize, usize),
    /// Parts of the whole circuit.
    parts: usize,
    /// The whole circuit's aux variables held to 0 or 1 (`bounded.rs`): the preamble's
    /// (read with one part's rows, which the whole circuit has too), and a part's own times
    /// the parts (a part's rows read only its own variables and the preamble's).
    bounded: usize,
    /// The whole circuit's coefficient table (a part's coefficients are all in the first
    /// part's).
    table: Vec<Scalar>,
}

impl Template {
    /// Compiles `with_parts(0)` and `with_parts(1)`, and checks that the first is where the
    /// second begins.
    fn new<C: Circuit<Scalar>>(
        name: &str,
        with_parts: impl Fn(usize) -> C + Sync,
        parts: usize,
    ) -> Result<Template, CompileError> {
        let (zero, one) = rayon::join(
            || Compiler::record(name, with_parts(0)),
            || Compiler::record(name, with_parts(1)),
        );
        let (zero, one) = (zero?, one?);
        let not_repeated = |why: &str| CompileError::NotRepeated {
            circuit: name.to_string(),
            why: why.to_string(),
        };
        if zero.overflow || one.overflow {
            return Err(CompileError::TooLarge {
                circuit: name.to_string(),
            });
        }
        let pre_rows = zero.a.row_start.len() - 1;
        let rows = one.a.row_start.len() - 1;
        if rows < pre_rows || one.inputs < zero.inputs || one.aux < zero.aux {
            return Err(not_repeated(
                "one part has fewer rows or variables than none",
            ));
        }
        for (z, o) in [(&zero.a, &one.a), (&zero.b, &one.b), (&zero.c, &one.c)] {
            let t = z.cols.len();
            if o.row_start[..=pre_rows] != z.row_start[..]
                || o.cols.get(..t) != Some(&z.cols[..])
                || o.coeffs.get(..t) != Some(&z.coeffs[..])
            {
                return Err(not_repeated(
                    "the circuit with no part is not where one part's begins",
                ));
            }
        }
        if one.table.values.get(..zero.table.values.len()) != Some(&zero.table.values[..]) {
            return Err(not_repeated("the coefficient tables differ"));
        }
        let pre_terms = [&zero.a, &zero.b, &zero.c].map(|m| m.cols.len());
        let part_terms = [&one.a, &one.b, &one.c].map(|m| m.cols.len());
        let bounded = match parts {
            0 => bounded::bounded_aux([&zero.a, &zero.b, &zero.c], &zero.table.values, zero.aux)
                .count_ones(),
            _ => {
                let bits =
                    bounded::bounded_aux([&one.a, &one.b, &one.c], &one.table.values, one.aux);
                let pre = (0..zero.aux).filter(|&i| bits.get(i)).count();
                pre + parts * (bits.count_ones() - pre)
            }
        };
        let table = match parts {
            0 => zero.table.values,
            _ => one.table.values.clone(),
        };
        Ok(Template {
            table,
            pre_rows,
            pre_terms,
            part_rows: rows - pre_rows,
            part_terms: [0, 1, 2].map(|m| part_terms[m] - pre_terms[m]),
            base: (zero.inputs, zero.aux),
            own: (one.inputs - zero.inputs, one.aux - zero.aux),
            parts,
            bounded,
            one,
        })
    }

    fn matrix(&self, m: usize) -> &Matrix {
        [&self.one.a, &self.one.b, &self.one.c][m]
    }

    /// The whole circuit's constraints, inputs, aux and terms in A, B, C; too large for
    /// 32-bit indices is an error.
    fn shape(&self, name: &str) -> Result<(usize, usize, usize, [usize; 3]), CompileError> {
        let n = self.parts as u64;
        let rows = self.pre_rows as u64 + n * self.part_rows as u64;
        let inputs = self.base.0 as u64 + n * self.own.0 as u64;
        let aux = self.base.1 as u64 + n * self.own.1 as u64;
        let terms = [0, 1, 2].map(|m| self.pre_terms[m] as u64 + n * self.part_terms[m] as u64);
        if aux >= u64::from(AUX)
            || inputs >= u64::from(AUX)
            || rows >= u64::from(u32::MAX)
            || terms.iter().any(|&t| t >= u64::from(u32::MAX))
        {
            return Err(CompileError::TooLarge {
                circuit: name.to_string(),
            });
        }
        Ok((
            rows as usize,
            inputs as usize,
            aux as usize,
            terms.map(|t| t as usize),
        ))
    }

    /// Values of array `j` (A's row starts, columns, coefficient indices, then B's, C's)
    /// in the whole circuit.
    fn len(&self, j: usize) -> usize {
        let m = j / 3;
        match j % 3 {
            0 => self.pre_rows + self.parts * self.part_rows + 1,
            _ => self.pre_terms[m] + self.parts * self.part_terms[m],
        }
    }

    /// The shift of part `k`'s own variables.
    fn shift(&self, k: usize) -> Shift {
        Shift {
            inputs_from: self.base.0 as u64,
            inputs_by: (k * self.own.0) as u64,
            aux_from: self.base.1 as u64,
            aux_by: (k * self.own.1) as u64,
        }
    }

    /// Values `start..start + out.len()` of array `j` of the whole circuit into `out`.
    fn fill(&self, j: usize, start: usize, out: &mut [u32]) {
        let (m, kind) = (j / 3, j % 3);
        let matrix = self.matrix(m);
        // The preamble's values, then the part's, repeated: `head` values, then `per` a part.
        let (head, per) = match kind {
            0 => (self.pre_rows + 1, self.part_rows),
            _ => (self.pre_terms[m], self.part_terms[m]),
        };
        let own: &[u32] = match kind {
            0 => &matrix.row_start,
            1 => &matrix.cols,
            _ => &matrix.coeffs,
        };
        let mut i = start;
        let mut at = 0;
        while at < out.len() {
            if i < head {
                let n = (head - i).min(out.len() - at);
                out[at..at + n].copy_from_slice(&own[i..i + n]);
                (i, at) = (i + n, at + n);
                continue;
            }
            let (k, r) = ((i - head) / per, (i - head) % per);
            let n = (per - r).min(out.len() - at);
            let src = &own[head + r..head + r + n];
            let dst = &mut out[at..at + n];
            match kind {
                // A part's row ends count its terms from the preamble's; copy k after k parts.
                0 => {
                    let by = (k * self.part_terms[m]) as u32;
                    dst.iter_mut().zip(src).for_each(|(d, &s)| *d = s + by);
                }
                1 => {
                    let shift = self.shift(k);
                    dst.iter_mut()
                        .zip(src)
                        .for_each(|(d, &s)| *d = shift.col(s) as u32 | (s & AUX));
                }
                _ => dst.copy_from_slice(src),
            }
            (i, at) = (i + n, at + n);
        }
    }

    /// A's aux, B's inputs and B's aux densities of the whole circuit (`inputs`, `aux`).
    fn densities(&self, inputs: usize, aux: usize) -> [Density; 3] {
        let mut out = [Density::new(aux), Density::new(inputs), Density::new(aux)];
        for (d, (m, is_aux)) in out.iter_mut().zip([(0, true), (1, false), (1, true)]) {
            let (base, own) = match is_aux {
                true => (self.base.1, self.own.1),
                false => (self.base.0, self.own.0),
            };
            let cols = &self.matrix(m).cols;
            // The part's own variables it uses, counted from its first.
            let mut used = Density::new(own);
            // With no part, only the preamble's terms.
            let terms = match self.parts {
                0 => self.pre_terms[m],
                _ => cols.len(),
            };
            for (t, &col) in cols[..terms].iter().enumerate() {
                if (col & AUX != 0) != is_aux {
                    continue;
                }
                let i = (col & !AUX) as usize;
                match t >= self.pre_terms[m] && i >= base {
                    true => used.set(i - base),
                    false => d.set(i),
                }
            }
            let offsets: Vec<usize> = (0..own).filter(|&i| used.get(i)).collect();
            for k in 0..self.parts {
                for &i in &offsets {
                    d.set(base + k * own + i);
                }
            }
        }
        out
    }
}

impl CompiledCircuit {
    /// Compiles the circuit `with_parts(parts)`, which synthesizes a preamble and then
    /// `parts` parts, from `with_parts(0)` and `with_parts(1)` (`repeat.rs`). The caller
    /// vouches that every part has the same constraints over variables of its own and the
    /// preamble's (storage-proofs' PoRep challenges; the tests compare against the sequential
    /// compile); a circuit whose preamble is not where its first part begins is
    /// [`CompileError::NotRepeated`].
    pub fn compile_repeated<C: Circuit<Scalar>>(
        name: &str,
        with_parts: impl Fn(usize) -> C + Sync,
        parts: usize,
    ) -> Result<CompiledCircuit, CompileError> {
        let t = Template::new(name, with_parts, parts)?;
        let (rows, inputs, aux, _) = t.shape(name)?;
        let arrays: Vec<Vec<u32>> = (0..9)
            .map(|j| {
                let mut v = vec![0u32; t.len(j)];
                v.par_chunks_mut(PIECE)
                    .enumerate()
                    .for_each(|(p, out)| t.fill(j, p * PIECE, out));
                v
            })
            .collect();
        let mut arrays = arrays.into_iter();
        let [a, b, c] = [0, 1, 2].map(|_| file::matrix_of(&mut arrays));
        Ok(CompiledCircuit::assemble(
            [a, b, c],
            t.table,
            (rows, inputs, aux),
            t.bounded,
        ))
    }

    /// As [`CompiledCircuit::compile_repeated`], but written straight into the
    /// compiled-circuit file `path` with `key` ([`CompiledCircuit::write_file`]'s file, byte
    /// for byte), atomically, and opened ([`CompiledCircuit::open_file`]: the matrices stay
    /// in the file). The host holds the circuit with one part and a piece of an array per
    /// core. A file that cannot be written is [`CompileError::File`] and leaves nothing.
    pub fn compile_repeated_to_file<C: Circuit<Scalar>>(
        name: &str,
        with_parts: impl Fn(usize) -> C + Sync,
        parts: usize,
        path: &Path,
        key: &str,
    ) -> Result<CompiledCircuit, CompileError> {
        let file_error = |source| CompileError::File {
            circuit: name.to_string(),
            path: path.to_path_buf(),
            source,
        };
        let t = Template::new(name, with_parts, parts)?;
        let (rows, inputs, aux, terms) = t.shape(name)?;
        let counts = [rows, inputs, aux, t.table.len(), t.bounded].map(|n| n as u64);
        let header = file::header_of(key, counts, terms.map(|n| [rows as u64 + 1, n as u64]));
        let coeffs: Vec<u8> = t.table.iter().flat_map(|c| c.to_repr()).collect();
        let [da, dbi, db] = t.densities(inputs, aux);
        let densities = file::density_bytes([&da, &dbi, &db]);
        // Where each array starts in the file.
        let mut at = (header.len() + coeffs.len()) as u64;
        let starts: Vec<u64> = (0..9)
            .map(|j| {
                let s = at;
                at += 4 * t.len(j) as u64;
                s
            })
            .collect();
        let total = at + densities.len() as u64 + 64;
        crate::atomic::write_atomic_at(path, total, |f| {
            let pieces: Vec<(usize, usize)> = (0..9)
                .flat_map(|j| (0..t.len(j).div_ceil(PIECE)).map(move |p| (j, p)))
                .collect();
            let digests = pieces
                .par_iter()
                .map(|&(j, p)| {
                    let start = p * PIECE;
                    let mut values = vec![0u32; PIECE.min(t.len(j) - start)];
                    t.fill(j, start, &mut values);
                    let mut h = blake2b_simd::State::new();
                    let mut bytes = Vec::with_capacity(4 * WRITE_VALUES);
                    let mut at = starts[j] + 4 * start as u64;
                    for chunk in values.chunks(WRITE_VALUES) {
                        bytes.clear();
                        bytes.extend(chunk.iter().flat_map(|v| v.to_le_bytes()));
                        h.update(&bytes);
                        f.write_all_at(&bytes, at)?;
                        at += bytes.len() as u64;
                    }
                    Ok(*h.finalize().as_array())
                })
                .collect::<io::Result<Vec<[u8; 64]>>>()?;
            let arrays: Vec<[u8; 64]> = (0..9)
                .map(|j| {
                    let mine: Vec<[u8; 64]> = pieces
                        .iter()
                        .zip(&digests)
                        .filter(|((a, _), _)| *a == j)
                        .map(|(_, d)| *d)
                        .collect();
                    file::array_digest(t.len(j) as u64, &mine)
                })
                .collect();
            let digest = file::file_digest(
                &header,
                &file::blake(&coeffs),
                &arrays,
                &file::blake(&densities),
            );
            f.write_all_at(&header, 0)?;
            f.write_all_at(&coeffs, header.len() as u64)?;
            f.write_all_at(&densities, at)?;
            f.write_all_at(&digest, at + densities.len() as u64)
        })
        .map_err(file_error)?;
        // Just written and synced: a failure to open it is the file system's.
        CompiledCircuit::open_file(path, key).map_err(|e| file_error(io::Error::other(e)))
    }
}
