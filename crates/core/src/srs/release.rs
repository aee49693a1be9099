//! Dropping a loaded SRS's host copies once every backend holds its own: first its points
//! (read whole, then made resident by the backends), then its compiled matrices, with which
//! the backends make a/b/c on their devices.
use super::{MakeMatricesResident, SrsCache};
use crate::budget::Reservation;
use crate::error::EngineError;
use crate::planner::Prepared;
use crate::request::Priority;
use cuzk_groth16::{CompiledCircuit, Srs};
use std::sync::Arc;
use std::time::Instant;

impl SrsCache {
    /// From now on, a loaded SRS whose host copy was released has its prepared compiled
    /// matrices made resident by `f` and, when it says yes, their host copy dropped (its
    /// entry's reservation covers what remains). Set once, before the first load.
    pub fn set_matrices_residency(&self, f: MakeMatricesResident) {
        let _ = self.inner.make_matrices_resident.set(f);
    }

    /// Leaves `prepared` where synthesis needs it once its SRS is loaded. Where the devices
    /// hold the points (`points_resident`), the backends are asked to hold a compiled
    /// circuit's matrices too (streamed from its cached file when they are still there), and
    /// when all of them do its host copy is dropped. Otherwise what the planner left in a file
    /// is read into host memory ([`crate::Planner::settle_on_host`]: a damaged file is
    /// compiled again) under `reservation` grown to [`crate::PrepareHints::host`], and the
    /// backends are asked once more. On the blocking pool: the upload takes seconds at real
    /// size.
    pub(super) async fn settle_prepared(
        &self,
        circuit_id: &str,
        srs: Srs,
        prepared: Option<Prepared>,
        points_resident: bool,
        reservation: &mut Reservation,
        priority: Priority,
    ) -> Result<(Srs, Option<Prepared>), EngineError> {
        let Some(prepared) = prepared else {
            return Ok((srs, None));
        };
        let f = match points_resident {
            true => self.inner.make_matrices_resident.get().cloned(),
            false => None,
        };
        let (id, first) = (circuit_id.to_string(), f.clone());
        let (srs, prepared, done) = blocking(move || {
            let mut p = prepared;
            let done = first
                .as_ref()
                .is_some_and(|f| hand_to_backends(f, &id, &srs, &mut p));
            (srs, p, done)
        })
        .await?;
        let in_file = prepared
            .data
            .downcast_ref::<CompiledCircuit>()
            .is_some_and(|c| c.matrices_in_file());
        if done || !in_file {
            return Ok((srs, Some(prepared)));
        }
        // The reservation holds the SRS's host copy (if any) beside the prepared data's part.
        let host = self.inner.planner.prepare_hints(circuit_id).host;
        let have = reservation.bytes().saturating_sub(srs.size_bytes());
        let more = host.saturating_sub(have);
        let extra = self.acquire_for(circuit_id, more, priority).await?;
        if let Err(extra) = reservation.merge(extra) {
            crate::reaper::free(extra);
            return Err(EngineError::Internal("SRS reservation merge".into()));
        }
        let (planner, id) = (self.inner.planner.clone(), circuit_id.to_string());
        blocking(move || {
            let mut p = prepared;
            if let Err(e) = planner.settle_on_host(&id, &mut p) {
                // As when preparing fails: synthesis goes on without the prepared data.
                tracing::warn!(circuit = %id, cause = %e, "reading the prepared circuit failed; synthesizing without");
                return (srs, None);
            }
            if let Some(f) = &f {
                hand_to_backends(f, &id, &srs, &mut p);
            }
            (srs, Some(p))
        })
        .await
    }

    /// Has the backends make `srs` resident and, when all of them did, releases its host
    /// points (on the blocking pool: the upload takes seconds at real size). Returns the SRS
    /// and the bytes released.
    pub(super) async fn release_host_copy(
        &self,
        circuit_id: &str,
        srs: Srs,
    ) -> Result<(Srs, u64), EngineError> {
        let Some(make_resident) = self.inner.make_resident.clone() else {
            return Ok((srs, 0));
        };
        if !srs.can_release_host_points() {
            return Ok((srs, 0));
        }
        let id = circuit_id.to_string();
        tokio::task::spawn_blocking(move || {
            let mut srs = srs;
            let t0 = Instant::now();
            if !make_resident(&srs) {
                tracing::info!(circuit = %id, "SRS host copy kept: not every backend holds it in its own memory");
                return (srs, 0);
            }
            let freed = srs.release_host_points();
            tracing::info!(
                circuit = %id,
                bytes = freed,
                ms = t0.elapsed().as_millis() as u64,
                "SRS resident on every device; host copy released (points needed later are read from the file)"
            );
            (srs, freed)
        })
        .await
        .map_err(|e| EngineError::Internal(format!("SRS residency task: {e}")))
    }
}

/// `f` on the blocking pool.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, EngineError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| EngineError::Internal(format!("matrices residency task: {e}")))
}

/// Has the backends hold `p`'s compiled matrices (when it is a compiled circuit whose
/// matrices are in host memory or its file, and nobody else holds it) and, when all of them
/// do, drops the host copy and lowers `p.bytes` by what was freed. Whether they all do.
fn hand_to_backends(f: &MakeMatricesResident, id: &str, srs: &Srs, p: &mut Prepared) -> bool {
    let bytes = &mut p.bytes;
    let Some(c) = Arc::get_mut(&mut p.data).and_then(|d| d.downcast_mut::<CompiledCircuit>())
    else {
        return false;
    };
    if !c.matrices_available() {
        return false;
    }
    let t0 = Instant::now();
    let from_file = c.matrices_in_file();
    if !f(srs, c) {
        tracing::info!(circuit = %id, from_file, "compiled matrices not on every device: a/b/c need their host copy");
        return false;
    }
    let freed = c.release_host_matrices();
    *bytes = bytes.saturating_sub(freed);
    tracing::info!(
        circuit = %id,
        bytes = freed,
        from_file,
        ms = t0.elapsed().as_millis() as u64,
        "compiled matrices resident on every device; no host copy kept"
    );
    true
}
