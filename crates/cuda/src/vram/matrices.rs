//! The ledger's side of resident constraint matrices ([`crate::matrices`]): placing a
//! circuit's matrices in the budget, recording their upload, dropping them with their circuit.
use super::{lock, DeviceMem, MatricesPlacement, Reservation, ResidentMatrices, Victims};
use crate::ffi;
use std::sync::Arc;

impl DeviceMem {
    /// Device bytes reserved for matrices first used with the SRS `srs_id`.
    pub(crate) fn matrices_bytes_of(&self, srs_id: u64) -> u64 {
        lock(&self.mem)
            .matrices
            .values()
            .filter(|r| r.srs_id == srs_id)
            .map(|r| r.res.bytes)
            .sum()
    }

    /// Drops the matrices of compiled circuit `id` (freed once no `start` uses them): the
    /// circuit is being dropped.
    pub(crate) fn drop_matrices(&self, id: u64) {
        let mut m = lock(&self.mem);
        m.pinned_matrices.remove(&id);
        let r = m.matrices.remove(&id);
        drop(m);
        drop(r);
        self.cv.notify_all();
    }

    /// Pins the resident matrices `id`, if there are some: they stay until their circuit is
    /// dropped ([`DeviceMem::drop_matrices`]). Returns whether they are pinned now.
    pub(crate) fn pin_matrices(&self, id: u64) -> bool {
        let mut m = lock(&self.mem);
        if !m.matrices.contains_key(&id) {
            return false;
        }
        m.pinned_matrices.insert(id);
        true
    }

    /// Where the matrices of compiled circuit `id` (`bytes` on the device) come from for one
    /// proof: their resident copy, else an upload into room reserved here if they fit beside
    /// a worker needing `need_worker` bytes and what is in use (the SRS `keep_srs` counted
    /// as in use), freeing idle contexts, copies and matrices or waiting for busy contexts;
    /// else [`MatricesPlacement::NoRoom`].
    pub(crate) fn place_matrices(
        self: &Arc<Self>,
        id: u64,
        bytes: u64,
        need_worker: u64,
        keep_srs: Option<u64>,
    ) -> MatricesPlacement {
        loop {
            let mut victims = Victims::default();
            {
                let mut m = lock(&self.mem);
                if let Some(r) = m.matrices.get(&id) {
                    return MatricesPlacement::Ready(r.clone());
                }
                if m.uploading_matrices.contains(&id) {
                    m.waits += 1;
                    let _m = self.wait(m);
                    continue;
                }
                if bytes + need_worker + m.in_use_bytes(keep_srs) > m.budget {
                    return MatricesPlacement::NoRoom;
                }
                let free = m.free();
                if free >= bytes {
                    m.reserved += bytes;
                    m.uploading_matrices.insert(id);
                    return MatricesPlacement::Upload(Reservation {
                        dev: self.clone(),
                        bytes,
                    });
                }
                let idle_workers: u64 = m.idle.iter().map(|w| w.res.bytes).sum();
                if free + idle_workers + m.idle_srs_bytes(keep_srs) >= bytes {
                    m.reclaim(bytes - free, None, keep_srs, &mut victims);
                } else if m.busy > 0 {
                    m.waits += 1;
                    let _m = self.wait(m);
                } else {
                    return MatricesPlacement::NoRoom;
                }
            }
            drop(victims);
        }
    }

    /// Records the outcome of the upload [`place_matrices`](Self::place_matrices) asked for:
    /// the copy stays resident under `res`, or (upload failed) `res` is given back.
    pub(crate) fn matrices_uploaded(
        &self,
        ordinal: usize,
        id: u64,
        srs_id: u64,
        res: Reservation,
        upload: Result<*mut ffi::MatricesHandle, String>,
    ) -> Option<Arc<ResidentMatrices>> {
        let mut m = lock(&self.mem);
        m.uploading_matrices.remove(&id);
        match upload {
            Ok(handle) => {
                let r = Arc::new(ResidentMatrices::new(handle, srs_id, res));
                m.matrices.insert(id, r.clone());
                drop(m);
                self.cv.notify_all();
                Some(r)
            }
            Err(e) => {
                drop(m);
                drop(res);
                self.cv.notify_all();
                tracing::warn!(device = ordinal, err = %e, "matrices upload failed; a/b/c are made on the host");
                None
            }
        }
    }
}
