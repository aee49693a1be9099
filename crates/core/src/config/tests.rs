//! The configuration's unit tests (`config.rs`).
use super::*;

#[test]
fn sizes_parse() {
    assert_eq!(parse_size("64GiB"), Ok(64 * GIB));
    assert_eq!(parse_size(" 512 MiB "), Ok(512 * MIB));
    assert_eq!(parse_size("1.5GiB"), Ok(3 * GIB / 2));
    assert_eq!(parse_size("4KB"), Ok(4000));
    assert_eq!(parse_size("1000"), Ok(1000));
    assert!(parse_size("12 parsecs").is_err());
    assert!(parse_size("GiB").is_err());
}

/// Issue 12: at c=30 with 32 GiB PoRep requests, the old 1 GiB cap refused a third of them.
#[test]
fn the_default_request_buffer_holds_thirty_32g_porep_requests_arriving() {
    const C1_32G: u64 = 51_589_313;
    let box_128g = MachineLimits {
        mem_total: Some(125 * GIB),
        cgroup_limit: None,
        cpus: 16,
    };
    let c = Config::defaults_for(&box_128g, None, None);
    // Two partitions at once on 16 cores (each witness runs on every core).
    assert_eq!(c.synthesis_concurrency, 2);
    assert_eq!(
        (1..=256)
            .map(crate::config::default_synthesis_concurrency)
            .collect::<std::collections::BTreeSet<_>>(),
        (2..=8).collect()
    );
    assert!(
        c.request_buffer_bytes >= 30 * 2 * C1_32G,
        "{}",
        c.request_buffer_bytes
    );
    assert!(c.request_buffer_bytes <= c.budget_bytes / 8);
    // A 64 GiB cgroup still takes the seeds' load once arrived (one copy each).
    let cg64 = MachineLimits {
        cgroup_limit: Some(64 * GIB),
        ..box_128g
    };
    let c = Config::defaults_for(&cg64, None, None);
    assert!(
        c.request_buffer_bytes >= 30 * C1_32G,
        "{}",
        c.request_buffer_bytes
    );
    // Inside 8 GiB, waiting requests must leave the whole daemon under 2 GiB (issue 29): the
    // buffer still holds three arriving at once, more than the GPU's pace needs.
    let cg8 = MachineLimits {
        cgroup_limit: Some(8 * GIB),
        ..box_128g
    };
    let c = Config::defaults_for(&cg8, None, None);
    assert!(
        c.request_buffer_bytes <= 512 * MIB,
        "{}",
        c.request_buffer_bytes
    );
    assert!(
        c.request_buffer_bytes >= 3 * 2 * C1_32G,
        "{}",
        c.request_buffer_bytes
    );
}

#[test]
fn the_urgent_reserve_holds_a_winning_post_and_follows_the_budget() {
    let c = Config::from_toml_str("[memory]\nbudget = \"100GiB\"\n").unwrap();
    assert_eq!(c.urgent_reserve(), GIB);
    let small = Config::from_toml_str("[memory]\nbudget = \"8GiB\"\n").unwrap();
    assert_eq!(small.urgent_reserve(), GIB / 2);
    let set = Config::from_toml_str(
        "[memory]\nbudget = \"8GiB\"\nurgent_reserve = \"2GiB\"\n[pipeline]\nurgent_threads = 0\n",
    )
    .unwrap();
    assert_eq!((set.urgent_reserve(), set.urgent_threads), (2 * GIB, 0));
    let too_big = Config::from_toml_str(
        "[memory]\nbudget = \"8GiB\"\nrequest_buffer = \"4GiB\"\nurgent_reserve = \"4GiB\"\n",
    );
    assert!(matches!(too_big, Err(EngineError::Config(_))));
    // Set after the defaults (as tests and embedders do), the budget still sizes it.
    let mut c = Config::default_for_machine();
    c.budget_bytes = 64 << 20;
    c.request_buffer_bytes = 1 << 20;
    assert_eq!(c.urgent_reserve(), 4 << 20);
    c.validate().unwrap();
}

#[test]
fn toml_overrides_and_defaults() {
    let c = Config::from_toml_str(
        "[memory]\nbudget = \"3GiB\"\n[pipeline]\nprover_workers_per_device = 3\nresult_retention = \"5m\"\n[srs]\nkeep_idle = \"90s\"\n",
    )
    .unwrap();
    assert_eq!(c.budget_bytes, 3 * GIB);
    assert_eq!(c.request_buffer_bytes, 3 * GIB / 16);
    assert_eq!(c.prover_workers_per_device, 3);
    let mut small = c.clone();
    small.set_budget(64 << 20);
    assert_eq!(small.request_buffer_bytes, 4 << 20);
    assert!(small.validate().is_ok());
    assert_eq!(c.channel_capacity, 3);
    assert_eq!(c.result_retention, Duration::from_secs(300));
    assert_eq!(c.srs_keep_idle, Duration::from_secs(90));
    assert_eq!(
        Config::from_toml_str("").unwrap().srs_keep_idle,
        Duration::from_secs(600)
    );
    assert!(c.self_verify);
    assert!(c.compile_window_post);
    assert!(
        !Config::from_toml_str("[srs]\ncompile_window_post = false\n")
            .unwrap()
            .compile_window_post
    );
}

#[test]
fn the_compiled_cache_defaults_beside_the_parameters_and_can_be_moved_or_turned_off() {
    let c = Config::from_toml_str("[srs]\nparams_dir = \"/p\"\n").unwrap();
    assert_eq!(c.params_dir, PathBuf::from("/p"));
    assert_eq!(
        c.compiled_cache_path(),
        Some(PathBuf::from("/p/cuzk-compiled"))
    );
    let moved = Config::from_toml_str("[srs]\ncompiled_cache_dir = \"/fast/c\"\n").unwrap();
    assert_eq!(moved.compiled_cache_path(), Some(PathBuf::from("/fast/c")));
    let off = Config::from_toml_str("[srs]\ncompiled_cache = false\ncompiled_cache_dir = \"/x\"\n")
        .unwrap();
    assert_eq!(off.compiled_cache_path(), None);
}

#[test]
fn bad_toml_is_a_config_error() {
    for s in [
        "[memory]\nbudget = \"lots\"",
        "[pipeline]\nsynthesis_concurrency = 0",
        "[pipeline]\nresult_retention = \"soon\"",
        "[srs]\nkeep_idle = \"a while\"",
        "[nope]\nx = 1",
    ] {
        assert!(
            matches!(Config::from_toml_str(s), Err(EngineError::Config(_))),
            "{s}"
        );
    }
}

#[test]
fn load_reads_a_file_and_names_it_in_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("cuzk.toml");
    std::fs::write(
        &good,
        "[srs]\npreload = [\"porep-2k\"]\n[metrics]\nsample_interval = \"5ms\"\n",
    )
    .unwrap();
    let c = Config::load(&good).unwrap();
    assert_eq!(c.preload, vec!["porep-2k".to_string()]);
    assert_eq!(c.sample_interval, Duration::from_millis(5));
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[memory]\nbudget = \"9 bananas\"\n").unwrap();
    let e = Config::load(&bad).unwrap_err().to_string();
    assert!(e.contains("bad.toml") && e.contains("memory.budget"), "{e}");
    assert!(Config::load(&dir.path().join("missing.toml")).is_err());
}

#[test]
fn default_budget_is_below_the_machine_limit() {
    let m = MachineLimits {
        mem_total: Some(24 * GIB),
        cgroup_limit: Some(16 * GIB),
        cpus: 2,
    };
    let c = Config::defaults_for(&m, None, None);
    assert_eq!(c.margin_bytes, 16 * GIB / 10);
    assert_eq!(c.budget_bytes, 16 * GIB - 16 * GIB / 10);
    assert_eq!(c.synthesis_concurrency, 2);
    assert!(Config::default_for_machine().validate().is_ok());
}
