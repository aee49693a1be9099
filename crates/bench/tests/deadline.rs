//! `cuzk bench batch --deadline`: a run that stops at its deadline reports what completed
//! within it, and counts the requests still running (and those never sent) apart from the
//! failures, against a real daemon on a unix socket.
mod fake_daemon;

use cuzk_bench::client::{failures, run_load, LoadOptions};
use cuzk_bench::request_file;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_deadline_counts_unfinished_requests_apart_from_failures() {
    // One proof at a time, 400 ms each: six requests take 2.4 s, the deadline comes at 1 s.
    let dir = tempfile::tempdir().unwrap();
    let daemon = fake_daemon::start(dir.path(), 400).await;
    let addr = daemon.addr().to_string();
    let template = request_file::synthetic("synthetic", "fake").unwrap();
    let opts = LoadOptions {
        concurrency: 2,
        jobs: 6,
        verify: false,
        timeline: None,
        progress: false,
        deadline: Some(Duration::from_secs(1)),
    };
    let dial = cuzk_server::client::Dial::new(addr.as_str());
    let report = run_load(&dial, vec![template], &opts).await.unwrap();
    let d = report.deadline.expect("a deadline tally");
    let completed = report
        .rows
        .iter()
        .filter(|r| r.status == "COMPLETED")
        .count();
    assert_eq!(
        report.rows.len(),
        completed,
        "every answer before the deadline completed"
    );
    assert!(
        (1..=3).contains(&completed),
        "{completed} completed within 1 s"
    );
    assert_eq!(completed + d.unfinished + d.not_sent, 6);
    assert!(d.unfinished >= 1, "two were in flight at the deadline");
    assert!(d.last_done <= Duration::from_secs(1));
    assert!(report.wall >= Duration::from_secs(1));
    // Unfinished is not failed.
    assert_eq!(report.not_completed, 0);
    failures(&report).unwrap();
    report.print();
    daemon.shutdown().await.unwrap();
}
