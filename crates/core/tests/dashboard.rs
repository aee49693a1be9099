//! The operator's view: `deploy/grafana-cuzk.json` queries only metrics, and labels of them,
//! that the daemon's `/metrics` exports (rendered here by an engine that proved a job), and
//! the status's per-device busy fraction over the last minute comes from the sampler's
//! readings.
mod common;

use common::{fake_srs, partition_worth, sim_config, FakeBackend, FakePlanner};
use cuzk_core::{Engine, JobState, ProofRequest};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

/// Every `cuzk_*` token of `expr` with the labels it selects on or groups by (PromQL's
/// `name{l="v",…}` and `by (l, …)`), `instance` and `le` aside (Prometheus adds the first,
/// histograms have the second).
fn metric_uses(expr: &str) -> Vec<(String, BTreeSet<String>)> {
    let by: BTreeSet<String> = expr
        .match_indices("by (")
        .flat_map(|(i, _)| {
            let rest = &expr[i + 4..];
            rest[..rest.find(')').unwrap()]
                .split(',')
                .map(|l| l.trim().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    let mut out = Vec::new();
    let mut rest = expr;
    while let Some(i) = rest.find("cuzk_") {
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        let name = tail[..end].to_string();
        let mut labels = by.clone();
        if tail[end..].starts_with('{') {
            let sel = &tail[end + 1..end + tail[end..].find('}').unwrap()];
            for m in sel.split(',') {
                let l = m.split(['=', '!', '~']).next().unwrap().trim();
                labels.insert(l.to_string());
            }
        }
        labels.retain(|l| l != "instance" && l != "le" && !l.is_empty());
        out.push((name, labels));
        rest = &tail[end..];
    }
    out
}

/// Each series name of a Prometheus text exposition with the label names its samples carry.
fn exported(text: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut m: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (name, labels) = match line.find('{') {
            Some(i) => (&line[..i], &line[i + 1..line.rfind('}').unwrap()]),
            None => (line.split(' ').next().unwrap(), ""),
        };
        let e = m.entry(name.to_string()).or_default();
        for pair in labels.split("\",").filter(|p| !p.is_empty()) {
            e.insert(pair.split('=').next().unwrap().to_string());
        }
    }
    m
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_queries_only_what_the_daemon_exports() {
    let planner = FakePlanner {
        partitions: 2,
        constraints: 1024,
        synth: Duration::from_millis(1),
        srs_points: 100,
        live: Default::default(),
    };
    let budget = 4 * partition_worth(&planner) + fake_srs(planner.srs_points).size_bytes();
    let e = Engine::new(
        sim_config(budget),
        vec![Arc::new(FakeBackend::new(1, 0))],
        Arc::new(planner),
    )
    .unwrap();
    let id = e
        .submit(ProofRequest {
            request_id: "dash".into(),
            ..ProofRequest::synthetic("fake")
        })
        .unwrap()
        .job_id;
    assert!(matches!(
        e.wait(&id, None).await.unwrap().state,
        JobState::Completed { .. }
    ));
    // The sampler reads the devices' busy times once a second: after two, the status has
    // a busy fraction over a window of at least a second.
    tokio::time::sleep(Duration::from_millis(2300)).await;
    let d = &e.status().devices[0];
    let (window, ppm) = d
        .busy_last_minute
        .expect("a busy fraction over the last minute");
    assert!(
        window >= Duration::from_secs(1) && ppm <= 1_000_000,
        "{window:?} {ppm}"
    );

    let text = e.prometheus();
    let series = exported(&text);
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../deploy/grafana-cuzk.json"
    );
    let dash: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap())
        .expect("the dashboard is JSON");
    let mut checked = 0;
    for panel in dash["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"].as_str().unwrap();
            for (name, labels) in metric_uses(expr) {
                let have = series
                    .get(&name)
                    .unwrap_or_else(|| panic!("`{name}` (in `{expr}`) is not exported:\n{text}"));
                for l in &labels {
                    assert!(
                        have.contains(l),
                        "`{name}` has no label `{l}` (in `{expr}`): {have:?}"
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 15, "only {checked} metric uses found");
    // The checker itself: a name or a label the daemon does not export is caught.
    let uses = metric_uses("sum by (kind) (rate(cuzk_nope{outcome=\"x\"}[1m]))");
    assert_eq!(uses[0].0, "cuzk_nope");
    assert!(!series.contains_key("cuzk_nope"));
    let uses = metric_uses("sum by (nolabel) (cuzk_proofs_total)");
    assert!(!series["cuzk_proofs_total"].contains(uses[0].1.iter().next().unwrap()));
    e.shutdown(Duration::from_secs(5)).await;
}
