//! Issue 15 item 3: planning partition k of a WindowPoSt deadline built `k × 2349`
//! placeholder sectors to index the partition's own (~280 MB at the last partition, 2999,
//! outside any budget). Planning the last partition must allocate what planning the first
//! does, give or take a few MiB.
//!
//! The count is the process's (stats_alloc's instrumented system allocator), so this binary
//! holds this one test.
use std::alloc::System;
use std::path::PathBuf;

use cuzk_filecoin::{plan, SectorSize};
use cuzk_testkit::shaped::{self, ShapedOptions};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn wpost_plan_of_the_last_partition_allocates_no_placeholder_sectors() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cuzk-shaped-32g-alloc");
    let _ = std::fs::remove_dir_all(&dir);
    let m = shaped::generate(&ShapedOptions {
        out: dir.clone(),
        sector_size: SectorSize::S32GiB,
        seed: 0x5eed_32a1,
        ni_porep: false,
    })
    .expect("generating the timing-only requests");
    let req = m
        .manifest
        .request("wpost")
        .expect("a wpost request")
        .load(&dir)
        .expect("loading it");
    let at = |k: u32| {
        let mut r = req.clone();
        r.partition_index = k;
        let region = Region::new(GLOBAL);
        let p = plan(&r).unwrap_or_else(|e| panic!("partition {k}: {e}"));
        let c = region.change();
        drop(p);
        (c.bytes_allocated as u64) + c.bytes_reallocated.max(0) as u64
    };
    let (first, last) = (at(0), at(2999));
    eprintln!(
        "planning allocated {:.1} MiB at partition 0, {:.1} MiB at partition 2999",
        first as f64 / (1 << 20) as f64,
        last as f64 / (1 << 20) as f64
    );
    assert!(
        last < first + (8 << 20),
        "partition 2999 allocated {last} bytes, partition 0 {first}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
