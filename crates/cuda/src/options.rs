//! The CUDA backend's per-device settings ([`CudaOptions`]) and their `[gpu]` table in
//! `cuzk.toml` ([`CudaOptions::from_toml`]), the same with and without the `cuda` feature.
use serde::Deserialize;

/// Bases per streamed SRS chunk unless configured ([`CudaOptions::stream_chunk_bases`]).
pub const DEFAULT_STREAM_CHUNK_BASES: usize = 1 << 21;

/// The smallest `stream_chunk_bases` a `[gpu]` table may set (one batch-addition block).
const MIN_STREAM_CHUNK_BASES: usize = 1024;

/// Per-device settings of the CUDA backend.
///
/// They belong to the device, not to one [`crate::CudaProver`]: every prover of a device
/// shares its state (interlock, budget, resident SRS copies, worker contexts).
/// [`crate::CudaProver::with_options`] replaces the device's options for every prover of it;
/// [`crate::CudaProver::new`] leaves them as they are (the defaults on a device's first use).
/// A smaller budget applies to reservations taken afterwards: copies and contexts already
/// reserved stay until they are idle and something else needs the room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CudaOptions {
    /// VRAM bytes this backend may reserve on the device; `None`: the free VRAM when the
    /// device is first opened, less a 1 GiB margin. Not checked against the hardware: a budget
    /// above what is free fails allocations with a typed device error.
    pub vram_budget: Option<u64>,
    /// Bases per chunk when the SRS streams from host memory; rounded up to a multiple of
    /// 1024 (the batch-addition block). Two chunk buffers of G2 bases (192 bytes each) are
    /// reserved per worker context.
    pub stream_chunk_bases: usize,
    /// Stream the SRS even when it would fit in VRAM (tests, benchmarks).
    pub force_streaming: bool,
    /// Page-lock a streamed SRS's host vectors in place (once per SRS, undone when it is
    /// dropped) so chunks DMA straight from them; `false`: copy the chunks through the worker's
    /// pinned staging buffers instead (no SRS memory pinned; slower). Registration that the
    /// driver refuses falls back to staging copies as well.
    pub page_lock_host: bool,
    /// With the SRS resident: run every query's "scalar is 1" batch addition (L, A, B in G1
    /// and G2) up front on the worker's side stream, beside the NTTs and the H MSM, and sum
    /// the results on a host thread meanwhile (the default). `false`: each right before its
    /// query's Pippenger, with a synchronisation and a host sum each on the GPU's critical
    /// path (the reference for benchmarks). The proof is the same either way.
    pub early_batch_additions: bool,
    /// With the SRS resident: queue every kernel of a proof's GPU phase (a/b/c, the NTTs, the
    /// five MSMs and their batch additions) back to back with no host wait in between, and make
    /// the MSMs' window sums on the host after the phase, outside the device interlock, while
    /// the other worker's phase runs (the default). `false`: sppark's own Pippenger, which
    /// waits after every batch and adds the windows up on the host before it returns, with
    /// the GPU idle (the reference for benchmarks). The proof is the same either way.
    pub queued_msm: bool,
    /// With [`CudaOptions::queued_msm`] in force: the H query's dense MSM by the sorted
    /// Pippenger (ours, `cuda/sorted_msm.cuh`: wider windows, buckets sorted and balanced
    /// across threads; 1.38× sppark's at 2^27 points on the H200) instead of sppark's kernels
    /// (the reference, `false`). The proof is the same either way.
    pub sorted_msm: bool,
}

impl Default for CudaOptions {
    fn default() -> Self {
        CudaOptions {
            vram_budget: None,
            stream_chunk_bases: DEFAULT_STREAM_CHUNK_BASES,
            force_streaming: false,
            page_lock_host: true,
            early_batch_additions: true,
            queued_msm: true,
            sorted_msm: true,
        }
    }
}

/// Why a `[gpu]` table was rejected.
#[derive(Debug, thiserror::Error)]
pub enum CudaOptionsError {
    /// Not a table, an unknown key, or a value of the wrong type.
    #[error("[gpu]: {0}")]
    Table(#[from] toml::de::Error),
    /// `vram_budget` is not a size.
    #[error("gpu.vram_budget: {0}")]
    VramBudget(String),
    /// `stream_chunk_bases` is below one batch-addition block.
    #[error("gpu.stream_chunk_bases = {0}: at least 1024")]
    StreamChunkTooSmall(usize),
}

/// The `[gpu]` table as written; every key optional.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawGpu {
    vram_budget: Option<String>,
    stream_chunk_bases: Option<usize>,
    force_streaming: Option<bool>,
    page_lock_host: Option<bool>,
    early_batch_additions: Option<bool>,
    queued_msm: Option<bool>,
    sorted_msm: Option<bool>,
}

impl CudaOptions {
    /// The options a `[gpu]` table sets, the defaults for the keys it leaves out:
    ///
    /// ```toml
    /// [gpu]
    /// vram_budget = "24GiB"        # default: the free VRAM at first use, less 1 GiB
    /// stream_chunk_bases = 2097152 # at least 1024
    /// force_streaming = false
    /// page_lock_host = true
    /// early_batch_additions = true
    /// queued_msm = true
    /// sorted_msm = true
    /// ```
    ///
    /// `parse_size` reads `vram_budget` (a string such as `"24GiB"`) into bytes: the config
    /// file's own size syntax, so every size in it reads alike.
    pub fn from_toml(
        table: &toml::Value,
        parse_size: impl Fn(&str) -> Result<u64, String>,
    ) -> Result<CudaOptions, CudaOptionsError> {
        let raw: RawGpu = table.clone().try_into()?;
        let mut o = CudaOptions::default();
        if let Some(b) = raw.vram_budget {
            o.vram_budget = Some(parse_size(&b).map_err(CudaOptionsError::VramBudget)?);
        }
        if let Some(n) = raw.stream_chunk_bases {
            if n < MIN_STREAM_CHUNK_BASES {
                return Err(CudaOptionsError::StreamChunkTooSmall(n));
            }
            o.stream_chunk_bases = n;
        }
        if let Some(f) = raw.force_streaming {
            o.force_streaming = f;
        }
        if let Some(p) = raw.page_lock_host {
            o.page_lock_host = p;
        }
        if let Some(e) = raw.early_batch_additions {
            o.early_batch_additions = e;
        }
        if let Some(q) = raw.queued_msm {
            o.queued_msm = q;
        }
        if let Some(s) = raw.sorted_msm {
            o.sorted_msm = s;
        }
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gib(s: &str) -> Result<u64, String> {
        let n = s.strip_suffix("GiB").ok_or("no GiB")?;
        n.parse::<u64>().map(|n| n << 30).map_err(|e| e.to_string())
    }

    fn parse(text: &str) -> Result<CudaOptions, CudaOptionsError> {
        CudaOptions::from_toml(&toml::from_str::<toml::Value>(text).unwrap(), gib)
    }

    #[test]
    fn gpu_table() {
        assert_eq!(parse("").unwrap(), CudaOptions::default());
        let g = parse(
            "vram_budget = \"24GiB\"\nstream_chunk_bases = 8388608\nforce_streaming = true\n",
        )
        .unwrap();
        assert_eq!(g.vram_budget, Some(24 << 30));
        assert_eq!(g.stream_chunk_bases, 1 << 23);
        assert!(g.force_streaming && g.page_lock_host);
        assert!(!parse("page_lock_host = false").unwrap().page_lock_host);
        assert!(g.early_batch_additions);
        assert!(
            !parse("early_batch_additions = false")
                .unwrap()
                .early_batch_additions
        );
        assert!(g.queued_msm);
        assert!(!parse("queued_msm = false").unwrap().queued_msm);
        assert!(g.sorted_msm);
        assert!(!parse("sorted_msm = false").unwrap().sorted_msm);
        assert!(matches!(
            parse("stream_chunk_bases = 10"),
            Err(CudaOptionsError::StreamChunkTooSmall(10))
        ));
        assert!(matches!(
            parse("vram_budget = \"lots\""),
            Err(CudaOptionsError::VramBudget(_))
        ));
        assert!(matches!(
            parse("bogus = 1"),
            Err(CudaOptionsError::Table(_))
        ));
        assert!(CudaOptions::from_toml(&toml::Value::Integer(1), gib).is_err());
    }
}
