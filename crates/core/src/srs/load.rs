//! Loading an SRS that is not hot, under the cache's load lock for its id: a reservation
//! of what the load holds at most, the points read into host memory or streamed into the
//! backends from the file (the circuit prepared beside), then the host copies released where
//! every backend holds its own, the reservation trimmed to what stays, and the entry made hot.
use super::{Acquired, Entry, LoadedSrs, SrsCache, SrsHandle, StreamResident};
use crate::budget::{Category, Reservation};
use crate::error::EngineError;
use crate::request::Priority;
use cuzk_groth16::Srs;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// How a load left the SRS's points.
enum Loaded {
    /// Read into host memory (the planner's `load_srs`).
    Host(Srs),
    /// Streamed into every backend's own memory from the file; the host holds none.
    Resident(Srs),
    /// Still in the file only: not every backend could hold them.
    InFile(Srs),
}

impl SrsCache {
    /// Loads `circuit_id` (not hot; the caller holds its load lock) and makes it hot.
    pub(super) async fn load(
        &self,
        circuit_id: &str,
        priority: Priority,
    ) -> Result<Acquired, EngineError> {
        let t0 = Instant::now();
        // Beside devices, an SRS in a file streams into them: only its header is read here.
        let header = self.load_header(circuit_id).await?;
        let timing_only = match &header {
            Some(h) => self.check_timing_only(circuit_id, h)?,
            None => false,
        };
        let file_bytes = self.inner.planner.srs_size_hint(circuit_id)?;
        let stream_resident = self.inner.stream_resident.get().cloned();
        // Streamed into the backends: the windows read ahead and each backend's; streamed
        // into host memory: one window and its points; read whole: the file.
        let opts = crate::params::read_options();
        let loading = match (&header, &stream_resident) {
            (Some(h), Some((_, uploads))) => h.stream_wire_host_bytes(&opts, *uploads),
            (Some(h), None) => h.stream_host_bytes(&opts),
            (None, _) => file_bytes,
        };
        let size = loading + self.inner.planner.prepare_load_hint(circuit_id);
        let mut reservation = self.acquire_for(circuit_id, size, priority).await?;
        let planner = self.inner.planner.clone();
        let cpu = self.inner.cpu.clone();
        let id = circuit_id.to_string();
        let (loaded, prepared) = tokio::task::spawn_blocking(move || {
            // Preparing (e.g. compiling the circuit, single-threaded) overlaps the load.
            let (loaded, prepared) = std::thread::scope(|s| {
                let prep = s.spawn(|| planner.prepare(&id));
                let loaded = cpu.run(priority, || match (header, &stream_resident) {
                    (Some(srs), Some((stream, _))) => Ok(match stream(&id, &srs)? {
                        true => Loaded::Resident(srs),
                        false => Loaded::InFile(srs),
                    }),
                    (Some(srs), None) => Ok(Loaded::InFile(srs)),
                    (None, _) => planner.load_srs(&id).map(Loaded::Host),
                });
                (loaded, prep.join())
            });
            let prepared = match prepared {
                Ok(Ok(p)) => p,
                Ok(Err(e)) => {
                    tracing::warn!(circuit = %id, cause = %e, "preparing the circuit failed; synthesizing without");
                    None
                }
                Err(_) => {
                    tracing::warn!(circuit = %id, "preparing the circuit panicked; synthesizing without");
                    None
                }
            };
            let mut loaded = loaded?;
            if let Some(p) = &prepared {
                let stream = stream_resident.as_ref().map(|(f, _)| f);
                loaded = bound_and_retry(&id, loaded, p, stream, &cpu, priority)?;
            }
            Ok::<_, EngineError>((loaded, prepared))
        })
        .await
        .map_err(|e| EngineError::Internal(format!("SRS load task: {e}")))??;
        let (srs, timing_only, host_released_bytes) = match loaded {
            Loaded::Resident(srs) => {
                let bytes = srs.points_bytes();
                (srs, timing_only, bytes)
            }
            Loaded::InFile(srs) => {
                // Not every backend holds it: its points come into host memory after all,
                // under a reservation of the file's size (as a load read whole takes).
                let more = file_bytes.saturating_sub(loading);
                let extra = self.acquire_for(circuit_id, more, priority).await;
                let extra = match extra {
                    Ok(r) => r,
                    Err(e) => {
                        crate::reaper::free((srs, prepared, reservation));
                        return Err(e);
                    }
                };
                if let Err(extra) = reservation.merge(extra) {
                    crate::reaper::free((srs, prepared, reservation, extra));
                    return Err(EngineError::Internal("SRS reservation merge".into()));
                }
                let id = circuit_id.to_string();
                let read = tokio::task::spawn_blocking(move || {
                    let mut srs = srs;
                    crate::params::load_host_points(&id, &mut srs).map(|_| srs)
                })
                .await
                .map_err(|e| EngineError::Internal(format!("SRS read task: {e}")))?;
                match read {
                    Ok(srs) => (srs, timing_only, 0),
                    Err(e) => {
                        crate::reaper::free((prepared, reservation));
                        return Err(e);
                    }
                }
            }
            Loaded::Host(srs) => {
                let timing_only = match self.check_timing_only(circuit_id, &srs) {
                    Ok(t) => t,
                    Err(e) => {
                        // Freed off the runtime like any other SRS.
                        crate::reaper::free((srs, prepared, reservation));
                        return Err(e);
                    }
                };
                let (srs, released) = self.release_host_copy(circuit_id, srs).await?;
                (srs, timing_only, released)
            }
        };
        let points_resident = host_released_bytes > 0;
        let settled = self
            .settle_prepared(
                circuit_id,
                srs,
                prepared,
                points_resident,
                &mut reservation,
                priority,
            )
            .await;
        let (srs, prepared) = match settled {
            Ok(s) => s,
            Err(e) => {
                crate::reaper::free(reservation);
                return Err(e);
            }
        };
        // Account what is really held; a file larger than its points only shrinks it.
        let actual = srs.size_bytes() + prepared.as_ref().map_or(0, |p| p.bytes);
        if actual < reservation.bytes() {
            reservation.shrink_to(actual);
        } else {
            reservation.grow_unchecked(actual - reservation.bytes());
        }
        let load_time = t0.elapsed();
        tracing::info!(circuit = %circuit_id, bytes = actual, ms = load_time.as_millis() as u64, "SRS loaded");
        let loaded = Arc::new(LoadedSrs {
            circuit_id: circuit_id.to_string(),
            srs,
            timing_only,
            host_released_bytes,
            pvk: OnceLock::new(),
            prepared: prepared.map(|p| p.data),
        });
        {
            let mut st = self.inner.state.lock();
            st.known.remove(circuit_id);
            st.hot.insert(
                circuit_id.to_string(),
                Entry {
                    loaded: loaded.clone(),
                    reservation,
                    refs: 1,
                    last_used: Instant::now(),
                    evict_when_idle: false,
                },
            );
        }
        Ok(Acquired {
            handle: SrsHandle {
                loaded,
                cache: self.clone(),
            },
            was_loaded: false,
            load_time,
        })
    }

    /// The SRS's header alone (its points left in the file), when it is to stream into the
    /// devices: every backend has memory of its own, streaming is set, and the planner has
    /// a file to stream from.
    async fn load_header(&self, circuit_id: &str) -> Result<Option<Srs>, EngineError> {
        if !self.inner.expect_release || self.inner.stream_resident.get().is_none() {
            return Ok(None);
        }
        let planner = self.inner.planner.clone();
        let id = circuit_id.to_string();
        tokio::task::spawn_blocking(move || planner.load_srs_header(&id))
            .await
            .map_err(|e| EngineError::Internal(format!("SRS header task: {e}")))?
    }

    /// Whether `srs` holds TIMING-ONLY parameters, an error when they are not allowed.
    fn check_timing_only(&self, circuit_id: &str, srs: &Srs) -> Result<bool, EngineError> {
        if !srs.vk().is_timing_only() {
            return Ok(false);
        }
        if !self.inner.allow_timing_only {
            return Err(EngineError::Srs {
                circuit_id: circuit_id.to_string(),
                message: "the parameter file holds TIMING-ONLY parameters (gamma = delta = \
                          the G2 generator): proofs made with them DO NOT VERIFY; the \
                          daemon refuses them unless [allow] timing_only = true"
                    .into(),
            });
        }
        tracing::warn!(
            circuit = %circuit_id,
            "TIMING-ONLY parameters loaded ([allow] timing_only): proofs made with them DO NOT VERIFY; self-verification is off for them"
        );
        Ok(true)
    }

    /// A reservation of `bytes` for loading the SRS `circuit_id`, waiting at `priority`.
    pub(super) async fn acquire_for(
        &self,
        circuit_id: &str,
        bytes: u64,
        priority: Priority,
    ) -> Result<Reservation, EngineError> {
        self.inner
            .budget
            .acquire(bytes, Category::Srs, priority)
            .await
            .map_err(|e| match e {
                crate::error::BudgetError::TooLarge { needed, budget } => EngineError::TooLarge {
                    what: format!("SRS {circuit_id}"),
                    needed,
                    budget,
                },
                other => EngineError::Srs {
                    circuit_id: circuit_id.to_string(),
                    message: other.to_string(),
                },
            })
    }
}

/// Records what the prepared circuit says of its witnesses on the SRS (the aux values its
/// constraints hold to 0 or 1: admission's first reservations read it there, and a backend
/// sizes a proof's buffers for the rest, [`Srs::free_values_bound`]). An SRS the backends refused to take from its file while that
/// was unknown (their bound then counts every base as a full scalar: at 32 GiB ~43 GB of VRAM
/// beside the SRS's 47 GB, more than an 80 GB card has) is streamed to them once more with
/// it; a host copy is offered to them with it after the load (`release_host_copy`).
fn bound_and_retry(
    circuit_id: &str,
    loaded: Loaded,
    prepared: &crate::planner::Prepared,
    stream: Option<&StreamResident>,
    cpu: &crate::cpu::CpuPools,
    priority: Priority,
) -> Result<Loaded, EngineError> {
    let Some(bounded) = prepared.bounded_aux else {
        return Ok(loaded);
    };
    let (Loaded::Host(srs) | Loaded::Resident(srs) | Loaded::InFile(srs)) = &loaded;
    srs.set_bounded_aux(bounded);
    let (srs, stream) = match (loaded, stream) {
        (Loaded::InFile(srs), Some(stream)) => (srs, stream),
        (loaded, _) => return Ok(loaded),
    };
    tracing::info!(
        circuit = %circuit_id,
        free_values = srs.free_values_bound(),
        "streaming the SRS into the backends again, now with the compiled circuit's bound on a witness's full scalars"
    );
    Ok(match cpu.run(priority, || stream(circuit_id, &srs))? {
        true => Loaded::Resident(srs),
        false => Loaded::InFile(srs),
    })
}
