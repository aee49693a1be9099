//! The **INSECURE** setup of a compiled circuit, streamed into its `.params` file: the same
//! parameters as [`super::generate_params`] for the same RNG, byte for byte, at any size (a
//! 32 GiB PoRep circuit's 427 M G1 and 33 M G2 points, 47 GB), without holding them.
//!
//! Every section's count is known from the circuit before any point is made, so each section
//! is written at its own offset as its points come (one writer thread beside the computation);
//! the file is created beside its final name and renamed over it once synced. Host memory is
//! at most two of the circuit's per-variable scalar vectors at once (`32 B × variables`
//! each), the circuit's matrices (each dropped once walked), and three batches of points of
//! at most [`BATCH_BYTES`] each:
//!
//! 1. `h[i] = τⁱ·Z(τ)/δ` (no circuit needed);
//! 2. B's QAP evaluations `v`, then the `b_g1` and `b_g2` points; `α·v` is kept for B's
//!    variables only;
//! 3. A's evaluations `u` (and the input rows), then the `a` points; `u` becomes
//!    `β·u + α·v` in place;
//! 4. C's evaluations are added, and the `ic` (÷γ) and `l` (÷δ) points made.
//!
//! Evaluations walk each matrix's rows in blocks, with the Lagrange coefficients at τ of the
//! next block computed in parallel while the current block's terms are added.
use super::points::{PointMaker, G1_BYTES, G2_BYTES};
use super::{batch_invert, domain_of, SetupShape, SetupTimings, ToxicWaste, CHUNK};
use crate::compiled::{CompiledCircuit, AUX, COEFF_MINUS_ONE, COEFF_ONE};
use crate::density::Density;
use crate::error::{Error, ParamsError};
use crate::params::{write_vk_to, VerifyingKey};
use bellpepper_core::SynthesisError;
use blstrs::{G1Projective, Scalar};
use ff::Field;
use group::{Curve, Group};
use rand_core::RngCore;
use rayon::prelude::*;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::JoinHandle;
use std::time::Instant;

/// Rows of a matrix whose Lagrange coefficients are computed at once.
const ROW_BLOCK: usize = 1 << 20;

/// Batches of points waiting for the writer.
const WRITES_IN_FLIGHT: usize = 2;

/// Bytes of points made at once (the point maker's batch is cut to fit).
pub const BATCH_BYTES: usize = 512 << 20;

/// What [`write_params_streamed`] wrote.
#[derive(Clone, Debug)]
pub struct StreamedSetup {
    /// The circuit's shape.
    pub shape: SetupShape,
    /// Where the time went (`synthesize` is zero: the circuit came compiled).
    pub timings: SetupTimings,
    /// The verifying key (also at the start of the file).
    pub vk: VerifyingKey,
    /// The file's length.
    pub bytes: u64,
}

/// Byte offsets of the file's sections (each a `u32` count, then the points).
struct Layout {
    h: u64,
    l: u64,
    a: u64,
    b_g1: u64,
    b_g2: u64,
    end: u64,
}

impl Layout {
    fn new(ic: usize, h: usize, l: usize, a: usize, b: usize) -> Layout {
        let g1 = G1_BYTES as u64;
        let g2 = G2_BYTES as u64;
        let section = |n: usize, size: u64| 4 + n as u64 * size;
        let vk = 3 * g1 + 3 * g2 + section(ic, g1);
        let h_off = vk;
        let l_off = h_off + section(h, g1);
        let a_off = l_off + section(l, g1);
        let b1_off = a_off + section(a, g1);
        let b2_off = b1_off + section(b, g1);
        Layout {
            h: h_off,
            l: l_off,
            a: a_off,
            b_g1: b1_off,
            b_g2: b2_off,
            end: b2_off + section(b, g2),
        }
    }
}

/// The file being written, and the thread that writes batches of points into it.
struct Output {
    file: std::sync::Arc<File>,
    tmp: PathBuf,
    tx: Option<SyncSender<(u64, Vec<u8>)>>,
    writer: Option<JoinHandle<()>>,
    /// The writer's error, once it has stopped on one (a full disk, say): what a later
    /// [`Output::put`] or [`Output::finish`] reports, rather than a closed channel.
    failed: std::sync::Arc<std::sync::Mutex<Option<std::io::Error>>>,
}

impl Output {
    fn create(path: &Path, len: u64) -> std::io::Result<Output> {
        let tmp = crate::atomic::temp_path(path);
        let file = File::create(&tmp)?;
        file.set_len(len)?;
        Output::start(file, tmp)
    }

    /// Starts the writer thread over `file`, the temporary `tmp`.
    fn start(file: File, tmp: PathBuf) -> std::io::Result<Output> {
        let file = std::sync::Arc::new(file);
        let (tx, rx) = sync_channel::<(u64, Vec<u8>)>(WRITES_IN_FLIGHT);
        let f = std::sync::Arc::clone(&file);
        let failed = std::sync::Arc::new(std::sync::Mutex::new(None));
        let failure = std::sync::Arc::clone(&failed);
        let writer = std::thread::Builder::new()
            .name("cuzk-setup-write".into())
            .spawn(move || {
                for (offset, bytes) in rx {
                    if let Err(e) = f.write_all_at(&bytes, offset) {
                        let e = std::io::Error::new(
                            e.kind(),
                            format!("writing {} bytes at offset {offset}: {e}", bytes.len()),
                        );
                        *failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                        return;
                    }
                }
            })?;
        Ok(Output {
            file,
            tmp,
            tx: Some(tx),
            writer: Some(writer),
            failed,
        })
    }

    /// The writer's own error, taken once.
    fn writer_error(&self) -> Option<std::io::Error> {
        self.failed.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// Queues `bytes` for `offset`. Fails with the writer's own error (`No space left on
    /// device`, say) once it has stopped on one.
    fn put(&self, offset: u64, bytes: Vec<u8>) -> std::io::Result<()> {
        let tx = self
            .tx
            .as_ref()
            .ok_or_else(|| std::io::Error::other("writer closed"))?;
        tx.send((offset, bytes)).map_err(|_| {
            self.writer_error()
                .unwrap_or_else(|| std::io::Error::other("the writer thread stopped"))
        })
    }

    /// Waits for every write, syncs, and renames the file over `path`.
    fn finish(mut self, path: &Path) -> std::io::Result<()> {
        self.close()?;
        self.file.sync_all()?;
        std::fs::rename(&self.tmp, path)
    }

    fn close(&mut self) -> std::io::Result<()> {
        drop(self.tx.take());
        match self.writer.take().map(|w| w.join()) {
            Some(Err(_)) => Err(std::io::Error::other("the writer thread panicked")),
            _ => self.writer_error().map_or(Ok(()), Err),
        }
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if self.writer.is_some() {
            // Not finished: an error path. Stop the writer and leave no partial file behind.
            let _ = self.close();
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Generates **INSECURE** parameters for `circuit` (toxic waste from `rng`, drawn exactly as
/// [`super::generate_params`] draws it) straight into the `.params` file `path` (written
/// beside it, then renamed), with `points` making the points; `circuit`'s matrices are
/// dropped as they are walked. For tests and benchmarks only.
pub fn write_params_streamed(
    mut circuit: CompiledCircuit,
    rng: &mut impl RngCore,
    path: &Path,
    points: &dyn PointMaker,
) -> Result<StreamedSetup, Error> {
    let started = Instant::now();
    let mut timings = SetupTimings::default();
    if circuit.host_matrices_released() {
        return Err(Error::Points(
            "the compiled circuit's matrices were released".into(),
        ));
    }
    let ni = circuit.num_inputs();
    let naux = circuit.num_aux();
    let nvars = ni + naux;
    let constraints = circuit.num_constraints();
    let rows = constraints + ni;
    let (domain, omega) = domain_of(rows)?;
    let shape = SetupShape {
        constraints,
        inputs: ni,
        aux: naux,
        domain,
    };
    let toxic = ToxicWaste::draw(rng, domain as u64);
    let invert =
        |x: Scalar| Option::<Scalar>::from(x.invert()).ok_or(SynthesisError::UnexpectedIdentity);
    let gamma_inv = invert(toxic.gamma)?;
    let delta_inv = invert(toxic.delta)?;
    let z_tau = toxic.tau.pow_vartime([domain as u64]) - Scalar::ONE;
    let lagrange = Lagrange {
        tau: toxic.tau,
        omega,
        c: z_tau * invert(Scalar::from(domain as u64))?,
    };

    // Copies (bits: 16 MB at 2^27 variables), so the matrices can be dropped as they go.
    let (a_aux, b_in, b_aux) = {
        let (a, b, c) = circuit.densities();
        (a.clone(), b.clone(), c.clone())
    };
    let (a_aux, b_in, b_aux) = (&a_aux, &b_in, &b_aux);
    let n_a = ni + a_aux.count_ones();
    let n_b = b_in.count_ones() + b_aux.count_ones();
    let layout = Layout::new(ni, domain - 1, naux, n_a, n_b);
    let io = |source: std::io::Error| {
        Error::from(ParamsError::Io {
            path: path.to_path_buf(),
            source,
        })
    };
    let out = Output::create(path, layout.end).map_err(io)?;
    let sections = Sections {
        out: &out,
        points,
        io: &io,
    };

    // 1. h: τⁱ·Z(τ)/δ.
    let t = Instant::now();
    let zt_over_delta = z_tau * delta_inv;
    sections.g1(layout.h, domain - 1, |start, chunk| {
        chunk.par_chunks_mut(CHUNK).enumerate().for_each(|(k, c)| {
            let mut p = toxic.tau.pow_vartime([(start + k * CHUNK) as u64]) * zt_over_delta;
            for o in c {
                *o = p;
                p *= toxic.tau;
            }
        });
        Ok(())
    })?;
    timings.g1 += t.elapsed();

    // 2. B: v, then b_g1 and b_g2 over B's variables; keep α·v for them.
    let t = Instant::now();
    let mut v = vec![Scalar::ZERO; nvars];
    evaluate_into(&circuit, 1, ni, &lagrange, &mut v);
    circuit.release_matrix(1);
    timings.evaluate += t.elapsed();
    let t = Instant::now();
    sections.g1(layout.b_g1, n_b, gather(&v, dense_vars(b_in, b_aux, ni)))?;
    timings.g1 += t.elapsed();
    let t = Instant::now();
    sections.g2(layout.b_g2, n_b, gather(&v, dense_vars(b_in, b_aux, ni)))?;
    timings.g2 += t.elapsed();
    let alpha_v: Vec<Scalar> = dense_vars(b_in, b_aux, ni)
        .map(|i| toxic.alpha * v[i])
        .collect();
    drop(v);

    // 3. A: u (its input rows too), then a over every input and A's aux; u := β·u + α·v.
    let t = Instant::now();
    let mut u = vec![Scalar::ZERO; nvars];
    evaluate_into(&circuit, 0, ni, &lagrange, &mut u);
    circuit.release_matrix(0);
    let input_rows = lagrange.range(constraints, ni);
    for (ui, l) in u[..ni].iter_mut().zip(&input_rows) {
        *ui += l;
    }
    timings.evaluate += t.elapsed();
    let t = Instant::now();
    let a_vars = (0..ni).chain(a_aux.iter_ones().map(|i| ni + i));
    sections.g1(layout.a, n_a, gather(&u, a_vars))?;
    timings.g1 += t.elapsed();
    let t = Instant::now();
    u.par_iter_mut().for_each(|x| *x *= toxic.beta);
    for (i, av) in dense_vars(b_in, b_aux, ni).zip(&alpha_v) {
        u[i] += av;
    }
    drop(alpha_v);

    // 4. C: w added; ic = (β·u + α·v + w)/γ for the inputs, l = …/δ for the aux.
    evaluate_into(&circuit, 2, ni, &lagrange, &mut u);
    drop(circuit);
    let ic: Vec<Scalar> = u[..ni].iter().map(|x| *x * gamma_inv).collect();
    u[ni..].par_iter_mut().for_each(|x| *x *= delta_inv);
    if u[ni..].par_iter().any(|x| bool::from(x.is_zero())) {
        return Err(SynthesisError::UnconstrainedVariable.into());
    }
    timings.evaluate += t.elapsed();
    let t = Instant::now();
    sections.g1(layout.l, naux, |start, chunk| {
        chunk.copy_from_slice(&u[ni + start..ni + start + chunk.len()]);
        Ok(())
    })?;
    drop(u);
    let g1 = G1Projective::generator();
    let vk = toxic.verifying_key(ic.par_iter().map(|s| (g1 * s).to_affine()).collect());
    let mut header = Vec::new();
    write_vk_to(&mut header, &vk).map_err(io)?;
    out.put(0, header).map_err(io)?;
    timings.g1 += t.elapsed();
    out.finish(path).map_err(io)?;
    timings.total = started.elapsed();
    Ok(StreamedSetup {
        shape,
        timings,
        vk,
        bytes: layout.end,
    })
}

/// The Lagrange basis at τ over the domain `ω`: `L_j(τ) = c·ω^j/(τ − ω^j)`, with
/// `c = Z(τ)/n`.
struct Lagrange {
    tau: Scalar,
    omega: Scalar,
    c: Scalar,
}

impl Lagrange {
    /// `L_j(τ)` for `j` in `start..start + len`, in parallel.
    fn range(&self, start: usize, len: usize) -> Vec<Scalar> {
        let mut out = vec![Scalar::ZERO; len];
        out.par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(k, chunk)| {
                let mut wj = self.omega.pow_vartime([(start + k * CHUNK) as u64]);
                let mut powers = Vec::with_capacity(chunk.len());
                for o in chunk.iter_mut() {
                    powers.push(wj);
                    *o = self.tau - wj;
                    wj *= self.omega;
                }
                batch_invert(chunk);
                for (o, p) in chunk.iter_mut().zip(powers) {
                    *o *= p * self.c;
                }
            });
        out
    }
}

/// Adds matrix `which`'s QAP evaluations at τ into `acc` (inputs first, then aux): for every
/// term, `L_row(τ)·coeff`. The next block's Lagrange coefficients are computed on the pool
/// while this block's terms are added on this thread.
fn evaluate_into(
    circuit: &CompiledCircuit,
    which: usize,
    ni: usize,
    lagrange: &Lagrange,
    acc: &mut [Scalar],
) {
    let m = circuit.matrix(which);
    let table = circuit.coeff_table();
    let rows = m.row_start.len().saturating_sub(1);
    let mut next = lagrange.range(0, ROW_BLOCK.min(rows));
    let mut start = 0;
    while start < rows {
        let len = ROW_BLOCK.min(rows - start);
        let block = std::mem::take(&mut next);
        let following = start + len;
        let add = |acc: &mut [Scalar]| {
            for (r, l) in block.iter().enumerate() {
                let row = start + r;
                let terms = m.row_start[row] as usize..m.row_start[row + 1] as usize;
                for (&col, &k) in m.cols[terms.clone()].iter().zip(&m.coeffs[terms]) {
                    let i = if col & AUX != 0 {
                        ni + (col & !AUX) as usize
                    } else {
                        col as usize
                    };
                    match k {
                        COEFF_ONE => acc[i] += l,
                        COEFF_MINUS_ONE => acc[i] -= l,
                        k => acc[i] += *l * table[k as usize],
                    }
                }
            }
        };
        let ((), computed) = rayon::join(
            || add(acc),
            || {
                (following < rows)
                    .then(|| lagrange.range(following, ROW_BLOCK.min(rows - following)))
            },
        );
        next = computed.unwrap_or_default();
        start = following;
    }
}

/// Indices (inputs first, then `ni +` aux) of the variables set in the two densities.
fn dense_vars<'a>(
    inputs: &'a Density,
    aux: &'a Density,
    ni: usize,
) -> impl Iterator<Item = usize> + 'a {
    inputs
        .iter_ones()
        .chain(aux.iter_ones().map(move |i| ni + i))
}

/// The scalars of a query: batch by batch, `values` at the next indices of `vars`, refusing a
/// zero (a dense variable whose evaluation is zero would need the point at infinity, which a
/// `.params` file cannot hold).
fn gather<'a>(
    values: &'a [Scalar],
    mut vars: impl Iterator<Item = usize> + 'a,
) -> impl FnMut(usize, &mut [Scalar]) -> Result<(), Error> + 'a {
    move |_, out| {
        for o in out.iter_mut() {
            let i = vars
                .next()
                .ok_or_else(|| Error::Points("fewer variables than points".into()))?;
            *o = values[i];
        }
        if out.par_iter().any(|x| bool::from(x.is_zero())) {
            return Err(SynthesisError::UnexpectedIdentity.into());
        }
        Ok(())
    }
}

/// Writes sections of points: scalars made batch by batch, points made, written in order.
struct Sections<'a> {
    out: &'a Output,
    points: &'a dyn PointMaker,
    io: &'a dyn Fn(std::io::Error) -> Error,
}

impl Sections<'_> {
    fn g1(
        &self,
        offset: u64,
        n: usize,
        scalars: impl FnMut(usize, &mut [Scalar]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.section(offset, n, G1_BYTES, scalars, |s, o| self.points.g1(s, o))
    }

    fn g2(
        &self,
        offset: u64,
        n: usize,
        scalars: impl FnMut(usize, &mut [Scalar]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.section(offset, n, G2_BYTES, scalars, |s, o| self.points.g2(s, o))
    }

    fn section(
        &self,
        offset: u64,
        n: usize,
        size: usize,
        mut scalars: impl FnMut(usize, &mut [Scalar]) -> Result<(), Error>,
        make: impl Fn(&[Scalar], &mut [u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let count =
            u32::try_from(n).map_err(|_| Error::Points(format!("a section of {n} points")))?;
        self.out
            .put(offset, count.to_be_bytes().to_vec())
            .map_err(self.io)?;
        let batch = self.points.batch().min(BATCH_BYTES / size).max(1);
        let mut s = vec![Scalar::ZERO; batch.min(n)];
        let mut start = 0;
        while start < n {
            let len = batch.min(n - start);
            scalars(start, &mut s[..len])?;
            let mut bytes = vec![0u8; len * size];
            make(&s[..len], &mut bytes)?;
            self.out
                .put(offset + 4 + (start * size) as u64, bytes)
                .map_err(self.io)?;
            start += len;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Output;

    /// A writer that fails (`/dev/full`: no space left) reports its own error, the cause an
    /// operator can act on, from the next `put` or from `finish`, not a closed channel.
    #[test]
    fn a_full_disk_is_reported_as_such_not_as_a_stopped_writer() {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let dir = tempfile::tempdir().unwrap();
        let out = Output::start(full, dir.path().join("never.tmp")).unwrap();
        let mut error = None;
        for i in 0..64u64 {
            if let Err(e) = out.put(i << 20, vec![7u8; 1 << 20]) {
                error = Some(e);
                break;
            }
        }
        let e = match error {
            Some(e) => e,
            None => out
                .finish(&dir.path().join("never"))
                .expect_err("writing to /dev/full succeeded"),
        };
        assert_eq!(e.kind(), std::io::ErrorKind::StorageFull, "{e}");
        assert!(e.to_string().contains("offset"), "{e}");
    }
}
