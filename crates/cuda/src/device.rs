//! The device registry: one [`DeviceState`] per opened CUDA device (interlock, VRAM ledger,
//! busy time), shared by every prover of it, and the device queries ([`devices`], name and
//! memory).
#![allow(unsafe_code)]

use crate::vram::{lock, DeviceMem};
use crate::{ffi, CudaOptions, DeviceInfo};
use cuzk_groth16::ProveError;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// VRAM kept free beyond every estimate (driver, fragmentation, sppark's own buffers).
const VRAM_MARGIN: u64 = 1 << 30;

/// State shared by every [`crate::CudaProver`] of one device.
pub(crate) struct DeviceState {
    pub(crate) ordinal: usize,
    /// The default budget: free VRAM when the device was opened, less [`VRAM_MARGIN`].
    default_budget: u64,
    /// Held for the GPU-exclusive phase (NTTs and MSMs, streamed SRS chunks included): they
    /// run on sppark's per-device streams and scratch, which two workers must not use at once.
    /// (sppark 0.1.16's `accumulate` and batch-addition kernels take their work from global
    /// device counters, one per template instance and stream id, so two MSMs running at once
    /// would take each other's work: two workers' kernels cannot simply overlap.)
    /// Uploads and host work happen outside it, so a second worker overlaps them with the
    /// first one's kernels. Also held while an SRS is uploaded to stay resident.
    pub(crate) gpu_lock: Mutex<()>,
    pub(crate) mem: Arc<DeviceMem>,
    /// Nanoseconds the interlock was held, for the busy fraction.
    busy_ns: AtomicU64,
}

impl DeviceState {
    /// Replaces the device's options (and so its budget).
    pub(crate) fn set_options(&self, o: CudaOptions) {
        self.mem.set_options(o, self.default_budget);
    }

    /// Counts `held` as time the interlock was held.
    pub(crate) fn add_busy(&self, held: Duration) {
        self.busy_ns
            .fetch_add(held.as_nanos() as u64, Ordering::Relaxed);
    }

    /// Milliseconds the interlock has been held since the device was opened.
    pub(crate) fn busy_ms(&self) -> f64 {
        self.busy_ns.load(Ordering::Relaxed) as f64 / 1e6
    }

    /// Time the interlock has been held since the device was opened.
    pub(crate) fn busy(&self) -> Duration {
        Duration::from_nanos(self.busy_ns.load(Ordering::Relaxed))
    }
}

fn registry() -> &'static Mutex<HashMap<usize, Arc<DeviceState>>> {
    static DEVICES: OnceLock<Mutex<HashMap<usize, Arc<DeviceState>>>> = OnceLock::new();
    DEVICES.get_or_init(|| Mutex::new(HashMap::new()))
}

fn device_count() -> Result<usize, String> {
    let mut n = 0usize;
    // SAFETY: `n` is a valid out-pointer for the duration of the call.
    let err = unsafe { ffi::cuzk_device_count(&mut n) };
    ffi::check(err, "device count")?;
    Ok(n)
}

/// Name and memory of device `ordinal`, with this backend's budget and reservations on it.
pub(crate) fn device_info(ordinal: usize) -> Result<DeviceInfo, String> {
    let mut info = ffi::CDeviceInfo {
        name: [0; 256],
        vram_total: 0,
        vram_free: 0,
    };
    // SAFETY: `info` is a valid out-pointer; the C++ side NUL-terminates `name`.
    let err = unsafe { ffi::cuzk_device_info(ordinal as i32, &mut info) };
    ffi::check(err, "device info")?;
    let bytes: Vec<u8> = info
        .name
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    let (vram_budget, vram_reserved) = match lock(registry()).get(&ordinal) {
        Some(d) => d.mem.budget_and_reserved(),
        None => (0, 0),
    };
    Ok(DeviceInfo {
        ordinal,
        name: String::from_utf8_lossy(&bytes).into_owned(),
        vram_total: info.vram_total as u64,
        vram_free: info.vram_free as u64,
        vram_budget,
        vram_reserved,
    })
}

/// The visible CUDA devices; empty when there is none or the driver is missing.
pub fn devices() -> Vec<DeviceInfo> {
    let n = device_count().unwrap_or(0);
    (0..n).filter_map(|i| device_info(i).ok()).collect()
}

/// The state of device `ordinal`, created (default options, budget from its free VRAM) on the
/// device's first use.
pub(crate) fn open(ordinal: usize) -> Result<Arc<DeviceState>, ProveError> {
    let n = device_count().map_err(|e| ProveError::Unavailable(format!("no CUDA devices: {e}")))?;
    if ordinal >= n {
        return Err(ProveError::Unavailable(format!(
            "CUDA device {ordinal} does not exist ({n} visible)"
        )));
    }
    let existing = lock(registry()).get(&ordinal).cloned();
    if let Some(d) = existing {
        return Ok(d);
    }
    // (queried before taking the registry lock: device_info takes it too)
    let free = device_info(ordinal)
        .map_err(|e| ProveError::Unavailable(format!("CUDA device {ordinal}: {e}")))?
        .vram_free;
    let default_budget = free.saturating_sub(VRAM_MARGIN);
    Ok(lock(registry())
        .entry(ordinal)
        .or_insert_with(|| {
            Arc::new(DeviceState {
                ordinal,
                default_budget,
                gpu_lock: Mutex::new(()),
                mem: Arc::new(DeviceMem::new(default_budget)),
                busy_ns: AtomicU64::new(0),
            })
        })
        .clone())
}
