//! Messages on the way in count against the request buffer before they are decoded.
//!
//! tonic buffers a whole message before prost decodes it, and the decoded copy exists beside
//! that buffer until the handler runs: up to twice `max_message_size` per stream, on every
//! connection, none of it in the engine's budget. [`IntakeLayer`] wraps each request body: its
//! headers (names, values and HPACK's 32-byte entry overhead), then twice the message's
//! length as soon as its 5-byte gRPC prefix has arrived (twice each data frame past it, or
//! before it), are taken from the engine's request buffer ([`cuzk_core::Engine::
//! request_permit`], the slice queued jobs' payloads use). When the buffer has no room the
//! frame in hand waits for it (`server.request_buffer_wait`) and nothing more is read, so
//! HTTP/2 flow control holds the sender back after at most [`cuzk_core::STREAM_WINDOW`] bytes
//! (set aside in the buffer for each message allowed to wait; the connection's window holds
//! every stream's, so waiting streams never block the others: `daemon.rs`); a message larger
//! than the whole buffer fails
//! at once with RESOURCE_EXHAUSTED. Once the message is whole its bytes go to an
//! [`ArrivalPermit`] in the request's extensions, and the handler's submit makes them the
//! job's payload permit (resized), so no other message takes them in between; a request that
//! never reaches a submit gives them back when it is dropped.
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use cuzk_core::{Engine, EngineError, RequestPermit};
use http_body::{Body, Frame, SizeHint};
use std::sync::Mutex;
use tonic::Status;

/// Per header: HPACK's accounting overhead (RFC 7541 §4.1), beside the name and value.
const HEADER_OVERHEAD: usize = 32;

/// Wraps every request body in a [`Metered`] one (see the module doc).
#[derive(Clone)]
pub(crate) struct IntakeLayer {
    engine: Arc<Engine>,
    arrival: Duration,
    wait: Duration,
}

impl IntakeLayer {
    /// Meters bodies against `engine`'s request buffer; a body not whole within `arrival`
    /// of its headers (time spent waiting for room left out) fails with DEADLINE_EXCEEDED;
    /// one that found no room within `wait` with RESOURCE_EXHAUSTED.
    pub(crate) fn new(engine: Arc<Engine>, arrival: Duration, wait: Duration) -> Self {
        Self {
            engine,
            arrival,
            wait,
        }
    }
}

/// The request-buffer bytes of a message that has arrived whole, in its request's
/// extensions until the handler takes them ([`ArrivalPermit::take`]).
#[derive(Clone, Default)]
pub(crate) struct ArrivalPermit(Arc<Mutex<Option<RequestPermit>>>);

impl ArrivalPermit {
    /// The bytes `request`'s message held while it arrived, if it went through the intake.
    pub(crate) fn take<T>(request: &tonic::Request<T>) -> Option<RequestPermit> {
        let slot = request.extensions().get::<ArrivalPermit>()?;
        slot.0.lock().ok()?.take()
    }

    fn put(&self, permit: RequestPermit) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(permit);
        }
    }
}

impl<S> tower::Layer<S> for IntakeLayer {
    type Service = Intake<S>;

    fn layer(&self, inner: S) -> Intake<S> {
        Intake {
            inner,
            engine: self.engine.clone(),
            arrival: self.arrival,
            wait: self.wait,
        }
    }
}

/// The service [`IntakeLayer`] makes.
#[derive(Clone)]
pub(crate) struct Intake<S> {
    inner: S,
    engine: Arc<Engine>,
    arrival: Duration,
    wait: Duration,
}

impl<S> tower::Service<http::Request<tonic::body::Body>> for Intake<S>
where
    S: tower::Service<http::Request<tonic::body::Body>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: http::Request<tonic::body::Body>) -> Self::Future {
        let mut permit = self.engine.request_permit();
        let headers: usize = req
            .headers()
            .iter()
            .map(|(name, value)| name.as_str().len() + value.len() + HEADER_OVERHEAD)
            .sum();
        let refused = permit.try_grow(headers as u64).err().map(refusal);
        let slot = ArrivalPermit::default();
        req.extensions_mut().insert(slot.clone());
        let (arrival, wait) = (self.arrival, self.wait);
        let req = req.map(|inner| {
            tonic::body::Body::new(Metered {
                inner,
                permit,
                refused,
                due: Some(tokio::time::Instant::now() + arrival),
                timer: None,
                arrival,
                prefix: Vec::new(),
                declared: None,
                received: 0,
                covered: 0,
                held: None,
                waiting: None,
                wait,
                slot,
            })
        });
        self.inner.call(req)
    }
}

fn refusal(e: EngineError) -> Status {
    Status::resource_exhausted(format!(
        "receiving this message would overrun the daemon's request buffer ({e}); retry later \
         or raise memory.request_buffer"
    ))
}

/// Room being waited for: the permit it will bring, since when, and the data bytes covered
/// once it comes.
struct Waiting {
    room: Pin<Box<dyn Future<Output = Result<RequestPermit, EngineError>> + Send>>,
    since: tokio::time::Instant,
    covers: u64,
}

/// A request body whose bytes are held in the request buffer while it is read.
struct Metered {
    inner: tonic::body::Body,
    permit: RequestPermit,
    /// The headers did not fit: the first read fails with this.
    refused: Option<Status>,
    /// Until the body has ended: when it stops waiting for the rest.
    due: Option<tokio::time::Instant>,
    /// The timer for `due`, set only once the body has to wait (most messages arrive whole
    /// in their first frames and never need one).
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
    /// The arrival timeout, for the message.
    arrival: Duration,
    /// The message's first bytes, until its 5-byte gRPC prefix (flag, length) is whole.
    prefix: Vec<u8>,
    /// The message's bytes on the wire (prefix included), once the prefix is known.
    declared: Option<u64>,
    /// Data bytes received so far.
    received: u64,
    /// Data bytes the permit covers (twice each).
    covered: u64,
    /// A frame read and not yet handed on: it waits for room.
    held: Option<Frame<Bytes>>,
    /// The room `held` waits for.
    waiting: Option<Waiting>,
    /// How long it may wait.
    wait: Duration,
    /// Where the permit goes once the message is whole.
    slot: ArrivalPermit,
}

impl Metered {
    /// Reads the gRPC length prefix from the first data bytes.
    fn learn_prefix(&mut self, data: &[u8]) {
        if self.declared.is_some() {
            return;
        }
        let want = 5 - self.prefix.len();
        self.prefix.extend_from_slice(&data[..want.min(data.len())]);
        if let [_, a, b, c, d] = self.prefix[..] {
            self.declared = Some(5 + u64::from(u32::from_be_bytes([a, b, c, d])));
        }
    }

    /// Once the message is whole, its bytes go to the slot for the handler's submit.
    fn hand_over_if_whole(&mut self) {
        if self.declared.is_some_and(|d| self.received >= d) && self.permit.bytes() > 0 {
            self.slot.put(self.permit.take_all());
        }
    }
}

impl Body for Metered {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        let this = self.get_mut();
        if let Some(status) = this.refused.take() {
            return Poll::Ready(Some(Err(status)));
        }
        loop {
            if let Some(w) = this.waiting.as_mut() {
                let got = match w.room.as_mut().poll(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(got) => got,
                };
                let (since, covers) = (w.since, w.covers);
                this.waiting = None;
                match got {
                    Ok(more) => {
                        this.permit.absorb(more);
                        this.covered = covers;
                        // Waiting for room is not the sender's slowness.
                        let waited = since.elapsed();
                        this.due = this.due.map(|d| d + waited);
                        this.timer = None;
                        let frame = this.held.take();
                        this.hand_over_if_whole();
                        return Poll::Ready(frame.map(Ok));
                    }
                    Err(e) => {
                        this.held = None;
                        this.permit.release();
                        return Poll::Ready(Some(Err(refusal(e))));
                    }
                }
            }
            match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => {
                    if let Some(data) = frame.data_ref() {
                        let data = data.clone();
                        this.learn_prefix(&data);
                        this.received += data.len() as u64;
                        if this.received > this.covered {
                            // The whole message at once when its length is known: a message
                            // never holds part of the buffer while it waits for the rest.
                            let covers = this
                                .declared
                                .map_or(this.received, |d| d.max(this.received));
                            let extra = 2 * (covers - this.covered);
                            if this.permit.try_grow(extra).is_ok() {
                                this.covered = covers;
                            } else {
                                this.held = Some(frame);
                                this.waiting = Some(Waiting {
                                    room: Box::pin(this.permit.take_waiting(extra, this.wait)),
                                    since: tokio::time::Instant::now(),
                                    covers,
                                });
                                continue;
                            }
                        }
                    }
                    this.hand_over_if_whole();
                    return Poll::Ready(Some(Ok(frame)));
                }
                Poll::Pending => {
                    return match this.due.map(|due| {
                        this.timer
                            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(due)))
                            .as_mut()
                            .poll(cx)
                    }) {
                        Some(Poll::Ready(())) => {
                            this.due = None;
                            this.timer = None;
                            // The bytes held so far go back now, not when the stream is reset.
                            this.permit.release();
                            Poll::Ready(Some(Err(Status::deadline_exceeded(format!(
                                "the request message did not arrive whole within {} \
                                 (server.request_arrival_timeout)",
                                humantime::format_duration(this.arrival)
                            )))))
                        }
                        _ => Poll::Pending,
                    };
                }
                other => {
                    this.due = None;
                    this.timer = None;
                    return other;
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.refused.is_none()
            && self.held.is_none()
            && self.waiting.is_none()
            && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
