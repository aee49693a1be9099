//! Page-locking a streamed SRS's host vectors in place (once per SRS, undone when the SRS is
//! dropped), so its chunks DMA straight from them, and the host-side SRS description the
//! streamed tier hands to the device code.
#![allow(unsafe_code)]

use crate::ffi;
use cuzk_groth16::Srs;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// Page-locked registrations of one SRS's vectors (portable, so any device DMAs from them),
/// made on the SRS's first streamed use and kept in the SRS's `crate::srs_state::SrsState`
/// (its [`Srs::backend_cache`]), which is dropped before the vectors: `Drop` unregisters them
/// before they are freed.
pub(crate) struct HostPins {
    ordinal: i32,
    /// (address, bytes) of H, L, A, B_G1, B_G2 that registered; `None` for those that did not
    /// (empty, or the driver refused: their chunks go through pinned staging copies).
    pins: [Option<(usize, usize)>; 5],
}

impl HostPins {
    fn sections(srs: &Srs) -> [(*const u8, usize); 5] {
        [
            (srs.h().as_ptr().cast(), srs.h().len() * 96),
            (srs.l().as_ptr().cast(), srs.l().len() * 96),
            (srs.a().as_ptr().cast(), srs.a().len() * 96),
            (srs.b_g1().as_ptr().cast(), srs.b_g1().len() * 96),
            (srs.b_g2().as_ptr().cast(), srs.b_g2().len() * 192),
        ]
    }

    fn register(ordinal: usize, srs: &Srs) -> HostPins {
        static WARNED: AtomicBool = AtomicBool::new(false);
        let mut pins = [None; 5];
        for (i, (p, bytes)) in Self::sections(srs).into_iter().enumerate() {
            if bytes == 0 {
                continue;
            }
            let mut code = 0;
            // SAFETY: [p, p + bytes) is a live vector of `srs`; registration does not move
            // or change it, and `Drop` undoes it before the vector is freed (see the type).
            let err = unsafe { ffi::cuzk_host_register(ordinal as i32, p, bytes, &mut code) };
            match ffi::check(err, "host register") {
                Ok(()) if code == 0 => pins[i] = Some((p as usize, bytes)),
                other => {
                    if !WARNED.swap(true, Ordering::Relaxed) {
                        tracing::warn!(
                            device = ordinal,
                            section = i,
                            cuda_error = code,
                            err = ?other.err(),
                            "cannot page-lock SRS host memory; streaming it through pinned \
                             staging copies instead (logged once)"
                        );
                    }
                }
            }
        }
        HostPins {
            ordinal: ordinal as i32,
            pins,
        }
    }

    /// The bitmask of sections of `srs` that are page-locked now (a section whose vector was
    /// replaced since registration is not).
    fn pinned_mask(&self, srs: &Srs) -> u32 {
        let mut mask = 0;
        for (i, (p, bytes)) in Self::sections(srs).into_iter().enumerate() {
            if self.pins[i] == Some((p as usize, bytes)) {
                mask |= 1 << i;
            }
        }
        mask
    }
}

impl Drop for HostPins {
    fn drop(&mut self) {
        for (p, _) in self.pins.iter().flatten() {
            // SAFETY: `p` was registered by cuzk_host_register and is unregistered once.
            unsafe { ffi::cuzk_host_unregister(self.ordinal, *p as *const u8) };
        }
    }
}

/// `srs`'s host sections for a streamed `start` on device `ordinal`; with `pins` (the SRS's
/// slot for them, kept with it: [`crate::srs_state::SrsState::pins`]), the sections are
/// page-locked on the SRS's first streamed use and marked pinned while they still are.
pub(crate) fn host_srs(
    ordinal: usize,
    srs: &Srs,
    pins: Option<&OnceLock<HostPins>>,
) -> ffi::CHostSrs {
    let pinned = pins.map_or(0, |p| {
        p.get_or_init(|| HostPins::register(ordinal, srs))
            .pinned_mask(srs)
    });
    ffi::CHostSrs {
        h: srs.h().as_ptr().cast(),
        nh: srs.h().len(),
        l: srs.l().as_ptr().cast(),
        nl: srs.l().len(),
        a: srs.a().as_ptr().cast(),
        na: srs.a().len(),
        b_g1: srs.b_g1().as_ptr().cast(),
        nb1: srs.b_g1().len(),
        b_g2: srs.b_g2().as_ptr().cast(),
        nb2: srs.b_g2().len(),
        pinned,
    }
}
