//! The Filecoin proof kinds (PoRep C2, SnapDeals, WindowPoSt, WinningPoSt) as a [`Planner`],
//! built on `cuzk-filecoin`: decoding, partition circuits, parameter file names, and
//! filecoin-proofs' own verifier as the job-level check.
use std::path::PathBuf;

use std::sync::Arc;

use cuzk_filecoin::compiled::CompiledCircuit;
use cuzk_filecoin::params::parameter_cache_dir;
use cuzk_filecoin::{CircuitId, PartitionJob};
use cuzk_filecoin::{MemoryEstimate, ProofPlan};
use cuzk_groth16::{RecorderMode, Srs};

use crate::error::EngineError;
use crate::planner::{JobPlan, PartitionPlan, Planner, PrepareHints, Prepared, SynthesisContext};
use crate::request::{ProofRequest, Work};

/// Plans Filecoin requests; parameters are read from one directory in Filecoin's layout
/// (`v28-….params`).
///
/// Synthesis: by default the constraint matrices of the PoRep, SnapDeals and WinningPoSt
/// circuits are compiled once from the blank circuit when their SRS loads
/// ([`Planner::prepare`]; held and reserved with the SRS), and every partition is then
/// synthesized witness-only and evaluated against them ([`CompiledCircuit`]): 1.75×
/// bellperson's synthesis on porep-2k, 1.35× on winning-2k, against ~1.0× for full recording
/// (bench/RESULTS.md). Witness-only synthesis computes the witness natively where
/// `cuzk_filecoin` can (every kind), checked against the gadgets once per process. WindowPoSt
/// is compiled too unless `with_window_post_compiled(false)`: at 32 GiB its matrices hold
/// 9.98 GiB (host memory during its SRS load, then VRAM beside a GPU; host memory for as long
/// as it is loaded beside the CPU prover) and take 41 s to compile on the H200's 16 cores,
/// and a partition's witness then takes 1.72 s there instead of 44 s recorded in full
/// (bench/RESULTS.md). Everything is recorded in full when compiling is off or failed.
///
/// The job-level verifier is filecoin-proofs' own, which reads the `.vk` files from
/// `FIL_PROOFS_PARAMETER_CACHE` (read once per process by filecoin-proofs); keep that
/// variable pointing at the same directory.
#[derive(Clone, Debug)]
pub struct FilecoinPlanner {
    /// Where the `.params` files live.
    param_dir: PathBuf,
    /// Compile each circuit's matrices when its SRS loads.
    compile: bool,
    /// Compile WindowPoSt's too (`Config::compile_window_post`).
    compile_window_post: bool,
    /// Where compiled circuits are kept between loads (`Config::compiled_cache_path`);
    /// `None`: compiled at every load.
    compiled_cache: Option<PathBuf>,
}

impl FilecoinPlanner {
    /// A planner reading parameters from `param_dir`.
    pub fn new(param_dir: PathBuf) -> FilecoinPlanner {
        FilecoinPlanner {
            param_dir,
            compile: true,
            compile_window_post: true,
            compiled_cache: None,
        }
    }

    /// Keeps compiled circuits in `dir` between loads (`None`: compile at every load, the
    /// default here; the daemon passes `Config::compiled_cache_path`).
    pub fn with_compiled_cache(mut self, dir: Option<PathBuf>) -> FilecoinPlanner {
        self.compiled_cache = dir;
        self
    }

    /// Whether circuits are compiled when their SRS loads (default true).
    pub fn with_compiled(mut self, compile: bool) -> FilecoinPlanner {
        self.compile = compile;
        self
    }

    /// Whether WindowPoSt is compiled too (default false; needs compiling on).
    pub fn with_window_post_compiled(mut self, compile: bool) -> FilecoinPlanner {
        self.compile_window_post = compile;
        self
    }

    /// Whether the circuit `id` is synthesized through compiled matrices.
    pub fn compiles(&self, id: CircuitId) -> bool {
        use cuzk_filecoin::CircuitKind::*;
        self.compile
            && match id.kind {
                PoRep | Snap | WinningPost => true,
                WindowPost => self.compile_window_post,
            }
    }

    /// A planner reading parameters from `$FIL_PROOFS_PARAMETER_CACHE` (else
    /// `/var/tmp/filecoin-proof-parameters`).
    pub fn from_env() -> FilecoinPlanner {
        FilecoinPlanner::new(parameter_cache_dir())
    }

    /// The parameter directory.
    pub fn param_dir(&self) -> &std::path::Path {
        &self.param_dir
    }

    /// Whether the cache holds circuit `id`'s compiled file (as far as its header says).
    fn is_cached(&self, id: CircuitId) -> bool {
        self.compiled_cache.as_deref().is_some_and(|dir| {
            self.params_path(&id.to_string())
                .is_ok_and(|params| cuzk_filecoin::compiled::is_cached(id, &params, dir))
        })
    }

    /// The parts circuit `id` is compiled from when a cache miss compiles it straight into
    /// the cache's file: a circuit of alike parts, a cache directory this process can write.
    fn compile_into_file(&self, id: CircuitId) -> Option<usize> {
        let dir = self.compiled_cache.as_deref()?;
        let parts = cuzk_filecoin::compiled::repeated_parts(id)?;
        cuzk_groth16::atomic::dir_is_writable(dir).then_some(parts)
    }
}

fn partition(job: PartitionJob) -> PartitionPlan {
    let PartitionJob {
        circuit_id,
        partition,
        public_inputs,
        estimate,
        synthesize,
        ..
    } = job;
    PartitionPlan {
        circuit_id: circuit_id.to_string(),
        index: partition,
        public_inputs,
        shape_hint: Some((estimate.constraints, estimate.inputs, estimate.aux)),
        // Counted figures are what the recorder preallocates (`MemoryEstimate::recorder`).
        shape_counted: estimate.exact,
        synthesize: std::sync::Arc::new(move |ctx: SynthesisContext| {
            let SynthesisContext {
                prepared,
                reuse,
                defer_abc,
            } = ctx;
            let compiled = prepared.and_then(|d| d.downcast::<CompiledCircuit>().ok());
            let out = match compiled {
                Some(c) => synthesize(RecorderMode::WitnessOnly, reuse).and_then(|w| {
                    Ok(if defer_abc {
                        c.defer(w)?
                    } else {
                        c.evaluate(w)?
                    })
                }),
                None => synthesize(RecorderMode::Full, reuse),
            };
            out.map_err(|e| e.to_string())
        }),
    }
}

impl Planner for FilecoinPlanner {
    fn plan(&self, req: ProofRequest) -> Result<JobPlan, EngineError> {
        let kind = req.kind();
        let Work::Filecoin(fc) = req.work else {
            return Err(EngineError::InvalidRequest(format!(
                "{kind} is not a Filecoin proof kind"
            )));
        };
        let ProofPlan {
            jobs,
            verifier,
            finisher,
            ..
        } = cuzk_filecoin::plan(&fc).map_err(|e| EngineError::InvalidRequest(e.to_string()))?;
        Ok(JobPlan {
            partitions: jobs.into_iter().map(partition).collect(),
            verify: Some(Box::new(move |proof: &[u8]| {
                verifier(proof).map_err(|e| e.to_string())
            })),
            finish: finisher.map(|f| {
                Box::new(move |proofs: Vec<u8>| f(proofs).map_err(|e| e.to_string()))
                    as crate::planner::FinishFn
            }),
        })
    }

    fn params_path(&self, circuit_id: &str) -> Result<PathBuf, EngineError> {
        let id: CircuitId = circuit_id
            .parse()
            .map_err(|_| EngineError::UnknownCircuit(circuit_id.to_string()))?;
        let files = id.param_files().map_err(|e| EngineError::Srs {
            circuit_id: circuit_id.to_string(),
            message: e.to_string(),
        })?;
        Ok(files.params_path(&self.param_dir))
    }

    /// Its `load_srs` is the default (the file at `params_path`), so a load may stream it.
    /// Says in the log whether the file's verifying key is the one Filecoin published
    /// (TIMING-ONLY parameters are announced by the SRS cache).
    fn load_srs_header(&self, circuit_id: &str) -> Result<Option<Srs>, EngineError> {
        let path = self.params_path(circuit_id)?;
        let srs = crate::params::read_params_header_file(circuit_id, &path)?;
        if let (Ok(id), false) = (circuit_id.parse::<CircuitId>(), srs.vk().is_timing_only()) {
            match cuzk_filecoin::params::is_published_vk(id, srs.vk()) {
                Ok(true) => tracing::info!(
                    circuit = %circuit_id,
                    "the parameters' verifying key is Filecoin's published one"
                ),
                Ok(false) => tracing::warn!(
                    circuit = %circuit_id,
                    path = %path.display(),
                    "the parameters' verifying key is NOT Filecoin's published one (INSECURE \
                     test parameters, or another setup): proofs made with them verify against \
                     this key only, never on chain"
                ),
                Err(e) => {
                    tracing::warn!(circuit = %circuit_id, cause = %e, "could not check the verifying key against Filecoin's published one")
                }
            }
        }
        Ok(Some(srs))
    }

    /// The compiled matrices: 8 bytes a term, ~6 terms a constraint in PoRep and SnapDeals
    /// (porep: 5.55, snap: 5.49), ~10 in the Poseidon-heavy PoSt circuits (winning-2k:
    /// 9.5), row starts, and the densities (`host`). Without them (resident in VRAM), the
    /// densities and the coefficient table stay (`held`).
    fn prepare_hints(&self, circuit_id: &str) -> PrepareHints {
        let Ok(id) = circuit_id.parse::<CircuitId>() else {
            return PrepareHints::default();
        };
        if !self.compiles(id) {
            return PrepareHints::default();
        }
        let e = MemoryEstimate::for_circuit(id);
        let (c, i, a) = (e.constraints as u64, e.inputs as u64, e.aux as u64);
        use cuzk_filecoin::CircuitKind::{PoRep, Snap};
        let terms = match id.kind {
            PoRep | Snap => 6,
            _ => 10,
        };
        let densities = (2 * a + i).div_ceil(8);
        PrepareHints {
            held: densities + (1 << 20),
            host: c * (terms * 8 + 3 * 4) + densities,
        }
    }

    /// A load compiles (`host`), or opens the cached file (its densities read beside what is
    /// kept) and streams its matrices a few windows at a time. A circuit of alike parts
    /// (PoRep) with a writable cache is compiled straight into the file and then streamed
    /// from it: its first part twice over, a piece buffer per core, and what a cached load
    /// holds.
    fn prepare_load_hint(&self, circuit_id: &str) -> u64 {
        let PrepareHints { held, host } = self.prepare_hints(circuit_id);
        let streamed = 2 * held + CompiledCircuit::STREAM_HOST_BYTES.min(host);
        let Ok(id) = circuit_id.parse::<CircuitId>() else {
            return host;
        };
        if self.is_cached(id) {
            return streamed;
        }
        match self.compile_into_file(id) {
            Some(parts) => {
                let template = 2 * host / parts.max(1) as u64;
                let pieces =
                    rayon::current_num_threads() as u64 * CompiledCircuit::REPEAT_THREAD_HOST_BYTES;
                (streamed + template + pieces).min(host)
            }
            None => host,
        }
    }

    /// Beside the compiled-circuit cache, when there is one.
    fn measurement_dir(&self, _circuit_id: &str) -> Option<PathBuf> {
        self.compiled_cache
            .as_deref()
            .map(crate::measured::dir_beside)
    }

    fn prepare(&self, circuit_id: &str) -> Result<Option<Prepared>, EngineError> {
        let id: CircuitId = circuit_id
            .parse()
            .map_err(|_| EngineError::UnknownCircuit(circuit_id.to_string()))?;
        if !self.compiles(id) {
            return Ok(None);
        }
        let t0 = std::time::Instant::now();
        let failed = |e: cuzk_filecoin::FilecoinError| EngineError::Srs {
            circuit_id: circuit_id.to_string(),
            message: format!("compiling the circuit: {e}"),
        };
        let (compiled, cached) = match &self.compiled_cache {
            None => (cuzk_filecoin::compiled::compile(id).map_err(failed)?, false),
            Some(dir) => {
                let params = self.params_path(circuit_id)?;
                // Unless the load reserved a compile in host memory (`prepare_load_hint`), one
                // that cannot write the file must not compile into host memory instead (asked
                // only when it cannot).
                let memory_fallback =
                    || !self.is_cached(id) && self.compile_into_file(id).is_none();
                let (c, source) = cuzk_filecoin::compiled::open_or_compile_with(
                    id,
                    &params,
                    dir,
                    memory_fallback,
                )
                .map_err(failed)?;
                log_source(circuit_id, dir, &source);
                (c, matches!(source, cuzk_filecoin::compiled::Source::Cache))
            }
        };
        let bytes = compiled.heap_bytes() as u64;
        let ms = t0.elapsed().as_millis() as u64;
        if cached {
            tracing::info!(circuit = %circuit_id, bytes, ms, "compiled circuit opened from the cache; its matrices stay in the file until they are streamed or read");
        } else if compiled.matrices_in_file() {
            tracing::info!(circuit = %circuit_id, bytes, ms, "circuit compiled from one part straight into the cache file; its matrices stay there until they are streamed or read");
        } else {
            tracing::info!(circuit = %circuit_id, bytes, ms, "circuit compiled");
        }
        let bounded_aux = Some(compiled.bounded_aux());
        Ok(Some(Prepared {
            data: Arc::new(compiled),
            bytes,
            bounded_aux,
        }))
    }

    /// Reads a cached circuit's matrices in (checked against the file's digest); a file
    /// found damaged on the way is compiled again and rewritten.
    fn settle_on_host(&self, circuit_id: &str, prepared: &mut Prepared) -> Result<(), EngineError> {
        let Some(c) =
            Arc::get_mut(&mut prepared.data).and_then(|d| d.downcast_mut::<CompiledCircuit>())
        else {
            return Ok(());
        };
        if !c.matrices_in_file() {
            return Ok(());
        }
        // Only a planner with a cache opens circuits from files.
        let (Ok(id), Some(dir)) = (circuit_id.parse::<CircuitId>(), &self.compiled_cache) else {
            return Err(EngineError::UnknownCircuit(circuit_id.to_string()));
        };
        let t0 = std::time::Instant::now();
        let params = self.params_path(circuit_id)?;
        let again =
            cuzk_filecoin::compiled::load_or_compile_again(c, id, &params, dir).map_err(|e| {
                EngineError::Srs {
                    circuit_id: circuit_id.to_string(),
                    message: format!("compiling the circuit: {e}"),
                }
            })?;
        if let Some(source) = &again {
            log_source(circuit_id, dir, source);
        }
        prepared.bytes = c.heap_bytes() as u64;
        tracing::info!(circuit = %circuit_id, bytes = prepared.bytes, ms = t0.elapsed().as_millis() as u64, "compiled matrices in host memory");
        Ok(())
    }
}

/// A warning when a cache misbehaved: a cached file refused (and why), or a cache that could
/// not be written (in `dir`).
fn log_source(circuit_id: &str, dir: &std::path::Path, source: &cuzk_filecoin::compiled::Source) {
    use cuzk_filecoin::compiled::Source;
    if let Source::Compiled { refused, stored } = source {
        if let Some(why) = refused {
            tracing::warn!(circuit = %circuit_id, cause = %why, "cached circuit not used; compiled again");
        }
        if let Err(why) = stored {
            tracing::warn!(circuit = %circuit_id, dir = %dir.display(), cause = %why, "compiled circuit not cached: the next load compiles again");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_requests_are_invalid_and_circuit_ids_map_to_filecoin_names() {
        let p = FilecoinPlanner::new(PathBuf::from("/nonexistent"));
        let mut porep =
            cuzk_filecoin::ProofRequest::new(cuzk_filecoin::ProofKind::PoRepSealCommit, 2048, 5)
                .unwrap();
        porep.vanilla_proof = b"{\"SectorNum\":1".to_vec();
        let req = ProofRequest::filecoin(porep);
        assert!(matches!(p.plan(req), Err(EngineError::InvalidRequest(_))));
        let synthetic = ProofRequest::synthetic("synthetic:constraints=64");
        assert!(matches!(
            p.plan(synthetic),
            Err(EngineError::InvalidRequest(_))
        ));
        let path = p.params_path("porep-32g").unwrap();
        assert!(path.to_string_lossy().ends_with(
            "sha256_hasher-82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820.params"
        ));
        assert!(matches!(
            p.params_path("porep-3g"),
            Err(EngineError::UnknownCircuit(_))
        ));
    }

    #[test]
    fn porep_snap_and_winning_circuits_are_compiled_within_their_size_hint() {
        let p = FilecoinPlanner::new(PathBuf::from("/nonexistent"));
        for (circuit, constraints) in [("snap-2k", 1_705_039), ("winning-2k", 90_750)] {
            let hint = p.prepare_hints(circuit).host;
            let prepared = p.prepare(circuit).unwrap().expect("compiled");
            let compiled = prepared
                .data
                .downcast_ref::<CompiledCircuit>()
                .expect("a CompiledCircuit");
            assert_eq!(compiled.num_constraints(), constraints, "{circuit}");
            assert_eq!(prepared.bytes, compiled.heap_bytes() as u64);
            // The hint sizes the SRS reservation: an upper bound, not wildly above.
            assert!(
                prepared.bytes <= hint && prepared.bytes * 2 > hint,
                "{circuit}: {} vs hint {hint}",
                prepared.bytes
            );
        }
        // WindowPoSt is compiled by default, and recorded in full when asked
        // (`[srs] compile_window_post = false`).
        let prepared = p.prepare("wpost-2k").unwrap().expect("compiled");
        let compiled = prepared.data.downcast_ref::<CompiledCircuit>().unwrap();
        assert_eq!(compiled.num_constraints(), 21_866);
        assert!(p.prepare_hints("wpost-2k").host >= prepared.bytes);
        let recorded =
            FilecoinPlanner::new(PathBuf::from("/nonexistent")).with_window_post_compiled(false);
        assert!(recorded.prepare("wpost-2k").unwrap().is_none());
        assert_eq!(recorded.prepare_hints("wpost-2k"), PrepareHints::default());
        assert!(recorded.prepare("winning-2k").unwrap().is_some());
        let off = FilecoinPlanner::new(PathBuf::from("/nonexistent")).with_compiled(false);
        assert!(off.prepare("snap-2k").unwrap().is_none());
        assert!(off.prepare("winning-2k").unwrap().is_none());
        assert_eq!(off.prepare_hints("porep-2k"), PrepareHints::default());
        assert!(matches!(
            p.prepare("porep-3g"),
            Err(EngineError::UnknownCircuit(_))
        ));
    }

    /// A parameter directory, its compiled cache and a planner using both.
    fn planner_with_cache() -> (tempfile::TempDir, PathBuf, FilecoinPlanner) {
        let params = tempfile::tempdir().unwrap();
        let cache = params.path().join("compiled");
        let p = FilecoinPlanner::new(params.path().to_path_buf())
            .with_compiled_cache(Some(cache.clone()));
        (params, cache, p)
    }

    /// With a compiled cache the planner stores a circuit at its first prepare and opens it
    /// at the next, its matrices left in the file (`cuzk_filecoin::compiled::open_or_compile`
    /// has the cases), so the load reserves a few windows, not the matrices; settled on the
    /// host they are read in, and a file damaged among them is compiled again and rewritten.
    /// Without a parameter file there is no key: compiled, not stored.
    #[test]
    fn a_planner_with_a_compiled_cache_stores_and_opens_its_circuits() {
        let (_params, cache, p) = planner_with_cache();
        let matrices = |prepared: &Prepared| {
            let c = prepared.data.downcast_ref::<CompiledCircuit>().unwrap();
            (0..3)
                .map(|m| c.matrix(m).cols.to_vec())
                .collect::<Vec<_>>()
        };
        assert!(p.prepare("winning-2k").unwrap().is_some());
        assert!(!cache.join("winning-2k.compiled").exists());
        std::fs::write(p.params_path("winning-2k").unwrap(), vec![1u8; 4096]).unwrap();
        let cold = p.prepare_hints("winning-2k");
        let cold_load = p.prepare_load_hint("winning-2k");
        assert_eq!(cold_load, cold.host, "no cache yet: a compile");
        let first = p.prepare("winning-2k").unwrap().expect("compiled");
        assert!(cache.join("winning-2k.compiled").is_file());
        let warm = p.prepare_hints("winning-2k");
        let warm_load = p.prepare_load_hint("winning-2k");
        // Opened, not compiled: its header beside a few stream windows (at 32 GiB 0.3 GB
        // against the compile's 7.4 GB; here the windows are the whole small file).
        assert!(
            warm.held < warm_load && warm.held < cold_load,
            "{warm:?} {warm_load} {cold:?} {cold_load}"
        );
        assert_eq!(
            warm_load,
            2 * warm.held + cold.host.min(CompiledCircuit::STREAM_HOST_BYTES)
        );
        let mut again = p.prepare("winning-2k").unwrap().expect("opened");
        let opened = again.data.downcast_ref::<CompiledCircuit>().unwrap();
        assert!(opened.matrices_in_file());
        assert!(
            again.bytes < first.bytes / 4,
            "{} vs {}",
            again.bytes,
            first.bytes
        );
        p.settle_on_host("winning-2k", &mut again).unwrap();
        assert_eq!(again.bytes, first.bytes);
        assert_eq!(matrices(&again), matrices(&first));

        let file = cache.join("winning-2k.compiled");
        let mut bytes = std::fs::read(&file).unwrap();
        let n = bytes.len();
        bytes[n / 2] ^= 0x08;
        std::fs::write(&file, &bytes).unwrap();
        let mut damaged = p.prepare("winning-2k").unwrap().expect("opened");
        p.settle_on_host("winning-2k", &mut damaged).unwrap();
        assert_eq!(matrices(&damaged), matrices(&first), "compiled again");
        assert_ne!(std::fs::read(&file).unwrap(), bytes, "rewritten");
        let mut fine = p.prepare("winning-2k").unwrap().expect("opened");
        p.settle_on_host("winning-2k", &mut fine).unwrap();
        assert_eq!(matrices(&fine), matrices(&first));
    }

    /// PoRep with a writable cache is compiled straight into the cache file (from one
    /// challenge, `compile_repeated_to_file`) and opened from it: the load reserves two
    /// challenges' matrices and piece buffers, not the matrices (at 32 GiB under a quarter of
    /// them). With a cache that cannot be written, the compile in host memory is reserved.
    #[test]
    fn porep_with_a_writable_cache_reserves_a_compile_into_the_file() {
        let (params, cache, p) = planner_with_cache();
        let host = p.prepare_hints("porep-32g").host;
        let lean = p.prepare_load_hint("porep-32g");
        assert!(lean < host / 4 && lean > 2 * host / 18, "{lean} of {host}");
        std::fs::write(p.params_path("porep-2k").unwrap(), vec![1u8; 4096]).unwrap();
        let prepared = p.prepare("porep-2k").unwrap().expect("compiled");
        let c = prepared.data.downcast_ref::<CompiledCircuit>().unwrap();
        assert!(
            c.matrices_in_file(),
            "compiled into the file, opened from it"
        );
        assert!(cache.join("porep-2k.compiled").is_file());

        let blocked = params.path().join("blocked");
        std::fs::write(&blocked, b"a file").unwrap();
        let p =
            FilecoinPlanner::new(params.path().to_path_buf()).with_compiled_cache(Some(blocked));
        assert_eq!(p.prepare_load_hint("porep-32g"), host);
        let prepared = p.prepare("porep-2k").unwrap().expect("compiled");
        let c = prepared.data.downcast_ref::<CompiledCircuit>().unwrap();
        assert!(!c.matrices_in_file(), "compiled in host memory");
    }

    #[test]
    fn plans_a_real_winning_post_request_into_a_synthesizable_partition() {
        use cuzk_testkit::testdata::{ensure, TestdataOptions};
        let dir = tempfile::tempdir().unwrap();
        let m = ensure(&TestdataOptions {
            out: dir.path().to_path_buf(),
            sector_size: cuzk_filecoin::SectorSize::S2KiB,
            seed: 9,
            params: false,
        })
        .unwrap();
        let spec = m.request("winning").unwrap();
        let fc = spec.load(dir.path()).unwrap();
        let req = ProofRequest::filecoin(fc.clone());
        let p = FilecoinPlanner::new(dir.path().to_path_buf());
        let mut plan = p.plan(req).unwrap();
        assert_eq!(plan.partitions.len(), 1);
        let part = plan.partitions.remove(0);
        assert_eq!(part.circuit_id, "winning-2k");
        assert_eq!(part.shape_hint, Some((90_750, 133, 91_674)));
        let expected = part.public_inputs.clone();
        let s = (part.synthesize)(SynthesisContext::default()).unwrap();
        assert_eq!(s.num_constraints, 90_750);
        assert_eq!(&s.inputs[1..], &expected[..]);
        // No parameters in this directory: the job-level check fails with a reason.
        let verify = plan.verify.unwrap();
        assert!(verify(&[0u8; 192]).is_err());
    }
}
