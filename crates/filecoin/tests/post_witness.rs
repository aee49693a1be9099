//! Issue 14: a WindowPoSt or WinningPoSt partition's witness computed natively, its sectors in
//! parallel (`post/witness.rs`, what witness-only synthesis does), equals, value for value,
//! the circuit's own synthesis (a full recording), on real 2 KiB data.
mod common;

#[test]
fn native_post_witnesses_equal_the_circuits_own_at_2k() {
    common::dir();
    common::native_equals_full(&common::request("winning"), 0, "winning-2k");
    common::native_equals_full(&common::request("wpost"), 0, "wpost-2k");
}
