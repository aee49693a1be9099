//! Point conversion between the device code's Jacobian results (blst's layout, Montgomery
//! limbs) and blstrs' projective points, with the layout assumptions checked at compile time.
#![allow(unsafe_code)]

use crate::ffi;
use blstrs::{G1Affine, G1Projective, G2Projective, Scalar};

/// A G1 result of the device as a blstrs point.
pub(crate) fn jac1(j: &ffi::Jac1) -> G1Projective {
    let p = blst::blst_p1 {
        x: blst::blst_fp { l: j.x },
        y: blst::blst_fp { l: j.y },
        z: blst::blst_fp { l: j.z },
    };
    // SAFETY: blstrs declares `#[repr(transparent)] struct G1Projective(blst_p1)` (same blst
    // crate instance); the device returns Jacobian coordinates in blst's Montgomery form,
    // Z = 0 for the identity, which is exactly a blst_p1.
    unsafe { std::mem::transmute::<blst::blst_p1, G1Projective>(p) }
}

/// Twelve limbs (c0 then c1) as a blst Fp2.
fn fp2(limbs: &[u64; 12]) -> blst::blst_fp2 {
    let mut c0 = [0u64; 6];
    let mut c1 = [0u64; 6];
    c0.copy_from_slice(&limbs[..6]);
    c1.copy_from_slice(&limbs[6..]);
    blst::blst_fp2 {
        fp: [blst::blst_fp { l: c0 }, blst::blst_fp { l: c1 }],
    }
}

/// A G2 result of the device as a blstrs point.
pub(crate) fn jac2(j: &ffi::Jac2) -> G2Projective {
    let p = blst::blst_p2 {
        x: fp2(&j.x),
        y: fp2(&j.y),
        z: fp2(&j.z),
    };
    // SAFETY: as in `jac1`: `#[repr(transparent)] struct G2Projective(blst_p2)`.
    unsafe { std::mem::transmute::<blst::blst_p2, G2Projective>(p) }
}

/// Keeps `G1Affine` in use for the layout assertion below.
const _: () = assert!(std::mem::size_of::<G1Affine>() == 96);
const _: () = assert!(std::mem::size_of::<blstrs::G2Affine>() == 192);
const _: () = assert!(std::mem::size_of::<Scalar>() == 32);
