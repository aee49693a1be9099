//! Compiled constraint matrices resident in VRAM ([`cuzk_groth16::CompiledCircuit`]), for
//! deferred a/b/c: a partition's `start` finds its circuit's copy (uploading it on first
//! use, into a reservation of the device's VRAM budget), and the device evaluates A·z, B·z
//! and C·z itself. A copy is freed when its circuit is dropped (the engine drops it with the
//! SRS it was compiled for), or earlier when VRAM is needed and no `start` uses it.
#![allow(unsafe_code)]

use crate::ffi;
use crate::vram::{lock, DeviceMem};
use cuzk_groth16::compiled::{CompiledCircuit, AUX};
use rayon::prelude::*;
use std::sync::{Arc, Mutex};

fn r4k(bytes: u64) -> u64 {
    bytes.div_ceil(4096) * 4096
}

/// Device bytes of `c`'s copy (each allocation rounded as the driver's granularity).
pub(crate) fn matrices_bytes(c: &CompiledCircuit) -> u64 {
    (0..3)
        .map(|m| {
            let v = c.matrix(m);
            r4k(4 * v.row_start.len() as u64) + 2 * r4k(4 * v.cols.len() as u64)
        })
        .sum::<u64>()
        + r4k(32 * c.coeff_table().len() as u64)
}

/// Checks every term of `c` against its shape, so the device never reads out of bounds: the
/// matrices are our compiler's, but the check is one parallel pass at upload.
fn check(c: &CompiledCircuit) -> Result<(), String> {
    if c.host_matrices_released() {
        return Err("the compiled matrices' host copy was released: nothing to upload".into());
    }
    let (ni, na, nt) = (c.num_inputs(), c.num_aux(), c.coeff_table().len());
    let rows = c.num_constraints();
    if ni == 0 || nt < 2 || na >= AUX as usize {
        return Err(format!(
            "compiled circuit shape: {ni} inputs, {na} aux, {nt} coefficients"
        ));
    }
    for m in 0..3 {
        let v = c.matrix(m);
        let ok_rows = v.row_start.len() == rows + 1
            && v.row_start.first() == Some(&0)
            && v.row_start.last().map(|&e| e as usize) == Some(v.cols.len())
            && v.cols.len() == v.coeffs.len()
            && v.row_start.par_windows(2).all(|w| w[0] <= w[1]);
        let ok_terms = v
            .cols
            .par_iter()
            .zip(v.coeffs.par_iter())
            .all(|(&col, &k)| {
                let var_ok = if col & AUX != 0 {
                    ((col & !AUX) as usize) < na
                } else {
                    (col as usize) < ni
                };
                var_ok && (k as usize) < nt
            });
        if !(ok_rows && ok_terms) {
            return Err(format!("compiled matrix {m} is malformed"));
        }
    }
    Ok(())
}

/// Copies `c`'s matrices to device `ordinal` (the caller holds the device interlock: the copy
/// uses sppark's streams) and returns the handle of the copy.
pub(crate) fn upload(
    ordinal: usize,
    c: &CompiledCircuit,
) -> Result<*mut ffi::MatricesHandle, String> {
    check(c)?;
    let m: Vec<ffi::CMatrix> = (0..3)
        .map(|i| {
            let v = c.matrix(i);
            ffi::CMatrix {
                row_start: v.row_start.as_ptr(),
                cols: v.cols.as_ptr(),
                coeffs: v.coeffs.as_ptr(),
                nterms: v.cols.len(),
            }
        })
        .collect();
    let mut handle = std::ptr::null_mut();
    // SAFETY: `m` holds three matrices whose pointers and lengths describe live slices of
    // `c` (row_start has rows + 1 entries; checked above, with every term in bounds); the
    // table is `coeff_table().len()` scalars (blstrs' Montgomery layout, the device's); the
    // call copies everything before returning; `handle` is a valid out-pointer.
    let err = unsafe {
        ffi::cuzk_matrices_create(
            ordinal as i32,
            m.as_ptr(),
            c.num_constraints(),
            c.coeff_table().as_ptr(),
            c.coeff_table().len(),
            c.num_inputs(),
            c.num_aux(),
            &mut handle,
        )
    };
    ffi::check(err, "matrices upload").map(|()| handle)
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
