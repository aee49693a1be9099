//! An SRS's points as the file holds them (the `.params` encoding, undecoded), a window at a
//! time, read ahead on a thread of their own ([`Srs::stream_wire`]): for a backend that decodes
//! the points where it keeps them (a GPU copies a window's bytes into VRAM and decodes them
//! there, in place), so the host only reads. Reading window `k + 1` overlaps the backend's
//! work on window `k`; the windows come in file order. [`WireWindow::decode`] decodes one on
//! the host, for a backend that takes decoded points.
use super::read::decode_window;
use super::wire::WirePoint;
use super::{G1Section, PointsWindow, ReadOptions, Srs};
use crate::error::ParamsError;
use crate::read_ahead::{read_ahead, BUFFERS};
use blstrs::{G1Affine, G2Affine};
use rayon::prelude::*;

/// Windows of file bytes [`Srs::stream_wire`] holds at most: one the reader fills, one
/// waiting, one the consumer holds.
pub const WIRE_READ_WINDOWS: u64 = BUFFERS as u64;

/// Windows of host bytes of its own a backend's [`crate::ResidentUpload::put_wire`] may hold
/// at most (its staging for a device copy, or a window of decoded points), by contract: what
/// a load reserves for each backend it streams into.
pub const WIRE_UPLOAD_WINDOWS: u64 = 2;

/// The section of a [`WireWindow`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireSection {
    /// A G1 section.
    G1(G1Section),
    /// The B bases in G2.
    G2,
}

impl WireSection {
    /// The section's name in the file layout (`h`, `l`, `a`, `b_g1`, `b_g2`).
    pub fn name(self) -> &'static str {
        match self {
            WireSection::G1(s) => s.name(),
            WireSection::G2 => "b_g2",
        }
    }

    /// The section's place in the file: 0 `h`, 1 `l`, 2 `a`, 3 `b_g1`, 4 `b_g2`.
    pub fn index(self) -> usize {
        match self {
            WireSection::G1(G1Section::H) => 0,
            WireSection::G1(G1Section::L) => 1,
            WireSection::G1(G1Section::A) => 2,
            WireSection::G1(G1Section::BG1) => 3,
            WireSection::G2 => 4,
        }
    }

    /// The section's points in `counts`.
    pub fn count(self, counts: &super::SrsCounts) -> usize {
        match self {
            WireSection::G1(s) => s.count(counts),
            WireSection::G2 => counts.b_g2,
        }
    }

    /// Points a window of at most `window_bytes` holds (at least one).
    fn per_window(self, window_bytes: usize) -> usize {
        (window_bytes / self.point_bytes()).max(1)
    }

    /// Bytes of one point in the file (96 in G1, 192 in G2), the same as in memory.
    pub fn point_bytes(self) -> usize {
        match self {
            WireSection::G1(_) => G1Affine::SIZE,
            WireSection::G2 => G2Affine::SIZE,
        }
    }

    const ALL: [WireSection; 5] = [
        WireSection::G1(G1Section::H),
        WireSection::G1(G1Section::L),
        WireSection::G1(G1Section::A),
        WireSection::G1(G1Section::BG1),
        WireSection::G2,
    ];
}

/// Points `start..start + points()` of `section`, as the file encodes them (uncompressed
/// affine, big-endian coordinates, flag bits in the first byte; G2 as x.c1 ‖ x.c0 ‖ y.c1 ‖
/// y.c0), found at byte `offset` of the file. Not yet decoded: nothing about them is checked.
#[derive(Clone, Copy, Debug)]
pub struct WireWindow<'a> {
    /// The section.
    pub section: WireSection,
    /// Index of the first point in the section.
    pub start: usize,
    /// Byte offset of the first point in the file.
    pub offset: u64,
    /// The points' bytes (whole points).
    pub bytes: &'a [u8],
    /// Whether the reader asked for the subgroup check too ([`ReadOptions::check_points`]);
    /// every decoder checks that a point is on the curve and not the point at infinity.
    pub check_subgroup: bool,
}

impl WireWindow<'_> {
    /// Points in the window.
    pub fn points(&self) -> usize {
        self.bytes.len() / self.section.point_bytes()
    }

    /// Decodes the window on the host (in parallel) and hands the points to `f`, as
    /// [`Srs::stream_points`] would have: a bad point is [`ParamsError::BadPoint`] at its index
    /// in the section and its offset in the file, and `f` is not called.
    pub fn decode<R>(&self, f: impl FnOnce(PointsWindow<'_>) -> R) -> Result<R, ParamsError> {
        match self.section {
            WireSection::G1(section) => {
                let mut out: Vec<G1Affine> = Vec::new();
                self.decoded(&mut out)?;
                Ok(f(PointsWindow::G1 {
                    section,
                    start: self.start,
                    points: &out,
                }))
            }
            WireSection::G2 => {
                let mut out: Vec<G2Affine> = Vec::new();
                self.decoded(&mut out)?;
                Ok(f(PointsWindow::G2 {
                    start: self.start,
                    points: &out,
                }))
            }
        }
    }

    fn decoded<P: WirePoint>(&self, out: &mut Vec<P>) -> Result<(), ParamsError> {
        match decode_window(self.bytes, self.check_subgroup, out) {
            Some((i, reason)) => Err(self.point_error(i, reason)),
            None => Ok(()),
        }
    }

    /// The error for point `i` of the window, which a backend's decoder refused: why the
    /// host's decoder refuses it too (the same reason [`WireWindow::decode`] gives), or, for
    /// a point the host would have taken, that the backend's decoder did not.
    pub fn bad_point(&self, i: usize) -> ParamsError {
        let size = self.section.point_bytes();
        let bytes = self.bytes.get(i * size..(i + 1) * size).unwrap_or(&[]);
        // The host's decoder on that one point: its reason, if it refuses it too.
        let reason = match self.section {
            WireSection::G1(_) => {
                decode_window::<G1Affine>(bytes, self.check_subgroup, &mut Vec::new())
            }
            WireSection::G2 => {
                decode_window::<G2Affine>(bytes, self.check_subgroup, &mut Vec::new())
            }
        };
        self.point_error(
            i,
            reason.map_or("refused by the device's decoder", |(_, why)| why),
        )
    }

    fn point_error(&self, i: usize, reason: &'static str) -> ParamsError {
        ParamsError::BadPoint {
            section: self.section.name(),
            index: self.start + i,
            offset: self.offset + (i * self.section.point_bytes()) as u64,
            reason,
        }
    }
}

/// One window of the plan: where its bytes are.
#[derive(Clone, Copy)]
struct Planned {
    section: WireSection,
    start: usize,
    offset: u64,
    len: usize,
}

/// The windows of every section, in file order, each at most `window_bytes` (rounded down to
/// whole points, at least one).
fn plan(offsets: &[u64; 5], counts: &super::SrsCounts, window_bytes: usize) -> Vec<Planned> {
    let mut out = Vec::new();
    for section in WireSection::ALL {
        let count = section.count(counts);
        let size = section.point_bytes();
        let per = section.per_window(window_bytes);
        let mut start = 0;
        while start < count {
            let n = per.min(count - start);
            out.push(Planned {
                section,
                start,
                offset: offsets[section.index()] + (start * size) as u64,
                len: n * size,
            });
            start += n;
        }
    }
    out
}

/// The largest window [`Srs::stream_wire`] (and [`Srs::stream_points`]) hands over with
/// `window_bytes`: a whole section when it is smaller than a window.
fn largest_window(counts: &super::SrsCounts, window_bytes: usize) -> u64 {
    WireSection::ALL
        .into_iter()
        .map(|s| (s.count(counts).min(s.per_window(window_bytes)) * s.point_bytes()) as u64)
        .max()
        .unwrap_or(0)
}

impl Srs {
    /// Hands every point to `f` as the file encodes it, a window of at most
    /// [`ReadOptions::window_bytes`] at a time, in file order (h, l, a, b_g1, then b_g2): for
    /// parameters whose points are in their file ([`super::read_params_header`]), read ahead
    /// on a thread of their own while `f` works ([`WIRE_READ_WINDOWS`] windows of bytes at
    /// most); for parameters with a host copy, encoded from it. Nothing is decoded or checked
    /// here: `f` decodes ([`WireWindow::decode`], or on a device). An I/O error or an error
    /// from `f` ends it; the reader stops with it.
    pub fn stream_wire<E: From<ParamsError>>(
        &self,
        opts: &ReadOptions,
        mut f: impl FnMut(WireWindow<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let check_subgroup = opts.check_points;
        if !self.released {
            let offsets = self.origin.as_ref().map_or([0; 5], |o| o.offsets);
            let mut buf = Vec::new();
            for w in plan(&offsets, &self.counts, opts.window_bytes) {
                self.encode_window(&w, &mut buf);
                f(WireWindow {
                    section: w.section,
                    start: w.start,
                    offset: w.offset,
                    bytes: &buf,
                    check_subgroup,
                })?;
            }
            return Ok(());
        }
        let Some(origin) = self.origin.as_ref() else {
            return Err(ParamsError::BadPoint {
                section: "h",
                index: 0,
                offset: 0,
                reason: "no host copy and no file",
            }
            .into());
        };
        let windows = plan(&origin.offsets, &self.counts, opts.window_bytes);
        let extents: Vec<(u64, usize)> = windows.iter().map(|w| (w.offset, w.len)).collect();
        let io_err = |source| {
            E::from(ParamsError::Io {
                path: origin.path.clone(),
                source,
            })
        };
        read_ahead(&origin.file, &extents, io_err, |k, bytes| {
            let w = &windows[k];
            f(WireWindow {
                section: w.section,
                start: w.start,
                offset: w.offset,
                bytes,
                check_subgroup,
            })
        })
    }

    /// Bytes of the largest window [`Srs::stream_wire`] (and [`Srs::stream_points`]) hands
    /// over with `opts`.
    pub fn wire_window_bytes(&self, opts: &ReadOptions) -> u64 {
        largest_window(&self.counts, opts.window_bytes)
    }

    /// Host bytes a load that streams this SRS's points from its file into `uploads`
    /// backends holds at most: [`WIRE_READ_WINDOWS`] windows read ahead, and
    /// [`WIRE_UPLOAD_WINDOWS`] of each backend's own. 0 when the host copy is held.
    pub fn stream_wire_host_bytes(&self, opts: &ReadOptions, uploads: usize) -> u64 {
        if !self.released {
            return 0;
        }
        (WIRE_READ_WINDOWS + WIRE_UPLOAD_WINDOWS * uploads as u64) * self.wire_window_bytes(opts)
    }

    /// Encodes the host copy's points of window `w` into `buf`.
    fn encode_window(&self, w: &Planned, buf: &mut Vec<u8>) {
        buf.clear();
        buf.resize(w.len, 0);
        let n = w.len / w.section.point_bytes();
        let (g1, size): (Option<&[G1Affine]>, usize) = match w.section {
            WireSection::G1(G1Section::H) => (Some(&self.h), 96),
            WireSection::G1(G1Section::L) => (Some(&self.l), 96),
            WireSection::G1(G1Section::A) => (Some(&self.a), 96),
            WireSection::G1(G1Section::BG1) => (Some(&self.b_g1), 96),
            WireSection::G2 => (None, 192),
        };
        match g1 {
            Some(points) => buf
                .par_chunks_exact_mut(size)
                .zip(&points[w.start..w.start + n])
                .for_each(|(out, p)| p.encode(out)),
            None => buf
                .par_chunks_exact_mut(size)
                .zip(&self.b_g2[w.start..w.start + n])
                .for_each(|(out, p)| p.encode(out)),
        }
    }
}
