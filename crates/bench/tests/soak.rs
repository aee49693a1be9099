//! `cuzk bench soak` against a real daemon on a unix socket (a fake prover behind it): the mix
//! is held for the whole time and no longer, each kind is counted in the interval its answer
//! came in, and a failing kind fails the soak while the others go on completing.
mod fake_daemon;

use cuzk_bench::request_file;
use cuzk_bench::soak::{run_soak, soak_failures, Periodic, SoakOptions, Steady};
use std::time::Duration;

/// A daemon proving one fake partition at a time, `prove_ms` each.
async fn daemon(dir: &std::path::Path, prove_ms: u64) -> cuzk_server::Daemon {
    fake_daemon::start(dir, prove_ms).await
}

fn labelled(spec: &str, label: &str) -> request_file::Template {
    let mut t = request_file::synthetic("synthetic", spec).unwrap();
    t.label = label.into();
    t
}

fn options(steady: Vec<Steady>, periodic: Vec<Periodic>) -> SoakOptions {
    SoakOptions {
        duration: Duration::from_millis(2000),
        steady,
        periodic,
        interval: Duration::from_millis(500),
        sample_every: Duration::from_millis(100),
        drain: Duration::from_secs(20),
        verify: false,
        print: false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_soak_holds_its_mix_for_its_time_and_counts_each_kind() {
    let dir = tempfile::tempdir().unwrap();
    let d = daemon(dir.path(), 40).await;
    let dial = cuzk_server::client::Dial::new(d.addr().to_string().as_str());
    let opts = options(
        vec![Steady {
            template: labelled("fake", "steady"),
            in_flight: 2,
        }],
        vec![Periodic {
            template: labelled("fake", "tick"),
            every: Duration::from_millis(300),
        }],
    );
    let r = run_soak(&dial, &opts).await.unwrap();
    r.print();
    soak_failures(&r).unwrap();
    assert!(r.unfinished.is_empty());
    let of = |l: &str| r.sent.iter().filter(|s| s.row.label == l).count();
    // The clock's ticks at 0, 0.3, ..., 1.8 s: seven, each sent on time whatever was running.
    assert_eq!(of("tick"), 7, "one request per period, none after the end");
    let mut ticks: Vec<Duration> = r
        .sent
        .iter()
        .filter(|s| s.row.label == "tick")
        .map(|s| s.sent_at)
        .collect();
    ticks.sort();
    for (k, at) in ticks.iter().enumerate() {
        let due = Duration::from_millis(300 * k as u64);
        assert!(
            *at >= due && *at < due + Duration::from_millis(300),
            "tick {k} sent at {at:?}, due at {due:?}"
        );
    }
    // The steady kind kept two in flight: 2 s of 40 ms proofs shared with the ticks, one
    // device.
    let steady = of("steady");
    assert!((10..=60).contains(&steady), "{steady} steady proofs in 2 s");
    assert!(
        r.sent.iter().all(|s| s.sent_at < opts.duration),
        "nothing is sent after the end"
    );
    assert!(r.sent.iter().all(|s| s.ok()));
    // Every proof answered within the time lands in exactly one interval.
    let in_time = r
        .sent
        .iter()
        .filter(|s| s.row.done_at < opts.duration)
        .count();
    assert!(
        in_time >= of("tick") + steady - 3,
        "at most the last few drain"
    );
    assert!(r.samples.len() >= 10, "{} status samples", r.samples.len());
    assert!(r.samples.iter().all(|s| s.rss > 0));
    assert!(r.rss_first_last().is_some());
    assert_eq!(
        r.after.total_proofs_completed - r.before.total_proofs_completed,
        r.sent.len() as u64,
        "the daemon counted what the soak counted"
    );
    d.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failing_kind_fails_the_soak_while_the_others_complete() {
    let dir = tempfile::tempdir().unwrap();
    let d = daemon(dir.path(), 20).await;
    let dial = cuzk_server::client::Dial::new(d.addr().to_string().as_str());
    let opts = options(
        vec![Steady {
            template: labelled("fake", "good"),
            in_flight: 1,
        }],
        vec![Periodic {
            template: labelled("bad", "bad"),
            every: Duration::from_millis(500),
        }],
    );
    let r = run_soak(&dial, &opts).await.unwrap();
    r.print();
    let bad: Vec<_> = r.sent.iter().filter(|s| s.row.label == "bad").collect();
    assert_eq!(bad.len(), 4);
    assert!(bad
        .iter()
        .all(|s| !s.ok() && s.row.error.contains("bad payload")));
    let good = r.sent.iter().filter(|s| s.row.label == "good").count();
    assert!(good >= 10, "{good} good proofs beside the failures");
    assert!(r
        .sent
        .iter()
        .filter(|s| s.row.label == "good")
        .all(|s| s.ok()));
    assert_eq!(r.failed(), 4);
    let e = soak_failures(&r).unwrap_err().to_string();
    assert!(e.contains("4 of"), "{e}");
    d.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_request_still_running_after_the_drain_is_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    // One proof takes 3 s; the soak sends for 0.5 s and drains for 0.5 s.
    let d = daemon(dir.path(), 3000).await;
    let dial = cuzk_server::client::Dial::new(d.addr().to_string().as_str());
    let mut opts = options(
        vec![Steady {
            template: labelled("fake", "slow"),
            in_flight: 1,
        }],
        vec![],
    );
    opts.duration = Duration::from_millis(500);
    opts.drain = Duration::from_millis(500);
    let r = run_soak(&dial, &opts).await.unwrap();
    assert_eq!(r.unfinished, vec!["slow".to_string()]);
    assert!(r.sent.is_empty());
    let e = soak_failures(&r).unwrap_err().to_string();
    assert!(e.contains("1 were still running"), "{e}");
    d.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_clock_sends_on_time_while_earlier_requests_still_run() {
    let dir = tempfile::tempdir().unwrap();
    // One proof at a time, 400 ms each; one request every 100 ms for 1 s: ten sent on the
    // clock, answered over ~4 s (in the drain).
    let d = daemon(dir.path(), 400).await;
    let dial = cuzk_server::client::Dial::new(d.addr().to_string().as_str());
    let mut opts = options(
        vec![],
        vec![Periodic {
            template: labelled("fake", "tick"),
            every: Duration::from_millis(100),
        }],
    );
    opts.duration = Duration::from_millis(1000);
    let r = run_soak(&dial, &opts).await.unwrap();
    soak_failures(&r).unwrap();
    assert_eq!(r.sent.len(), 10);
    assert!(r.sent.iter().all(|s| s.sent_at < opts.duration));
    let last = r.sent.iter().map(|s| s.row.done_at).max().unwrap();
    assert!(
        last >= Duration::from_millis(3500),
        "the answers came one by one ({last:?}), the sends did not wait for them"
    );
    d.shutdown().await.unwrap();
}
