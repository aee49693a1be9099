//! `cuzk bench synth` at 2 KiB: every kind's TIMING-ONLY shaped partition is synthesized the
//! daemon's way and bellperson's, with the real circuit's constraint count on both sides.
use cuzk_bench::synth::{run, table, SynthOptions, SynthPath};
use cuzk_filecoin::{CircuitId, MemoryEstimate, SectorSize};

#[test]
fn each_kind_is_synthesized_both_ways_at_its_real_constraint_count() {
    let kinds = ["porep", "snap", "wpost", "winning"];
    let rows = run(&SynthOptions {
        sector_size: SectorSize::S2KiB,
        kinds: kinds.iter().map(|k| k.to_string()).collect(),
        seed: 3,
        bellperson: true,
        compile_all: true,
        device_abc: false,
        compile_window_post: false,
    })
    .unwrap();
    // WindowPoSt, recorded in full by a daemon with `compile_window_post = false`, comes a
    // second time through compiled matrices.
    let (daemon, compiled): (Vec<_>, Vec<_>) =
        rows.iter().partition(|r| r.path == SynthPath::Daemon);
    assert_eq!(daemon.len(), kinds.len());
    assert_eq!(compiled.len(), 1);
    let c = compiled[0];
    assert_eq!(
        (c.kind.as_str(), c.constraints),
        ("wpost", daemon[2].constraints)
    );
    assert!(c.prepare.is_some());
    for (r, kind) in daemon.into_iter().zip(kinds) {
        assert_eq!(r.kind, kind);
        let id: CircuitId = r.circuit_id.parse().unwrap();
        assert_eq!(
            r.constraints,
            MemoryEstimate::for_circuit(id).constraints,
            "{kind}"
        );
        // The compiled kinds made their matrices first; WindowPoSt is recorded in full.
        assert_eq!(r.prepare.is_some(), kind != "wpost", "{kind}");
        let (t, _) = r.bellperson.expect("bellperson ran");
        assert!(t > std::time::Duration::ZERO && r.ours_per_core() > 0.0);
        #[cfg(target_os = "linux")]
        assert!(r.ours_peak.is_some(), "{kind}: no peak RSS on Linux");
    }
    let t = table(&rows);
    assert!(t.starts_with("TIMING-ONLY"), "{t}");
    assert_eq!(
        t.lines().filter(|l| l.starts_with("| ")).count(),
        2 + kinds.len()
    );
    assert!(t.contains("not the daemon's path"), "{t}");
}

#[test]
fn an_unknown_kind_is_refused() {
    let e = run(&SynthOptions {
        sector_size: SectorSize::S2KiB,
        kinds: vec!["seal".into()],
        seed: 3,
        bellperson: false,
        compile_all: false,
        device_abc: false,
        compile_window_post: false,
    })
    .unwrap_err();
    assert!(e.to_string().contains("one of porep"), "{e}");
}

#[test]
fn with_device_abc_ours_is_the_witness_alone_at_the_real_constraint_count_window_post_too() {
    let rows = run(&SynthOptions {
        sector_size: SectorSize::S2KiB,
        kinds: vec!["porep".into(), "snap".into(), "wpost".into()],
        seed: 3,
        bellperson: false,
        compile_all: true,
        device_abc: true,
        compile_window_post: true,
    })
    .unwrap();
    // With compile_window_post the daemon's own WindowPoSt row is compiled, so compile_all
    // adds no second row.
    assert_eq!(rows.len(), 3);
    for r in &rows {
        assert_eq!(r.path, SynthPath::Daemon, "{}", r.circuit_id);
        let id: CircuitId = r.circuit_id.parse().unwrap();
        assert_eq!(r.constraints, MemoryEstimate::for_circuit(id).constraints);
        assert!(r.prepare.is_some() && r.bellperson.is_none());
    }
}
