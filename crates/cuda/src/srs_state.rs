//! What the CUDA backend attaches to an [`Srs`] (its [`Srs::backend_cache`], set once): the
//! page-locked registrations of its host vectors when it streams ([`crate::pins`]), and the
//! VRAM copies pinned for it when its host copy was released ([`pin_resident`]), which are
//! freed when the SRS is dropped.
use crate::pins::HostPins;
use crate::vram::DeviceMem;
use cuzk_groth16::Srs;
use std::sync::{Arc, Mutex, OnceLock};

/// The CUDA backend's state of one SRS. Dropped with the SRS, before its vectors.
pub(crate) struct SrsState {
    id: u64,
    /// Page-locked registrations, made on first streamed use.
    pub(crate) pins: OnceLock<HostPins>,
    /// Devices holding a pinned resident copy of this SRS.
    pinned_on: Mutex<Vec<Arc<DeviceMem>>>,
}

impl Drop for SrsState {
    fn drop(&mut self) {
        let devs = std::mem::take(&mut *crate::vram::lock(&self.pinned_on));
        for d in devs {
            d.unpin(self.id);
        }
    }
}

/// The state of `srs`, created on first use; `None` if another backend claimed the cache.
pub(crate) fn state(srs: &Srs) -> Option<&SrsState> {
    srs.backend_cache()
        .get_or_init(|| {
            Box::new(SrsState {
                id: srs.id(),
                pins: OnceLock::new(),
                pinned_on: Mutex::new(Vec::new()),
            })
        })
        .downcast_ref::<SrsState>()
}

/// Pins `srs`'s resident copy on `mem` until `srs` is dropped. False if there is no resident
/// copy to pin, or the SRS's cache belongs to another backend.
pub(crate) fn pin_resident(mem: &Arc<DeviceMem>, srs: &Srs) -> bool {
    let Some(st) = state(srs) else {
        return false;
    };
    let mut on = crate::vram::lock(&st.pinned_on);
    if on.iter().any(|d| Arc::ptr_eq(d, mem)) {
        return true;
    }
    if !mem.pin(srs.id()) {
        return false;
    }
    on.push(mem.clone());
    true
}
