//! A backend with device memory of its own, on the CPU: it keeps copies of SRSs as a GPU keeps
//! them in VRAM (made from a host copy or streamed from the file a window at a time) and
//! proves a released SRS from its copy.
use cuzk_groth16::{CpuProver, ProveError, ProverBackend};
use std::sync::Arc;

/// The SRS of the parameter file at `path`, header first (its points stay in the file), as a
/// planner whose SRSs stream into backends like [`OwnCopy`] reads it.
pub fn read_header(
    circuit_id: &str,
    path: &std::path::Path,
) -> Result<Option<cuzk_groth16::Srs>, cuzk_core::EngineError> {
    let (srs, _) =
        cuzk_groth16::params::read_params_header(path, &Default::default()).map_err(|e| {
            cuzk_core::EngineError::Srs {
                circuit_id: circuit_id.into(),
                message: e.to_string(),
            }
        })?;
    Ok(Some(srs))
}

/// A config for these tests: `budget` bytes, a 16 KiB request buffer, no urgent reserve, every
/// partition self-checked.
pub fn small_config(budget: u64) -> cuzk_core::Config {
    let mut c = cuzk_core::Config::default_for_machine();
    c.budget_bytes = budget;
    c.request_buffer_bytes = 16 << 10;
    c.urgent_reserve_bytes = Some(0);
    c
}

/// A new SRS with `srs`'s points (copied) under verifying key `vk`.
pub fn points_with_key(
    srs: &cuzk_groth16::Srs,
    vk: &cuzk_groth16::VerifyingKey,
) -> cuzk_groth16::Srs {
    cuzk_groth16::Srs::new(
        vk.clone(),
        srs.h().to_vec(),
        srs.l().to_vec(),
        srs.a().to_vec(),
        srs.b_g1().to_vec(),
        srs.b_g2().to_vec(),
    )
}

/// A backend with memory of its own (as a GPU's VRAM): `make_resident` copies the points, and
/// it proves a released SRS from that copy (counted in `released_starts`), so a proof that
/// verifies shows the engine handed it an SRS whose host copy was gone.
#[derive(Default)]
pub struct OwnCopy {
    pub copies: parking_lot::Mutex<std::collections::HashMap<u64, Arc<cuzk_groth16::Srs>>>,
    pub calls: std::sync::atomic::AtomicUsize,
    /// Streamed copies begun ([`ProverBackend::begin_resident`]), and windows taken.
    pub streams: std::sync::atomic::AtomicUsize,
    pub windows: std::sync::atomic::AtomicUsize,
    /// Says it cannot hold a streamed copy (as a device without room would).
    pub decline_stream: bool,
    /// Says so only while the SRS knows no bound on a witness's full scalars (as a device
    /// whose room fits a real witness's buffers beside the SRS, not every base's).
    pub needs_bound: bool,
    /// `Srs::free_values_bound` as each `make_resident` / `begin_resident` saw it.
    pub bounds_seen: parking_lot::Mutex<Vec<Option<usize>>>,
    pub released_starts: std::sync::atomic::AtomicUsize,
    /// Device bytes it has room for (none: any number of copies), as a card that cannot
    /// hold every SRS: a copy that would pass it is declined.
    pub room: Option<u64>,
    pub cpu: CpuProver,
}

impl OwnCopy {
    /// Whether a copy of `bytes` more fits its room.
    fn fits(&self, bytes: u64) -> bool {
        Self::fits_beside(self.room, &self.copies.lock(), bytes)
    }

    fn fits_beside(
        room: Option<u64>,
        copies: &std::collections::HashMap<u64, Arc<cuzk_groth16::Srs>>,
        bytes: u64,
    ) -> bool {
        let held: u64 = copies.values().map(|c| c.size_bytes()).sum();
        room.is_none_or(|room| held + bytes <= room)
    }

    /// Keeps `copy` of `srs` if it fits its room, in one step (two uploads finishing at
    /// once cannot both pass it).
    fn keep(&self, srs: &cuzk_groth16::Srs, copy: cuzk_groth16::Srs) -> bool {
        let mut copies = self.copies.lock();
        if !Self::fits_beside(self.room, &copies, copy.size_bytes()) {
            return false;
        }
        copies.insert(srs.id(), Arc::new(copy));
        true
    }

    fn copy_of(&self, srs: &cuzk_groth16::Srs) -> Result<Arc<cuzk_groth16::Srs>, ProveError> {
        self.copies
            .lock()
            .get(&srs.id())
            .cloned()
            .ok_or_else(|| ProveError::Unavailable("no copy of this SRS".into()))
    }
}

impl ProverBackend for OwnCopy {
    fn name(&self) -> String {
        "own-copy".into()
    }
    /// A device of its own (as a GPU): SRSs are expected to leave the host once loaded.
    fn device_memory(&self) -> Option<(u64, u64)> {
        Some((1 << 30, 1 << 30))
    }
    fn make_resident(&self, srs: &cuzk_groth16::Srs) -> Result<bool, ProveError> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.bounds_seen.lock().push(srs.free_values_bound());
        Ok(self.keep(srs, points_with_key(srs, srs.vk())))
    }
    fn begin_resident<'a>(
        &'a self,
        srs: &'a cuzk_groth16::Srs,
    ) -> Result<Option<Box<dyn cuzk_groth16::ResidentUpload + 'a>>, ProveError> {
        self.streams
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.bounds_seen.lock().push(srs.free_values_bound());
        if self.decline_stream
            || (self.needs_bound && srs.free_values_bound().is_none())
            || !self.fits(srs.size_bytes())
        {
            return Ok(None);
        }
        Ok(Some(Box::new(OwnUpload {
            own: self,
            srs,
            g1: Default::default(),
            b_g2: Vec::new(),
        })))
    }
    fn resident_bytes(&self, srs_id: u64) -> u64 {
        self.copies
            .lock()
            .get(&srs_id)
            .map_or(0, |c| c.size_bytes())
    }
    fn start(
        &self,
        srs: &cuzk_groth16::Srs,
        circuit: cuzk_groth16::Synthesized,
        r: cuzk_groth16::Scalar,
        s: cuzk_groth16::Scalar,
    ) -> Result<cuzk_groth16::Pending, ProveError> {
        if !srs.host_points_released() {
            return ProverBackend::start(&self.cpu, srs, circuit, r, s);
        }
        self.released_starts
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let copy = self.copy_of(srs)?;
        ProverBackend::start(&self.cpu, &copy, circuit, r, s)
    }
    fn finish(
        &self,
        srs: &cuzk_groth16::Srs,
        pending: cuzk_groth16::Pending,
    ) -> Result<cuzk_groth16::Proof, ProveError> {
        if !srs.host_points_released() {
            return ProverBackend::finish(&self.cpu, srs, pending);
        }
        let copy = self.copy_of(srs)?;
        ProverBackend::finish(&self.cpu, &copy, pending)
    }
}

/// [`OwnCopy`]'s copy being filled a window at a time: each window must come in file order,
/// right after the one before; the copy exists once finished.
pub struct OwnUpload<'a> {
    own: &'a OwnCopy,
    srs: &'a cuzk_groth16::Srs,
    g1: [Vec<cuzk_groth16::G1Affine>; 4],
    b_g2: Vec<cuzk_groth16::G2Affine>,
}

impl cuzk_groth16::ResidentUpload for OwnUpload<'_> {
    fn put(&mut self, window: cuzk_groth16::params::PointsWindow<'_>) -> Result<(), ProveError> {
        use cuzk_groth16::params::PointsWindow;
        self.own
            .windows
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let (at, start) = match window {
            PointsWindow::G1 {
                section,
                start,
                points,
            } => {
                let v = &mut self.g1[section as usize];
                let at = v.len();
                v.extend_from_slice(points);
                (at, start)
            }
            PointsWindow::G2 { start, points } => {
                let at = self.b_g2.len();
                self.b_g2.extend_from_slice(points);
                (at, start)
            }
        };
        assert_eq!(at, start, "windows come in order");
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<bool, ProveError> {
        let [h, l, a, b_g1] = self.g1;
        let copy = cuzk_groth16::Srs::new(self.srs.vk().clone(), h, l, a, b_g1, self.b_g2);
        assert_eq!(copy.counts(), self.srs.counts());
        Ok(self.own.keep(self.srs, copy))
    }
}
