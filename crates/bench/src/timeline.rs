//! Draws a bench run's timeline as a hand-written SVG: one horizontal bar per partition, named
//! by its circuit (kind and size) and partition, coloured by pipeline stage; one busy lane per
//! device (its partitions' proving intervals; gaps are idle time); and the reserved-memory
//! curve underneath.
use cuzk_server::proto::{GetTimelineResponse, MemorySample, PartitionTimeline};
use std::collections::HashSet;
use std::fmt::Write as _;

/// Stage name, fill colour. Order = order within a partition's life.
const STAGES: [(&str, &str); 5] = [
    ("queued", "#d0d0d0"),
    ("synthesizing", "#4a7fd4"),
    ("waiting for prover", "#f0a030"),
    ("proving", "#2ca25f"),
    ("finalizing", "#9467bd"),
];

/// Reserved-memory categories, bottom of the stack first, with their colours.
const MEM_LAYERS: [(&str, &str); 3] = [
    ("srs", "#8c6bb1"),
    ("working_set", "#4a7fd4"),
    ("requests", "#b0b0b0"),
];

const WIDTH: f64 = 1200.0;
const LEFT: f64 = 240.0;
const RIGHT: f64 = 20.0;
const ROW_MAX: f64 = 14.0;
const BARS_MAX_HEIGHT: f64 = 640.0;
const MEM_HEIGHT: f64 = 160.0;

/// Renders the partitions of `jobs` (all partitions when `jobs` is empty) as an SVG document.
pub fn render(tl: &GetTimelineResponse, jobs: &HashSet<String>) -> String {
    let mut parts: Vec<&PartitionTimeline> = tl
        .partitions
        .iter()
        .filter(|p| jobs.is_empty() || jobs.contains(&p.job_id))
        .collect();
    parts.sort_by_key(|p| (p.queued_us, p.job_id.clone(), p.partition));

    let t0 = parts.iter().map(|p| p.queued_us).min().unwrap_or(0);
    let end_of = |p: &PartitionTimeline| {
        [
            p.finalize_end_us,
            p.prove_end_us,
            p.prove_start_us,
            p.synthesis_end_us,
            p.synthesis_start_us,
        ]
        .into_iter()
        .max()
        .unwrap_or(0)
        .max(p.queued_us)
    };
    let t1 = parts
        .iter()
        .map(|p| end_of(p))
        .max()
        .unwrap_or(t0 + 1)
        .max(t0 + 1);
    let span = (t1 - t0) as f64;
    let plot_w = WIDTH - LEFT - RIGHT;
    let x = |t: u64| LEFT + (t.saturating_sub(t0) as f64 / span) * plot_w;

    let n = parts.len().max(1) as f64;
    let row = (BARS_MAX_HEIGHT / n).clamp(1.0, ROW_MAX);
    let top = 60.0;
    let bars_h = row * n;
    let busy_y = top + bars_h + 14.0;
    // One lane per device that proved something ("prover" when the daemon did not say).
    let mut devices: Vec<&str> = parts
        .iter()
        .filter(|p| p.prove_start_us > 0)
        .map(|p| p.device.as_str())
        .collect();
    devices.sort_unstable();
    devices.dedup();
    const LANE: f64 = 34.0;
    let mem_top = busy_y + LANE * devices.len().max(1) as f64 + 22.0;
    let axis_y = mem_top + MEM_HEIGHT + 4.0;
    let height = axis_y + 40.0;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="18" font-size="14" font-weight="bold">cuzk timeline: {} partitions, {:.2} s</text>"#,
        parts.len(),
        span / 1e6
    );
    // Legend.
    let mut lx = LEFT;
    for (name, colour) in STAGES.iter().chain([("prover idle", "#e04040")].iter()) {
        let _ = writeln!(
            s,
            r#"<rect x="{lx:.1}" y="30" width="12" height="12" fill="{colour}"/><text x="{:.1}" y="40">{name}</text>"#,
            lx + 16.0
        );
        lx += 30.0 + 7.0 * name.len() as f64;
    }

    // One bar per partition.
    let mut last_job = String::new();
    for (i, p) in parts.iter().enumerate() {
        let y = top + i as f64 * row;
        if row >= 8.0 || p.job_id != last_job {
            let label = if row >= 8.0 {
                format!("{} #{} {}", p.circuit_id, p.partition, short(&p.job_id))
            } else {
                format!("{} {}", p.circuit_id, short(&p.job_id))
            };
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end" font-size="{:.0}">{}</text>"#,
                LEFT - 4.0,
                y + row * 0.8,
                (row * 0.85).clamp(6.0, 10.0),
                escape(&label)
            );
        }
        last_job = p.job_id.clone();
        let end = end_of(p);
        let marks = [
            p.queued_us,
            p.synthesis_start_us,
            p.synthesis_end_us,
            p.prove_start_us,
            p.prove_end_us,
            p.finalize_end_us,
        ];
        for (k, (name, colour)) in STAGES.iter().enumerate() {
            let a = marks[k];
            // A stage not reached yet ends at the partition's last known time.
            let b = if marks[k + 1] > 0 { marks[k + 1] } else { end };
            if (k > 0 && a == 0) || b <= a {
                continue;
            }
            let _ = writeln!(
                s,
                r#"<rect x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="{colour}"><title>{} #{} {name}: {:.3} s</title></rect>"#,
                x(a),
                y,
                (x(b) - x(a)).max(0.5),
                (row - 1.0).max(0.8),
                escape(&p.job_id),
                p.partition,
                (b - a) as f64 / 1e6
            );
        }
    }

    // One busy lane per device: the union of its partitions' proving intervals (the prover
    // stage, host-side preparation included); gaps are time the device had no partition.
    for (lane, dev) in devices.iter().enumerate() {
        let y = busy_y + lane as f64 * LANE;
        let name = if dev.is_empty() { "prover" } else { dev };
        let mut iv: Vec<(u64, u64)> = parts
            .iter()
            .filter(|p| {
                p.device == *dev && p.prove_start_us > 0 && p.prove_end_us > p.prove_start_us
            })
            .map(|p| (p.prove_start_us, p.prove_end_us))
            .collect();
        iv.sort();
        let mut merged: Vec<(u64, u64)> = Vec::new();
        for (a, b) in iv {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        let busy: u64 = merged.iter().map(|(a, b)| b - a).sum();
        let (Some(first), Some(last)) = (merged.first(), merged.last()) else {
            continue;
        };
        let window = (last.1 - first.0).max(1);
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{} busy</text>"#,
            LEFT - 4.0,
            y + 11.0,
            escape(name)
        );
        let _ = writeln!(
            s,
            r##"<rect x="{:.2}" y="{y:.1}" width="{:.2}" height="14" fill="#e04040"/>"##,
            x(first.0),
            x(last.1) - x(first.0),
        );
        for (a, b) in &merged {
            let _ = writeln!(
                s,
                r#"<rect x="{:.2}" y="{y:.1}" width="{:.2}" height="14" fill="{}"/>"#,
                x(*a),
                (x(*b) - x(*a)).max(0.5),
                STAGES[3].1
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}">{}: proving {:.1}% of {:.2} s from its first to its last proof (red = idle)</text>"#,
            LEFT,
            y + 28.0,
            escape(name),
            100.0 * busy as f64 / window as f64,
            window as f64 / 1e6
        );
    }

    // Reserved-memory curve.
    let mem: Vec<_> = tl
        .memory
        .iter()
        .filter(|m| m.t_us >= t0 && m.t_us <= t1)
        .collect();
    let has_cats = mem.iter().any(|m| !m.by_category.is_empty());
    let cat = |m: &MemorySample, name: &str| {
        m.by_category
            .iter()
            .find(|c| c.category == name)
            .map_or(0, |c| c.bytes)
    };
    // A request pool reserved once at start is a flat band that would squash the moving
    // layers into a few pixels: leave it out and say so.
    let fixed_requests = if has_cats {
        let v: Vec<u64> = mem.iter().map(|m| cat(m, "requests")).collect();
        let (lo, hi) = (v.iter().min().copied(), v.iter().max().copied());
        match (lo, hi) {
            (Some(lo), Some(hi)) if lo == hi && lo > 0 => Some(lo),
            _ => None,
        }
    } else {
        None
    };
    // Stacked bands, bottom up; without a breakdown, one band for the total.
    let layers: Vec<(&str, &str)> = if has_cats {
        MEM_LAYERS
            .iter()
            .filter(|(n, _)| !(fixed_requests.is_some() && *n == "requests"))
            .copied()
            .collect()
    } else {
        vec![("reserved", "#4a7fd4")]
    };
    let level = |m: &MemorySample, upto: usize| -> u64 {
        if has_cats {
            layers[..upto].iter().map(|(n, _)| cat(m, n)).sum()
        } else if upto == 0 {
            0
        } else {
            m.reserved_bytes
        }
    };
    let peak = mem
        .iter()
        .map(|m| level(m, layers.len()))
        .max()
        .unwrap_or(0)
        .max(1);
    if let Some(pool) = fixed_requests {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">not drawn: fixed request pool of {}</text>"#,
            WIDTH - RIGHT,
            mem_top - 4.0,
            human_bytes(pool)
        );
    }
    let _ = writeln!(
        s,
        r##"<rect x="{LEFT}" y="{mem_top:.1}" width="{plot_w:.1}" height="{MEM_HEIGHT}" fill="none" stroke="#999"/>"##
    );
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="end">reserved</text><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text><text x="{:.1}" y="{:.1}" text-anchor="end">0</text>"#,
        LEFT - 4.0,
        mem_top + MEM_HEIGHT / 2.0,
        LEFT - 4.0,
        mem_top + 10.0,
        human_bytes(peak),
        LEFT - 4.0,
        mem_top + MEM_HEIGHT
    );
    if !mem.is_empty() {
        let my = |b: u64| mem_top + MEM_HEIGHT - (b as f64 / peak as f64) * (MEM_HEIGHT - 4.0);
        let mut lx = LEFT;
        for (k, (name, colour)) in layers.iter().enumerate() {
            let upper: Vec<(f64, f64)> = step_points(&mem, t1, |m| my(level(m, k + 1)), &x);
            let lower: Vec<(f64, f64)> = step_points(&mem, t1, |m| my(level(m, k)), &x);
            let mut d = String::new();
            for (i, (px, py)) in upper.iter().enumerate() {
                let _ = write!(d, "{}{px:.2},{py:.2} ", if i == 0 { "M" } else { "L" });
            }
            for (px, py) in lower.iter().rev() {
                let _ = write!(d, "L{px:.2},{py:.2} ");
            }
            d.push('Z');
            let _ = writeln!(
                s,
                r#"<path d="{d}" fill="{colour}" fill-opacity="0.55" stroke="none"/>"#
            );
            let _ = writeln!(
                s,
                r#"<rect x="{lx:.1}" y="{:.1}" width="10" height="10" fill="{colour}" fill-opacity="0.55"/><text x="{:.1}" y="{:.1}">{name}</text>"#,
                mem_top - 14.0,
                lx + 14.0,
                mem_top - 5.0
            );
            lx += 30.0 + 7.0 * name.len() as f64;
        }
    }

    // Time axis.
    let _ = writeln!(
        s,
        r##"<line x1="{LEFT}" y1="{axis_y:.1}" x2="{:.1}" y2="{axis_y:.1}" stroke="#333"/>"##,
        WIDTH - RIGHT
    );
    let step = nice_step(span / 1e6 / 10.0);
    let mut t = 0.0;
    while t <= span / 1e6 + 1e-9 {
        let px = LEFT + t * 1e6 / span * plot_w;
        let _ = writeln!(
            s,
            r##"<line x1="{px:.1}" y1="{axis_y:.1}" x2="{px:.1}" y2="{:.1}" stroke="#333"/><text x="{px:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            axis_y + 4.0,
            axis_y + 16.0,
            trim_float(t)
        );
        t += step;
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">seconds</text>"#,
        LEFT + plot_w / 2.0,
        axis_y + 32.0
    );
    s.push_str("</svg>\n");
    s
}

/// Vertices of a step curve through the samples (each value holds until the next sample),
/// extended to `t_end`.
fn step_points(
    mem: &[&MemorySample],
    t_end: u64,
    y: impl Fn(&MemorySample) -> f64,
    x: &impl Fn(u64) -> f64,
) -> Vec<(f64, f64)> {
    let mut pts = Vec::with_capacity(2 * mem.len() + 1);
    for (i, m) in mem.iter().enumerate() {
        if i > 0 {
            pts.push((x(m.t_us), y(mem[i - 1])));
        }
        pts.push((x(m.t_us), y(m)));
    }
    if let Some(last) = mem.last() {
        pts.push((x(t_end.max(last.t_us)), y(last)));
    }
    pts
}

fn short(job: &str) -> &str {
    let n = job.len();
    if n > 16 {
        job.get(n - 16..).unwrap_or(job)
    } else {
        job
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

fn trim_float(t: f64) -> String {
    let s = format!("{t:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `1.5 GiB` style.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cuzk_server::proto::ReservedBytes;

    #[test]
    fn draws_every_stage_and_idle_gap() {
        let p = |job: &str, i: u32, base: u64| PartitionTimeline {
            job_id: job.into(),
            partition: i,
            circuit_id: "synthetic".into(),
            queued_us: base,
            synthesis_start_us: base + 100,
            synthesis_end_us: base + 900,
            prove_start_us: base + 1000,
            prove_end_us: base + 1500,
            finalize_end_us: base + 1600,
            device: "cpu0".into(),
            outcome: "completed".into(),
        };
        let tl = GetTimelineResponse {
            partitions: vec![p("a", 0, 10), p("a", 1, 5000), p("other", 0, 10)],
            memory: vec![
                MemorySample {
                    t_us: 10,
                    reserved_bytes: 1 << 20,
                    by_category: vec![],
                },
                MemorySample {
                    t_us: 3000,
                    reserved_bytes: 3 << 20,
                    by_category: vec![
                        ReservedBytes {
                            category: "srs".into(),
                            bytes: 1 << 20,
                        },
                        ReservedBytes {
                            category: "working_set".into(),
                            bytes: 2 << 20,
                        },
                    ],
                },
            ],
            now_us: 9000,
        };
        let jobs: HashSet<String> = ["a".to_string()].into();
        let svg = render(&tl, &jobs);
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("2 partitions"), "filters by job");
        for (name, _) in STAGES {
            assert!(svg.contains(&format!("{name}:")), "stage {name} drawn");
        }
        // Two proving intervals 1010..1510 and 6000..6500 → busy 1000 of 5490 µs.
        assert!(
            svg.contains("cpu0: proving 18.2% of 0.01 s from its first to its last proof"),
            "{svg}"
        );
        assert!(
            svg.contains(">synthetic #1 a</text>"),
            "rows named by circuit and partition"
        );
        assert!(svg.contains("<path d="), "memory curve");
        assert!(svg.contains("3.0 MiB"), "peak reserved label");
        assert!(svg.contains(">working_set</text>"), "category legend");
    }

    /// Issue 12 item 4: one busy lane per device, each from its own partitions only.
    #[test]
    fn each_device_has_its_own_busy_lane() {
        let p = |i: u32, dev: &str, start: u64| PartitionTimeline {
            job_id: "j".into(),
            partition: i,
            circuit_id: "porep-32g".into(),
            queued_us: 10,
            synthesis_start_us: 20,
            synthesis_end_us: 30,
            prove_start_us: start,
            prove_end_us: start + 1000,
            finalize_end_us: start + 1100,
            device: dev.into(),
            outcome: "completed".into(),
        };
        // cuda:0 proves 1000..2000 and 3000..4000 (two thirds of 3000 µs); cuda:1 2000..3000.
        let tl = GetTimelineResponse {
            partitions: vec![
                p(0, "cuda:0", 1000),
                p(1, "cuda:1", 2000),
                p(2, "cuda:0", 3000),
            ],
            memory: vec![],
            now_us: 5000,
        };
        let svg = render(&tl, &HashSet::new());
        assert!(svg.contains(">cuda:0 busy</text>") && svg.contains(">cuda:1 busy</text>"));
        assert!(svg.contains("cuda:0: proving 66.7% of 0.00 s"), "{svg}");
        assert!(svg.contains("cuda:1: proving 100.0%"), "{svg}");
        assert!(svg.contains(">porep-32g #2 j</text>"));
    }

    #[test]
    fn empty_timeline_is_still_a_valid_document() {
        let svg = render(&GetTimelineResponse::default(), &HashSet::new());
        assert!(svg.contains("0 partitions"));
        assert!(svg.trim_end().ends_with("</svg>"));
    }
}
