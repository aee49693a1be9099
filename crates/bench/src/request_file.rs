//! Proof-request files for `cuzk bench` and `cuzk demo`: a JSON form of `SubmitProofRequest`
//! (bytes as base64 or hex), the kind names people type, and the client-side proof check that
//! goes with each request.
//!
//! ```json
//! { "proof_kind": "porep", "sector_size": 2048, "registered_proof": 5,
//!   "vanilla_proof_b64": "...", "sector_number": 1, "miner_id": 1000 }
//! ```
//! Fields: `proof_kind` (porep|snap|wpost|winning|synthetic or the proto names),
//! `sector_size`, `registered_proof`, `priority` (low|normal|high|critical),
//! `vanilla_proof_b64` or `vanilla_proof_text` (UTF-8, e.g. a synthetic spec),
//! `vanilla_proofs_b64` (list), `sector_number`, `miner_id`, `randomness_hex`,
//! `partition_index`, `comm_r_old_hex`, `comm_r_new_hex`, `comm_d_new_hex`.
//!
//! A test-data manifest (`manifest.json` from `cuzk gen testdata`) is accepted too: `--kind`
//! then picks its request, and Filecoin's verifier checks the proofs with the verifying keys
//! in the manifest's directory (where `cuzk gen testdata` writes the parameters; see
//! [`manifest_parameter_dir`]). A timing-only manifest (`"timing_only": true`, from `cuzk gen
//! testdata --timing-only`) is recognised and announced loudly: its proofs DO NOT VERIFY, and
//! a client-side check reports them as not checkable.
use crate::error::{invalid, Result, Step};
use crate::verify::{Check, Verifier};
use base64::Engine as _;
use cuzk_filecoin::params::{parameter_cache_dir, PARAMETER_CACHE_ENV};
use cuzk_filecoin::FilecoinError;
use cuzk_server::proto::{Priority, ProofKind, SubmitProofRequest};
use cuzk_testkit::shaped::ShapedManifest;
use cuzk_testkit::testdata::Manifest;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A request to send repeatedly, with the check for its proofs.
#[derive(Clone)]
pub struct Template {
    /// Short name for the table (`porep-2k`, `synthetic`).
    pub label: String,
    /// The request (its `request_id` is replaced per send).
    pub request: SubmitProofRequest,
    /// Client-side proof check, if one exists for this kind.
    pub verifier: Option<Verifier>,
    /// The request is TIMING-ONLY (random vanilla proofs of the real shapes): its proofs do
    /// not verify, and are never checked.
    pub timing_only: bool,
}

impl Template {
    /// Runs the client-side check of a completed proof.
    pub fn verify(&self, proof: &[u8]) -> Check {
        if self.timing_only {
            return Check::NotChecked(
                "timing-only request: its proofs DO NOT VERIFY, by construction".into(),
            );
        }
        match &self.verifier {
            Some(v) => v(proof),
            None => Check::NotChecked(format!(
                "no client-side verifier for {} requests in this build",
                self.label
            )),
        }
    }
}

/// The proto kind for a name people type.
pub fn parse_kind(s: &str) -> Result<ProofKind> {
    Ok(match s.to_ascii_lowercase().replace('-', "_").as_str() {
        "porep" | "porep_seal_commit" | "c2" => ProofKind::PorepSealCommit,
        "snap" | "snapdeals" | "snap_deals_update" => ProofKind::SnapDealsUpdate,
        "wpost" | "windowpost" | "window_post_partition" => ProofKind::WindowPostPartition,
        "winning" | "winningpost" | "winning_post" => ProofKind::WinningPost,
        "synthetic" | "synth" => ProofKind::Synthetic,
        _ => {
            return Err(invalid!(
                "unknown proof kind `{s}`; use porep, snap, wpost, winning or synthetic"
            ))
        }
    })
}

/// The proto priority for a name people type.
pub fn parse_priority(s: &str) -> Result<Priority> {
    Ok(match s.to_ascii_lowercase().as_str() {
        "low" => Priority::Low,
        "normal" => Priority::Normal,
        "high" => Priority::High,
        "critical" => Priority::Critical,
        _ => {
            return Err(invalid!(
                "unknown priority `{s}`; use low, normal, high or critical"
            ))
        }
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestFile {
    proof_kind: String,
    #[serde(default)]
    sector_size: u64,
    #[serde(default)]
    registered_proof: u64,
    #[serde(default)]
    priority: Option<String>,
    #[serde(default)]
    vanilla_proof_b64: Option<String>,
    #[serde(default)]
    vanilla_proof_text: Option<String>,
    #[serde(default)]
    vanilla_proofs_b64: Vec<String>,
    #[serde(default)]
    sector_number: u64,
    #[serde(default)]
    miner_id: u64,
    #[serde(default)]
    randomness_hex: Option<String>,
    #[serde(default)]
    partition_index: u32,
    #[serde(default)]
    comm_r_old_hex: Option<String>,
    #[serde(default)]
    comm_r_new_hex: Option<String>,
    #[serde(default)]
    comm_d_new_hex: Option<String>,
    /// Free-form label for tables.
    #[serde(default)]
    label: Option<String>,
}

fn b64(field: &str, s: &str) -> Result<Vec<u8>> {
    base64::engine::general_purpose::STANDARD
        .decode(s.trim())
        .with_step(|| format!("{field}: not base64"))
}

fn hex_field(field: &str, s: &Option<String>) -> Result<Vec<u8>> {
    match s {
        None => Ok(Vec::new()),
        Some(s) => hex::decode(s.trim()).with_step(|| format!("{field}: not hex")),
    }
}

/// Reads a request file. `kind`, if given, must agree with the file.
pub fn load(path: &Path, kind: Option<&str>) -> Result<Template> {
    let text = std::fs::read_to_string(path)
        .with_step(|| format!("reading request file {}", path.display()))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .with_step(|| format!("parsing request file {}", path.display()))?;
    if value.get("generator_version").is_some() && value.get("requests").is_some() {
        return from_manifest(path, value, kind);
    }
    let f: RequestFile = serde_json::from_value(value)
        .with_step(|| format!("parsing request file {}", path.display()))?;
    let file_kind = parse_kind(&f.proof_kind)?;
    if let Some(k) = kind {
        if parse_kind(k)? != file_kind {
            return Err(invalid!(
                "--kind {k} but {} holds a {} request",
                path.display(),
                f.proof_kind
            ));
        }
    }
    let vanilla_proof = match (&f.vanilla_proof_b64, &f.vanilla_proof_text) {
        (Some(b), None) => b64("vanilla_proof_b64", b)?,
        (None, Some(t)) => t.as_bytes().to_vec(),
        (None, None) => Vec::new(),
        (Some(_), Some(_)) => {
            return Err(invalid!(
                "set vanilla_proof_b64 or vanilla_proof_text, not both"
            ))
        }
    };
    let vanilla_proofs = f
        .vanilla_proofs_b64
        .iter()
        .map(|s| b64("vanilla_proofs_b64", s))
        .collect::<Result<Vec<_>>>()?;
    let priority = match &f.priority {
        Some(p) => parse_priority(p)? as i32,
        None => Priority::Unspecified as i32,
    };
    let request = SubmitProofRequest {
        request_id: String::new(),
        proof_kind: file_kind as i32,
        sector_size: f.sector_size,
        registered_proof: f.registered_proof,
        priority,
        vanilla_proof,
        vanilla_proofs,
        sector_number: f.sector_number,
        miner_id: f.miner_id,
        randomness: hex_field("randomness_hex", &f.randomness_hex)?,
        partition_index: f.partition_index,
        comm_r_old: hex_field("comm_r_old_hex", &f.comm_r_old_hex)?,
        comm_r_new: hex_field("comm_r_new_hex", &f.comm_r_new_hex)?,
        comm_d_new: hex_field("comm_d_new_hex", &f.comm_d_new_hex)?,
    };
    let label = f
        .label
        .clone()
        .unwrap_or_else(|| f.proof_kind.to_ascii_lowercase());
    let verifier = crate::verify::verifier_for(&request);
    Ok(Template {
        label,
        request,
        verifier,
        timing_only: false,
    })
}

/// A parsed test-data manifest: the regular fields, and whether it is a timing-only one.
fn parse_manifest(path: &Path, value: serde_json::Value) -> Result<(Manifest, bool)> {
    if value.get("timing_only").and_then(|v| v.as_bool()) == Some(true) {
        let m: ShapedManifest = serde_json::from_value(value)
            .with_step(|| format!("parsing timing-only manifest {}", path.display()))?;
        return Ok((m.manifest, true));
    }
    let m: Manifest = serde_json::from_value(value)
        .with_step(|| format!("parsing manifest {}", path.display()))?;
    Ok((m, false))
}

/// The directory holding the parameters a test-data manifest at `path` lists (the manifest's
/// own directory: `cuzk gen testdata` writes them beside it), or `None` when `path` is no
/// manifest or lists no parameters. Filecoin's verifier reads verifying keys from
/// `FIL_PROOFS_PARAMETER_CACHE`, once per process: a tool that verifies such requests points
/// it here (`cuzk_filecoin::params::set_parameter_dir`) before any thread starts.
pub fn manifest_parameter_dir(path: &Path) -> Option<PathBuf> {
    let value: serde_json::Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    if value.get("generator_version").is_none() || value.get("requests").is_none() {
        return None;
    }
    let (m, _) = parse_manifest(path, value).ok()?;
    if m.params.is_empty() {
        return None;
    }
    Some(manifest_dir(path))
}

fn manifest_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The request of `kind` from a test-data manifest (`cuzk gen testdata`'s `manifest.json`;
/// the request files sit beside it).
fn from_manifest(path: &Path, value: serde_json::Value, kind: Option<&str>) -> Result<Template> {
    let (m, timing_only) = parse_manifest(path, value)?;
    if timing_only {
        eprintln!(
            "WARNING: {} is a TIMING-ONLY manifest. {}",
            path.display(),
            cuzk_testkit::shaped::WARNING
        );
    }
    let Some(kind) = kind else {
        return Err(invalid!(
            "--kind is needed to pick a request from {}",
            path.display()
        ));
    };
    // A manifest's own name first (`porep-ni` beside `porep`), else the first of the kind.
    let spec = match m.request(kind) {
        Some(spec) => spec,
        None => {
            let want = parse_kind(kind)? as i32;
            m.requests
                .iter()
                .find(|r| r.proof_kind == want)
                .ok_or_else(|| invalid!("{} has no {kind} request", path.display()))?
        }
    };
    let dir = manifest_dir(path);
    let params = (!m.params.is_empty()).then(|| dir.clone());
    let mut t = filecoin_template_in(spec, &dir, params)?;
    if timing_only {
        t.timing_only = true;
        t.label = format!("{} (TIMING-ONLY)", t.label);
    }
    Ok(t)
}

/// A Filecoin request from the test data in `dir`, checked on the client with Filecoin's
/// verifier, which reads verifying keys from `FIL_PROOFS_PARAMETER_CACHE` (read once per
/// process: see [`manifest_parameter_dir`]).
pub fn filecoin_template(
    spec: &cuzk_testkit::testdata::RequestSpec,
    dir: &Path,
) -> Result<Template> {
    filecoin_template_in(spec, dir, None)
}

/// Whether `a` and `b` name one directory.
fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Checks `proof` for `req` with Filecoin's verifier; `params`: where the verifying keys
/// should be (the manifest's directory), if known.
fn check_filecoin(req: &cuzk_filecoin::ProofRequest, params: Option<&Path>, proof: &[u8]) -> Check {
    let active = parameter_cache_dir();
    if let Some(want) = params {
        if !same_dir(&active, want) {
            return Check::NotChecked(format!(
                "filecoin-proofs reads verifying keys from {} ({PARAMETER_CACHE_ENV}), not from \
                 the manifest's parameter directory {}",
                active.display(),
                want.display()
            ));
        }
    }
    let plan = match cuzk_filecoin::plan(req) {
        Ok(p) => p,
        Err(e) => return Check::NotChecked(format!("planning the request to verify it: {e}")),
    };
    match plan.circuit_id.param_files() {
        Ok(f) if !f.vk_path(&active).exists() => {
            return Check::NotChecked(format!(
                "no verifying key {}{}",
                f.vk_path(&active).display(),
                if params.is_none() {
                    " (the manifest lists no parameters)"
                } else {
                    ""
                }
            ))
        }
        Ok(_) => {}
        Err(e) => return Check::NotChecked(format!("naming the verifying key: {e}")),
    }
    match plan.verify(proof) {
        Ok(()) => Check::Verified,
        Err(e @ (FilecoinError::VerificationFailed { .. } | FilecoinError::ProofLength { .. })) => {
            Check::Rejected(e.to_string())
        }
        Err(e) => Check::NotChecked(format!("the verifier gave no verdict: {e}")),
    }
}

fn filecoin_template_in(
    spec: &cuzk_testkit::testdata::RequestSpec,
    dir: &Path,
    params: Option<PathBuf>,
) -> Result<Template> {
    let req = spec
        .load(dir)
        .with_step(|| format!("loading the {} request from {}", spec.kind, dir.display()))?;
    // The one copy of the payload on this client side: `request` goes on the wire (once per
    // submit), `req` stays with the verifier, which re-plans it to get the public inputs.
    let request = cuzk_server::client::submit_request(&req);
    let verifier: Verifier =
        Arc::new(move |proof: &[u8]| check_filecoin(&req, params.as_deref(), proof));
    Ok(Template {
        label: spec.kind.clone(),
        request,
        verifier: Some(verifier),
        timing_only: false,
    })
}

/// A synthetic request for `spec` (`synthetic:constraints=4096,inputs=4`).
pub fn synthetic(kind: &str, spec: &str) -> Result<Template> {
    if parse_kind(kind)? != ProofKind::Synthetic {
        return Err(invalid!("--input FILE is required for --kind {kind}"));
    }
    let request = SubmitProofRequest {
        proof_kind: ProofKind::Synthetic as i32,
        vanilla_proof: spec.as_bytes().to_vec(),
        ..Default::default()
    };
    let verifier = crate::verify::verifier_for(&request);
    Ok(Template {
        label: "synthetic".into(),
        request,
        verifier,
        timing_only: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_file_round_trip_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        std::fs::write(
            &p,
            r#"{"proof_kind":"wpost","sector_size":2048,"registered_proof":5,
                "vanilla_proofs_b64":["AQID","BAU="],"randomness_hex":"0a0b","miner_id":1000,
                "priority":"high"}"#,
        )
        .unwrap();
        let t = load(&p, Some("wpost")).unwrap();
        assert_eq!(t.request.proof_kind, ProofKind::WindowPostPartition as i32);
        assert_eq!(t.request.vanilla_proofs, vec![vec![1, 2, 3], vec![4, 5]]);
        assert_eq!(t.request.randomness, vec![10, 11]);
        assert_eq!(t.request.priority, Priority::High as i32);
        assert!(load(&p, Some("porep")).is_err(), "kind mismatch");
        std::fs::write(&p, r#"{"proof_kind":"porep","vanilla_proof_b64":"%%%"}"#).unwrap();
        assert!(load(&p, None).is_err(), "bad base64");
        assert!(parse_kind("mystery").is_err());
    }

    #[test]
    fn manifest_request_is_picked_by_kind() {
        use cuzk_testkit::testdata::{Manifest, RequestSpec, SectorFacts};
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("w0.bin"), [9u8, 8, 7]).unwrap();
        let m = Manifest {
            generator_version: 1,
            seed: 3,
            sector_size: 2048,
            sector: SectorFacts {
                comm_r: "00".into(),
                comm_d: "00".into(),
                ticket: "00".into(),
                seed: "00".into(),
            },
            requests: vec![RequestSpec {
                kind: "wpost".into(),
                proof_kind: ProofKind::WindowPostPartition as i32,
                sector_size: 2048,
                registered_proof: 10,
                vanilla_proof_file: None,
                vanilla_proofs_files: vec!["w0.bin".into()],
                sector_number: 0,
                miner_id: 1000,
                randomness: "0a".repeat(32),
                partition_index: 0,
                comm_r_old: String::new(),
                comm_r_new: String::new(),
                comm_d_new: String::new(),
            }],
            params: vec![],
            files: vec![],
            seal_seconds: 0.0,
            total_seconds: 0.0,
        };
        let p = dir.path().join("manifest.json");
        std::fs::write(&p, serde_json::to_vec(&m).unwrap()).unwrap();
        let t = load(&p, Some("wpost")).unwrap();
        assert_eq!(t.request.proof_kind, ProofKind::WindowPostPartition as i32);
        assert_eq!(t.request.vanilla_proofs, vec![vec![9, 8, 7]]);
        assert_eq!(t.request.randomness, vec![10; 32]);
        assert_eq!(t.request.registered_proof, 10);
        assert!(t.verifier.is_some());
        assert!(load(&p, Some("porep")).is_err(), "no porep request");
        assert!(load(&p, None).is_err(), "kind needed");
    }
}
