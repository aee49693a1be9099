//! The request buffer: the budget slice set aside for request payloads, of which every
//! unfinished job holds a [`RequestPermit`] for its payload, and every message being received
//! one for its bytes (the server's intake). A message that does not fit now waits for room
//! ([`RequestPermit::take_waiting`]): its sender is held back by HTTP/2 flow control, not
//! refused; one that could never fit (more than the whole buffer) is refused at once. While
//! it waits, HTTP/2 may hold up to [`STREAM_WINDOW`] of its bytes unread: an eighth of the
//! slice is set aside for those, a window for each message allowed to wait at once.
use crate::budget::Reservation;
use crate::error::EngineError;
use parking_lot::Mutex;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};

/// The HTTP/2 flow-control window of a request stream (the server's setting): bytes a message
/// waiting for room may have sent that nobody has read.
pub const STREAM_WINDOW: u32 = 64 << 10;

/// The share of the slice set aside for waiting messages' windows (1/8).
const WAITING_SHARE: u64 = 8;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// The budget slice set aside for request payloads, and the part permits hold.
pub(crate) struct RequestPool {
    /// The slice (a `Requests` reservation); taken, and so given back, at shutdown.
    slice: Mutex<Option<Reservation>>,
    /// Bytes held by [`RequestPermit`]s.
    in_use: AtomicU64,
    /// Woken whenever bytes are given back.
    room: Notify,
    /// Messages waiting for room now, and how many may at once.
    waiting: AtomicU64,
    max_waiting: u64,
}

impl RequestPool {
    /// A pool of `slice`'s bytes, none in use.
    pub(crate) fn new(slice: Reservation) -> RequestPool {
        // None may wait in a slice under 512 KiB (tests'): a message that does not fit is
        // refused at once there.
        let max_waiting = slice.bytes() / WAITING_SHARE / u64::from(STREAM_WINDOW);
        RequestPool {
            slice: Mutex::new(Some(slice)),
            in_use: AtomicU64::new(0),
            room: Notify::new(),
            waiting: AtomicU64::new(0),
            max_waiting,
        }
    }

    /// Bytes permits may hold: the slice less the waiting messages' windows (0 once the slice
    /// is taken at shutdown).
    pub(crate) fn size(&self) -> u64 {
        let slice = self.slice.lock().as_ref().map_or(0, Reservation::bytes);
        slice.saturating_sub(self.max_waiting * u64::from(STREAM_WINDOW))
    }

    /// Bytes held by permits.
    pub(crate) fn in_use(&self) -> u64 {
        self.in_use.load(Ordering::SeqCst)
    }

    /// Takes the slice away (shutdown): nothing fits any more.
    pub(crate) fn take_slice(&self) -> Option<Reservation> {
        let slice = self.slice.lock().take();
        self.room.notify_waiters();
        slice
    }

    /// Takes `bytes` of the slice, or says how much is in use of how much.
    pub(crate) fn try_take(self: &Arc<Self>, bytes: u64) -> Result<RequestPermit, EngineError> {
        let size = self.size();
        let in_use = self.in_use.fetch_add(bytes, Ordering::SeqCst);
        if in_use + bytes > size {
            self.in_use.fetch_sub(bytes, Ordering::SeqCst);
            return Err(EngineError::QueueFull(format!(
                "request payloads would use {} of {} buffered bytes",
                in_use + bytes,
                size
            )));
        }
        Ok(RequestPermit {
            pool: self.clone(),
            bytes,
        })
    }

    fn give_back(&self, bytes: u64) {
        if bytes > 0 {
            self.in_use.fetch_sub(bytes, Ordering::SeqCst);
            self.room.notify_waiters();
        }
    }
}

/// Bytes within the request buffer, held by a job for its payload or by the server for a
/// message it is receiving; dropping it gives them back.
pub struct RequestPermit {
    /// The pool the bytes came from.
    pool: Arc<RequestPool>,
    /// The bytes held.
    bytes: u64,
}

impl RequestPermit {
    /// An empty permit on `pool`.
    pub(crate) fn empty(pool: Arc<RequestPool>) -> RequestPermit {
        RequestPermit { pool, bytes: 0 }
    }

    /// Takes `bytes` more of the request buffer, or says (RESOURCE_EXHAUSTED's
    /// [`EngineError::QueueFull`]) how much is in use of how much.
    pub fn try_grow(&mut self, bytes: u64) -> Result<(), EngineError> {
        let more = self.pool.try_take(bytes)?;
        self.absorb(more);
        Ok(())
    }

    /// Holds exactly `bytes`: gives back what is over, or takes what is missing
    /// ([`RequestPermit::try_grow`]'s error when it is not there).
    pub fn resize(&mut self, bytes: u64) -> Result<(), EngineError> {
        if bytes >= self.bytes {
            return self.try_grow(bytes - self.bytes);
        }
        self.pool.give_back(self.bytes - bytes);
        self.bytes = bytes;
        Ok(())
    }

    /// Adds `other`'s bytes (of the same buffer) to this permit's.
    pub fn absorb(&mut self, mut other: RequestPermit) {
        debug_assert!(Arc::ptr_eq(&self.pool, &other.pool));
        self.bytes += std::mem::take(&mut other.bytes);
    }

    /// Moves every byte held into a new permit; this one is left empty.
    pub fn take_all(&mut self) -> RequestPermit {
        RequestPermit {
            pool: self.pool.clone(),
            bytes: std::mem::take(&mut self.bytes),
        }
    }

    /// Waits, up to `limit`, until `bytes` more of the buffer are free, and takes them as a
    /// new permit (owning what it needs, so it can be polled from anywhere). Refused at once
    /// ([`EngineError::QueueFull`]) when they could never be there beside what this permit
    /// holds: more than the whole buffer.
    pub fn take_waiting(
        &self,
        bytes: u64,
        limit: Duration,
    ) -> impl Future<Output = Result<RequestPermit, EngineError>> + Send + 'static {
        let (pool, held) = (self.pool.clone(), self.bytes);
        async move {
            let _waiting = Waiting::enter(&pool)?;
            let deadline = tokio::time::Instant::now() + limit;
            loop {
                let room = pool.room.notified();
                tokio::pin!(room);
                room.as_mut().enable();
                let size = pool.size();
                if held + bytes > size {
                    return Err(EngineError::QueueFull(format!(
                        "a message of {} buffered bytes does not fit the whole request buffer \
                         ({size} bytes)",
                        held + bytes
                    )));
                }
                if let Ok(p) = pool.try_take(bytes) {
                    return Ok(p);
                }
                if tokio::time::timeout_at(deadline, room).await.is_err() {
                    return Err(EngineError::QueueFull(format!(
                        "waited {} for {bytes} bytes of the request buffer ({} of {} in use)",
                        humantime::format_duration(limit),
                        pool.in_use(),
                        pool.size()
                    )));
                }
            }
        }
    }

    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Gives every byte held back now (a message given up on before the permit is dropped).
    pub fn release(&mut self) {
        self.pool.give_back(std::mem::take(&mut self.bytes));
    }
}

/// One message waiting for room (its window counted in the slice's waiting share).
struct Waiting<'a>(&'a RequestPool);

impl<'a> Waiting<'a> {
    fn enter(pool: &'a RequestPool) -> Result<Waiting<'a>, EngineError> {
        if pool.waiting.fetch_add(1, Ordering::SeqCst) >= pool.max_waiting {
            pool.waiting.fetch_sub(1, Ordering::SeqCst);
            return Err(EngineError::QueueFull(format!(
                "{} messages already wait for room in the request buffer (an eighth of it is \
                 set aside for their flow-control windows)",
                pool.max_waiting
            )));
        }
        Ok(Waiting(pool))
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Drop for RequestPermit {
    fn drop(&mut self) {
        self.pool.give_back(self.bytes);
    }
}
