//! Issue 29 item 3: the aux variables a compiled circuit says its constraints hold to 0 or 1
//! (`CompiledCircuit::bounded_aux`) are 0 or 1 in every real partition's witness, for every
//! kind at 2 KiB and 8 MiB (sparse sectors of two seeds, every partition); and they are most
//! of the values that are (the figures are printed: a deferred partition's first reservation
//! is a full scalar for each of the rest).
use cuzk_filecoin::{ProofKind, SectorSize};
use cuzk_groth16::RecorderMode;
use cuzk_testkit::sparse::request;
use std::collections::HashMap;

fn bounded_values_are_bits(size: SectorSize) {
    let mut compiled = HashMap::new();
    for kind in ProofKind::ALL {
        for seed in 1..=2 {
            let (req, _) = request(kind, size, seed, None).expect("request");
            let mut plan = cuzk_filecoin::plan(&req).expect("plan");
            for job in plan.take_jobs() {
                let c = compiled
                    .entry(job.circuit_id)
                    .or_insert_with(|| {
                        std::sync::Arc::new(
                            cuzk_filecoin::compiled::compile(job.circuit_id).unwrap(),
                        )
                    })
                    .clone();
                let map = c.bounded_aux_map().expect("host matrices");
                assert_eq!(map.count_ones(), c.bounded_aux(), "{kind} {size}");
                let id = job.circuit_id;
                let w = job.run(RecorderMode::WitnessOnly).expect("witness");
                // The witness-only recording keeps the aux compact: `others` marks the values
                // that are neither 0 nor 1.
                let aux = w.compact.expect("a compact witness");
                assert_eq!(aux.len(), c.num_aux(), "{id}");
                let bit = |i: usize| aux.others()[i / 64] >> (i % 64) & 1 == 0;
                for i in map.iter_ones() {
                    assert!(bit(i), "{id} seed {seed}: aux {i} is bounded but not a bit");
                }
                let bits = (0..aux.len()).filter(|&i| bit(i)).count();
                println!(
                    "{id} seed {seed}: aux {}, bounded {} ({:.2} %), 0 or 1 in this witness {}",
                    c.num_aux(),
                    c.bounded_aux(),
                    100.0 * c.bounded_aux() as f64 / c.num_aux() as f64,
                    bits
                );
            }
        }
    }
}

/// 2 KiB and 8 MiB: 30 s on two cores in release.
#[test]
fn bounded_aux_values_are_bits_in_every_partition_at_2k_and_8m() {
    bounded_values_are_bits(SectorSize::S2KiB);
    bounded_values_are_bits(SectorSize::S8MiB);
}

/// By hand (a porep-32g compile from one challenge: ~10 s and 7.4 GB of host memory):
/// `cargo test --release -p cuzk-filecoin --test bounded_aux -- --ignored --nocapture`.
#[test]
#[ignore]
fn porep_32g_bounded_aux_count() {
    let id: cuzk_filecoin::CircuitId = "porep-32g".parse().unwrap();
    let t = std::time::Instant::now();
    let c = cuzk_filecoin::compiled::compile(id).unwrap();
    println!(
        "{id}: {} constraints, {} inputs, aux {}, bounded {} ({:.2} %), compiled in {:.1} s",
        c.num_constraints(),
        c.num_inputs(),
        c.num_aux(),
        c.bounded_aux(),
        100.0 * c.bounded_aux() as f64 / c.num_aux() as f64,
        t.elapsed().as_secs_f64()
    );
    assert!(c.bounded_aux() <= c.num_aux());
}
