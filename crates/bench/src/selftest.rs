//! `cuzk selftest`: for each proof kind and sector size asked, makes the requests of a
//! synthetic sparse sector (`cuzk_testkit::sparse`: the real circuits accept them, no sealing,
//! seconds even at 32 GiB), proves them through a running daemon, and checks every proof with
//! filecoin-proofs' own verifier (`verify_seal`, `verify_empty_sector_update_proof`,
//! `verify_window_post`, `verify_winning_post`) against the verifying keys in a parameter
//! directory: the real Filecoin parameters, or `cuzk gen params`' insecure ones. Each proof is
//! written with its public inputs as JSON, so anyone can check it again.
//!
//! These are proofs of a sector that was never sealed: they show that the daemon's proofs
//! verify at real size, and are useless on chain ([`cuzk_testkit::sparse::WARNING`]).
use crate::error::{invalid, Result, Step};
use cuzk_filecoin::params::{parameter_cache_dir, vk_is_published};
use cuzk_filecoin::{ProofKind, ProofRequest, SectorSize};
use cuzk_server::client::{self, Dial};
use cuzk_server::proto::{await_proof_response, ProveRequest};
use cuzk_testkit::sparse::{request, WARNING};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What to prove and where the verifying keys are.
#[derive(Clone, Debug)]
pub struct SelftestOptions {
    /// The proof kinds, in order.
    pub kinds: Vec<ProofKind>,
    /// The sector sizes, in order.
    pub sizes: Vec<SectorSize>,
    /// The parameter directory whose `.vk` files check the proofs (filecoin-proofs reads
    /// `FIL_PROOFS_PARAMETER_CACHE`: the caller must have pointed it here, see
    /// [`cuzk_filecoin::params::set_parameter_dir`]).
    pub params_dir: PathBuf,
    /// Where each proof and its public inputs are written as JSON (`None`: nowhere).
    pub out: Option<PathBuf>,
    /// Seed of the synthetic sectors.
    pub seed: u64,
    /// How long one proof may take.
    pub timeout: Duration,
}

/// The verdict on one proof.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Verdict {
    /// filecoin-proofs' verifier accepted it.
    Valid,
    /// The verifier rejected it.
    Invalid(String),
    /// No proof to check: the daemon failed or refused the request, or it could not be made.
    Error(String),
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Valid => f.write_str("VALID"),
            Verdict::Invalid(why) => write!(f, "INVALID: {why}"),
            Verdict::Error(why) => write!(f, "ERROR: {why}"),
        }
    }
}

/// One kind and size.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// `porep`, `snap`, `wpost`, `winning`.
    pub kind: String,
    /// Sector size.
    pub sector_size: String,
    /// Partitions (192-byte Groth16 proofs) in the proof.
    pub partitions: usize,
    /// Seconds from sending the request to its answer.
    pub seconds: f64,
    /// The daemon's own total for the job (milliseconds).
    pub daemon_ms: u64,
    /// Seconds filecoin-proofs' verifier took.
    pub verify_seconds: f64,
    /// Whether the directory's verifying key is the one Filecoin published.
    pub published_vk: Option<bool>,
    /// The verdict.
    pub verdict: Verdict,
    /// The JSON file holding the proof, if written.
    pub file: Option<PathBuf>,
}

impl Outcome {
    /// Whether the proof verified.
    pub fn valid(&self) -> bool {
        self.verdict == Verdict::Valid
    }
}

/// Proves and checks every kind at every size, one after the other; an error in one does not
/// stop the others (it is that row's verdict).
pub async fn run(dial: &Dial, opts: &SelftestOptions) -> Result<Vec<Outcome>> {
    let active = parameter_cache_dir();
    if !same_dir(&active, &opts.params_dir) {
        return Err(invalid!(
            "filecoin-proofs reads verifying keys from {} (FIL_PROOFS_PARAMETER_CACHE), not \
             from {}: point it there before the first check",
            active.display(),
            opts.params_dir.display()
        ));
    }
    if let Some(out) = &opts.out {
        std::fs::create_dir_all(out).with_step(|| format!("creating {}", out.display()))?;
    }
    let client = client::dial(dial).await.with_step(|| {
        format!(
            "connecting to the daemon at {} (is `cuzk daemon` running?)",
            dial.addr
        )
    })?;
    let mut rows = Vec::new();
    for &size in &opts.sizes {
        for &kind in &opts.kinds {
            let row = one(client.clone(), kind, size, opts).await;
            eprintln!(
                "{} {}: {} ({:.1} s)",
                row.kind, row.sector_size, row.verdict, row.seconds
            );
            rows.push(row);
        }
    }
    Ok(rows)
}

async fn one(
    mut client: cuzk_server::client::Client,
    kind: ProofKind,
    size: SectorSize,
    opts: &SelftestOptions,
) -> Outcome {
    let mut o = Outcome {
        kind: kind.short_name().to_string(),
        sector_size: size.to_string(),
        partitions: 0,
        seconds: 0.0,
        daemon_ms: 0,
        verify_seconds: 0.0,
        published_vk: None,
        verdict: Verdict::Error("not run".into()),
        file: None,
    };
    // The request and its plan (the public inputs the verifier checks against).
    let made = tokio::task::spawn_blocking({
        let seed = opts.seed;
        move || -> std::result::Result<_, String> {
            let (req, _) = request(kind, size, seed, None).map_err(|e| e.to_string())?;
            let plan = cuzk_filecoin::plan(&req).map_err(|e| e.to_string())?;
            Ok((req, plan))
        }
    })
    .await;
    let (req, plan) = match made {
        Ok(Ok(x)) => x,
        Ok(Err(e)) => {
            o.verdict = Verdict::Error(format!("making the request: {e}"));
            return o;
        }
        Err(e) => {
            o.verdict = Verdict::Error(format!("making the request: {e}"));
            return o;
        }
    };
    o.partitions = plan.partitions();
    match plan.circuit_id.param_files() {
        Ok(f) if !f.vk_path(&opts.params_dir).exists() => {
            o.verdict = Verdict::Error(format!(
                "no verifying key {} in {}",
                f.vk,
                opts.params_dir.display()
            ));
            return o;
        }
        Ok(_) => o.published_vk = vk_is_published(plan.circuit_id, &opts.params_dir).ok(),
        Err(e) => {
            o.verdict = Verdict::Error(e.to_string());
            return o;
        }
    }

    let mut wire = client::submit_request(&req);
    wire.request_id = format!("selftest-{}-{}-{}", o.kind, size.short(), opts.seed);
    let started = Instant::now();
    let answer = tokio::time::timeout(
        opts.timeout,
        client.prove(ProveRequest { submit: Some(wire) }),
    )
    .await;
    o.seconds = started.elapsed().as_secs_f64();
    let r = match answer {
        Err(_) => {
            o.verdict = Verdict::Error(format!("no answer within {:?}", opts.timeout));
            return o;
        }
        Ok(Err(s)) => {
            o.verdict = Verdict::Error(format!("{:?}: {}", s.code(), s.message()));
            return o;
        }
        Ok(Ok(r)) => r.into_inner().result.unwrap_or_default(),
    };
    o.daemon_ms = r.total_ms;
    if r.status != await_proof_response::Status::Completed as i32 {
        let status = await_proof_response::Status::try_from(r.status)
            .map(|s| s.as_str_name().to_string())
            .unwrap_or_else(|_| format!("status {}", r.status));
        o.verdict = Verdict::Error(format!("{status}: {}", r.error_message));
        return o;
    }
    let proof = r.proof;
    let t = Instant::now();
    let checked = tokio::task::spawn_blocking(move || {
        let v = plan.verify(&proof);
        (v, proof)
    })
    .await;
    o.verify_seconds = t.elapsed().as_secs_f64();
    let proof = match checked {
        Ok((Ok(()), proof)) => {
            o.verdict = Verdict::Valid;
            proof
        }
        Ok((Err(e), proof)) => {
            o.verdict = Verdict::Invalid(e.to_string());
            proof
        }
        Err(e) => {
            o.verdict = Verdict::Error(format!("the verifier: {e}"));
            return o;
        }
    };
    if let Some(dir) = &opts.out {
        let path = dir.join(format!("selftest-{}-{}.json", o.kind, size.short()));
        match write_record(&path, &req, &proof, &o) {
            Ok(()) => o.file = Some(path),
            Err(e) => eprintln!("writing {}: {e}", path.display()),
        }
    }
    o
}

/// A proof and what it proves, as JSON.
#[derive(Serialize)]
struct Record<'a> {
    note: &'static str,
    kind: &'a str,
    sector_size: u64,
    registered_proof: u64,
    verdict: String,
    published_vk: Option<bool>,
    proof_hex: String,
    public_inputs: serde_json::Value,
}

fn write_record(path: &Path, req: &ProofRequest, proof: &[u8], o: &Outcome) -> Result<()> {
    let public = public_inputs(req).step("reading the request's public inputs")?;
    let rec = Record {
        note: WARNING,
        kind: &o.kind,
        sector_size: req.sector_size().bytes(),
        registered_proof: req.registered_proof(),
        verdict: o.verdict.to_string(),
        published_vk: o.published_vk,
        proof_hex: hex::encode(proof),
        public_inputs: public,
    };
    let json = serde_json::to_vec_pretty(&rec).step("encoding the record")?;
    std::fs::write(path, json).with_step(|| format!("writing {}", path.display()))
}

/// What filecoin-proofs' verifier of `req`'s kind takes besides the proof.
fn public_inputs(req: &ProofRequest) -> cuzk_filecoin::Result<serde_json::Value> {
    use serde_json::json;
    let prover_id = hex::encode(req.prover_id());
    Ok(match req.kind() {
        ProofKind::PoRepSealCommit => {
            let p = cuzk_testkit::sparse::porep_public(req)?;
            json!({
                "comm_r": hex::encode(p.comm_r),
                "comm_d": hex::encode(p.comm_d),
                "seed": hex::encode(p.seed),
                "ticket": hex::encode(p.ticket),
                "prover_id": prover_id,
                "miner_id": req.miner_id,
                "sector_id": req.sector_number,
            })
        }
        ProofKind::SnapDealsUpdate => json!({
            "comm_r_old": hex::encode(&req.comm_r_old),
            "comm_r_new": hex::encode(&req.comm_r_new),
            "comm_d_new": hex::encode(&req.comm_d_new),
        }),
        _ => json!({
            "randomness": hex::encode(&req.randomness),
            "prover_id": prover_id,
            "miner_id": req.miner_id,
            "partition_index": req.partition_index,
            "sectors": cuzk_testkit::sparse::post_sectors(req)?
                .into_iter()
                .map(|(id, comm_r)| json!({"sector_id": id, "comm_r": hex::encode(comm_r)}))
                .collect::<Vec<_>>(),
        }),
    })
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The table `cuzk selftest` prints.
pub fn table(rows: &[Outcome]) -> String {
    let mut s = format!(
        "{:<8} {:<7} {:>10} {:>9} {:>9} {:<14} {}\n",
        "kind", "size", "partitions", "seconds", "verify s", "verifying key", "verdict"
    );
    for r in rows {
        let vk = match r.published_vk {
            Some(true) => "published",
            Some(false) => "NOT published",
            None => "?",
        };
        s.push_str(&format!(
            "{:<8} {:<7} {:>10} {:>9.1} {:>9.2} {:<14} {}\n",
            r.kind, r.sector_size, r.partitions, r.seconds, r.verify_seconds, vk, r.verdict
        ));
    }
    s
}
