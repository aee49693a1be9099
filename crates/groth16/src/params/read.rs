//! Reading `.params` and `.vk` files: windowed parallel reads, parallel decode, typed errors.
use super::wire::WirePoint;
use super::{FileOrigin, G1Section, PointsWindow, Srs, SrsCounts, VerifyingKey};
use crate::error::ParamsError;
use blstrs::{G1Affine, G2Affine};
use rayon::prelude::*;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How to read a parameter file.
#[derive(Clone, Debug)]
pub struct ReadOptions {
    /// Check that every point is on the curve and in the prime-order subgroup (default
    /// `true`). Turn off only for files you trust: the subgroup check is most of the cost.
    pub check_points: bool,
    /// Bytes read at a time (default 32 MiB). Each window's buffer is freed once decoded, so
    /// file bytes count in RSS for at most one window beside the decoded points.
    pub window_bytes: usize,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            check_points: true,
            window_bytes: 32 << 20,
        }
    }
}

/// What loading a parameter file cost.
#[derive(Clone, Copy, Debug)]
pub struct LoadStats {
    /// Bytes read (the file's length).
    pub bytes: u64,
    /// Wall-clock time of the whole load.
    pub elapsed: Duration,
}

impl LoadStats {
    /// Throughput in GB/s (10^9 bytes per second).
    pub fn gbps(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs == 0.0 {
            return f64::INFINITY;
        }
        self.bytes as f64 / secs / 1e9
    }
}

/// Opens `path` for reading: the file and its length.
fn open(path: &Path) -> Result<(File, u64), ParamsError> {
    let io_err = |source| ParamsError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io_err)?;
    let len = file.metadata().map_err(io_err)?.len();
    Ok((file, len))
}

/// Reads a `.params` file (verifying key and proving key), a window at a time.
pub fn read_params(path: &Path, opts: &ReadOptions) -> Result<(Srs, LoadStats), ParamsError> {
    let started = Instant::now();
    let (file, len) = open(path)?;
    let src = Source::file(&file, path, len);
    let (mut srs, offsets) = parse_params(&src, opts)?;
    srs.set_origin(origin(file, path, offsets));
    Ok(loaded(srs, len, started))
}

/// Where parameters read from `path` (held open as `file`) have their sections.
fn origin(file: File, path: &Path, offsets: [u64; 5]) -> FileOrigin {
    FileOrigin {
        file,
        path: path.to_path_buf(),
        offsets,
    }
}

/// `srs` with the figures of a load that read `bytes` since `started`.
fn loaded(srs: Srs, bytes: u64, started: Instant) -> (Srs, LoadStats) {
    let elapsed = started.elapsed();
    (srs, LoadStats { bytes, elapsed })
}

/// Reads a `.params` file's verifying key and section counts, and checks that the file holds
/// exactly those sections, without reading a point of them: the parameters come back with
/// no host copy ([`Srs::host_points_released`] is true), their points still in the file.
/// [`Srs::stream_points`] hands them over a window at a time (to fill a device's copy
/// without ever holding them all on the host), and [`Srs::load_host_points`] reads them in.
/// The points are decoded and checked as they are read, so a bad one is reported then.
pub fn read_params_header(
    path: &Path,
    opts: &ReadOptions,
) -> Result<(Srs, LoadStats), ParamsError> {
    let started = Instant::now();
    let (file, len) = open(path)?;
    let src = Source::file(&file, path, len);
    let mut cur = Cursor {
        src: &src,
        pos: 0,
        last_count_offset: 0,
    };
    let vk = cur.vk(opts)?;
    let mut offsets = [0u64; 5];
    offsets[0] = cur.pos + 4;
    let h = cur.skip_section::<G1Affine>("h")?;
    if !(h as u64 + 1).is_power_of_two() {
        return Err(ParamsError::BadCount {
            section: "h",
            offset: cur.last_count_offset,
            count: h as u64,
        });
    }
    offsets[1] = cur.pos + 4;
    let l = cur.skip_section::<G1Affine>("l")?;
    offsets[2] = cur.pos + 4;
    let a = cur.skip_section::<G1Affine>("a")?;
    offsets[3] = cur.pos + 4;
    let b_g1 = cur.skip_section::<G1Affine>("b_g1")?;
    offsets[4] = cur.pos + 4;
    let b_g2 = cur.skip_section::<G2Affine>("b_g2")?;
    cur.finish()?;
    let counts = SrsCounts {
        h,
        l,
        a,
        b_g1,
        b_g2,
    };
    let bytes = cur.pos;
    let srs = Srs::in_file(vk, counts, origin(file, path, offsets));
    Ok(loaded(srs, bytes, started))
}

/// Reads `.params` content already in memory (tests, small files).
pub fn read_params_from_bytes(bytes: &[u8], opts: &ReadOptions) -> Result<Srs, ParamsError> {
    parse_params(&Source::Bytes(bytes), opts).map(|(srs, _)| srs)
}

/// Reads a `.vk` file (the verifying key alone). Points are always checked. Reads only the
/// bytes it needs, so a `.params` file passed by mistake fails fast with
/// [`ParamsError::TrailingBytes`] instead of being read whole.
pub fn read_vk(path: &Path) -> Result<VerifyingKey, ParamsError> {
    let (file, len) = open(path)?;
    parse_vk(&Source::File {
        file: &file,
        path,
        len,
    })
}

/// Reads `.vk` content already in memory. Points are always checked.
pub fn read_vk_from_bytes(bytes: &[u8]) -> Result<VerifyingKey, ParamsError> {
    parse_vk(&Source::Bytes(bytes))
}

fn parse_vk(src: &Source<'_>) -> Result<VerifyingKey, ParamsError> {
    let mut cur = Cursor {
        src,
        pos: 0,
        last_count_offset: 0,
    };
    let vk = cur.vk(&ReadOptions::default())?;
    cur.finish()?;
    Ok(vk)
}

/// The parameters and the byte offset of each section's first point (h, l, a, b_g1, b_g2).
fn parse_params(src: &Source<'_>, opts: &ReadOptions) -> Result<(Srs, [u64; 5]), ParamsError> {
    let mut cur = Cursor {
        src,
        pos: 0,
        last_count_offset: 0,
    };
    let vk = cur.vk(opts)?;
    // Each section's points follow its 4-byte count.
    let mut offsets = [0u64; 5];
    offsets[0] = cur.pos + 4;
    let h = cur.section::<G1Affine>("h", opts)?;
    if !(h.len() as u64 + 1).is_power_of_two() {
        return Err(ParamsError::BadCount {
            section: "h",
            offset: cur.last_count_offset,
            count: h.len() as u64,
        });
    }
    offsets[1] = cur.pos + 4;
    let l = cur.section::<G1Affine>("l", opts)?;
    offsets[2] = cur.pos + 4;
    let a = cur.section::<G1Affine>("a", opts)?;
    offsets[3] = cur.pos + 4;
    let b_g1 = cur.section::<G1Affine>("b_g1", opts)?;
    offsets[4] = cur.pos + 4;
    let b_g2 = cur.section::<G2Affine>("b_g2", opts)?;
    cur.finish()?;
    Ok((Srs::new(vk, h, l, a, b_g1, b_g2), offsets))
}

/// The five sections of parameters whose points are still in their file, read in.
pub(super) struct Sections {
    pub(super) h: Vec<G1Affine>,
    pub(super) l: Vec<G1Affine>,
    pub(super) a: Vec<G1Affine>,
    pub(super) b_g1: Vec<G1Affine>,
    pub(super) b_g2: Vec<G2Affine>,
}

/// The `count` points of `section` starting at byte `first` (after its 4-byte count), read a
/// window at a time and decoded in parallel; an allocation that fails is a bad count.
fn read_section<P: WirePoint>(
    src: &Source<'_>,
    section: &'static str,
    first: u64,
    count: usize,
    opts: &ReadOptions,
) -> Result<Vec<P>, ParamsError> {
    let mut out = Vec::new();
    out.try_reserve_exact(count)
        .map_err(|_| ParamsError::BadCount {
            section,
            offset: first.saturating_sub(4),
            count: count as u64,
        })?;
    read_points::<P, ParamsError>(src, section, first, count, opts, &mut out, true, |_, _| {
        Ok(())
    })?;
    Ok(out)
}

/// Reads every point of the sections `counts` describes from `origin`'s file, a window at a
/// time, decoded and checked as [`read_params`] does.
pub(super) fn read_sections(
    origin: &FileOrigin,
    counts: &SrsCounts,
    opts: &ReadOptions,
) -> Result<Sections, ParamsError> {
    let src = origin_source(origin)?;
    let o = &origin.offsets;
    Ok(Sections {
        h: read_section(&src, "h", o[0], counts.h, opts)?,
        l: read_section(&src, "l", o[1], counts.l, opts)?,
        a: read_section(&src, "a", o[2], counts.a, opts)?,
        b_g1: read_section(&src, "b_g1", o[3], counts.b_g1, opts)?,
        b_g2: read_section(&src, "b_g2", o[4], counts.b_g2, opts)?,
    })
}

/// Hands the points of the sections `counts` describes, read from `origin`'s file a window at
/// a time, to `f` (one window of decoded points in memory at a time).
pub(super) fn stream_sections<E: From<ParamsError>>(
    origin: &FileOrigin,
    counts: &SrsCounts,
    opts: &ReadOptions,
    f: &mut impl FnMut(PointsWindow<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let src = origin_source(origin)?;
    let o = &origin.offsets;
    let mut g1 = Vec::new();
    for (k, section) in [G1Section::H, G1Section::L, G1Section::A, G1Section::BG1]
        .into_iter()
        .enumerate()
    {
        let count = section.count(counts);
        read_points(
            &src,
            section.name(),
            o[k],
            count,
            opts,
            &mut g1,
            false,
            |start, points| {
                f(PointsWindow::G1 {
                    section,
                    start,
                    points,
                })
            },
        )?;
    }
    drop(g1);
    let mut g2 = Vec::new();
    read_points(
        &src,
        "b_g2",
        o[4],
        counts.b_g2,
        opts,
        &mut g2,
        false,
        |start, points| f(PointsWindow::G2 { start, points }),
    )
}

/// `origin`'s file as a [`Source`] (its length as it is now).
fn origin_source(origin: &FileOrigin) -> Result<Source<'_>, ParamsError> {
    let len = origin
        .file
        .metadata()
        .map_err(|source| ParamsError::Io {
            path: origin.path.clone(),
            source,
        })?
        .len();
    Ok(Source::File {
        file: &origin.file,
        path: &origin.path,
        len,
    })
}

/// Where the bytes come from.
enum Source<'a> {
    /// Already in memory.
    Bytes(&'a [u8]),
    /// A file, read a window at a time.
    File {
        file: &'a File,
        path: &'a Path,
        len: u64,
    },
}

impl<'a> Source<'a> {
    /// The file `file` at `path`, `len` bytes long.
    fn file(file: &'a File, path: &'a Path, len: u64) -> Source<'a> {
        Source::File { file, path, len }
    }

    fn len(&self) -> u64 {
        match self {
            Source::Bytes(b) => b.len() as u64,
            Source::File { len, .. } => *len,
        }
    }

    /// Runs `f` on bytes `offset..offset + len`, which the caller has bounds-checked.
    fn with_window<R>(
        &self,
        offset: u64,
        len: usize,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Result<R, ParamsError> {
        match self {
            Source::Bytes(b) => {
                let start = offset as usize;
                Ok(f(&b[start..start + len]))
            }
            Source::File { file, path, .. } => {
                if len == 0 {
                    return Ok(f(&[]));
                }
                let buf = read_window(file, offset, len).map_err(|source| ParamsError::Io {
                    path: PathBuf::from(path),
                    source,
                })?;
                Ok(f(&buf))
            }
        }
    }
}

/// Decodes `window` (whole points) in parallel, appending the points to `out`: the index in
/// the window of the first bad point (or point at infinity, which no section may hold) and
/// why, if there is one.
pub(super) fn decode_window<P: WirePoint>(
    window: &[u8],
    check: bool,
    out: &mut Vec<P>,
) -> Option<(usize, &'static str)> {
    let first_bad = AtomicUsize::new(usize::MAX);
    out.par_extend(window.par_chunks_exact(P::SIZE).enumerate().map(|(i, b)| {
        match P::decode(b, check) {
            Ok(p) if !p.is_infinity() => p,
            _ => {
                first_bad.fetch_min(i, Ordering::Relaxed);
                P::infinity()
            }
        }
    }));
    let i = first_bad.into_inner();
    (i != usize::MAX).then(|| {
        let b = &window[i * P::SIZE..(i + 1) * P::SIZE];
        let reason = match P::decode(b, check) {
            Ok(_) => "point at infinity",
            Err(reason) => reason,
        };
        (i, reason)
    })
}

/// Reads the `count` points of `section` that start at byte `first` of `src`, a window of
/// [`ReadOptions::window_bytes`] at a time, decoding each window into `out` and handing its
/// points to `f` with the section index of the first. With `keep`, `out` gathers the whole
/// section; without, it holds one window at a time. A bad point ends it with
/// [`ParamsError::BadPoint`] at its section index and byte offset, before `f` sees its window.
#[allow(clippy::too_many_arguments)]
fn read_points<P: WirePoint, E: From<ParamsError>>(
    src: &Source<'_>,
    section: &'static str,
    first: u64,
    count: usize,
    opts: &ReadOptions,
    out: &mut Vec<P>,
    keep: bool,
    mut f: impl FnMut(usize, &[P]) -> Result<(), E>,
) -> Result<(), E> {
    let per_window = (opts.window_bytes / P::SIZE).max(1);
    let mut start = 0usize;
    while start < count {
        let n = per_window.min(count - start);
        let offset = first + (start * P::SIZE) as u64;
        if !keep {
            out.clear();
        }
        let before = out.len();
        let bad = src.with_window(offset, n * P::SIZE, |window| {
            decode_window(window, opts.check_points, out)
        })?;
        if let Some((i, reason)) = bad {
            return Err(ParamsError::BadPoint {
                section,
                index: start + i,
                offset: offset + (i * P::SIZE) as u64,
                reason,
            }
            .into());
        }
        f(start, &out[before..])?;
        start += n;
    }
    Ok(())
}

/// Reads `len` bytes of `file` from `offset` into a buffer, in pieces read in parallel (a
/// positioned read each, so no shared file offset). Plain reads, no mapping: a file that
/// changes or shrinks underneath only makes the reader decode garbage (a typed bad point or
/// count) or fail with an I/O error, never fault.
fn read_window(file: &File, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    crate::read_ahead::read_into(file, offset, &mut buf)?;
    Ok(buf)
}

/// A read position in a [`Source`], with bounds-checked reads.
struct Cursor<'s, 'a> {
    src: &'s Source<'a>,
    pos: u64,
    /// Offset of the most recent section count (for errors found after the section is read).
    last_count_offset: u64,
}

impl Cursor<'_, '_> {
    fn need(&self, section: &'static str, needed: u64) -> Result<(), ParamsError> {
        let len = self.src.len();
        if len.saturating_sub(self.pos) < needed {
            return Err(ParamsError::Truncated {
                section,
                offset: self.pos,
                needed,
                len,
            });
        }
        Ok(())
    }

    fn u32_be(&mut self, section: &'static str) -> Result<u32, ParamsError> {
        self.need(section, 4)?;
        let v = self.src.with_window(self.pos, 4, |b| {
            u32::from_be_bytes([b[0], b[1], b[2], b[3]])
        })?;
        self.pos += 4;
        Ok(v)
    }

    /// One point that may be the point at infinity (the fixed verifying-key points).
    fn point<P: WirePoint>(
        &mut self,
        section: &'static str,
        opts: &ReadOptions,
    ) -> Result<P, ParamsError> {
        self.need(section, P::SIZE as u64)?;
        let offset = self.pos;
        let p = self
            .src
            .with_window(offset, P::SIZE, |b| P::decode(b, opts.check_points))?
            .map_err(|reason| ParamsError::BadPoint {
                section,
                index: 0,
                offset,
                reason,
            })?;
        self.pos += P::SIZE as u64;
        Ok(p)
    }

    fn vk(&mut self, opts: &ReadOptions) -> Result<VerifyingKey, ParamsError> {
        let alpha_g1 = self.point::<G1Affine>("vk.alpha_g1", opts)?;
        let beta_g1 = self.point::<G1Affine>("vk.beta_g1", opts)?;
        let beta_g2 = self.point::<G2Affine>("vk.beta_g2", opts)?;
        let gamma_g2 = self.point::<G2Affine>("vk.gamma_g2", opts)?;
        let delta_g1 = self.point::<G1Affine>("vk.delta_g1", opts)?;
        let delta_g2 = self.point::<G2Affine>("vk.delta_g2", opts)?;
        let ic = self.section::<G1Affine>("vk.ic", opts)?;
        if ic.is_empty() {
            // `ic[0]` belongs to the ONE input, which every circuit has.
            return Err(ParamsError::BadCount {
                section: "vk.ic",
                offset: self.last_count_offset,
                count: 0,
            });
        }
        Ok(VerifyingKey {
            alpha_g1,
            beta_g1,
            beta_g2,
            gamma_g2,
            delta_g1,
            delta_g2,
            ic,
        })
    }

    /// A section's u32 BE count, checked against the file: the count and the byte offset of
    /// the section's first point.
    fn section_count<P: WirePoint>(
        &mut self,
        section: &'static str,
    ) -> Result<(usize, u64), ParamsError> {
        let count_offset = self.pos;
        self.last_count_offset = count_offset;
        let count = self.u32_be(section)? as u64;
        let bytes = count * P::SIZE as u64;
        if bytes > self.src.len() {
            // More than the whole file could hold: the count itself is corrupt.
            return Err(ParamsError::BadCount {
                section,
                offset: count_offset,
                count,
            });
        }
        self.need(section, bytes)?;
        Ok((count as usize, self.pos))
    }

    /// A section's count, its points skipped (read later, a window at a time, from the
    /// file): the count.
    fn skip_section<P: WirePoint>(&mut self, section: &'static str) -> Result<usize, ParamsError> {
        let (count, _) = self.section_count::<P>(section)?;
        self.pos += (count * P::SIZE) as u64;
        Ok(count)
    }

    /// A u32 BE count and that many points, none at infinity, decoded in parallel a window
    /// at a time.
    fn section<P: WirePoint>(
        &mut self,
        section: &'static str,
        opts: &ReadOptions,
    ) -> Result<Vec<P>, ParamsError> {
        let (count, first) = self.section_count::<P>(section)?;
        let out = read_section(self.src, section, first, count, opts)?;
        self.pos = first + (count * P::SIZE) as u64;
        Ok(out)
    }

    /// Fails if bytes remain.
    fn finish(&self) -> Result<(), ParamsError> {
        let len = self.src.len();
        if len > self.pos {
            return Err(ParamsError::TrailingBytes {
                offset: self.pos,
                extra: len - self.pos,
            });
        }
        Ok(())
    }
}
