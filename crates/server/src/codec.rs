//! The wire codec of every cuzk.v1 RPC: prost's, with a look at a request's raw bytes before
//! prost decodes them.
//!
//! prost turns each `repeated bytes` entry into a `Vec<u8>` as it decodes: an empty entry
//! costs 2 bytes on the wire and 24 in memory, so a 256 MiB message of empty entries grows
//! to 3 GiB before any handler could count them. [`CheckedCodec`] therefore walks the
//! top-level fields of `SubmitProofRequest` (and of the one inside `ProveRequest`) first and
//! refuses the message when `vanilla_proofs` has more entries than its `proof_kind` can carry
//! ([`cuzk_core::ProofKind::max_vanilla_proofs`]). The walk allocates nothing and stops at the
//! first entry over the largest limit of any kind.
//!
//! A message prost cannot decode answers INVALID_ARGUMENT (prost's own codec answers
//! INTERNAL, which reads as the daemon's fault, and clients retry it).
//!
//! `build.rs` names this codec for the generated server and client (`codec_path`).
use std::marker::PhantomData;

use bytes::Buf;
use prost::Message;
use tonic::codec::{BufferSettings, Codec, DecodeBuf, Decoder};
use tonic::Status;

use crate::proto;
use cuzk_core::ProofKind;

/// prost encoding, and prost decoding after [`Precheck::precheck`].
#[derive(Debug)]
pub struct CheckedCodec<T, U>(PhantomData<(T, U)>);

impl<T, U> Default for CheckedCodec<T, U> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

impl<T, U> Codec for CheckedCodec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Precheck + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = tonic_prost::ProstEncoder<T>;
    type Decoder = CheckedDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        tonic_prost::ProstEncoder::default()
    }

    fn decoder(&mut self) -> Self::Decoder {
        CheckedDecoder(PhantomData)
    }
}

/// Decodes `U` once its raw bytes pass [`Precheck`].
#[derive(Debug)]
pub struct CheckedDecoder<U>(PhantomData<U>);

impl<U: Message + Default + Precheck> Decoder for CheckedDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        // tonic hands the whole message in one contiguous buffer.
        if buf.chunk().len() == buf.remaining() {
            U::precheck(buf.chunk())?;
        }
        U::decode(buf).map(Some).map_err(|e| {
            Status::invalid_argument(format!(
                "the message is not a valid {}: {e}",
                std::any::type_name::<U>()
                    .rsplit("::")
                    .next()
                    .unwrap_or("message")
            ))
        })
    }

    fn buffer_settings(&self) -> BufferSettings {
        BufferSettings::default()
    }
}

/// A check of a message's wire bytes before they are decoded; nothing by default.
pub trait Precheck {
    /// Refuses `wire` before decoding, or lets it through.
    fn precheck(_wire: &[u8]) -> Result<(), Status> {
        Ok(())
    }
}

macro_rules! no_precheck {
    ($($t:ident),* $(,)?) => { $(impl Precheck for proto::$t {})* };
}

no_precheck!(
    SubmitProofResponse,
    AwaitProofRequest,
    AwaitProofResponse,
    ProveResponse,
    CancelProofRequest,
    CancelProofResponse,
    GetStatusRequest,
    GetStatusResponse,
    GetMetricsRequest,
    GetMetricsResponse,
    PreloadSrsRequest,
    PreloadSrsResponse,
    EvictSrsRequest,
    EvictSrsResponse,
    GetTimelineRequest,
    GetTimelineResponse,
);

/// `SubmitProofRequest.proof_kind`.
const FIELD_PROOF_KIND: u64 = 2;
/// `SubmitProofRequest.vanilla_proofs`.
const FIELD_VANILLA_PROOFS: u64 = 11;
/// `ProveRequest.submit`.
const FIELD_SUBMIT: u64 = 1;

impl Precheck for proto::SubmitProofRequest {
    fn precheck(wire: &[u8]) -> Result<(), Status> {
        let mut seen = Seen::default();
        // A malformed message is prost's to describe; only counts are judged here.
        if seen.submit(wire).is_ok() {
            seen.judge()?;
        }
        Ok(())
    }
}

impl Precheck for proto::ProveRequest {
    fn precheck(wire: &[u8]) -> Result<(), Status> {
        let mut seen = Seen::default();
        // Repeated occurrences of an embedded message merge, so their counts add up.
        let walked = walk(wire, |field, value| match (field, value) {
            (FIELD_SUBMIT, Value::Bytes(inner)) => seen.submit(inner),
            _ => Ok(()),
        });
        if walked.is_ok() {
            seen.judge()?;
        }
        Ok(())
    }
}

/// What the walk over a submit request found.
#[derive(Default)]
struct Seen {
    /// The last `proof_kind` (protobuf: the last occurrence wins).
    kind: Option<i32>,
    /// `vanilla_proofs` entries.
    vanilla_proofs: usize,
}

/// Why a walk stopped early.
enum Stop {
    /// The bytes are not protobuf; prost will say how.
    Malformed,
    /// More entries than any kind takes.
    TooMany,
}

impl Seen {
    fn submit(&mut self, wire: &[u8]) -> Result<(), Stop> {
        let ceiling = ProofKind::ALL
            .iter()
            .map(|k| k.max_vanilla_proofs())
            .max()
            .unwrap_or(0);
        walk(wire, |field, value| {
            match (field, value) {
                // int32 enums travel as varints; prost keeps the low 32 bits.
                (FIELD_PROOF_KIND, Value::Varint(v)) => self.kind = Some(v as i32),
                (FIELD_VANILLA_PROOFS, Value::Bytes(_)) => {
                    self.vanilla_proofs += 1;
                    if self.vanilla_proofs > ceiling {
                        return Err(Stop::TooMany);
                    }
                }
                _ => {}
            }
            Ok(())
        })
        .or_else(|stop| match stop {
            // Judged below with whatever kind was seen so far.
            Stop::TooMany => Ok(()),
            Stop::Malformed => Err(Stop::Malformed),
        })
    }

    fn judge(&self) -> Result<(), Status> {
        let kind = self.kind.and_then(|n| ProofKind::from_wire(n).ok());
        let (limit, who) = match kind {
            Some(k) => (k.max_vanilla_proofs(), k.name()),
            None => (
                ProofKind::ALL
                    .iter()
                    .map(|k| k.max_vanilla_proofs())
                    .max()
                    .unwrap_or(0),
                "any",
            ),
        };
        if self.vanilla_proofs > limit {
            let count = if kind.is_none() || self.vanilla_proofs > limit + 1 {
                format!("more than {limit}")
            } else {
                self.vanilla_proofs.to_string()
            };
            return Err(Status::invalid_argument(format!(
                "vanilla_proofs has {count} entries; a {who} request carries at most {limit} \
                 (refused before decoding)"
            )));
        }
        Ok(())
    }
}

/// One field's value on the wire.
enum Value<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

/// Calls `f` with each top-level field of a protobuf message, in wire order.
fn walk<'a>(
    mut wire: &'a [u8],
    mut f: impl FnMut(u64, Value<'a>) -> Result<(), Stop>,
) -> Result<(), Stop> {
    while !wire.is_empty() {
        let key = varint(&mut wire)?;
        let field = key >> 3;
        let value = match key & 7 {
            0 => Value::Varint(varint(&mut wire)?),
            1 => skip(&mut wire, 8)?,
            2 => {
                let len = usize::try_from(varint(&mut wire)?).map_err(|_| Stop::Malformed)?;
                if len > wire.len() {
                    return Err(Stop::Malformed);
                }
                let (bytes, rest) = wire.split_at(len);
                wire = rest;
                Value::Bytes(bytes)
            }
            5 => skip(&mut wire, 4)?,
            _ => return Err(Stop::Malformed),
        };
        f(field, value)?;
    }
    Ok(())
}

fn skip<'a>(wire: &mut &'a [u8], n: usize) -> Result<Value<'a>, Stop> {
    if wire.len() < n {
        return Err(Stop::Malformed);
    }
    *wire = &wire[n..];
    Ok(Value::Fixed)
}

fn varint(wire: &mut &[u8]) -> Result<u64, Stop> {
    let mut v = 0u64;
    for i in 0..10 {
        let (&b, rest) = wire.split_first().ok_or(Stop::Malformed)?;
        *wire = rest;
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(Stop::Malformed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn submit(kind: i32, entries: usize) -> proto::SubmitProofRequest {
        proto::SubmitProofRequest {
            request_id: "r".into(),
            proof_kind: kind,
            vanilla_proofs: vec![Vec::new(); entries],
            randomness: vec![7; 32],
            ..Default::default()
        }
    }

    fn check<M: Message + Precheck>(m: &M) -> Result<(), Status> {
        M::precheck(&m.encode_to_vec())
    }

    /// Counts within each kind's limit pass; one more is refused, naming the limit.
    #[test]
    fn vanilla_proof_counts_are_judged_per_kind_before_decoding() {
        for kind in ProofKind::ALL {
            let max = kind.max_vanilla_proofs();
            assert!(check(&submit(kind.to_wire(), max)).is_ok(), "{kind}");
            let err = check(&submit(kind.to_wire(), max + 1)).unwrap_err();
            assert_eq!(err.code(), tonic::Code::InvalidArgument, "{kind}");
            assert!(
                err.message().contains(&format!("at most {max}")),
                "{}",
                err.message()
            );
            let wrapped = proto::ProveRequest {
                submit: Some(submit(kind.to_wire(), max + 1)),
            };
            assert!(check(&wrapped).is_err(), "{kind} inside ProveRequest");
        }
    }

    /// A message of millions of empty entries is refused after the largest limit, whatever
    /// the kind, and an unknown kind is held to the largest limit.
    #[test]
    fn a_flood_of_empty_entries_stops_at_the_ceiling() {
        let flood = check(&submit(4, 2_000_000)).unwrap_err();
        assert!(
            flood.message().contains("more than 1"),
            "{}",
            flood.message()
        );
        assert!(check(&submit(77, 2349)).is_ok());
        assert!(check(&submit(77, 2350)).is_err());
        // The kind after the entries on the wire is still the one judged.
        let mut wire = submit(0, 2).encode_to_vec();
        wire.extend(
            proto::SubmitProofRequest {
                proof_kind: 4,
                ..Default::default()
            }
            .encode_to_vec(),
        );
        assert!(proto::SubmitProofRequest::precheck(&wire).is_err());
    }

    /// Bytes that are not protobuf pass the check untouched, so prost is the one to
    /// describe them (the decoder answers INVALID_ARGUMENT; the fuzz test sees it end to end).
    #[test]
    fn malformed_bytes_are_left_to_prost() {
        let wire = submit(3, 3).encode_to_vec();
        for cut in [1, 5, wire.len() / 2, wire.len() - 1] {
            assert!(proto::SubmitProofRequest::precheck(&wire[..cut]).is_ok());
        }
        assert!(proto::SubmitProofRequest::precheck(&[0x0f, 0x01]).is_ok());
        assert!(proto::ProveRequest::precheck(&[0x0a, 0x7f]).is_ok());
    }
}
