//! Issue 14: a SnapDeals partition's witness computed natively, its challenges in parallel
//! (`native/snap.rs`, what witness-only synthesis does), equals, value for value, the
//! circuit's own synthesis (a full recording), on real 2 KiB data.
mod common;

#[test]
fn native_snap_witness_equals_the_circuits_own_at_2k() {
    common::dir();
    common::native_equals_full(&common::request("snap"), 0, "snap-2k");
}
