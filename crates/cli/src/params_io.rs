//! Loading `.params` files for `cuzk prove`, with the load's throughput printed.
use anyhow::Context;
use cuzk_groth16::{
    params::{read_params, ReadOptions},
    Srs,
};
use std::path::Path;

/// Reads a `.params` file; points are always checked to be on the curve, `check_points` adds the subgroup check.
pub fn read(path: &Path, check_points: bool) -> anyhow::Result<Srs> {
    let opts = ReadOptions {
        check_points,
        ..ReadOptions::default()
    };
    let (srs, stats) =
        read_params(path, &opts).with_context(|| format!("reading {}", path.display()))?;
    println!(
        "params: read {} ({:.1} MiB) in {:.3} s, {:.3} GB/s{}",
        path.display(),
        stats.bytes as f64 / (1024.0 * 1024.0),
        stats.elapsed.as_secs_f64(),
        stats.gbps(),
        if check_points {
            ""
        } else {
            " (point checks off)"
        }
    );
    Ok(srs)
}
