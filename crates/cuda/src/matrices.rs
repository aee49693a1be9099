//! Compiled constraint matrices resident in VRAM ([`cuzk_groth16::CompiledCircuit`]), for
//! deferred a/b/c: a partition's `start` finds its circuit's copy (uploading it on first
//! use, into a reservation of the device's VRAM budget), and the device evaluates A·z, B·z
//! and C·z itself. A copy is freed when its circuit is dropped (the engine drops it with the
//! SRS it was compiled for), or earlier when VRAM is needed and no `start` uses it.
#![allow(unsafe_code)]

use crate::ffi;
use crate::vram::{lock, DeviceMem};
use cuzk_groth16::compiled::{CircuitFileError, CompiledCircuit, AUX};
use std::sync::{Arc, Mutex};

fn r4k(bytes: u64) -> u64 {
    bytes.div_ceil(4096) * 4096
}

/// Device bytes of `c`'s copy (each allocation rounded as the driver's granularity).
pub(crate) fn matrices_bytes(c: &CompiledCircuit) -> u64 {
    (0..3)
        .map(|m| r4k(4 * (c.num_constraints() as u64 + 1)) + 2 * r4k(4 * c.terms(m) as u64))
        .sum::<u64>()
        + r4k(32 * c.coeff_table().len() as u64)
}

/// Why an upload stopped: the file (damaged, unreadable) or the device.
struct Stop(String);

impl From<CircuitFileError> for Stop {
    fn from(e: CircuitFileError) -> Self {
        Stop(e.to_string())
    }
}

/// A device copy being filled: freed unless completed.
struct Filling(*mut ffi::MatricesHandle);

impl Drop for Filling {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: the handle came from cuzk_matrices_alloc and is dropped exactly once.
            unsafe { ffi::cuzk_matrices_destroy(self.0) }
        }
    }
}

/// Copies `c`'s matrices to device `ordinal` a window at a time (the caller holds the device
/// interlock: the copies use sppark's streams) and returns the handle of the copy. From host
/// memory, or from the circuit's file: there, a window of 64 MiB is read ahead while the last
/// one is copied, each is checked ([`CompiledCircuit::stream_matrices`]) and the file's
/// digest at the end; a mismatch frees the copy and is an error.
pub(crate) fn upload(
    ordinal: usize,
    c: &CompiledCircuit,
) -> Result<*mut ffi::MatricesHandle, String> {
    let (ni, na, table) = (c.num_inputs(), c.num_aux(), c.coeff_table());
    if ni == 0 || table.len() < 2 || na >= AUX as usize {
        return Err(format!(
            "compiled circuit shape: {ni} inputs, {na} aux, {} coefficients",
            table.len()
        ));
    }
    if !c.matrices_available() {
        return Err("the compiled matrices' host copy was released: nothing to upload".into());
    }
    let nterms = [c.terms(0), c.terms(1), c.terms(2)];
    let mut handle = std::ptr::null_mut();
    // SAFETY: `nterms` is three lengths; the table is `table.len()` scalars (blstrs'
    // Montgomery layout, the device's), copied before the call returns; `handle` is a valid
    // out-pointer.
    let err = unsafe {
        ffi::cuzk_matrices_alloc(
            ordinal as i32,
            c.num_constraints(),
            nterms.as_ptr(),
            table.as_ptr(),
            table.len(),
            ni,
            na,
            &mut handle,
        )
    };
    ffi::check(err, "matrices allocation")?;
    let mut copy = Filling(handle);
    c.stream_matrices::<Stop>(CompiledCircuit::STREAM_WINDOW, |w| {
        // SAFETY: `copy.0` is a live handle; the window's values are a live slice, checked
        // against the circuit's shape (every index the device follows is in range), copied
        // before the call returns; the call checks the window against the array's length.
        let err = unsafe {
            ffi::cuzk_matrices_write(
                copy.0,
                w.matrix as i32,
                w.array as i32,
                w.start,
                w.values.as_ptr(),
                w.values.len(),
            )
        };
        ffi::check(err, "matrices upload").map_err(Stop)
    })
    .map_err(|Stop(e)| e)?;
    Ok(std::mem::replace(&mut copy.0, std::ptr::null_mut()))
}

/// The CUDA backend's state of one compiled circuit (its `backend_cache`): the devices
/// holding a copy, freed there when the circuit is dropped.
struct CompiledState {
    id: u64,
    on: Mutex<Vec<Arc<DeviceMem>>>,
}

impl Drop for CompiledState {
    fn drop(&mut self) {
        for d in std::mem::take(&mut *lock(&self.on)) {
            d.drop_matrices(self.id);
        }
    }
}

/// Records that `mem` holds a copy of `c`, to be freed when `c` is dropped. False if `c`'s
/// cache belongs to another backend (the copy is then freed only under VRAM pressure).
pub(crate) fn note_resident(mem: &Arc<DeviceMem>, c: &CompiledCircuit) -> bool {
    let Some(st) = c
        .backend_cache()
        .get_or_init(|| {
            Box::new(CompiledState {
                id: c.id(),
                on: Mutex::new(Vec::new()),
            })
        })
        .downcast_ref::<CompiledState>()
    else {
        return false;
    };
    let mut on = lock(&st.on);
    if !on.iter().any(|d| Arc::ptr_eq(d, mem)) {
        on.push(mem.clone());
    }
    true
}
