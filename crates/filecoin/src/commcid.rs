//! Commitments as clients send them: 32 raw bytes, or the commitment's CID.
//!
//! Curio sends SnapDeals' `comm_r_old`, `comm_r_new` and `comm_d_new` raw from ProofShare
//! (`request.OldR[:]`) but as `cid.Bytes()` from its own sealing pipeline (`key.Bytes()`,
//! `lib/ffi/cuzk_funcs.go`). A commitment CID is CIDv1 of a Filecoin commitment codec whose
//! multihash is the 32-byte commitment itself (go-fil-commcid):
//! - sealed (comm_r): codec `fil-commitment-sealed` 0xf102, multihash
//!   `poseidon-bls12_381-a2-fc1` 0xb401;
//! - unsealed (comm_d): codec `fil-commitment-unsealed` 0xf101, multihash
//!   `sha2-256-trunc254-padded` 0x1012.
//!
//! Each number is an unsigned LEB128 varint. A CID of the wrong codec for the field (a comm_d
//! CID sent as comm_r), or any other CID, is refused with what was found.
use crate::error::{FilecoinError, Result};

/// Which commitment a field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Commitment {
    /// comm_r: `fil-commitment-sealed`, Poseidon.
    Sealed,
    /// comm_d: `fil-commitment-unsealed`, SHA-256 truncated.
    Unsealed,
}

impl Commitment {
    fn codec(self) -> u64 {
        match self {
            Commitment::Sealed => 0xf102,
            Commitment::Unsealed => 0xf101,
        }
    }

    fn multihash(self) -> u64 {
        match self {
            Commitment::Sealed => 0xb401,
            Commitment::Unsealed => 0x1012,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Commitment::Sealed => "fil-commitment-sealed",
            Commitment::Unsealed => "fil-commitment-unsealed",
        }
    }
}

/// The 32-byte commitment in `bytes`: the raw commitment, or its CID (see the module doc).
pub(crate) fn commitment(field: &'static str, bytes: &[u8], kind: Commitment) -> Result<[u8; 32]> {
    if let Ok(raw) = <[u8; 32]>::try_from(bytes) {
        return Ok(raw);
    }
    let bad = |reason: String| FilecoinError::InvalidValue {
        field,
        reason: format!(
            "is {} bytes: neither a raw 32-byte commitment nor a {} CID ({reason})",
            bytes.len(),
            kind.name()
        ),
    };
    let mut rest = bytes;
    let mut next = |what: &str| varint(&mut rest).ok_or_else(|| bad(format!("no {what} varint")));
    let version = next("version")?;
    let codec = next("codec")?;
    let hash = next("multihash code")?;
    let len = next("digest length")?;
    if version != 1 {
        return Err(bad(format!("CID version {version}, not 1")));
    }
    if codec != kind.codec() || hash != kind.multihash() {
        return Err(bad(format!(
            "codec {codec:#x} with multihash {hash:#x}, not {:#x} with {:#x}",
            kind.codec(),
            kind.multihash()
        )));
    }
    if len != 32 || rest.len() != 32 {
        return Err(bad(format!(
            "a digest of {len} bytes declared, {} present, not 32",
            rest.len()
        )));
    }
    Ok(rest.try_into().expect("32 bytes checked"))
}

/// Reads one unsigned LEB128 varint of at most 9 bytes (what CIDs use) off the front.
fn varint(bytes: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(9) {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            *bytes = &bytes[i + 1..];
            return Some(v);
        }
    }
    None
}

/// The CID bytes of a commitment (for tests: what `cid.Bytes()` gives in Go).
pub fn to_cid_bytes(commitment: &[u8; 32], kind: Commitment) -> Vec<u8> {
    let mut out = Vec::with_capacity(40);
    for v in [1, kind.codec(), kind.multihash(), 32] {
        let mut v = v;
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                break;
            }
            out.push(b | 0x80);
        }
    }
    out.extend_from_slice(commitment);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CIDs' byte prefixes as go-fil-commcid makes them (0x01, codec, multihash, 0x20).
    #[test]
    fn commitment_cids_have_filecoin_s_prefixes_and_decode_to_the_commitment() {
        let c = [7u8; 32];
        let sealed = to_cid_bytes(&c, Commitment::Sealed);
        assert_eq!(
            sealed[..8],
            [0x01, 0x82, 0xe2, 0x03, 0x81, 0xe8, 0x02, 0x20]
        );
        assert_eq!(sealed.len(), 40);
        let unsealed = to_cid_bytes(&c, Commitment::Unsealed);
        assert_eq!(unsealed[..7], [0x01, 0x81, 0xe2, 0x03, 0x92, 0x20, 0x20]);
        assert_eq!(unsealed.len(), 39);
        assert_eq!(
            commitment("comm_r_new", &sealed, Commitment::Sealed).unwrap(),
            c
        );
        assert_eq!(
            commitment("comm_d_new", &unsealed, Commitment::Unsealed).unwrap(),
            c
        );
        assert_eq!(commitment("comm_r_new", &c, Commitment::Sealed).unwrap(), c);
    }

    #[test]
    fn a_cid_of_the_wrong_kind_or_a_damaged_one_is_refused_with_what_was_found() {
        let c = [7u8; 32];
        let unsealed = to_cid_bytes(&c, Commitment::Unsealed);
        let e = commitment("comm_r_old", &unsealed, Commitment::Sealed).unwrap_err();
        assert!(e.to_string().contains("comm_r_old"), "{e}");
        assert!(e.to_string().contains("0xf101"), "{e}");
        let sealed = to_cid_bytes(&c, Commitment::Sealed);
        for bad in [&sealed[..39], &sealed[..3], &[0xffu8; 12][..], &[][..]] {
            assert!(commitment("comm_r_new", bad, Commitment::Sealed).is_err());
        }
        let mut v0 = sealed.clone();
        v0[0] = 0;
        assert!(commitment("comm_r_new", &v0, Commitment::Sealed).is_err());
        let mut longer = sealed.clone();
        longer.push(0);
        assert!(commitment("comm_r_new", &longer, Commitment::Sealed).is_err());
    }
}
