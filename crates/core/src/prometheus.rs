//! The engine's status as Prometheus text exposition (`GET /metrics`).
use crate::status::EngineStatus;
use std::fmt::Write as _;

/// Renders `s`: gauges and counters named `cuzk_*`.
pub(crate) fn render(s: &EngineStatus) -> String {
    let mut o = String::new();
    let mut metric = |name: &str, kind: &str, help: &str, rows: &[(String, u64)]| {
        let _ = writeln!(o, "# HELP {name} {help}");
        let _ = writeln!(o, "# TYPE {name} {kind}");
        for (labels, v) in rows {
            if labels.is_empty() {
                let _ = writeln!(o, "{name} {v}");
            } else {
                let _ = writeln!(o, "{name}{{{labels}}} {v}");
            }
        }
    };
    let b = &s.budget;
    metric(
        "cuzk_budget_bytes",
        "gauge",
        "The memory budget.",
        &[(String::new(), b.total)],
    );
    metric(
        "cuzk_reserved_bytes",
        "gauge",
        "Bytes reserved now, by category.",
        &b.by_category
            .iter()
            .map(|(c, v)| (format!("category=\"{}\"", c.name()), *v))
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_reserved_total_bytes",
        "gauge",
        "Bytes reserved now.",
        &[(String::new(), b.reserved)],
    );
    metric(
        "cuzk_reserved_peak_bytes",
        "gauge",
        "Highest reserved total since start.",
        &[(String::new(), b.peak)],
    );
    metric(
        "cuzk_reserved_category_peak_bytes",
        "gauge",
        "Highest reserved bytes of each category since start.",
        &b.peak_by_category
            .iter()
            .map(|(c, v)| (format!("category=\"{}\"", c.name()), *v))
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_budget_waiters",
        "gauge",
        "Reservations waiting for memory.",
        &[(String::new(), b.waiting as u64)],
    );
    metric(
        "cuzk_request_bytes",
        "gauge",
        "Request payload bytes held.",
        &[(String::new(), s.request_bytes_in_use)],
    );
    let g = &s.stages;
    metric(
        "cuzk_partitions",
        "gauge",
        "Partitions in each pipeline stage.",
        &[
            ("stage=\"queued\"".into(), g.queued),
            ("stage=\"synthesizing\"".into(), g.synthesizing),
            ("stage=\"waiting_for_prover\"".into(), g.waiting_for_prover),
            ("stage=\"proving\"".into(), g.proving),
            ("stage=\"finalizing\"".into(), g.finalizing),
        ],
    );
    metric(
        "cuzk_jobs_total",
        "counter",
        "Jobs ended, by outcome.",
        &[
            ("outcome=\"completed\"".into(), s.total_completed),
            ("outcome=\"failed\"".into(), s.total_failed),
            ("outcome=\"cancelled\"".into(), s.total_cancelled),
        ],
    );
    let mut q = Vec::new();
    for x in &s.queues {
        q.push((
            format!("kind=\"{}\",state=\"pending\"", x.kind.name()),
            x.pending as u64,
        ));
        q.push((
            format!("kind=\"{}\",state=\"in_progress\"", x.kind.name()),
            x.in_progress as u64,
        ));
    }
    metric("cuzk_jobs", "gauge", "Jobs queued or running, by kind.", &q);
    metric(
        "cuzk_srs_bytes",
        "gauge",
        "SRS entries and their sizes, by tier.",
        &s.srs
            .iter()
            .map(|e| {
                (
                    format!("circuit_id=\"{}\",tier=\"{}\"", e.circuit_id, e.tier.name()),
                    e.size_bytes,
                )
            })
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_matrices_device_bytes",
        "gauge",
        "Device memory each backend holds for a loaded SRS's compiled constraint matrices (a/b/c made on the device), by device.",
        &s.srs
            .iter()
            .flat_map(|e| {
                e.matrices_device_bytes.iter().zip(&s.devices).map(move |(&b, d)| {
                    (
                        format!(
                            "circuit_id=\"{}\",device=\"{}\",index=\"{}\"",
                            e.circuit_id, d.name, d.index
                        ),
                        b,
                    )
                })
            })
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_srs_device_bytes",
        "gauge",
        "Device memory each backend holds for a loaded SRS (its resident copy), by device.",
        &s.srs
            .iter()
            .flat_map(|e| {
                e.device_bytes.iter().zip(&s.devices).map(move |(&b, d)| {
                    (
                        format!(
                            "circuit_id=\"{}\",device=\"{}\",index=\"{}\"",
                            e.circuit_id, d.name, d.index
                        ),
                        b,
                    )
                })
            })
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_partition_host_bytes",
        "gauge",
        "Host bytes one partition of a circuit costs: what a new one reserves (what=reserved) \
         and what the first one synthesized held (what=measured).",
        &s.partition_memory
            .iter()
            .flat_map(|m| {
                [("reserved", m.reserved), ("measured", m.measured)]
                    .into_iter()
                    .map(move |(what, b)| {
                        (
                            format!("circuit_id=\"{}\",what=\"{what}\"", m.circuit_id),
                            b,
                        )
                    })
            })
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_srs_refs",
        "gauge",
        "Users of each SRS entry.",
        &s.srs
            .iter()
            .map(|e| {
                (
                    format!("circuit_id=\"{}\"", e.circuit_id),
                    e.ref_count as u64,
                )
            })
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_device_busy_milliseconds_total",
        "counter",
        "Time each device was busy (its exclusive phase: source=backend is the backend's own \
         timing, source=interlock the engine's device interlock); never more than wall time. \
         Devices whose busy time is not measured are absent.",
        &s.devices
            .iter()
            .filter_map(|d| {
                d.busy.map(|b| {
                    (
                        format!(
                            "device=\"{}\",index=\"{}\",source=\"{}\"",
                            d.name, d.index, d.busy_source
                        ),
                        b.as_millis() as u64,
                    )
                })
            })
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_device_busy_measured",
        "gauge",
        "1 where the device's busy time is measured (source=backend or interlock), 0 where it \
         is not (no backend timing and the interlock off).",
        &s.devices
            .iter()
            .map(|d| {
                (
                    format!(
                        "device=\"{}\",index=\"{}\",source=\"{}\"",
                        d.name, d.index, d.busy_source
                    ),
                    u64::from(d.busy.is_some()),
                )
            })
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_device_errors_total",
        "counter",
        "Device errors (failed start or finish, a panicking backend) per device.",
        &s.devices
            .iter()
            .map(|d| {
                (
                    format!("device=\"{}\",index=\"{}\"", d.name, d.index),
                    d.errors,
                )
            })
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_device_quarantined",
        "gauge",
        "1 where a device is quarantined after repeated errors (pipeline.quarantine_after).",
        &s.devices
            .iter()
            .map(|d| {
                (
                    format!("device=\"{}\",index=\"{}\"", d.name, d.index),
                    u64::from(d.quarantined),
                )
            })
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_device_start_milliseconds_total",
        "counter",
        "Time each backend's workers spent in `start`, summed over workers (overlapping \
         workers count twice: not a busy fraction).",
        &s.devices
            .iter()
            .map(|d| {
                (
                    format!("device=\"{}\",index=\"{}\"", d.name, d.index),
                    d.start_time.as_millis() as u64,
                )
            })
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_device_partitions_total",
        "counter",
        "Partitions proved by each backend.",
        &s.devices
            .iter()
            .map(|d| {
                (
                    format!("device=\"{}\",index=\"{}\"", d.name, d.index),
                    d.partitions,
                )
            })
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_resident_bytes",
        "gauge",
        "This process's resident set now (what=current, VmRSS) and its peak (what=peak, VmHWM).",
        &[
            ("what=\"current\"", crate::metrics::current_rss_bytes()),
            ("what=\"peak\"", crate::metrics::peak_rss_bytes()),
        ]
        .into_iter()
        .filter_map(|(l, v)| v.map(|v| (l.to_string(), v)))
        .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_uptime_seconds",
        "gauge",
        "Seconds since the engine started.",
        &[(String::new(), s.uptime.as_secs())],
    );
    let mut by_kind = Vec::new();
    for k in &s.kinds {
        for (outcome, n) in [
            ("completed", k.completed),
            ("failed", k.failed),
            ("cancelled", k.cancelled),
        ] {
            by_kind.push((
                format!("kind=\"{}\",outcome=\"{outcome}\"", k.kind.name()),
                n,
            ));
        }
    }
    metric(
        "cuzk_proofs_total",
        "counter",
        "Jobs ended, by proof kind and outcome.",
        &by_kind,
    );
    latency_histogram(&mut o, s);
    o
}

/// `cuzk_proof_duration_seconds`: completed jobs' latency by kind and phase (queue, synthesis,
/// prover: summed over partitions; total: submit to end), a histogram over
/// [`crate::latency::BUCKETS`].
fn latency_histogram(o: &mut String, s: &EngineStatus) {
    let name = "cuzk_proof_duration_seconds";
    let _ = writeln!(
        o,
        "# HELP {name} Completed jobs' latency by proof kind and phase (queue, synthesis, prover, total)."
    );
    let _ = writeln!(o, "# TYPE {name} histogram");
    for k in &s.kinds {
        for p in &k.phases {
            let labels = format!("kind=\"{}\",phase=\"{}\"", k.kind.name(), p.phase);
            for (bound, n) in crate::latency::BUCKETS.iter().zip(&p.cumulative) {
                let _ = writeln!(o, "{name}_bucket{{{labels},le=\"{bound}\"}} {n}");
            }
            let _ = writeln!(o, "{name}_bucket{{{labels},le=\"+Inf\"}} {}", p.count);
            let _ = writeln!(o, "{name}_sum{{{labels}}} {}", p.sum.as_secs_f64());
            let _ = writeln!(o, "{name}_count{{{labels}}} {}", p.count);
        }
    }
}
