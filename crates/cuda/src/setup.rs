//! The insecure setup's points on a GPU: [`GpuPoints`] implements
//! [`cuzk_groth16::setup::PointMaker`] with `cuda/fixed_base.cuh` (a generator's signed-window
//! table resident on the device, one mixed addition per non-zero digit, one inversion to
//! affine, the `.params` encoding written by the kernel). Its points are the CPU method's,
//! byte for byte (affine coordinates are unique; `gpu_vs_cpu` checks it).
#![allow(unsafe_code)]

use crate::ffi;
use blstrs::{G1Affine, G2Affine};
use cuzk_groth16::setup::{g1_window_table, g2_window_table, PointMaker, G1_BYTES, G2_BYTES};
use cuzk_groth16::{Error, Scalar};
use std::sync::Mutex;

/// Window of the device tables: 22 windows, 2,048 entries each (4.3 MB in G1, 8.7 MB in G2,
/// cache-resident on a data-centre GPU).
const WINDOW: usize = 12;

/// Points per call: 256 MiB of scalars, 768 MiB of G1 points (1.5 GiB in G2) on the device.
const BATCH: usize = 1 << 23;

/// One generator's table on one device.
struct Context(*mut ffi::FixedBaseHandle);

// SAFETY: the handle is only used behind `GpuPoints`' mutexes, one call at a time, and the
// C++ side selects its device on every call, so any thread may make it.
unsafe impl Send for Context {}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: the handle came from `cuzk_fixed_base_create` and is dropped once.
        unsafe { ffi::cuzk_fixed_base_destroy(self.0) }
    }
}

/// Setup points made on one CUDA device.
pub struct GpuPoints {
    ordinal: usize,
    g1: Mutex<Context>,
    g2: Mutex<Context>,
}

fn context<T>(ordinal: usize, g2: bool, table: &[T]) -> Result<Context, Error> {
    let mut handle = std::ptr::null_mut();
    // SAFETY: `table` is `table.len()` affine points laid out as the device reads them
    // (blstrs' affine points are blst's, the layout sppark uses); `handle` is a valid
    // out-pointer.
    let err = unsafe {
        ffi::cuzk_fixed_base_create(
            ordinal as i32,
            i32::from(g2),
            table.as_ptr().cast(),
            table.len(),
            WINDOW as u32,
            &mut handle,
        )
    };
    ffi::check(err, "uploading a fixed-base table").map_err(Error::Points)?;
    Ok(Context(handle))
}

impl GpuPoints {
    /// Uploads the generators' tables to device `ordinal`.
    pub fn new(ordinal: usize) -> Result<GpuPoints, Error> {
        const _: () = assert!(std::mem::size_of::<G1Affine>() == G1_BYTES);
        const _: () = assert!(std::mem::size_of::<G2Affine>() == G2_BYTES);
        let g1 = context(ordinal, false, &g1_window_table(WINDOW))?;
        let g2 = context(ordinal, true, &g2_window_table(WINDOW))?;
        Ok(GpuPoints {
            ordinal,
            g1: Mutex::new(g1),
            g2: Mutex::new(g2),
        })
    }

    fn run(
        &self,
        ctx: &Mutex<Context>,
        size: usize,
        s: &[Scalar],
        out: &mut [u8],
    ) -> Result<(), Error> {
        if out.len() != size * s.len() {
            return Err(Error::Points(format!(
                "{} output bytes for {} points of {size} bytes",
                out.len(),
                s.len()
            )));
        }
        for (s, out) in s.chunks(BATCH).zip(out.chunks_mut(size * BATCH)) {
            let ctx = ctx.lock().unwrap_or_else(|p| p.into_inner());
            // SAFETY: `s` holds `s.len()` scalars (blstrs' Montgomery limbs, sppark's fr_t)
            // and `out` exactly `size` bytes for each; the context is ours alone while the
            // lock is held, and the call waits for the device before it returns.
            let err =
                unsafe { ffi::cuzk_fixed_base_run(ctx.0, s.as_ptr(), s.len(), out.as_mut_ptr()) };
            ffi::check(err, "fixed-base multiplication").map_err(Error::Points)?;
        }
        Ok(())
    }
}

impl PointMaker for GpuPoints {
    fn name(&self) -> String {
        match crate::device::device_info(self.ordinal) {
            Ok(d) => format!("CUDA device {} ({})", self.ordinal, d.name),
            Err(_) => format!("CUDA device {}", self.ordinal),
        }
    }

    fn batch(&self) -> usize {
        BATCH
    }

    fn g1(&self, scalars: &[Scalar], out: &mut [u8]) -> Result<(), Error> {
        self.run(&self.g1, G1_BYTES, scalars, out)
    }

    fn g2(&self, scalars: &[Scalar], out: &mut [u8]) -> Result<(), Error> {
        self.run(&self.g2, G2_BYTES, scalars, out)
    }
}
