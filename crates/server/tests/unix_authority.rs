//! Issue 15 item 13: clients built on grpc-core (Python, C++, Ruby), grpc-java and grpcurl send
//! the percent-encoded socket path as `:authority` on a unix socket, and every RPC failed with
//! RST_STREAM(PROTOCOL_ERROR). This test speaks HTTP/2 on the daemon's real socket with the
//! exact header blocks grpc-python 1.85.3 sent for two GetStatus calls (captured on a unix
//! socket; the second call refers to the first one's HPACK dynamic-table entries), and checks
//! both calls get a real answer.
mod common;

use common::Transport;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const BLOCK_1: &str = "40053a70617468202f63757a6b2e76312e50726f76696e67456e67696e652f476574537461747573400a3a617574686f7269747912746d70253246636170253246732e736f636b8386400c636f6e74656e742d74797065106170706c69636174696f6e2f677270634002746508747261696c6572734014677270632d6163636570742d656e636f64696e67176964656e746974792c206465666c6174652c20677a6970400c677270632d74696d656f7574023153400a757365722d6167656e7430677270632d707974686f6e2f312e38352e3320677270632d632f35382e302e3020286c696e75783b2063687474703229";
const BLOCK_2: &str = "c4c38386c2c1c0400c677270632d74696d656f757405313031306dbf";

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    f.push(kind);
    f.push(flags);
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

struct Frame {
    kind: u8,
    flags: u8,
    stream: u32,
    payload: Vec<u8>,
}

async fn read_frame(s: &mut tokio::net::UnixStream) -> Option<Frame> {
    let mut h = [0u8; 9];
    s.read_exact(&mut h).await.ok()?;
    let len = u32::from_be_bytes([0, h[0], h[1], h[2]]) as usize;
    let mut payload = vec![0u8; len];
    s.read_exact(&mut payload).await.ok()?;
    Some(Frame {
        kind: h[3],
        flags: h[4],
        stream: u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff,
        payload,
    })
}

#[tokio::test]
async fn grpc_core_socket_path_authority_is_served_on_the_unix_socket() {
    let d = common::start(Transport::Unix, |_, _| {}).await;
    let path = d
        .addr
        .strip_prefix("unix://")
        .expect("unix address")
        .to_string();
    let mut s = tokio::net::UnixStream::connect(&path).await.unwrap();
    let mut out = PREFACE.to_vec();
    out.extend(frame(0x4, 0, 0, &[])); // SETTINGS
                                       // Each call: HEADERS (END_HEADERS), then one empty gRPC message with END_STREAM.
    for (stream, block) in [(1u32, BLOCK_1), (3, BLOCK_2)] {
        out.extend(frame(0x1, 0x4, stream, &hex::decode(block).unwrap()));
        out.extend(frame(0x0, 0x1, stream, &[0, 0, 0, 0, 0]));
    }
    s.write_all(&out).await.unwrap();

    let mut decoder = loona_hpack::Decoder::new();
    let mut grpc_status = std::collections::HashMap::new();
    let mut data = std::collections::HashMap::<u32, usize>::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while grpc_status.len() < 2 {
        let f = tokio::time::timeout_at(deadline, read_frame(&mut s))
            .await
            .expect("answers within 20 s")
            .expect("connection stays open");
        match f.kind {
            0x3 => panic!(
                "RST_STREAM on stream {} (error code {:?})",
                f.stream, f.payload
            ),
            0x7 => panic!("GOAWAY: {:?}", String::from_utf8_lossy(&f.payload)),
            0x4 if f.flags & 0x1 == 0 => s.write_all(&frame(0x4, 0x1, 0, &[])).await.unwrap(),
            0x0 => *data.entry(f.stream).or_default() += f.payload.len(),
            0x1 => {
                assert_eq!(f.flags & 0x4, 0x4, "headers fit one frame here");
                let headers = decoder.decode(&f.payload).expect("server's HPACK");
                for (n, v) in headers {
                    if n == b":status" {
                        assert_eq!(v, b"200");
                    }
                    if n == b"grpc-status" {
                        grpc_status.insert(f.stream, String::from_utf8(v).unwrap());
                    }
                }
            }
            _ => {}
        }
    }
    for stream in [1, 3] {
        assert_eq!(grpc_status[&stream], "0", "stream {stream}");
        assert!(
            data.get(&stream).copied().unwrap_or(0) > 5,
            "a GetStatusResponse"
        );
    }
    drop(s);
    // The ordinary tonic client (grpc-go's way: `localhost`) still works on the same socket.
    d.status().await;
    d.stop().await;
}
