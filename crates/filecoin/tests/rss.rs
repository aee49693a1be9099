//! Peak RSS while synthesizing one 2 KiB PoRep partition stays within 1.3× of the bytes the
//! a/b/c vectors and the assignments need. Its own test binary, so no other test's
//! allocations share the process.
mod common;

use cuzk_filecoin::plan;
use cuzk_groth16::RecorderMode;

#[test]
fn porep_2k_synthesis_peak_rss_is_within_1_3x_of_its_vectors() {
    common::dir();
    let req = common::request("porep");
    let job = plan(&req).unwrap().take_jobs().remove(0);
    let (s, grown) = common::peak_rss_growth(|| job.run(RecorderMode::Full).unwrap());
    common::assert_rss_within_1_3x(&s, grown, "");
}
