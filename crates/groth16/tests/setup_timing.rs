//! Setup speed on a Filecoin-PoRep-shaped synthetic circuit. A measurement, not an assertion:
//! run with `cargo test --release -p cuzk-groth16 --test setup_timing -- --ignored --nocapture`
//! (`SETUP_LOG2=20` for other sizes, default 2^16 constraints; or a whole spec string, e.g.
//! `SETUP_SPEC=synthetic:constraints=2687921,inputs=39` for the 2 KiB PoRep circuit's shape;
//! `SETUP_OUT=path` also writes the parameters there).
use cuzk_groth16::setup::generate_params_timed;
use cuzk_groth16::synthetic::SyntheticSpec;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

#[test]
#[ignore = "measurement; run explicitly"]
fn setup_time_porep_shaped() {
    let log2: u32 = std::env::var("SETUP_LOG2")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16);
    let spec = match std::env::var("SETUP_SPEC") {
        Ok(s) => s.parse().expect("SETUP_SPEC"),
        Err(_) => SyntheticSpec::with_constraints(1 << log2),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let (srs, shape, t) = generate_params_timed(spec.circuit(), &mut rng).expect("setup");
    println!("{spec}");
    println!("{shape:?}");
    println!(
        "points: h {} l {} a {} b_g1 {} b_g2 {} ic {}",
        srs.h().len(),
        srs.l().len(),
        srs.a().len(),
        srs.b_g1().len(),
        srs.b_g2().len(),
        srs.vk().ic.len()
    );
    println!("{t:?}");
    if let Ok(out) = std::env::var("SETUP_OUT") {
        let started = std::time::Instant::now();
        cuzk_groth16::params::write_params(std::path::Path::new(&out), &srs).expect("write");
        println!("wrote {out} in {:.2} s", started.elapsed().as_secs_f64());
    }
    println!(
        "setup {} constraints: total {:.2} s (synth {:.2}, eval {:.2}, g1 {:.2}, g2 {:.2})",
        shape.constraints,
        t.total.as_secs_f64(),
        t.synthesize.as_secs_f64(),
        t.evaluate.as_secs_f64(),
        t.g1.as_secs_f64(),
        t.g2.as_secs_f64()
    );
}
