//! Issue 15's fuzz-style acceptance test: a few hundred malformed requests of every class,
//! from several clients at once, at a running daemon with the real Filecoin planner and the
//! 2 KiB test data:
//! - each wrong field of each kind (kind, sector size, registered proof, payload, entries,
//!   partition, randomness, commitments);
//! - truncation at random offsets, inside the payload field of the encoded message (the
//!   bytes are not a message) and inside the payload itself (a short but well-formed one);
//! - oversized counts, ids and payloads;
//! - non-canonical field elements.
//!
//! Then: every answer is a typed gRPC error (no OK, no INTERNAL/UNKNOWN, no reset stream)
//! with a message under 1 KiB; the budget's reserved bytes and the request buffer are back
//! at their baseline and the process's RSS near it; a valid WinningPoSt still proves and
//! verifies.
mod common;

use common::fc::{request, start_filecoin};
use common::{completed, eventually};
use cuzk_server::proto::{PreloadSrsRequest, ProveRequest, SubmitProofRequest};
use prost::Message;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Duration;
use tonic::Code;

const KINDS: [&str; 4] = ["porep", "snap", "wpost", "winning"];

/// One malformed request.
enum Case {
    /// Sent with SubmitProof (even cases) or Prove (odd).
    Submit(SubmitProofRequest),
    /// Bytes sent as SubmitProof's message as they are.
    Raw(Vec<u8>),
    /// A PreloadSRS circuit id.
    Preload(String),
}

fn cases(rng: &mut ChaCha8Rng) -> Vec<(String, Case)> {
    let mut out: Vec<(String, Case)> = Vec::new();
    let mut push = |label: String, c: Case| out.push((label, c));
    for kind in KINDS {
        let (_, good) = request(kind);
        let variant = |f: &dyn Fn(&mut SubmitProofRequest)| {
            let mut r = good.clone();
            f(&mut r);
            r
        };
        // The kind, sector size and registered proof.
        for n in [0, 99, -1] {
            push(
                format!("{kind}: proof_kind {n}"),
                Case::Submit(variant(&|r| r.proof_kind = n)),
            );
        }
        for other in KINDS.iter().filter(|k| **k != kind) {
            let n = request(other).1.proof_kind;
            push(
                format!("{kind}: payload as {other}"),
                Case::Submit(variant(&|r| r.proof_kind = n)),
            );
        }
        // Another kind's registered proof may be a valid one of this kind too (the kinds
        // number theirs apart: 2 KiB WinningPoSt and SnapDeals are both 0), so the wrong
        // ones are this kind's at 32 GiB (each enum lists 2 KiB, 8 MiB, 512 MiB, 32 GiB,
        // 64 GiB in a row), which contradicts sector_size, and numbers no kind has.
        let at_32g = good.registered_proof + 3;
        push(
            format!("{kind}: registered proof of 32 GiB"),
            Case::Submit(variant(&|r| r.registered_proof = at_32g)),
        );
        // (0 is no error: the registered proof names the size.)
        for size in [1234567u64, 8 << 20, 32 << 30, u64::MAX] {
            push(
                format!("{kind}: sector_size {size}"),
                Case::Submit(variant(&|r| r.sector_size = size)),
            );
        }
        for rp in [999u64, 1 << 40] {
            push(
                format!("{kind}: registered_proof {rp}"),
                Case::Submit(variant(&|r| r.registered_proof = rp)),
            );
        }
        // The payload: PoRep's C1 envelope, the others' per-sector / per-partition entries.
        if kind == "porep" {
            let len = good.vanilla_proof.len();
            for _ in 0..12 {
                let cut = rng.gen_range(0..len);
                push(
                    format!("porep: vanilla_proof cut at {cut}"),
                    Case::Submit(variant(&|r| r.vanilla_proof.truncate(cut))),
                );
            }
            let junk: Vec<u8> = (0..256).map(|_| rng.gen()).collect();
            push(
                "porep: vanilla_proof random bytes".into(),
                Case::Submit(variant(&|r| r.vanilla_proof = junk.clone())),
            );
            push(
                "porep: vanilla_proofs given".into(),
                Case::Submit(variant(&|r| r.vanilla_proofs = vec![vec![1, 2, 3]])),
            );
        } else {
            let entries = good.vanilla_proofs.len();
            push(
                format!("{kind}: no vanilla_proofs"),
                Case::Submit(variant(&|r| r.vanilla_proofs.clear())),
            );
            push(
                format!("{kind}: one vanilla_proofs entry too many"),
                Case::Submit(variant(&|r| {
                    let first = r.vanilla_proofs[0].clone();
                    r.vanilla_proofs.push(first);
                })),
            );
            for _ in 0..10 {
                let i = rng.gen_range(0..entries);
                let cut = rng.gen_range(0..good.vanilla_proofs[i].len());
                push(
                    format!("{kind}: vanilla_proofs[{i}] cut at {cut}"),
                    Case::Submit(variant(&|r| r.vanilla_proofs[i].truncate(cut))),
                );
            }
            let junk: Vec<u8> = (0..512).map(|_| rng.gen()).collect();
            push(
                format!("{kind}: vanilla_proofs[0] random bytes"),
                Case::Submit(variant(&|r| r.vanilla_proofs[0] = junk.clone())),
            );
        }
        // PoSt randomness and partition; SnapDeals commitments.
        if kind == "wpost" || kind == "winning" {
            for (what, bytes) in [
                ("empty", Vec::new()),
                ("31 bytes", vec![1u8; 31]),
                ("33 bytes", vec![1u8; 33]),
                ("non-canonical", vec![0xffu8; 32]),
            ] {
                push(
                    format!("{kind}: randomness {what}"),
                    Case::Submit(variant(&|r| r.randomness = bytes.clone())),
                );
            }
            // The sector's comm_r inside its vanilla proof (bincode: sector id, then comm_r).
            push(
                format!("{kind}: non-canonical comm_r in vanilla_proofs[0]"),
                Case::Submit(variant(&|r| r.vanilla_proofs[0][8..40].fill(0xff))),
            );
        }
        if kind == "wpost" {
            for k in [3000u32, u32::MAX] {
                push(
                    format!("wpost: partition_index {k}"),
                    Case::Submit(variant(&|r| r.partition_index = k)),
                );
            }
        }
        if kind == "snap" {
            type Field = fn(&mut SubmitProofRequest) -> &mut Vec<u8>;
            let fields: [(&str, Field); 3] = [
                ("comm_r_old", |r| &mut r.comm_r_old),
                ("comm_r_new", |r| &mut r.comm_r_new),
                ("comm_d_new", |r| &mut r.comm_d_new),
            ];
            for (name, field) in fields {
                push(
                    format!("snap: {name} non-canonical"),
                    Case::Submit(variant(&|r| field(r).fill(0xff))),
                );
                push(
                    format!("snap: {name} 31 bytes"),
                    Case::Submit(variant(&|r| field(r).truncate(31))),
                );
            }
        }
        // The encoded message cut inside its payload field: not a message at all.
        let wire = good.encode_to_vec();
        let payload: &[u8] = if kind == "porep" {
            &good.vanilla_proof
        } else {
            &good.vanilla_proofs[0]
        };
        let start = wire
            .windows(64)
            .position(|w| w == &payload[..64])
            .expect("payload in the encoding");
        for _ in 0..16 {
            let cut = rng.gen_range(start + 1..start + payload.len());
            push(
                format!("{kind}: message cut at byte {cut}"),
                Case::Raw(wire[..cut].to_vec()),
            );
        }
        // Oversized counts and ids.
        push(
            format!("{kind}: 200,000 empty vanilla_proofs"),
            Case::Submit(variant(&|r| r.vanilla_proofs = vec![Vec::new(); 200_000])),
        );
        push(
            format!("{kind}: 100 KB request_id"),
            Case::Submit(variant(&|r| r.request_id = "r".repeat(100_000))),
        );
        push(
            format!("{kind}: 257-byte request_id"),
            Case::Submit(variant(&|r| r.request_id = "r".repeat(257))),
        );
    }
    let (_, wpost) = request("wpost");
    let mut many = wpost.clone();
    many.vanilla_proofs = vec![wpost.vanilla_proofs[0].clone(); 2350];
    push("wpost: 2,350 sector proofs".into(), Case::Submit(many));
    let (_, porep) = request("porep");
    let mut huge = porep.clone();
    huge.vanilla_proof = vec![b'{'; 80 << 20];
    push("porep: 80 MiB vanilla_proof".into(), Case::Submit(huge));
    for id in ["p".repeat(10_000), "porep-99g".into(), String::new()] {
        push(format!("PreloadSRS {} bytes", id.len()), Case::Preload(id));
    }
    out
}

/// What the daemon answered to one case: the code and message, or OK.
async fn send(
    c: &mut cuzk_server::client::Client,
    addr: &str,
    i: usize,
    case: Case,
) -> Result<(), (Code, String)> {
    let status = match case {
        Case::Submit(mut r) => {
            if r.request_id.len() < 200 {
                r.request_id = format!("{}-{i}", r.request_id);
            }
            if i % 2 == 0 {
                c.submit_proof(r).await.map(drop)
            } else {
                c.prove(ProveRequest { submit: Some(r) }).await.map(drop)
            }
        }
        Case::Preload(id) => c
            .preload_srs(PreloadSrsRequest { circuit_id: id })
            .await
            .map(drop),
        Case::Raw(bytes) => {
            let code = common::raw_unary(addr, "SubmitProof", &bytes).await;
            return if code == Code::Ok {
                Ok(())
            } else {
                Err((code, String::new()))
            };
        }
    };
    status.map_err(|s| (s.code(), s.message().to_string()))
}

/// One round: the malformed cases (seeded) from six clients at once; every answer must be a
/// typed error with a short message.
async fn malformed_round(addr: &str, round: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(0xf022);
    let all = cases(&mut rng);
    let n = all.len();
    println!("round {round}: {n} malformed requests from 6 clients");
    assert!(n >= 200, "only {n} cases");
    let mut shares: Vec<Vec<(usize, String, Case)>> = (0..6).map(|_| Vec::new()).collect();
    for (i, (label, case)) in all.into_iter().enumerate() {
        shares[i % 6].push((i, label, case));
    }
    let mut clients = Vec::new();
    for share in shares {
        let addr = addr.to_string();
        clients.push(tokio::spawn(async move {
            let mut c = cuzk_server::client::connect(&addr).await.expect("connect");
            let mut bad = Vec::new();
            let mut codes = Vec::new();
            for (i, label, case) in share {
                match send(&mut c, &addr, i, case).await {
                    Ok(()) => bad.push(format!("{label}: accepted")),
                    Err((code, msg)) => {
                        let typed = matches!(
                            code,
                            Code::InvalidArgument
                                | Code::ResourceExhausted
                                | Code::NotFound
                                | Code::FailedPrecondition
                                | Code::OutOfRange
                        );
                        if !typed {
                            bad.push(format!("{label}: {code:?} {msg}"));
                        }
                        if msg.len() >= 1024 {
                            bad.push(format!("{label}: a {}-byte message", msg.len()));
                        }
                        codes.push(code);
                    }
                }
            }
            (bad, codes)
        }));
    }
    let mut bad = Vec::new();
    let mut tally = std::collections::BTreeMap::new();
    for c in clients {
        let (b, codes) = c.await.expect("client task");
        bad.extend(b);
        for code in codes {
            *tally.entry(format!("{code:?}")).or_insert(0) += 1;
        }
    }
    println!("answers: {tally:?}");
    assert!(
        bad.is_empty(),
        "{} wrong answers:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_from_many_clients_fail_alone_and_leave_nothing_behind() {
    common::fc::dir();
    let d = start_filecoin().await;
    let engine = d.engine().clone();
    let (winning_req, winning) = request("winning");
    let prove_winning = |c: cuzk_server::client::Client, id: &'static str| {
        let mut w = winning.clone();
        w.request_id = id.into();
        async move {
            let mut c = c;
            let r = c
                .prove(ProveRequest { submit: Some(w) })
                .await
                .expect("the valid request")
                .into_inner()
                .result
                .expect("a result");
            assert_eq!(r.status, completed(), "{}", r.error_message);
            r.proof
        }
    };
    // Warm: the WinningPoSt SRS loaded, the allocator's pools made.
    prove_winning(d.client.clone(), "warm-up").await;
    let reserved = engine.budget().reserved();
    let rss = cuzk_core::current_rss_bytes().unwrap_or(0);

    // Four rounds of the same requests. The first ones grow the allocator's pools (glibc keeps
    // freed blocks per thread arena, and raises its mmap threshold after a large free) until
    // they level off (here 149, 175, 188, 189, 189, 189 MiB over six rounds); a leak grows
    // with every round.
    let mut after = Vec::new();
    for round in 0..4 {
        malformed_round(&d.addr, round).await;
        // Nothing left behind: reservations and the request buffer at their baseline.
        assert!(
            eventually(Duration::from_secs(10), || async {
                engine.budget().reserved() == reserved && engine.status().request_bytes_in_use == 0
            })
            .await,
            "reserved {} (baseline {reserved}), request buffer {}",
            engine.budget().reserved(),
            engine.status().request_bytes_in_use
        );
        after.push(cuzk_core::current_rss_bytes().unwrap_or(0));
    }
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    println!(
        "RSS {:.0} MiB before, after each round {:?} MiB",
        mib(rss),
        after.iter().map(|&a| mib(a).round()).collect::<Vec<_>>()
    );
    assert!(
        after[0] < rss + (384 << 20),
        "RSS grew from {rss} to {} bytes in one round",
        after[0]
    );
    assert!(
        after[3] < after[1] + (64 << 20),
        "RSS still grew after two rounds, from {} to {} bytes: a leak",
        after[1],
        after[3]
    );
    let st = d.status().await;
    assert_eq!(
        st.total_proofs_failed, 0,
        "a malformed request became a job"
    );

    // And the daemon still proves: a valid WinningPoSt verifies.
    let proof = prove_winning(d.client.clone(), "after-fuzz").await;
    cuzk_filecoin::plan(&winning_req)
        .expect("plan")
        .verify(&proof)
        .expect("WinningPoSt verifies after the fuzzing");
    d.stop().await;
}
