//! The on-disk encoding of one point (uncompressed affine, as bellperson writes it).
use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;

/// A curve point as it appears in a `.params` file.
pub(crate) trait WirePoint: Copy + Send + Sync + 'static {
    /// Encoded size in bytes.
    const SIZE: usize;

    /// Decodes `bytes` (exactly [`Self::SIZE`] long). With `check`, also checks the point is
    /// on the curve and in the prime-order subgroup. Returns why it failed otherwise.
    fn decode(bytes: &[u8], check: bool) -> Result<Self, &'static str>;

    /// Writes the encoding into `out` (exactly [`Self::SIZE`] long).
    fn encode(&self, out: &mut [u8]);

    /// Whether this is the point at infinity.
    fn is_infinity(&self) -> bool;

    /// The point at infinity (a placeholder for slots that failed to decode).
    fn infinity() -> Self;
}

macro_rules! wire_point {
    ($affine:ty, $size:expr) => {
        impl WirePoint for $affine {
            const SIZE: usize = $size;

            fn decode(bytes: &[u8], check: bool) -> Result<Self, &'static str> {
                let arr: &[u8; $size] = bytes.try_into().map_err(|_| "wrong encoding length")?;
                let unchecked = Option::<$affine>::from(<$affine>::from_uncompressed_unchecked(
                    arr,
                ))
                .ok_or(
                    "bad encoding (flags, coordinate not below the modulus, or not on the curve)",
                )?;
                if !check {
                    return Ok(unchecked);
                }
                if !bool::from(unchecked.is_on_curve()) {
                    return Err("not on the curve");
                }
                if !bool::from(unchecked.is_torsion_free()) {
                    return Err("not in the prime-order subgroup");
                }
                Ok(unchecked)
            }

            fn encode(&self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_uncompressed());
            }

            fn is_infinity(&self) -> bool {
                bool::from(self.is_identity())
            }

            fn infinity() -> Self {
                <$affine>::identity()
            }
        }
    };
}

wire_point!(G1Affine, 96);
wire_point!(G2Affine, 192);
