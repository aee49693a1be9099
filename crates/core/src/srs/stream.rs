//! Loading an SRS straight into the devices' memory: its points are read from the parameter
//! file a window at a time, decoded once, and each window is copied to every backend's own
//! copy before the next is read. The host holds one window, never the whole SRS (45 GiB for a
//! 32 GiB PoRep), so a box's memory need not fit it even for a moment.
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
    /// says not every backend holds it, its points are read in after all. Set once, before
    /// the first load.
    pub fn set_stream_residency(&self, f: StreamResident) {
        let _ = self.inner.stream_resident.set(f);
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
    let streamed = srs.stream_points::<Stop>(opts, |w| {
        for (i, u) in uploads.iter_mut().enumerate() {
            u.put(w).map_err(|e| Stop::Backend(i, e))?;
        }
        Ok(())
    });
    match streamed {
        Ok(()) => {}
        Err(Stop::File(e)) => {
            return Err(EngineError::Srs {
                circuit_id: circuit_id.to_string(),
                message: e.to_string(),
            })
        }
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
