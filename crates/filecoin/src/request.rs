//! The Filecoin proof request (decoded from the wire protocol's `SubmitProofRequest` once),
//! the PoRep C1 forms, and the field-level checks shared by every kind.
use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::error::{FilecoinError, Result};
use crate::registry::{prover_id_from_miner_id, ProofKind, RegisteredProof, SectorSize};

/// A Filecoin proof request, decoded from the wire protocol's `SubmitProofRequest` once: the
/// one value that travels from the server through the engine to this crate's planners.
///
/// The kind and its registered proof are decoded and checked against the sector size when the
/// request is made ([`ProofRequest::new`]) and cannot change afterwards; the payload fields
/// are public. Which of them matter depends on the kind (see `PROTOCOL.md`, "Payloads"); the
/// others are ignored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProofRequest {
    /// What to prove.
    kind: ProofKind,
    /// `registered_proof`, decoded for `kind`; names the sector size.
    registered: RegisteredProof,
    /// PoRep: the C1 output (envelope or bare JSON, [`C1Input`]).
    pub vanilla_proof: Vec<u8>,
    /// SnapDeals: one bincode `PartitionProof` per partition; PoSt: one bincode
    /// `FallbackPoStSectorProof` per sector.
    pub vanilla_proofs: Vec<Vec<u8>>,
    /// PoRep: the sector number.
    pub sector_number: u64,
    /// The miner's actor id (gives `prover_id`).
    pub miner_id: u64,
    /// PoSt: the 32-byte challenge randomness.
    pub randomness: Vec<u8>,
    /// WindowPoSt: which partition of the deadline this is.
    pub partition_index: u32,
    /// SnapDeals: old replica commitment (32 bytes).
    pub comm_r_old: Vec<u8>,
    /// SnapDeals: new replica commitment (32 bytes).
    pub comm_r_new: Vec<u8>,
    /// SnapDeals: new data commitment (32 bytes).
    pub comm_d_new: Vec<u8>,
}

impl ProofRequest {
    /// A request of `kind` with an empty payload, to fill in: decodes `registered_proof` for
    /// `kind` and checks it against `sector_size`. A `sector_size` of 0 takes the size the
    /// registered proof names (Curio's ProofShare SnapDeals requests set none).
    pub fn new(kind: ProofKind, sector_size: u64, registered_proof: u64) -> Result<ProofRequest> {
        let size = match sector_size {
            0 => None,
            n => Some(SectorSize::from_bytes(n, "sector_size")?),
        };
        let registered = RegisteredProof::decode(kind, registered_proof)?;
        if let Some(size) = size {
            if registered.sector_size() != size {
                return Err(FilecoinError::Mismatch {
                    field: "registered_proof",
                    expected: format!("a {kind} proof for sector_size {size}"),
                    got: format!(
                        "{registered_proof} ({registered:?}, a {} proof)",
                        registered.sector_size()
                    ),
                });
            }
        }
        Ok(ProofRequest {
            kind,
            registered,
            vanilla_proof: Vec::new(),
            vanilla_proofs: Vec::new(),
            sector_number: 0,
            miner_id: 0,
            randomness: Vec::new(),
            partition_index: 0,
            comm_r_old: Vec::new(),
            comm_r_new: Vec::new(),
            comm_d_new: Vec::new(),
        })
    }

    /// The same payload under another sector size and registered proof, decoded and checked
    /// as [`ProofRequest::new`] does.
    pub fn with_header(self, sector_size: u64, registered_proof: u64) -> Result<ProofRequest> {
        let head = ProofRequest::new(self.kind, sector_size, registered_proof)?;
        Ok(ProofRequest {
            registered: head.registered,
            ..self
        })
    }

    /// What to prove.
    pub fn kind(&self) -> ProofKind {
        self.kind
    }

    /// The registered proof, decoded.
    pub fn registered(&self) -> RegisteredProof {
        self.registered
    }

    /// The sector size (the registered proof's).
    pub fn sector_size(&self) -> SectorSize {
        self.registered.sector_size()
    }

    /// The Go-side registered proof number.
    pub fn registered_proof(&self) -> u64 {
        self.registered.to_u64()
    }

    /// The 32-byte prover id derived from `miner_id`.
    pub fn prover_id(&self) -> [u8; 32] {
        prover_id_from_miner_id(self.miner_id)
    }

    /// Bytes of payload the request carries.
    pub fn payload_bytes(&self) -> u64 {
        (self.vanilla_proof.len()
            + self.vanilla_proofs.iter().map(Vec::len).sum::<usize>()
            + self.randomness.len()
            + self.comm_r_old.len()
            + self.comm_r_new.len()
            + self.comm_d_new.len()) as u64
    }

    /// Hands `field` every value that decides the proof, one byte string each, in a fixed
    /// order: kind, registered proof, sector size and number, miner, PoSt partition and
    /// randomness, commitments, the payload (its entry count before the entries). Callers
    /// hash them length-prefixed to tell two requests with one id apart.
    pub fn digest_fields(&self, field: &mut dyn FnMut(&[u8])) {
        field(self.kind.name().as_bytes());
        field(&self.registered_proof().to_le_bytes());
        field(&self.sector_size().bytes().to_le_bytes());
        field(&self.sector_number.to_le_bytes());
        field(&self.miner_id.to_le_bytes());
        field(&self.partition_index.to_le_bytes());
        field(&self.randomness);
        field(&self.comm_r_old);
        field(&self.comm_r_new);
        field(&self.comm_d_new);
        field(&self.vanilla_proof);
        field(&(self.vanilla_proofs.len() as u64).to_le_bytes());
        for v in &self.vanilla_proofs {
            field(v);
        }
    }
}

/// The PoRep C2 envelope Curio sends in `vanilla_proof`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct C1Envelope {
    /// Sector number.
    #[serde(rename = "SectorNum")]
    pub sector_num: u64,
    /// Base64 of the `SealCommitPhase1Output` JSON.
    #[serde(rename = "Phase1Out")]
    pub phase1_out: String,
    /// Sector size in bytes.
    #[serde(rename = "SectorSize")]
    pub sector_size: u64,
}

impl C1Envelope {
    /// Parses the envelope JSON.
    pub fn parse(bytes: &[u8]) -> Result<C1Envelope> {
        serde_json::from_slice(bytes).map_err(FilecoinError::EnvelopeJson)
    }

    /// Wraps a `SealCommitPhase1Output` JSON.
    pub fn new(sector_num: u64, sector_size: u64, phase1_json: &[u8]) -> C1Envelope {
        C1Envelope {
            sector_num,
            phase1_out: base64::engine::general_purpose::STANDARD.encode(phase1_json),
            sector_size,
        }
    }

    /// The decoded `Phase1Out` bytes (accepts standard base64 with or without padding).
    pub fn phase1_bytes(&self) -> Result<Vec<u8>> {
        use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
        let s = self.phase1_out.trim();
        STANDARD
            .decode(s)
            .or_else(|e| STANDARD_NO_PAD.decode(s).map_err(|_| e))
            .map_err(FilecoinError::Base64)
    }

    /// The envelope as JSON bytes.
    pub fn to_json(&self) -> Vec<u8> {
        // Serializing a struct of a u64, a String and a u64 cannot fail.
        serde_json::to_vec(self).unwrap_or_default()
    }
}

/// The C1 output a PoRep request's `vanilla_proof` carries, in either form Curio sends: the
/// [`C1Envelope`] (`lib/ffi/cuzk_funcs.go`), or the bare `SealCommitPhase1Output` JSON
/// (ProofShare: `json.Marshal(Commit1OutRaw)`, the same serde shape as filecoin-proofs').
pub enum C1Input<'a> {
    /// The envelope, parsed.
    Envelope(C1Envelope),
    /// The bare C1 output's JSON bytes, not yet parsed.
    Bare(&'a [u8]),
}

/// How far into `vanilla_proof` the envelope's `"Phase1Out"` key must appear: its only long
/// value is that key's own, so the key comes within the first few dozen bytes.
const ENVELOPE_KEY_WITHIN: usize = 4096;

impl<'a> C1Input<'a> {
    /// Tells the forms apart: a JSON object without `"Phase1Out"` in its first
    /// [`ENVELOPE_KEY_WITHIN`] bytes is a bare C1 output; anything else must be the envelope.
    pub fn parse(bytes: &'a [u8]) -> Result<C1Input<'a>> {
        let head = &bytes[..bytes.len().min(ENVELOPE_KEY_WITHIN)];
        let object = head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        let key = b"\"Phase1Out\"";
        if object && !head.windows(key.len()).any(|w| w == key) {
            return Ok(C1Input::Bare(bytes));
        }
        C1Envelope::parse(bytes).map(C1Input::Envelope)
    }
}

/// Checks that `bytes` is exactly 32 bytes and returns it as an array.
pub fn bytes32(field: &'static str, bytes: &[u8]) -> Result<[u8; 32]> {
    <[u8; 32]>::try_from(bytes).map_err(|_| FilecoinError::WrongLength {
        field,
        expected: 32,
        got: bytes.len(),
    })
}

/// Checks that a 32-byte value is a canonical scalar (what `as_safe_commitment` requires),
/// and optionally that it is not all zeros.
pub(crate) fn check_scalar(field: &'static str, bytes: &[u8; 32], nonzero: bool) -> Result<()> {
    if nonzero && bytes.iter().all(|&b| b == 0) {
        return Err(FilecoinError::InvalidValue {
            field,
            reason: "must not be all zeros".into(),
        });
    }
    let canonical: Option<blstrs::Scalar> = blstrs::Scalar::from_bytes_le(bytes).into();
    if canonical.is_none() {
        return Err(FilecoinError::InvalidValue {
            field,
            reason: "is not a canonical BLS12-381 scalar (little-endian, below the modulus)".into(),
        });
    }
    Ok(())
}

/// [`check_scalar`] for a hasher domain taken from input (a deserialized vanilla proof or C1
/// output): the Filecoin crates turn such a domain into a field element with `.expect`, so a
/// non-canonical one must be refused before it reaches them.
pub(crate) fn check_domain<D: AsRef<[u8]>>(
    field: &'static str,
    d: &D,
    nonzero: bool,
) -> Result<()> {
    let bytes: [u8; 32] = d
        .as_ref()
        .try_into()
        .map_err(|_| FilecoinError::InvalidValue {
            field,
            reason: format!("is {} bytes, not 32", d.as_ref().len()),
        })?;
    check_scalar(field, &bytes, nonzero)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_round_trips() {
        let env = C1Envelope::new(7, 2048, b"{\"x\":1}");
        let parsed = C1Envelope::parse(&env.to_json()).unwrap();
        assert_eq!(parsed.sector_num, 7);
        assert_eq!(parsed.phase1_bytes().unwrap(), b"{\"x\":1}");
        let json = env.to_json();
        assert!(matches!(
            C1Envelope::parse(&json[..json.len() - 3]),
            Err(FilecoinError::EnvelopeJson(_))
        ));
        let bad = C1Envelope {
            phase1_out: "***".into(),
            ..env
        };
        assert!(matches!(bad.phase1_bytes(), Err(FilecoinError::Base64(_))));
    }

    #[test]
    fn registered_proof_must_match_sector_size() {
        assert!(matches!(
            ProofRequest::new(ProofKind::PoRepSealCommit, 2048, 8),
            Err(FilecoinError::Mismatch {
                field: "registered_proof",
                ..
            })
        ));
        let req = ProofRequest::new(ProofKind::PoRepSealCommit, 2048, 5).unwrap();
        assert_eq!(req.sector_size(), SectorSize::S2KiB);
        assert_eq!(req.registered_proof(), 5);
        // 0: the registered proof's own size (Curio's ProofShare SnapDeals).
        let req = ProofRequest::new(ProofKind::SnapDealsUpdate, 0, 3).unwrap();
        assert_eq!(req.sector_size(), SectorSize::S32GiB);
        assert!(matches!(
            ProofRequest::new(ProofKind::PoRepSealCommit, 4096, 5),
            Err(FilecoinError::UnsupportedSectorSize { .. })
        ));
        // A WindowPoSt number for a WinningPoSt request.
        assert!(matches!(
            ProofRequest::new(ProofKind::WinningPost, 2048, 5),
            Err(FilecoinError::WrongProofType { .. })
        ));
    }

    #[test]
    fn scalars_are_checked() {
        assert!(check_scalar("x", &[0u8; 32], true).is_err());
        assert!(check_scalar("x", &[0u8; 32], false).is_ok());
        assert!(check_scalar("x", &[0xffu8; 32], false).is_err());
        let mut ok = [0x11u8; 32];
        ok[31] = 0x0f;
        assert!(check_scalar("x", &ok, true).is_ok());
        assert!(bytes32("comm_r_old", &[1u8; 31]).is_err());
    }
}
