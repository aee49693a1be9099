//! Messages on the way in count against the request buffer before they are decoded.
//!
//! tonic buffers a whole message before prost decodes it, and the decoded copy exists beside
//! that buffer until the handler runs: up to twice `max_message_size` per stream, on every
//! connection, none of it in the engine's budget. [`IntakeLayer`] wraps each request body:
//! its headers (names, values and HPACK's 32-byte entry overhead) and then twice each data
//! frame are taken from the engine's request buffer ([`cuzk_core::Engine::request_permit`],
//! the slice queued jobs' payloads use) as they arrive. When the buffer is full the stream
//! fails with RESOURCE_EXHAUSTED before more of it is read. The bytes go back when tonic
//! drops the body, once the message is decoded; the handler's submit then takes the job's
//! own payload permit from the same slice.
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use cuzk_core::{Engine, EngineError, RequestPermit};
use http_body::{Body, Frame, SizeHint};
use tonic::Status;

/// Per header: HPACK's accounting overhead (RFC 7541 §4.1), beside the name and value.
const HEADER_OVERHEAD: usize = 32;

/// Wraps every request body in a [`Metered`] one (see the module doc).
#[derive(Clone)]
pub(crate) struct IntakeLayer {
    engine: Arc<Engine>,
    arrival: Duration,
}

impl IntakeLayer {
    /// Meters bodies against `engine`'s request buffer; a body not whole within `arrival`
    /// of its headers fails with DEADLINE_EXCEEDED.
    pub(crate) fn new(engine: Arc<Engine>, arrival: Duration) -> Self {
        Self { engine, arrival }
    }
}

impl<S> tower::Layer<S> for IntakeLayer {
    type Service = Intake<S>;

    fn layer(&self, inner: S) -> Intake<S> {
        Intake {
            inner,
            engine: self.engine.clone(),
            arrival: self.arrival,
        }
    }
}

/// The service [`IntakeLayer`] makes.
#[derive(Clone)]
pub(crate) struct Intake<S> {
    inner: S,
    engine: Arc<Engine>,
    arrival: Duration,
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

    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
        let mut permit = self.engine.request_permit();
        let headers: usize = req
            .headers()
            .iter()
            .map(|(name, value)| name.as_str().len() + value.len() + HEADER_OVERHEAD)
            .sum();
        let refused = permit.try_grow(headers as u64).err().map(refusal);
        let arrival = self.arrival;
        let req = req.map(|inner| {
            tonic::body::Body::new(Metered {
                inner,
                permit,
                refused,
                due: Some(tokio::time::Instant::now() + arrival),
                timer: None,
                arrival,
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
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    // Once in tonic's buffer, once decoded.
                    if let Err(e) = this.permit.try_grow(2 * data.len() as u64) {
                        return Poll::Ready(Some(Err(refusal(e))));
                    }
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Pending => match this.due.map(|due| {
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
            },
            other => {
                this.due = None;
                this.timer = None;
                other
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.refused.is_none() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
