//! The daemon's libraries do not link the test kit (issue 31 item 3): test data, INSECURE and
//! TIMING-ONLY parameters and requests, and the benchmarks live in `cuzk-testkit`, which only
//! the tools (`cuzk-bench`, the `cuzk` binary) and tests may depend on.
use std::process::Command;

#[test]
fn the_daemon_s_libraries_do_not_depend_on_the_test_kit() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for krate in [
        "cuzk-groth16",
        "cuzk-cuda",
        "cuzk-filecoin",
        "cuzk-core",
        "cuzk-server",
    ] {
        let out = Command::new(&cargo)
            .current_dir(&root)
            .args(["tree", "--offline", "-p", krate, "-e", "normal,build"])
            .args(["--prefix", "none", "--format", "{p}"])
            .output()
            .expect("running cargo tree");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "cargo tree -p {krate}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.lines().any(|l| l.starts_with(krate)),
            "cargo tree -p {krate} does not list the crate itself:\n{stdout}"
        );
        let kit: Vec<&str> = stdout
            .lines()
            .filter(|l| l.starts_with("cuzk-testkit"))
            .collect();
        assert!(kit.is_empty(), "{krate} reaches the test kit: {kit:?}");
    }
    // The check can see the kit: the tools do depend on it.
    let out = Command::new(&cargo)
        .current_dir(&root)
        .args(["tree", "--offline", "-p", "cuzk-bench", "-e", "normal"])
        .args(["--prefix", "none", "--format", "{p}"])
        .output()
        .expect("running cargo tree");
    assert!(String::from_utf8_lossy(&out.stdout)
        .lines()
        .any(|l| l.starts_with("cuzk-testkit")));
}
