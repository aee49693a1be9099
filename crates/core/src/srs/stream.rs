//! Loading an SRS straight into the devices' memory: its points are read from the parameter
//! file a window at a time, on a thread that reads ahead ([`Srs::stream_wire`]), and each
//! window's bytes go to every backend, which decodes them where it keeps them (the CUDA
//! backend on the GPU, in place; others on the host). The host holds a few windows, never the
//! whole SRS (45 GiB for a 32 GiB PoRep), so a box's memory need not fit it even for a moment.
use super::{SrsCache, StreamResident};
use crate::error::EngineError;
use cuzk_groth16::params::{LoadStats, ReadOptions};
use cuzk_groth16::{ParamsError, ProveError, ProverBackend, ResidentUpload, Srs};
use std::sync::Arc;
use std::time::Instant;

impl SrsCache {
    /// From now on, an SRS whose planner can leave its points in the file
    /// ([`crate::Planner::load_srs_header`]), loaded where every backend has memory of its
    /// own, is streamed into the backends by `f` rather than read into host memory; when `f`
    /// says not every backend holds it, its points are read in after all. `uploads`: the
    /// backends `f` streams into (a load reserves their windows,
    /// [`Srs::stream_wire_host_bytes`]). Set once, before the first load.
    pub fn set_stream_residency(&self, f: StreamResident, uploads: usize) {
        let _ = self.inner.stream_resident.set((f, uploads));
    }
}

/// Why a stream stopped.
enum Stop {
    /// The file: a bad point, a read error. The load fails.
    File(ParamsError),
    /// Backend `usize` failed to take a window. The load goes on with a host copy.
    Backend(usize, ProveError),
}

impl From<ParamsError> for Stop {
    fn from(e: ParamsError) -> Self {
        Stop::File(e)
    }
}

/// A backend's error: the file's when its decoder refused a point, else the backend's own.
fn backend_stop(i: usize, e: ProveError) -> Stop {
    match e {
        ProveError::Params(e) => Stop::File(e),
        e => Stop::Backend(i, e),
    }
}

fn file_error(circuit_id: &str, e: ParamsError) -> EngineError {
    EngineError::Srs {
        circuit_id: circuit_id.to_string(),
        message: e.to_string(),
    }
}

/// Streams `srs`'s points (read header-first: its points are in its file) into a copy of
/// every backend's own. `Ok(true)`: every backend holds it for as long as `srs` lives, and
/// the host needs no copy. `Ok(false)`: some backend cannot hold it (no room, no device
/// memory, a device error, each logged), and every partial copy was abandoned. `Err`: the file
/// is bad (a point that does not decode, an I/O error), a typed error for the request.
pub(crate) fn stream_to_backends(
    backends: &[Arc<dyn ProverBackend>],
    circuit_id: &str,
    srs: &Srs,
    opts: &ReadOptions,
) -> Result<bool, EngineError> {
    let t0 = Instant::now();
    let mut uploads: Vec<Box<dyn ResidentUpload + '_>> = Vec::with_capacity(backends.len());
    for b in backends {
        match b.begin_resident(srs) {
            Ok(Some(u)) => uploads.push(u),
            Ok(None) => {
                tracing::info!(circuit = %circuit_id, backend = %b.name(), "the backend cannot hold this SRS; its points are read into host memory");
                return Ok(false);
            }
            Err(e) => {
                tracing::warn!(circuit = %circuit_id, backend = %b.name(), err = %e, "starting a resident copy failed; the SRS's points are read into host memory");
                return Ok(false);
            }
        }
    }
    let streamed = srs.stream_wire::<Stop>(opts, |w| {
        for (i, u) in uploads.iter_mut().enumerate() {
            u.put_wire(w).map_err(|e| backend_stop(i, e))?;
        }
        Ok(())
    });
    match streamed {
        Ok(()) => {}
        Err(Stop::File(e)) => return Err(file_error(circuit_id, e)),
        Err(Stop::Backend(i, e)) => {
            tracing::warn!(circuit = %circuit_id, backend = %backends[i].name(), err = %e, "copying the SRS to the backend failed; its points are read into host memory");
            return Ok(false);
        }
    }
    let mut all = true;
    for (b, u) in backends.iter().zip(uploads) {
        match u.finish() {
            Ok(true) => {}
            Ok(false) => all = false,
            // A point the backend's decoder refused late (its last windows) is the file's
            // fault: the uploads not finished are dropped (abandoned), the finished copies go
            // with `srs`, which the caller drops.
            Err(ProveError::Params(e)) => return Err(file_error(circuit_id, e)),
            Err(e) => {
                tracing::warn!(circuit = %circuit_id, backend = %b.name(), err = %e, "completing the SRS's resident copy failed; its points are read into host memory");
                all = false;
            }
        }
    }
    let stats = LoadStats {
        bytes: srs.points_bytes(),
        elapsed: t0.elapsed(),
    };
    tracing::info!(
        circuit = %circuit_id,
        bytes = stats.bytes,
        backends = backends.len(),
        resident = all,
        ms = stats.elapsed.as_millis() as u64,
        gbps = format!("{:.2}", stats.gbps()),
        "SRS streamed from its file into the backends' memory, a window at a time"
    );
    Ok(all)
}
