//! Groth16 proofs and their bellperson-identical 192-byte encoding (compressed A ‖ B ‖ C).
use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;

/// Size of an encoded proof.
pub const PROOF_BYTES: usize = 192;

/// A Groth16 proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    /// π_A in G1.
    pub a: G1Affine,
    /// π_B in G2.
    pub b: G2Affine,
    /// π_C in G1.
    pub c: G1Affine,
}

/// Why proof bytes could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProofDecodeError {
    /// The input is not 192 bytes long.
    #[error("proof must be {PROOF_BYTES} bytes, got {0}")]
    Length(usize),
    /// A point is not a valid compressed encoding of a subgroup point.
    #[error("proof element {0} is not a valid compressed point in its subgroup")]
    BadPoint(&'static str),
    /// A point is the identity (bellperson rejects these too).
    #[error("proof element {0} is the point at infinity")]
    Identity(&'static str),
}

impl Proof {
    /// The 192-byte encoding: compressed A (48) ‖ B (96) ‖ C (48), as bellperson's `Proof::write`.
    pub fn to_bytes(&self) -> [u8; PROOF_BYTES] {
        let mut out = [0u8; PROOF_BYTES];
        out[..48].copy_from_slice(&self.a.to_compressed());
        out[48..144].copy_from_slice(&self.b.to_compressed());
        out[144..].copy_from_slice(&self.c.to_compressed());
        out
    }

    /// Decodes [`Proof::to_bytes`]' output, checking each point is on its curve and in the
    /// prime-order subgroup, and not the identity.
    pub fn from_bytes(bytes: &[u8]) -> Result<Proof, ProofDecodeError> {
        if bytes.len() != PROOF_BYTES {
            return Err(ProofDecodeError::Length(bytes.len()));
        }
        let g1 = |name: &'static str, b: &[u8]| -> Result<G1Affine, ProofDecodeError> {
            let mut arr = [0u8; 48];
            arr.copy_from_slice(b);
            let p: Option<G1Affine> = G1Affine::from_compressed(&arr).into();
            let p = p.ok_or(ProofDecodeError::BadPoint(name))?;
            if bool::from(p.is_identity()) {
                return Err(ProofDecodeError::Identity(name));
            }
            Ok(p)
        };
        let a = g1("a", &bytes[..48])?;
        let mut arr = [0u8; 96];
        arr.copy_from_slice(&bytes[48..144]);
        let b: Option<G2Affine> = G2Affine::from_compressed(&arr).into();
        let b = b.ok_or(ProofDecodeError::BadPoint("b"))?;
        if bool::from(b.is_identity()) {
            return Err(ProofDecodeError::Identity("b"));
        }
        let c = g1("c", &bytes[144..])?;
        Ok(Proof { a, b, c })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::{G1Projective, G2Projective};
    use group::{Curve, Group};
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    #[test]
    fn roundtrip_and_errors() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let p = Proof {
            a: G1Projective::random(&mut rng).to_affine(),
            b: G2Projective::random(&mut rng).to_affine(),
            c: G1Projective::random(&mut rng).to_affine(),
        };
        let bytes = p.to_bytes();
        assert_eq!(Proof::from_bytes(&bytes), Ok(p));
        assert_eq!(
            Proof::from_bytes(&bytes[..191]),
            Err(ProofDecodeError::Length(191))
        );
        let mut bad = bytes;
        bad[0] ^= 0x20; // flip the sign bit: still decodes, different point
        assert_ne!(Proof::from_bytes(&bad).ok(), Some(p));
        let mut bad = bytes;
        bad[150] ^= 1;
        assert!(Proof::from_bytes(&bad).map(|q| q != p).unwrap_or(true));
        let id = Proof {
            a: G1Affine::identity(),
            ..p
        };
        assert_eq!(
            Proof::from_bytes(&id.to_bytes()),
            Err(ProofDecodeError::Identity("a"))
        );
    }
}
