//! Dropping a loaded SRS's host copies once every backend holds its own: first its points
//! (read whole, then made resident by the backends), then its compiled matrices, with which
//! the backends make a/b/c on their devices.
use super::{MakeMatricesResident, SrsCache};
use crate::error::EngineError;
use crate::planner::Prepared;
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

    /// Has the backends hold `prepared`'s compiled matrices (when it is a compiled circuit
    /// nobody else holds yet) and, when all of them do, drops their host copy and lowers
    /// `prepared.bytes` by what was freed (on the blocking pool: the upload takes a second at
    /// real size).
    pub(super) async fn release_host_matrices(
        &self,
        circuit_id: &str,
        srs: Srs,
        prepared: Option<Prepared>,
    ) -> Result<(Srs, Option<Prepared>), EngineError> {
        let (Some(f), Some(_)) = (self.inner.make_matrices_resident.get().cloned(), &prepared)
        else {
            return Ok((srs, prepared));
        };
        let id = circuit_id.to_string();
        tokio::task::spawn_blocking(move || {
            let mut prepared = prepared;
            if let Some(p) = prepared.as_mut() {
                let bytes = &mut p.bytes;
                let compiled =
                    Arc::get_mut(&mut p.data).and_then(|d| d.downcast_mut::<CompiledCircuit>());
                if let Some(c) = compiled {
                    let t0 = Instant::now();
                    if f(&srs, c) {
                        let freed = c.release_host_matrices();
                        *bytes = bytes.saturating_sub(freed);
                        tracing::info!(
                            circuit = %id,
                            bytes = freed,
                            ms = t0.elapsed().as_millis() as u64,
                            "compiled matrices resident on every device; host copy released"
                        );
                    } else {
                        tracing::info!(circuit = %id, "compiled matrices' host copy kept: not every backend holds them");
                    }
                }
            }
            (srs, prepared)
        })
        .await
        .map_err(|e| EngineError::Internal(format!("matrices residency task: {e}")))
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
