//! Every malformed-input class yields a typed error naming the field (and nothing panics).
mod common;

use base64::Engine as _;
use cuzk_filecoin::{plan, C1Envelope, FilecoinError, ProofKind, ProofRequest};

fn err(req: &ProofRequest) -> FilecoinError {
    match plan(req) {
        Ok(_) => panic!("malformed request accepted"),
        Err(e) => e,
    }
}

/// The error of `req` under another header: from decoding the header, else from planning.
fn err_with(req: ProofRequest, sector_size: u64, registered_proof: u64) -> FilecoinError {
    match req.with_header(sector_size, registered_proof) {
        Ok(req) => err(&req),
        Err(e) => e,
    }
}

#[test]
fn truncated_envelope_json_is_an_envelope_error() {
    common::dir();
    let mut req = common::request("porep");
    let n = req.vanilla_proof.len();
    req.vanilla_proof.truncate(n / 2);
    assert!(matches!(err(&req), FilecoinError::EnvelopeJson(_)));
}

#[test]
fn bad_base64_is_a_base64_error() {
    common::dir();
    let mut req = common::request("porep");
    let mut env = C1Envelope::parse(&req.vanilla_proof).unwrap();
    env.phase1_out.insert_str(10, "!*");
    req.vanilla_proof = env.to_json();
    assert!(matches!(err(&req), FilecoinError::Base64(_)));
}

#[test]
fn truncated_phase1_json_is_a_phase1_error() {
    common::dir();
    let mut req = common::request("porep");
    let env = C1Envelope::parse(&req.vanilla_proof).unwrap();
    let mut inner = env.phase1_bytes().unwrap();
    inner.truncate(inner.len() - 10);
    req.vanilla_proof = C1Envelope::new(env.sector_num, env.sector_size, &inner).to_json();
    assert!(matches!(err(&req), FilecoinError::Phase1Json(_)));
}

#[test]
fn wrong_registered_proof_for_the_sector_size_is_rejected() {
    common::dir();
    for (kind, wrong) in [("porep", 8u64), ("snap", 3), ("winning", 3), ("wpost", 13)] {
        let req = common::request(kind);
        let size = req.sector_size().bytes();
        let e = err_with(req, size, wrong);
        assert!(
            matches!(
                e,
                FilecoinError::Mismatch {
                    field: "registered_proof",
                    ..
                }
            ),
            "{kind}: {e}"
        );
    }
    // A WindowPoSt number on a WinningPoSt request.
    assert!(matches!(
        err_with(common::request("winning"), 2048, 10),
        FilecoinError::WrongProofType { .. }
    ));
    // Out of range.
    assert!(matches!(
        err_with(common::request("porep"), 2048, 99),
        FilecoinError::UnknownRegisteredProof { .. }
    ));
    // The envelope's proof type must match the request's: StackedDrg2KiBV1 passes the
    // header, the C1 output says V1_1.
    assert!(matches!(
        err_with(common::request("porep"), 2048, 0),
        FilecoinError::Mismatch { .. }
    ));
}

#[test]
fn wrong_partition_count_is_rejected() {
    common::dir();
    let mut req = common::request("snap");
    let first = req.vanilla_proofs[0].clone();
    req.vanilla_proofs.push(first);
    let e = err(&req);
    assert!(
        matches!(&e, FilecoinError::WrongCount { field, got: 2, .. } if field == "vanilla_proofs"),
        "{e}"
    );

    // PoRep: two partitions in the C1 output of a one-partition sector.
    let mut req = common::request("porep");
    let env = C1Envelope::parse(&req.vanilla_proof).unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&env.phase1_bytes().unwrap()).unwrap();
    let proofs = v["vanilla_proofs"]["StackedDrg2KiBV1"]
        .as_array_mut()
        .unwrap();
    let p0 = proofs[0].clone();
    proofs.push(p0);
    let inner = serde_json::to_vec(&v).unwrap();
    req.vanilla_proof = C1Envelope::new(env.sector_num, env.sector_size, &inner).to_json();
    let e = err(&req);
    assert!(matches!(e, FilecoinError::WrongCount { got: 2, .. }), "{e}");
}

#[test]
fn empty_vanilla_proofs_are_rejected() {
    common::dir();
    for kind in ["snap", "winning", "wpost"] {
        let mut req = common::request(kind);
        req.vanilla_proofs.clear();
        let e = err(&req);
        assert!(
            matches!(e, FilecoinError::WrongCount { got: 0, .. }),
            "{kind}: {e}"
        );
    }
    let mut req = common::request("porep");
    req.vanilla_proof.clear();
    assert!(matches!(err(&req), FilecoinError::EnvelopeJson(_)));
}

#[test]
fn garbage_vanilla_proof_is_a_decode_error() {
    common::dir();
    for kind in ["snap", "winning", "wpost"] {
        let mut req = common::request(kind);
        let n = req.vanilla_proofs[0].len();
        req.vanilla_proofs[0].truncate(n / 3);
        let e = err(&req);
        assert!(
            matches!(e, FilecoinError::VanillaDecode { index: 0, .. }),
            "{kind}: {e}"
        );
    }
}

#[test]
fn commitment_or_randomness_of_wrong_length_is_rejected() {
    common::dir();
    for field in ["comm_r_old", "comm_r_new", "comm_d_new"] {
        let mut req = common::request("snap");
        let c = match field {
            "comm_r_old" => &mut req.comm_r_old,
            "comm_r_new" => &mut req.comm_r_new,
            _ => &mut req.comm_d_new,
        };
        c.pop();
        // Neither 32 raw bytes nor a commitment CID (which SnapDeals' fields may also be).
        let e = err(&req);
        assert!(
            matches!(&e, FilecoinError::InvalidValue { field: f, reason } if *f == field && reason.contains("31 bytes")),
            "{e}"
        );
    }
    for kind in ["winning", "wpost"] {
        let mut req = common::request(kind);
        req.randomness.push(0);
        assert!(matches!(
            err(&req),
            FilecoinError::WrongLength {
                field: "randomness",
                expected: 32,
                got: 33
            }
        ));
    }
    // A 32-byte value that is not a field element.
    let mut req = common::request("snap");
    req.comm_r_new = vec![0xff; 32];
    assert!(matches!(
        err(&req),
        FilecoinError::InvalidValue {
            field: "comm_r_new",
            ..
        }
    ));
}

#[test]
fn wrong_sector_number_or_miner_is_caught_before_proving() {
    common::dir();
    let mut req = common::request("porep");
    req.sector_number += 1;
    assert!(matches!(
        err(&req),
        FilecoinError::Mismatch {
            field: "vanilla_proof.SectorNum",
            ..
        }
    ));
    // Envelope and request agree on another sector: the replica id gives it away.
    let mut req = common::request("porep");
    let mut env = C1Envelope::parse(&req.vanilla_proof).unwrap();
    env.sector_num += 1;
    req.sector_number = env.sector_num;
    req.vanilla_proof = env.to_json();
    assert!(matches!(
        err(&req),
        FilecoinError::Mismatch {
            field: "vanilla_proof.Phase1Out.replica_id",
            ..
        }
    ));
    let mut req = common::request("porep");
    req.miner_id += 1;
    assert!(matches!(err(&req), FilecoinError::Mismatch { .. }));
}

#[test]
fn too_many_window_sectors_and_bad_partition_index_are_rejected() {
    common::dir();
    let mut req = common::request("wpost");
    let p = req.vanilla_proofs[0].clone();
    req.vanilla_proofs = vec![p; 3]; // 2 KiB partitions hold 2 sectors
    assert!(matches!(
        err(&req),
        FilecoinError::WrongCount { got: 3, .. }
    ));
    let mut req = common::request("wpost");
    let p = req.vanilla_proofs[0].clone();
    req.vanilla_proofs.push(p);
    assert!(matches!(
        err(&req),
        FilecoinError::InvalidValue {
            field: "vanilla_proofs",
            ..
        }
    ));
    let mut req = common::request("wpost");
    req.partition_index = u32::MAX;
    assert!(matches!(
        err(&req),
        FilecoinError::InvalidValue {
            field: "partition_index",
            ..
        }
    ));
}

#[test]
fn unsupported_sector_size_and_kind_are_rejected() {
    common::dir();
    let req = common::request("snap");
    let rp = req.registered_proof();
    assert!(matches!(
        err_with(req, 4096, rp),
        FilecoinError::UnsupportedSectorSize { .. }
    ));
    assert!(matches!(
        ProofKind::from_wire(0),
        Err(FilecoinError::UnsupportedKind(0))
    ));
    // Unpadded base64 is accepted (some clients strip padding).
    let req = common::request("porep");
    let env = C1Envelope::parse(&req.vanilla_proof).unwrap();
    let raw = env.phase1_bytes().unwrap();
    let mut unpadded = env.clone();
    unpadded.phase1_out = base64::engine::general_purpose::STANDARD_NO_PAD.encode(&raw);
    assert_eq!(unpadded.phase1_bytes().unwrap(), raw);
}

/// Issue 15 item 4: non-canonical 32-byte field elements in `replica_id`, `comm_d`,
/// `comm_d_new` or a sector's `comm_r` reached `.expect` inside the Filecoin crates at plan
/// time: a panic (a reset stream for the client) instead of a typed error naming the field.
#[test]
fn non_canonical_scalars_are_invalid_values_not_panics() {
    common::dir();
    for key in ["replica_id", "comm_d"] {
        let mut req = common::request("porep");
        let mut env = C1Envelope::parse(&req.vanilla_proof).unwrap();
        let mut p: serde_json::Value =
            serde_json::from_slice(&env.phase1_bytes().unwrap()).unwrap();
        p[key] = serde_json::Value::from(vec![255u8; 32]);
        env.phase1_out =
            base64::engine::general_purpose::STANDARD.encode(serde_json::to_vec(&p).unwrap());
        req.vanilla_proof = env.to_json();
        let e = err(&req);
        let want = format!("vanilla_proof.Phase1Out.{key}");
        assert!(
            matches!(&e, FilecoinError::InvalidValue { field, .. } if *field == want),
            "{key}: {e}"
        );
    }
    let mut req = common::request("snap");
    req.comm_d_new = vec![0xff; 32];
    assert!(matches!(
        err(&req),
        FilecoinError::InvalidValue {
            field: "comm_d_new",
            ..
        }
    ));
    // A sector's comm_r sits right after its u64 sector id in the bincode vanilla proof.
    for kind in ["wpost", "winning"] {
        let mut req = common::request(kind);
        req.vanilla_proofs[0][8..40].fill(0xff);
        let e = err(&req);
        assert!(
            matches!(
                e,
                FilecoinError::InvalidValue {
                    field: "vanilla_proofs[].comm_r",
                    ..
                }
            ),
            "{kind}: {e}"
        );
    }
}

/// Issue 32 item 1: Curio's ProofShare SnapDeals request sets no `sector_size`. A size of 0
/// takes the one the registered proof names, for every kind (the request plans as with its
/// size set); a size that contradicts the registered proof stays an error.
#[test]
fn a_sector_size_of_zero_is_the_registered_proof_s() {
    common::dir();
    for kind in ["porep", "snap", "wpost", "winning"] {
        let req = common::request(kind);
        let with_size = plan(&req)
            .unwrap_or_else(|e| panic!("{kind}: {e}"))
            .partitions();
        let rp = req.registered_proof();
        let req = req.with_header(0, rp).unwrap();
        let plan0 = plan(&req).unwrap_or_else(|e| panic!("{kind} with sector_size 0: {e}"));
        assert_eq!(plan0.partitions(), with_size, "{kind}");
        assert_eq!(
            plan0.circuit_id.to_string(),
            format!("{}-2k", plan0.circuit_id.kind.prefix())
        );
        assert!(
            matches!(
                err_with(req, 32 << 30, rp),
                FilecoinError::Mismatch {
                    field: "registered_proof",
                    ..
                }
            ),
            "{kind}: a contradicting size"
        );
    }
}

/// `vanilla_proof` may be the bare C1 output (Curio's ProofShare sends it so): a JSON object
/// without the envelope's keys that is not a C1 output names both accepted forms; the bare
/// form of the real C1 output plans as the envelope does.
#[test]
fn a_bare_c1_output_is_accepted_and_a_bad_one_names_both_forms() {
    common::dir();
    let mut req = common::request("porep");
    let partitions = plan(&req).unwrap().partitions();
    let bare = C1Envelope::parse(&req.vanilla_proof)
        .unwrap()
        .phase1_bytes()
        .unwrap();
    req.vanilla_proof = bare;
    assert_eq!(
        plan(&req).expect("the bare C1 output").partitions(),
        partitions
    );
    req.vanilla_proof = br#"{"registered_proof": "StackedDrg2KiBV1_1"}"#.to_vec();
    let e = err(&req);
    assert!(matches!(e, FilecoinError::BareC1Json(_)), "{e}");
    assert!(e.to_string().contains("Phase1Out"), "{e}");
}
