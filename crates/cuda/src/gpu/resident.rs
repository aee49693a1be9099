//! Making an SRS resident from its parameter file, a window at a time
//! ([`ProverBackend::begin_resident`](cuzk_groth16::ProverBackend::begin_resident)): its VRAM
//! copy is reserved and allocated first, each window is copied into place (decoded points,
//! or the file's bytes decoded on the device: `wire.rs`), and the finished copy is pinned for
//! as long as the SRS lives. The host never holds more than a window (decoded points) or two
//! (the file's bytes, in page-locked staging). Until it is finished, the copy is marked as
//! uploading in the ledger, so no proof can use it half-filled; dropped unfinished, it is
//! freed.
#![allow(unsafe_code)]

use super::wire::WireStaging;
use super::CudaProver;
use crate::ffi;
use crate::sizes::{srs_bytes, srs_worker_bound};
use crate::vram::{lock, Placement, Reservation, Tier};
use cuzk_groth16::params::{G1Section, PointsWindow, WireWindow};
use cuzk_groth16::{ProveError, ResidentUpload, Srs};
use std::time::Instant;

impl CudaProver {
    /// Room and an allocation for `srs`'s copy on this device, to be filled window by window;
    /// `None` when it does not fit beside one worker context's upper bound and the copies in
    /// use, when streaming is forced, or when the allocation failed.
    pub(super) fn begin_resident_copy<'a>(
        &'a self,
        srs: &'a Srs,
    ) -> Option<Box<dyn ResidentUpload + 'a>> {
        let counts = srs.counts();
        let n = counts.h + 1;
        if counts.h == 0 || !n.is_power_of_two() {
            return None;
        }
        let mem = &self.dev.mem;
        let need_worker = srs_worker_bound(n, srs);
        let res = match mem.place_srs(srs.id(), srs_bytes(srs), need_worker) {
            Placement::Ready(Tier::Streamed) => return None,
            Placement::Ready(Tier::Resident(r)) => {
                // Already here (another path uploaded it): pinning it is all that is left.
                drop(r);
                return crate::srs_state::pin_resident(mem, srs)
                    .then(|| Box::new(AlreadyResident) as Box<dyn ResidentUpload>);
            }
            Placement::Upload(res) => res,
        };
        let mut handle = std::ptr::null_mut();
        let gpu = lock(&self.dev.gpu_lock);
        // SAFETY: `handle` is a valid out-pointer; the lengths are the SRS's own.
        let err = unsafe {
            ffi::cuzk_srs_alloc(
                self.dev.ordinal as i32,
                counts.h,
                counts.l,
                counts.a,
                counts.b_g1,
                counts.b_g2,
                &mut handle,
            )
        };
        drop(gpu);
        if let Err(e) = ffi::check(err, "SRS allocation") {
            mem.upload_abandoned(srs.id(), res);
            tracing::warn!(device = self.dev.ordinal, err = %e, "allocating a resident SRS copy failed; its points stay on the host");
            return None;
        }
        Some(Box::new(Filling {
            prover: self,
            srs,
            handle,
            wire: None,
            res: Some(res),
            started: Instant::now(),
        }))
    }
}

/// A copy that was resident and is pinned already: nothing to copy.
struct AlreadyResident;

impl ResidentUpload for AlreadyResident {
    fn put(&mut self, _window: PointsWindow<'_>) -> Result<(), ProveError> {
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<bool, ProveError> {
        Ok(true)
    }
}

/// A VRAM copy being filled: allocated, reserved, not yet in the ledger's resident map.
struct Filling<'a> {
    prover: &'a CudaProver,
    srs: &'a Srs,
    /// Null once handed to the ledger.
    handle: *mut ffi::SrsHandle,
    /// Staging for windows of the file's bytes (made at the first); dropped before `handle`.
    wire: Option<WireStaging>,
    /// Covers the allocation; `None` once handed to the ledger.
    res: Option<Reservation>,
    started: Instant,
}

// SAFETY: the handle is only used by the one thread holding this upload, and the C++ side
// selects the device on every call.
unsafe impl Send for Filling<'_> {}

impl ResidentUpload for Filling<'_> {
    fn put(&mut self, window: PointsWindow<'_>) -> Result<(), ProveError> {
        let (section, start, src, n) = match window {
            PointsWindow::G1 {
                section,
                start,
                points,
            } => {
                let k = match section {
                    G1Section::H => 0,
                    G1Section::L => 1,
                    G1Section::A => 2,
                    G1Section::BG1 => 3,
                };
                (k, start, points.as_ptr().cast::<u8>(), points.len())
            }
            PointsWindow::G2 { start, points } => {
                (4, start, points.as_ptr().cast::<u8>(), points.len())
            }
        };
        // The copy uses sppark's streams: under the device interlock, one window at a time.
        let gpu = lock(&self.prover.dev.gpu_lock);
        // SAFETY: `handle` is a live copy from cuzk_srs_alloc; `src` points to `n` points of
        // the section's type (G1Affine/G2Affine are blst's 96/192-byte affine points); the C++
        // side checks `start + n` against the section's length.
        let err = unsafe { ffi::cuzk_srs_write(self.handle, section, start, src, n) };
        drop(gpu);
        ffi::check(err, "SRS window upload").map_err(ProveError::Device)
    }

    fn put_wire(&mut self, window: WireWindow<'_>) -> Result<(), ProveError> {
        if window.check_subgroup {
            // The device checks the curve, not the subgroup: the host decodes these.
            return window.decode(|points| self.put(points))?;
        }
        if let Some(s) = self.wire.as_mut() {
            if s.slot_bytes() < window.bytes.len() {
                // Larger than the slots were made for: they finish, larger ones follow.
                s.drain()?;
                self.wire = None;
            }
        }
        let wire = match self.wire.as_mut() {
            Some(s) => s,
            None => self
                .wire
                .insert(WireStaging::new(self.handle, window.bytes.len())?),
        };
        wire.put(&window)
    }

    fn finish(mut self: Box<Self>) -> Result<bool, ProveError> {
        if let Some(mut s) = self.wire.take() {
            s.drain()?;
        }
        let handle = std::mem::replace(&mut self.handle, std::ptr::null_mut());
        let Some(res) = self.res.take() else {
            return Ok(false);
        };
        let dev = &self.prover.dev;
        let bytes = res.bytes();
        let tier = dev
            .mem
            .uploaded(dev.ordinal, self.srs.id(), res, Ok(handle));
        let pinned = crate::srs_state::pin_resident(&dev.mem, self.srs);
        drop(tier);
        tracing::info!(
            device = dev.ordinal,
            srs = self.srs.id(),
            bytes,
            pinned,
            ms = self.started.elapsed().as_millis() as u64,
            "SRS resident in VRAM, filled from its file a window at a time"
        );
        Ok(pinned)
    }
}

impl Drop for Filling<'_> {
    fn drop(&mut self) {
        // The staging's stream writes into the copy: it goes first.
        self.wire = None;
        if !self.handle.is_null() {
            // SAFETY: the handle came from cuzk_srs_alloc and was not handed on.
            unsafe { ffi::cuzk_srs_destroy(self.handle) };
        }
        if let Some(res) = self.res.take() {
            self.prover.dev.mem.upload_abandoned(self.srs.id(), res);
        }
    }
}
