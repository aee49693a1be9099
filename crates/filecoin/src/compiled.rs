//! The Filecoin circuits' pre-compiled constraint matrices ([`cuzk_groth16::compiled`]): each
//! circuit id's blank circuit walked once, its A, B, C kept as sparse matrices, and every
//! partition then synthesized witness-only and evaluated against them (on the host, or on
//! the prover's device when a/b/c are deferred). [`load_or_compile`] keeps them on disk
//! between starts, keyed by the circuit and its parameter file.
use bellpepper_core::Circuit;
use blstrs::Scalar;
pub use cuzk_groth16::compiled::CompiledCircuit;

use crate::error::{FilecoinError, Result};
use crate::params::{with_blank_circuit, with_blank_parts, CircuitVisitor, PartsVisitor};
use crate::registry::CircuitId;

struct Compile(String);

impl CircuitVisitor for Compile {
    type Output = std::result::Result<CompiledCircuit, cuzk_groth16::CompileError>;
    fn visit<C: Circuit<Scalar> + Send>(self, circuit: C) -> Self::Output {
        CompiledCircuit::compile(&self.0, circuit)
    }
}

/// A circuit of alike parts compiled from its first ([`CompiledCircuit::compile_repeated`]),
/// into host memory or straight into a cache file (`path`, `key`).
struct Repeated<'a> {
    name: String,
    file: Option<(&'a std::path::Path, &'a str)>,
}

impl PartsVisitor for Repeated<'_> {
    type Output = std::result::Result<CompiledCircuit, cuzk_groth16::CompileError>;
    fn visit<C: Circuit<Scalar>>(
        self,
        with_parts: impl Fn(usize) -> C + Sync,
        parts: usize,
    ) -> Self::Output {
        match self.file {
            None => CompiledCircuit::compile_repeated(&self.name, with_parts, parts),
            Some((path, key)) => {
                CompiledCircuit::compile_repeated_to_file(&self.name, with_parts, parts, path, key)
            }
        }
    }
}

/// The number of alike parts a circuit is compiled from (`with_blank_parts`), if any.
struct Parts;

impl PartsVisitor for Parts {
    type Output = usize;
    fn visit<C: Circuit<Scalar>>(self, _: impl Fn(usize) -> C + Sync, parts: usize) -> usize {
        parts
    }
}

fn compile_failed(e: cuzk_groth16::CompileError) -> FilecoinError {
    FilecoinError::Synthesis {
        partition: 0,
        message: e.to_string(),
    }
}

/// Records the A, B, C of circuit `id`'s blank circuit: PoRep's from its preamble and one
/// challenge, repeated ([`CompiledCircuit::compile_repeated`]: seconds, where walking the
/// whole circuit takes minutes at 32 GiB), the others by walking the whole circuit
/// ([`compile_walked`]).
pub fn compile(id: CircuitId) -> Result<CompiledCircuit> {
    let repeated = Repeated {
        name: id.to_string(),
        file: None,
    };
    match with_blank_parts(id, repeated)? {
        Some(c) => c.map_err(compile_failed),
        None => compile_walked(id),
    }
}

/// Walks the whole blank circuit of `id` and records its A, B, C (what [`compile`] must
/// equal; the tests compare them).
pub fn compile_walked(id: CircuitId) -> Result<CompiledCircuit> {
    with_blank_circuit(id, Compile(id.to_string()))?.map_err(compile_failed)
}

/// How many alike parts circuit `id` is compiled from ([`compile`]), when it is; a compile
/// into the cache file then holds about two parts' matrices ([`open_or_compile`]).
pub fn repeated_parts(id: CircuitId) -> Option<usize> {
    with_blank_parts(id, Parts).ok().flatten()
}

/// The directory of compiled circuits beside a parameter directory (the default cache).
pub const CACHE_SUBDIR: &str = "cuzk-compiled";

/// Where a circuit from [`load_or_compile`] came from.
#[derive(Debug)]
pub enum Source {
    /// Read from the cache.
    Cache,
    /// Compiled: `refused` says why the cache's file was not used (none when there was
    /// none), `stored` whether it was written back (and why not).
    Compiled {
        /// Why a file that was there was not used.
        refused: Option<String>,
        /// Writing the cache: done, or why not (a read-only directory, a full disk).
        stored: std::result::Result<(), String>,
    },
}

/// The circuits' source: the storage-proofs release whose blank circuits are compiled (pinned
/// with `=` in the workspace's Cargo.toml; bump this with the pin, so that matrices compiled
/// from another release are stale).
pub const CIRCUITS_REVISION: &str = "storage-proofs-19.0.1";

/// The cache key of circuit `id` with its parameter file `params`: the circuits' release, the
/// circuit, the file's length, and a digest of its first MiB (its verifying key and section
/// counts, and the first points). Another parameter file makes the cached circuit stale.
pub fn cache_key(id: CircuitId, params: &std::path::Path) -> Result<String> {
    use std::io::Read;
    let mut f = std::fs::File::open(params).map_err(|e| FilecoinError::io(params, e))?;
    let len = f
        .metadata()
        .map_err(|e| FilecoinError::io(params, e))?
        .len();
    let mut head = Vec::with_capacity(1 << 20);
    (&mut f)
        .take(1 << 20)
        .read_to_end(&mut head)
        .map_err(|e| FilecoinError::io(params, e))?;
    let digest = blake2b_simd::Params::new().hash_length(16).hash(&head);
    Ok(format!(
        "{CIRCUITS_REVISION}|{id}|{len}|{}",
        digest.to_hex()
    ))
}

/// Circuit `id`'s compiled matrices from `cache_dir` when a file there was written for the
/// same circuit and parameter file `params` and is intact; else compiled ([`compile`]) and
/// written there for the next time. A stale, short or damaged file is never used; a cache
/// that cannot be written (a read-only or full directory) only costs the next start a compile,
/// and so does a missing parameter file (no key: the SRS's own load reports it).
pub fn load_or_compile(
    id: CircuitId,
    params: &std::path::Path,
    cache_dir: &std::path::Path,
) -> Result<(CompiledCircuit, Source)> {
    let (mut c, source) = open_or_compile(id, params, cache_dir)?;
    let again = load_or_compile_again(&mut c, id, params, cache_dir)?;
    Ok((c, again.unwrap_or(source)))
}

/// Reads the matrices of `c` (circuit `id`, opened from `cache_dir` by [`open_or_compile`])
/// into host memory; when its file fails the check on the way, `c` is compiled again and the
/// file rewritten ([`compile_again`]), and the compile's source is returned.
pub fn load_or_compile_again(
    c: &mut CompiledCircuit,
    id: CircuitId,
    params: &std::path::Path,
    cache_dir: &std::path::Path,
) -> Result<Option<Source>> {
    match c.load_host_matrices() {
        Ok(_) => Ok(None),
        Err(e) => {
            let (mut again, source) = compile_again(id, params, cache_dir, e.to_string())?;
            // Compiled straight into the file (PoRep): read it in, checked once more.
            if again.matrices_in_file() {
                again
                    .load_host_matrices()
                    .map_err(|e| FilecoinError::filecoin("the compiled circuit", e))?;
            }
            *c = again;
            Ok(Some(source))
        }
    }
}

/// As [`load_or_compile`], but a cached circuit's matrices are left in its file
/// ([`CompiledCircuit::open_file`]: its header, length, table and densities checked): they
/// are streamed to a device or read in later, checked against the file's digest as they
/// pass. When that check fails, [`compile_again`] replaces the file. A circuit of alike parts
/// (PoRep) is compiled straight into the cache file and opened from it, so its matrices never
/// reach host memory; when that file cannot be written, it is compiled into host memory.
pub fn open_or_compile(
    id: CircuitId,
    params: &std::path::Path,
    cache_dir: &std::path::Path,
) -> Result<(CompiledCircuit, Source)> {
    open_or_compile_with(id, params, cache_dir, || true)
}

/// [`open_or_compile`]; when `memory_fallback` says no (asked only then), a circuit of alike
/// parts whose cache file cannot be written is an error, not a compile into host memory (a
/// caller that reserved only what a compile into the file holds).
pub fn open_or_compile_with(
    id: CircuitId,
    params: &std::path::Path,
    cache_dir: &std::path::Path,
    memory_fallback: impl FnOnce() -> bool,
) -> Result<(CompiledCircuit, Source)> {
    let path = cache_path(id, cache_dir);
    let mut refused = None;
    // No key without the parameter file (its load reports that): compiled, not stored.
    if let Ok(key) = cache_key(id, params) {
        let orphans = CompiledCircuit::remove_orphaned_temporaries(&path);
        if orphans > 0 {
            tracing::info!(circuit = %id, orphans, "removed the temporary files of killed cache writers");
        }
        match CompiledCircuit::open_file(&path, &key) {
            Ok(c) => return Ok((c, Source::Cache)),
            Err(cuzk_groth16::compiled::CircuitFileError::Missing(_)) => {}
            Err(e) => refused = Some(e.to_string()),
        }
    }
    compile_for_cache(id, params, cache_dir, refused, memory_fallback)
}

/// Compiles circuit `id` for the cache file of parameter file `params` in `cache_dir`: a
/// circuit of alike parts straight into it, the others in host memory and then written; with
/// no key (no parameter file), in host memory and not stored.
fn compile_for_cache(
    id: CircuitId,
    params: &std::path::Path,
    cache_dir: &std::path::Path,
    refused: Option<String>,
    memory_fallback: impl FnOnce() -> bool,
) -> Result<(CompiledCircuit, Source)> {
    match cache_key(id, params) {
        Ok(key) => {
            let path = cache_path(id, cache_dir);
            compile_and_store(id, &path, &key, cache_dir, refused, memory_fallback)
        }
        Err(e) => Ok((
            compile(id)?,
            Source::Compiled {
                refused,
                stored: Err(format!("no cache key: {e}")),
            },
        )),
    }
}

/// [`compile_for_cache`] with the cache file `path` and its `key`.
fn compile_and_store(
    id: CircuitId,
    path: &std::path::Path,
    key: &str,
    cache_dir: &std::path::Path,
    refused: Option<String>,
    memory_fallback: impl FnOnce() -> bool,
) -> Result<(CompiledCircuit, Source)> {
    // Why a circuit of alike parts could not be compiled into the file (then it is compiled
    // in host memory); the others are compiled in host memory and written after.
    let not_stored = match std::fs::create_dir_all(cache_dir) {
        Err(e) => repeated_parts(id).map(|_| format!("{}: {e}", cache_dir.display())),
        Ok(()) => {
            let repeated = Repeated {
                name: id.to_string(),
                file: Some((path, key)),
            };
            match with_blank_parts(id, repeated)? {
                None => None,
                Some(Ok(c)) => {
                    let stored = Ok(());
                    return Ok((c, Source::Compiled { refused, stored }));
                }
                Some(Err(e @ cuzk_groth16::CompileError::File { .. })) => Some(e.to_string()),
                Some(Err(e)) => return Err(compile_failed(e)),
            }
        }
    };
    if let Some(why) = not_stored.as_ref().filter(|_| !memory_fallback()) {
        return Err(FilecoinError::io(
            path,
            std::io::Error::other(format!(
                "the compiled circuit could not be written ({why}), and compiling it in host \
                 memory was not reserved"
            )),
        ));
    }
    let compiled = compile(id)?;
    let stored = match not_stored {
        Some(why) => Err(why),
        None => store(&compiled, path, key, cache_dir),
    };
    Ok((compiled, Source::Compiled { refused, stored }))
}

/// Whether `cache_dir` holds a circuit file for `id` and `params` that opens as far as its
/// header says (right key and format, its length as its header says: a few hundred bytes
/// read): [`open_or_compile`] would not compile.
pub fn is_cached(id: CircuitId, params: &std::path::Path, cache_dir: &std::path::Path) -> bool {
    cache_key(id, params)
        .is_ok_and(|key| CompiledCircuit::probe_file(&cache_path(id, cache_dir), &key).is_ok())
}

/// Compiles circuit `id` again after its cached file turned out `refused` (its digest did not
/// match as its matrices passed), and writes the file anew.
pub fn compile_again(
    id: CircuitId,
    params: &std::path::Path,
    cache_dir: &std::path::Path,
    refused: String,
) -> Result<(CompiledCircuit, Source)> {
    let _ = std::fs::remove_file(cache_path(id, cache_dir));
    compile_for_cache(id, params, cache_dir, Some(refused), || true)
}

fn cache_path(id: CircuitId, cache_dir: &std::path::Path) -> std::path::PathBuf {
    cache_dir.join(format!("{id}.compiled"))
}

fn store(
    compiled: &CompiledCircuit,
    path: &std::path::Path,
    key: &str,
    cache_dir: &std::path::Path,
) -> std::result::Result<(), String> {
    let start = std::time::Instant::now();
    let stored = std::fs::create_dir_all(cache_dir)
        .map_err(|e| format!("{}: {e}", cache_dir.display()))
        .and_then(|()| compiled.write_file(path, key).map_err(|e| e.to_string()));
    tracing::debug!(
        path = %path.display(),
        seconds = start.elapsed().as_secs_f64(),
        ok = stored.is_ok(),
        "compiled circuit written"
    );
    stored
}
