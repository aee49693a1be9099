//! Filling a resident SRS copy from the parameter file's bytes as they are
//! ([`ResidentUpload::put_wire`](cuzk_groth16::ResidentUpload::put_wire)): each window is
//! copied into one of two page-locked staging slots (`cuda/srs_wire.cuh`), then to its place in
//! VRAM and decoded there, while the host reads and copies the next into the other slot. The
//! host never decodes a point. A point the device refuses is reported when its slot is next
//! waited for (the next window but one, or the end), with the reason the host's decoder gives
//! for the same bytes, still in the slot.
#![allow(unsafe_code)]

use crate::ffi;
use cuzk_groth16::params::{WireSection, WireWindow, WIRE_UPLOAD_WINDOWS};
use cuzk_groth16::ProveError;
use rayon::prelude::*;

const SLOTS: usize = 2;
const _: () = assert!(SLOTS as u64 <= WIRE_UPLOAD_WINDOWS);

/// Bytes copied into a slot per task.
const COPY_PIECE: usize = 1 << 20;

/// What a slot's last window was, to name a point it refused.
#[derive(Clone, Copy)]
struct InSlot {
    section: WireSection,
    start: usize,
    offset: u64,
    len: usize,
}

/// Two page-locked staging slots for one SRS copy, and what each holds.
pub(super) struct WireStaging {
    filler: *mut ffi::SrsFillerHandle,
    slots: [*mut u8; SLOTS],
    slot_bytes: usize,
    in_slot: [Option<InSlot>; SLOTS],
    next: usize,
}

// SAFETY: the filler and its slots are used only by the thread holding the upload; the C++
// side selects the device on every call.
unsafe impl Send for WireStaging {}

impl WireStaging {
    /// Staging of `slot_bytes` a slot for the copy `srs` (which must outlive it).
    pub(super) fn new(srs: *mut ffi::SrsHandle, slot_bytes: usize) -> Result<Self, ProveError> {
        let mut filler = std::ptr::null_mut();
        let mut slots = [std::ptr::null_mut(); SLOTS];
        // SAFETY: `srs` is a live copy; `slots` has room for the two slot addresses.
        let err = unsafe {
            ffi::cuzk_srs_filler_create(srs, slot_bytes, slots.as_mut_ptr(), &mut filler)
        };
        ffi::check(err, "SRS staging slots").map_err(ProveError::Device)?;
        Ok(WireStaging {
            filler,
            slots,
            slot_bytes,
            in_slot: [None; SLOTS],
            next: 0,
        })
    }

    /// Bytes one slot holds.
    pub(super) fn slot_bytes(&self) -> usize {
        self.slot_bytes
    }

    /// Copies `w` into the next slot (once its last window is done) and starts its upload and
    /// decoding. A point refused in that slot's last window is the error.
    pub(super) fn put(&mut self, w: &WireWindow<'_>) -> Result<(), ProveError> {
        if w.bytes.len() > self.slot_bytes {
            return Err(ProveError::Device(format!(
                "SRS window of {} bytes is larger than its staging slot ({} bytes)",
                w.bytes.len(),
                self.slot_bytes
            )));
        }
        let k = self.next % SLOTS;
        self.settle(k)?;
        // SAFETY: slot k holds `slot_bytes` page-locked bytes, and the device is done with it
        // (settled above).
        let slot = unsafe { std::slice::from_raw_parts_mut(self.slots[k], w.bytes.len()) };
        slot.par_chunks_mut(COPY_PIECE)
            .zip(w.bytes.par_chunks(COPY_PIECE))
            .for_each(|(d, s)| d.copy_from_slice(s));
        self.in_slot[k] = Some(InSlot {
            section: w.section,
            start: w.start,
            offset: w.offset,
            len: w.bytes.len(),
        });
        self.next += 1;
        // SAFETY: a live filler; the C++ side checks the section, bounds and slot size.
        let err = unsafe {
            ffi::cuzk_srs_filler_submit(
                self.filler,
                k as i32,
                w.section.index() as i32,
                w.start,
                w.points(),
            )
        };
        ffi::check(err, "SRS window upload").map_err(ProveError::Device)
    }

    /// Waits for every window, oldest first: the first point refused is the error.
    pub(super) fn drain(&mut self) -> Result<(), ProveError> {
        for j in 0..SLOTS {
            self.settle((self.next + j) % SLOTS)?;
        }
        Ok(())
    }

    /// Waits for slot `k`'s last window; a point it refused is named from its bytes.
    fn settle(&mut self, k: usize) -> Result<(), ProveError> {
        let mut first_bad = u64::MAX;
        // SAFETY: a live filler, a slot index below SLOTS.
        let err = unsafe { ffi::cuzk_srs_filler_wait(self.filler, k as i32, &mut first_bad) };
        ffi::check(err, "SRS window decoding").map_err(ProveError::Device)?;
        let Some(was) = self.in_slot[k].take() else {
            return Ok(());
        };
        if first_bad == u64::MAX {
            return Ok(());
        }
        // SAFETY: the slot still holds the window's bytes (nothing refills a slot before it
        // is settled), and the device is done with them.
        let bytes = unsafe { std::slice::from_raw_parts(self.slots[k], was.len) };
        let w = WireWindow {
            section: was.section,
            start: was.start,
            offset: was.offset,
            bytes,
            check_subgroup: false,
        };
        Err(ProveError::Params(w.bad_point(first_bad as usize)))
    }
}

impl Drop for WireStaging {
    fn drop(&mut self) {
        // SAFETY: the filler came from cuzk_srs_filler_create and is dropped once; it waits
        // for its stream before freeing the slots.
        unsafe { ffi::cuzk_srs_filler_destroy(self.filler) };
    }
}
