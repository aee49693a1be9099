//! The daemon's libraries do not link the test kit (issue 31 item 3): test data, INSECURE and
//! TIMING-ONLY parameters and requests, and the benchmarks live in `cuzk-testkit`, which only
//! the tools (`cuzk-bench`, the `cuzk` binary) and tests may depend on.
use std::process::Command;

/// The packages `krate` depends on through `edges` (`cargo tree -e`), one `name version` a line.
fn tree(krate: &str, edges: &str) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(cargo)
        .current_dir(root)
        .args(["tree", "--offline", "-p", krate, "-e", edges])
        .args(["--prefix", "none", "--format", "{p}"])
        .output()
        .expect("running cargo tree");
    assert!(
        out.status.success(),
        "cargo tree -p {krate}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn the_daemon_s_libraries_do_not_depend_on_the_test_kit() {
    for krate in [
        "cuzk-groth16",
        "cuzk-cuda",
        "cuzk-filecoin",
        "cuzk-core",
        "cuzk-server",
    ] {
        let deps = tree(krate, "normal,build");
        assert!(
            deps.iter().any(|l| l.starts_with(krate)),
            "cargo tree -p {krate} does not list the crate itself:\n{deps:?}"
        );
        let kit: Vec<&String> = deps
            .iter()
            .filter(|l| l.starts_with("cuzk-testkit"))
            .collect();
        assert!(kit.is_empty(), "{krate} reaches the test kit: {kit:?}");
    }
    // The check can see the kit: the tools do depend on it.
    assert!(tree("cuzk-bench", "normal")
        .iter()
        .any(|l| l.starts_with("cuzk-testkit")));
}
