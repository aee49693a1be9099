//! Unix-socket clients that send a socket path as `:authority`: the stream shim that lets them in.
//!
//! grpc-core 1.57 and later (Python, C++, Ruby), grpc-java and grpcurl send the
//! percent-encoded socket path (`tmp%2Fcuzk.sock`) as the HTTP/2 `:authority` of every request
//! on a unix socket. The HTTP/2 layer under tonic (h2) parses `:authority` as a URI authority
//! and answers such a request with RST_STREAM(PROTOCOL_ERROR) before tonic sees it; there is
//! no hook to relax that check. grpc-go (Curio's client) sends `localhost` and is unaffected.
//!
//! [`AuthorityFix`] sits between the accepted socket and the HTTP/2 server and reads the
//! client's frames. It passes every byte through unchanged until a request's header block
//! carries an `:authority` that is not a valid URI authority. From that block on, it re-encodes
//! each header block with `:authority: localhost` as HPACK literals that never touch the
//! server's dynamic table, so the server's decoder state stays consistent with what it
//! receives. To do that it decodes every header block with the client's own HPACK state from
//! the first byte (it must know the client's dynamic table when the first rewrite comes).
//! Should that decoding fail before any rewrite, the shim steps aside for the rest of the
//! connection and the bytes flow untouched, so a client that never needed it cannot be hurt
//! by it.
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const FRAME_HEADER: usize = 9;
const HEADERS: u8 = 0x1;
const CONTINUATION: u8 = 0x9;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;
const PRIORITY: u8 = 0x20;
/// Frames we write never exceed HTTP/2's initial SETTINGS_MAX_FRAME_SIZE, which every peer
/// accepts whatever it advertised.
const MAX_OUT_FRAME: usize = 16_384;
/// The largest frame HTTP/2 can express (its length field is 24 bits).
const MAX_FRAME: usize = (1 << 24) - 1;
/// A header block split over CONTINUATION frames is collected up to this size; a larger one
/// is refused (tonic's own header-list limit is far below it).
const MAX_HEADER_BLOCK: usize = 1 << 20;
/// The authority written in place of a socket path.
const LOCALHOST: &[u8] = b"localhost";

/// What the shim is doing with the client's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Decoding header blocks to follow the client's HPACK state; bytes pass through as they
    /// came.
    Watching,
    /// At least one block was rewritten: every header block from now on is re-encoded.
    Rewriting,
    /// The client's bytes could not be followed before any rewrite: pass everything through.
    Blind,
}

/// A header block being collected from a HEADERS frame and its CONTINUATION frames.
struct PendingBlock {
    stream: u32,
    /// The HEADERS frame's flags (END_STREAM, PRIORITY; PADDED is dropped when re-encoded).
    flags: u8,
    /// The 5 priority bytes of the HEADERS frame, if it had them.
    priority: Option<[u8; 5]>,
    /// The header block fragments so far.
    block: Vec<u8>,
    /// The frames exactly as received, for pass-through.
    raw: Vec<u8>,
}

/// The client→server byte stream of one unix-socket connection, with `:authority` repaired
/// (see the module documentation). Writes go to the socket untouched.
pub struct AuthorityFix<S> {
    inner: S,
    mode: Mode,
    /// Preface bytes still expected before the first frame.
    preface_left: usize,
    /// Bytes read from the socket, not yet parsed into a whole frame.
    input: Vec<u8>,
    /// Bytes ready for the HTTP/2 server.
    output: Vec<u8>,
    /// How much of `output` the server has already read.
    output_pos: usize,
    pending: Option<PendingBlock>,
    decoder: loona_hpack::Decoder<'static>,
    eof: bool,
    /// Header blocks rewritten on this connection.
    rewritten: u64,
}

impl<S> AuthorityFix<S> {
    /// Wraps an accepted connection.
    pub fn new(inner: S) -> AuthorityFix<S> {
        AuthorityFix {
            inner,
            mode: Mode::Watching,
            preface_left: PREFACE.len(),
            input: Vec::new(),
            output: Vec::new(),
            output_pos: 0,
            pending: None,
            decoder: loona_hpack::Decoder::new(),
            eof: false,
            rewritten: 0,
        }
    }

    /// Header blocks whose `:authority` was replaced so far.
    #[cfg(test)]
    pub fn rewritten_blocks(&self) -> u64 {
        self.rewritten
    }

    /// Moves whatever can be decided from `input` to `output`.
    fn process(&mut self) -> io::Result<()> {
        loop {
            if self.mode == Mode::Blind {
                self.output.append(&mut self.input);
                return Ok(());
            }
            if self.preface_left > 0 {
                let done = PREFACE.len() - self.preface_left;
                let n = self.preface_left.min(self.input.len());
                if self.input[..n] != PREFACE[done..done + n] {
                    // Not HTTP/2 with prior knowledge: nothing for us to do.
                    self.step_aside();
                    continue;
                }
                self.output.extend(self.input.drain(..n));
                self.preface_left -= n;
                if self.preface_left > 0 {
                    return Ok(());
                }
            }
            if self.input.len() < FRAME_HEADER {
                return Ok(());
            }
            let len = u32::from_be_bytes([0, self.input[0], self.input[1], self.input[2]]) as usize;
            let total = FRAME_HEADER + len;
            if self.input.len() < total {
                return Ok(());
            }
            let frame: Vec<u8> = self.input.drain(..total).collect();
            self.frame(frame)?;
        }
    }

    fn step_aside(&mut self) {
        if let Some(p) = self.pending.take() {
            self.output.extend_from_slice(&p.raw);
        }
        self.mode = Mode::Blind;
    }

    /// Follows one whole frame.
    fn frame(&mut self, frame: Vec<u8>) -> io::Result<()> {
        let kind = frame[3];
        let flags = frame[4];
        let stream = u32::from_be_bytes([frame[5], frame[6], frame[7], frame[8]]) & 0x7fff_ffff;
        let payload = &frame[FRAME_HEADER..];
        match (kind, self.pending.is_some()) {
            (HEADERS, false) => {
                let Some((priority, fragment)) = headers_fragment(flags, payload) else {
                    return self.cannot_follow(frame, "a HEADERS frame with bad padding");
                };
                self.pending = Some(PendingBlock {
                    stream,
                    flags: flags & (END_STREAM | PRIORITY),
                    priority,
                    block: fragment.to_vec(),
                    raw: Vec::new(),
                });
            }
            (CONTINUATION, true) if self.pending.as_ref().map(|p| p.stream) == Some(stream) => {
                let p = self.pending.as_mut().expect("checked above");
                p.block.extend_from_slice(payload);
                if p.block.len() > MAX_HEADER_BLOCK {
                    return self.cannot_follow(frame, "a header block over 1 MiB");
                }
            }
            (_, true) => {
                // Only CONTINUATION of the same stream may follow an unfinished block.
                return self.cannot_follow(frame, "a frame inside a header block");
            }
            (_, false) => {
                self.output.extend_from_slice(&frame);
                return Ok(());
            }
        }
        let p = self.pending.as_mut().expect("set above");
        p.raw.extend_from_slice(&frame);
        if flags & END_HEADERS == 0 {
            return Ok(());
        }
        let p = self.pending.take().expect("set above");
        self.block(p)
    }

    /// Decodes a whole header block and passes it through or re-encodes it.
    fn block(&mut self, p: PendingBlock) -> io::Result<()> {
        let headers = match self.decoder.decode(&p.block) {
            Ok(h) => h,
            Err(e) => {
                let why = format!("an HPACK block it could not decode ({e:?})");
                return self.cannot_follow(p.raw, &why);
            }
        };
        let bad_authority = headers.iter().any(|(name, value)| {
            name.as_slice() == b":authority"
                && http::uri::Authority::try_from(value.as_slice()).is_err()
        });
        if bad_authority && self.mode == Mode::Watching {
            tracing::debug!(
                stream = p.stream,
                "client sent a socket path as :authority; serving it as localhost"
            );
            self.mode = Mode::Rewriting;
        }
        if self.mode == Mode::Watching {
            self.output.extend_from_slice(&p.raw);
            return Ok(());
        }
        if bad_authority {
            self.rewritten += 1;
        }
        let mut block = Vec::with_capacity(p.block.len() + 16);
        for (name, value) in &headers {
            let value = if name.as_slice() == b":authority" && bad_authority {
                LOCALHOST
            } else {
                value.as_slice()
            };
            literal_without_indexing(&mut block, name, value);
        }
        write_header_frames(&mut self.output, p.stream, p.flags, p.priority, &block);
        Ok(())
    }

    /// A frame the shim cannot follow: before any rewrite it steps aside and the frame goes
    /// through as it came; after one, the server's view would go wrong, so the connection ends.
    fn cannot_follow(&mut self, frame: Vec<u8>, what: &str) -> io::Result<()> {
        if self.mode == Mode::Rewriting {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("HTTP/2 client sent {what} after its :authority was rewritten"),
            ));
        }
        tracing::debug!("HTTP/2 client sent {what}; passing its bytes through untouched");
        self.step_aside();
        self.output.extend_from_slice(&frame);
        Ok(())
    }
}

/// The priority bytes and the header block fragment of a HEADERS frame's payload.
fn headers_fragment(flags: u8, payload: &[u8]) -> Option<(Option<[u8; 5]>, &[u8])> {
    let mut body = payload;
    let mut pad = 0usize;
    if flags & PADDED != 0 {
        pad = *body.first()? as usize;
        body = &body[1..];
    }
    let mut priority = None;
    if flags & PRIORITY != 0 {
        let p: [u8; 5] = body.get(..5)?.try_into().ok()?;
        priority = Some(p);
        body = &body[5..];
    }
    let end = body.len().checked_sub(pad)?;
    Some((priority, &body[..end]))
}

/// HPACK integer with an `n`-bit prefix whose high bits are `first`.
fn hpack_int(out: &mut Vec<u8>, first: u8, n: u8, mut v: usize) {
    let max = (1usize << n) - 1;
    if v < max {
        out.push(first | v as u8);
        return;
    }
    out.push(first | max as u8);
    v -= max;
    while v >= 128 {
        out.push((v % 128) as u8 | 0x80);
        v /= 128;
    }
    out.push(v as u8);
}

/// "Literal Header Field without Indexing — New Name", no Huffman coding: the server decodes
/// it and adds nothing to its dynamic table.
fn literal_without_indexing(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.push(0x00);
    hpack_int(out, 0x00, 7, name.len());
    out.extend_from_slice(name);
    hpack_int(out, 0x00, 7, value.len());
    out.extend_from_slice(value);
}

fn frame_header(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    debug_assert!(len <= MAX_FRAME);
    out.extend_from_slice(&(len as u32).to_be_bytes()[1..]);
    out.push(kind);
    out.push(flags);
    out.extend_from_slice(&stream.to_be_bytes());
}

/// A header block as one HEADERS frame and as many CONTINUATION frames as it needs.
fn write_header_frames(
    out: &mut Vec<u8>,
    stream: u32,
    flags: u8,
    priority: Option<[u8; 5]>,
    block: &[u8],
) {
    let lead = priority.map_or(0, |_| 5);
    let first = block.len().min(MAX_OUT_FRAME - lead);
    let last = first == block.len();
    let f = flags | if last { END_HEADERS } else { 0 };
    frame_header(out, lead + first, HEADERS, f, stream);
    if let Some(p) = priority {
        out.extend_from_slice(&p);
    }
    out.extend_from_slice(&block[..first]);
    let mut rest = &block[first..];
    while !rest.is_empty() {
        let n = rest.len().min(MAX_OUT_FRAME);
        let f = if n == rest.len() { END_HEADERS } else { 0 };
        frame_header(out, n, CONTINUATION, f, stream);
        out.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for AuthorityFix<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.output_pos < this.output.len() {
                let n = buf.remaining().min(this.output.len() - this.output_pos);
                buf.put_slice(&this.output[this.output_pos..this.output_pos + n]);
                this.output_pos += n;
                if this.output_pos == this.output.len() {
                    this.output.clear();
                    this.output_pos = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                // Whatever is left unparsed (a truncated frame) goes through; the server
                // reports it.
                if !this.input.is_empty() {
                    this.output.append(&mut this.input);
                    continue;
                }
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; 16 * 1024];
            let mut rb = ReadBuf::new(&mut chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut rb))?;
            if rb.filled().is_empty() {
                this.eof = true;
                if let Some(p) = this.pending.take() {
                    this.output.extend_from_slice(&p.raw);
                }
                continue;
            }
            this.input.extend_from_slice(rb.filled());
            if this.input.len() > MAX_FRAME + FRAME_HEADER + MAX_HEADER_BLOCK {
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "HTTP/2 client sent a frame longer than the protocol allows",
                )));
            }
            this.process()?;
        }
    }
}

crate::wrap::write_and_connect_through!(AuthorityFix, inner);

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// What grpc-python 1.85.3 (grpc-c 58) sent on a unix socket for two GetStatus calls:
    /// the first block adds `:authority: tmp%2Fcap%2Fs.sock` to its dynamic table, the second
    /// refers to it by index (0xc2…).
    pub(crate) const GRPC_CORE_BLOCK_1: &str = "40053a70617468202f63757a6b2e76312e50726f76696e67456e67696e652f476574537461747573400a3a617574686f7269747912746d70253246636170253246732e736f636b8386400c636f6e74656e742d74797065106170706c69636174696f6e2f677270634002746508747261696c6572734014677270632d6163636570742d656e636f64696e67176964656e746974792c206465666c6174652c20677a6970400c677270632d74696d656f7574023153400a757365722d6167656e7430677270632d707974686f6e2f312e38352e3320677270632d632f35382e302e3020286c696e75783b2063687474703229";
    pub(crate) const GRPC_CORE_BLOCK_2: &str =
        "c4c38386c2c1c0400c677270632d74696d656f757405313031306dbf";

    fn headers_frame(stream: u32, block: &[u8]) -> Vec<u8> {
        let mut f = Vec::new();
        frame_header(&mut f, block.len(), HEADERS, END_HEADERS, stream);
        f.extend_from_slice(block);
        f
    }

    async fn through(input: Vec<u8>) -> (Vec<u8>, u64) {
        let (mut client, server) = tokio::io::duplex(1 << 20);
        tokio::io::AsyncWriteExt::write_all(&mut client, &input)
            .await
            .unwrap();
        drop(client);
        let mut fix = AuthorityFix::new(server);
        let mut out = Vec::new();
        fix.read_to_end(&mut out).await.unwrap();
        (out, fix.rewritten_blocks())
    }

    fn decode_all(mut bytes: &[u8]) -> Vec<Vec<(Vec<u8>, Vec<u8>)>> {
        assert!(bytes.starts_with(PREFACE));
        bytes = &bytes[PREFACE.len()..];
        let mut dec = loona_hpack::Decoder::new();
        let mut blocks = Vec::new();
        let mut block = Vec::new();
        while !bytes.is_empty() {
            let len = u32::from_be_bytes([0, bytes[0], bytes[1], bytes[2]]) as usize;
            let (kind, flags) = (bytes[3], bytes[4]);
            let payload = &bytes[FRAME_HEADER..FRAME_HEADER + len];
            if kind == HEADERS || kind == CONTINUATION {
                let frag = if kind == HEADERS {
                    headers_fragment(flags, payload).unwrap().1
                } else {
                    payload
                };
                block.extend_from_slice(frag);
                if flags & END_HEADERS != 0 {
                    blocks.push(dec.decode(&block).unwrap());
                    block.clear();
                }
            }
            bytes = &bytes[FRAME_HEADER + len..];
        }
        blocks
    }

    fn authority(block: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
        block
            .iter()
            .find(|(n, _)| n.as_slice() == b":authority")
            .map(|(_, v)| v.clone())
            .unwrap()
    }

    #[tokio::test]
    async fn grpc_core_socket_path_authority_becomes_localhost_on_both_requests() {
        let mut input = PREFACE.to_vec();
        frame_header(&mut input, 0, 0x4, 0, 0); // SETTINGS
        input.extend(headers_frame(1, &hex::decode(GRPC_CORE_BLOCK_1).unwrap()));
        frame_header(&mut input, 5, 0x0, END_STREAM, 1);
        input.extend_from_slice(&[0, 0, 0, 0, 0]);
        input.extend(headers_frame(3, &hex::decode(GRPC_CORE_BLOCK_2).unwrap()));
        let original = decode_all(&input);
        assert_eq!(authority(&original[1]), b"tmp%2Fcap%2Fs.sock");
        let (out, rewritten) = through(input).await;
        assert_eq!(rewritten, 2);
        let blocks = decode_all(&out);
        assert_eq!(blocks.len(), 2);
        for (got, want) in blocks.iter().zip(&original) {
            assert_eq!(authority(got), b"localhost");
            // Every other header arrives unchanged, in order.
            let others = |b: &[(Vec<u8>, Vec<u8>)]| -> Vec<(Vec<u8>, Vec<u8>)> {
                b.iter()
                    .filter(|(n, _)| n.as_slice() != b":authority")
                    .cloned()
                    .collect()
            };
            assert_eq!(others(got), others(want));
        }
        // The 5-byte DATA frame went through untouched between them.
        assert!(out
            .windows(14)
            .any(|w| w == [0, 0, 5, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0]));
    }

    #[tokio::test]
    async fn a_valid_authority_passes_byte_for_byte() {
        let mut block = Vec::new();
        literal_without_indexing(&mut block, b":method", b"POST");
        literal_without_indexing(&mut block, b":authority", b"localhost");
        let mut input = PREFACE.to_vec();
        input.extend(headers_frame(1, &block));
        frame_header(&mut input, 3, 0x0, END_STREAM, 1);
        input.extend_from_slice(b"abc");
        let (out, rewritten) = through(input.clone()).await;
        assert_eq!(rewritten, 0);
        assert_eq!(out, input);
    }

    #[tokio::test]
    async fn undecodable_bytes_before_any_rewrite_pass_through() {
        let mut input = PREFACE.to_vec();
        input.extend(headers_frame(1, &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff]));
        input.extend(headers_frame(3, &hex::decode(GRPC_CORE_BLOCK_1).unwrap()));
        let (out, rewritten) = through(input.clone()).await;
        assert_eq!(rewritten, 0);
        assert_eq!(out, input);
        let (out, _) = through(b"GET / HTTP/1.1\r\n\r\n".to_vec()).await;
        assert_eq!(out, b"GET / HTTP/1.1\r\n\r\n");
    }

    #[tokio::test]
    async fn a_long_rewritten_block_is_split_into_continuations() {
        let mut block = hex::decode(GRPC_CORE_BLOCK_1).unwrap();
        let big = vec![b'x'; 40_000];
        literal_without_indexing(&mut block, b"x-big", &big);
        let mut input = PREFACE.to_vec();
        // Sent as HEADERS + CONTINUATION, padded, with priority.
        let mut first = vec![3u8];
        first.extend_from_slice(&[0, 0, 0, 0, 7]);
        first.extend_from_slice(&block[..100]);
        first.extend_from_slice(&[0, 0, 0]);
        frame_header(
            &mut input,
            first.len(),
            HEADERS,
            PADDED | PRIORITY | END_STREAM,
            5,
        );
        input.extend(first);
        frame_header(&mut input, block.len() - 100, CONTINUATION, END_HEADERS, 5);
        input.extend_from_slice(&block[100..]);
        let (out, rewritten) = through(input).await;
        assert_eq!(rewritten, 1);
        let blocks = decode_all(&out);
        assert_eq!(blocks.len(), 1);
        assert_eq!(authority(&blocks[0]), b"localhost");
        assert!(blocks[0].iter().any(|(n, v)| n == b"x-big" && v == &big));
        // HEADERS keeps END_STREAM and its priority; frames stay within 16 KiB.
        let p = &out[PREFACE.len()..];
        assert_eq!(p[3], HEADERS);
        assert_eq!(
            p[4] & (END_STREAM | PRIORITY | PADDED),
            END_STREAM | PRIORITY
        );
        assert_eq!(&p[9..14], &[0, 0, 0, 0, 7]);
        let mut rest = p;
        while !rest.is_empty() {
            let len = u32::from_be_bytes([0, rest[0], rest[1], rest[2]]) as usize;
            assert!(len <= MAX_OUT_FRAME);
            rest = &rest[FRAME_HEADER + len..];
        }
    }
}
