//! Writing `.params` and `.vk` files (for test parameters): buffered, parallel encode, atomic.
use super::wire::WirePoint;
use super::{Srs, VerifyingKey};
use crate::error::ParamsError;
use rayon::prelude::*;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Points encoded per parallel batch before they are written.
const BATCH_BYTES: usize = 16 << 20;

/// Writes `srs` to `path` in the `.params` layout, atomically (temporary file + rename).
pub fn write_params(path: &Path, srs: &Srs) -> Result<(), ParamsError> {
    write_atomic(path, |w| write_params_to(w, srs))
}

/// Writes `vk` to `path` in the `.vk` layout, atomically (temporary file + rename).
pub fn write_vk(path: &Path, vk: &VerifyingKey) -> Result<(), ParamsError> {
    write_atomic(path, |w| write_vk_to(w, vk))
}

/// Writes `srs` in the `.params` layout to any writer.
pub fn write_params_to<W: Write>(mut w: W, srs: &Srs) -> io::Result<()> {
    write_vk_to(&mut w, &srs.vk)?;
    write_section(&mut w, &srs.h)?;
    write_section(&mut w, &srs.l)?;
    write_section(&mut w, &srs.a)?;
    write_section(&mut w, &srs.b_g1)?;
    write_section(&mut w, &srs.b_g2)?;
    w.flush()
}

/// Writes `vk` in the `.vk` layout to any writer.
pub fn write_vk_to<W: Write>(mut w: W, vk: &VerifyingKey) -> io::Result<()> {
    write_point(&mut w, &vk.alpha_g1)?;
    write_point(&mut w, &vk.beta_g1)?;
    write_point(&mut w, &vk.beta_g2)?;
    write_point(&mut w, &vk.gamma_g2)?;
    write_point(&mut w, &vk.delta_g1)?;
    write_point(&mut w, &vk.delta_g2)?;
    write_section(&mut w, &vk.ic)?;
    w.flush()
}

fn write_point<W: Write, P: WirePoint>(w: &mut W, p: &P) -> io::Result<()> {
    let mut buf = [0u8; 192];
    p.encode(&mut buf[..P::SIZE]);
    w.write_all(&buf[..P::SIZE])
}

fn write_section<W: Write, P: WirePoint>(w: &mut W, points: &[P]) -> io::Result<()> {
    let count = u32::try_from(points.len()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "section has more than u32::MAX points",
        )
    })?;
    w.write_all(&count.to_be_bytes())?;
    let per_batch = (BATCH_BYTES / P::SIZE).max(1);
    let mut buf = vec![0u8; per_batch.min(points.len()) * P::SIZE];
    for chunk in points.chunks(per_batch) {
        let out = &mut buf[..chunk.len() * P::SIZE];
        out.par_chunks_exact_mut(P::SIZE)
            .zip(chunk.par_iter())
            .for_each(|(o, p)| p.encode(o));
        w.write_all(out)?;
    }
    Ok(())
}

/// Writes `path` whole or not at all ([`crate::atomic::write_atomic`]).
fn write_atomic(
    path: &Path,
    fill: impl FnOnce(&mut BufWriter<&File>) -> io::Result<()>,
) -> Result<(), ParamsError> {
    crate::atomic::write_atomic(path, 1 << 20, fill).map_err(|source| ParamsError::Io {
        path: path.to_path_buf(),
        source,
    })
}
