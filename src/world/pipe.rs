//! One direction of a connection: what was written and has not arrived yet, what arrived and
//! was not read, and how it ended. A delivery task moves one write at a time from the first to
//! the second; when it runs is the strategy's decision, so bytes arrive in order but another
//! task, or another connection's bytes, may come first. A partition holds the delivery; a reset
//! drops what was still on the way.

use std::collections::VecDeque;
use std::hash::{Hash, Hasher};
use std::io;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use sim::sync::Shared;

/// A write on the way, or the writer's end of the stream.
enum Segment {
    Data(u64, Vec<u8>),
    Fin,
}

#[derive(Default)]
pub(crate) struct PipeState {
    in_flight: VecDeque<Segment>,
    readable: VecDeque<u8>,
    /// The writer's end arrived: reads give 0 once `readable` is drained.
    eof: bool,
    /// The connection was reset: writes fail; once `readable` is drained, the reader's next
    /// operation reports the reset (once, as Linux reports a socket's error) and later reads
    /// see the end.
    reset: bool,
    reset_reported: bool,
    /// The writer shut its side down (or dropped it): no more writes.
    shut: bool,
    /// The reader is gone: what arrives now is never read.
    reader_gone: bool,
    /// A partition holds the delivery.
    held: bool,
    reader: Option<Waker>,
    deliverer: Option<Waker>,
    /// Writes numbered in order (for the pictures' arrow from a write to its read), and per
    /// arrived write not yet begun by a read, its number and length.
    written: u64,
    unread: VecDeque<(u64, usize)>,
    /// Bytes of the first unread write already read.
    read_of_first: usize,
}

/// The engine hashes a summary (how much is where, and the flags), not the bytes.
impl Hash for PipeState {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.in_flight.len().hash(state);
        self.readable.len().hash(state);
        (self.eof, self.reset, self.reset_reported, self.shut).hash(state);
        (self.reader_gone, self.held).hash(state);
    }
}

impl PipeState {
    /// `n` bytes read from the front: the writes whose first byte they include.
    fn take_read(&mut self, mut n: usize) -> Vec<u64> {
        let mut begun = Vec::new();
        while n > 0 {
            let Some(&(seq, len)) = self.unread.front() else {
                break;
            };
            if self.read_of_first == 0 {
                begun.push(seq);
            }
            let take = n.min(len - self.read_of_first);
            self.read_of_first += take;
            n -= take;
            if self.read_of_first == len {
                self.unread.pop_front();
                self.read_of_first = 0;
            }
        }
        begun
    }
}

/// One direction of a connection, named "conn#1 main->kv:7000" in traces.
pub(crate) struct Pipe {
    pub(crate) state: Shared<PipeState>,
    name: Arc<str>,
    /// What a segment arriving after the reader is gone does: the closed socket answers with
    /// a reset, of the whole connection (set by the connection).
    on_orphan: std::sync::OnceLock<Box<dyn Fn() + Send + Sync>>,
}

impl Pipe {
    /// A pipe, and its delivery task (outside every host: a crash does not stop it, it resets
    /// the connection).
    pub(crate) fn start(name: String, held: bool) -> Arc<Pipe> {
        let pipe = Arc::new(Pipe {
            state: Shared::new(
                name.clone(),
                PipeState {
                    held,
                    ..PipeState::default()
                },
            ),
            name: name.into(),
            on_orphan: std::sync::OnceLock::new(),
        });
        let deliverer = pipe.clone();
        sim::fault::spawn_daemon(format!("deliver {}", pipe.name), async move {
            loop {
                std::future::poll_fn(|cx| deliverer.poll_ready_to_deliver(cx)).await;
                deliverer.deliver_one();
            }
        });
        pipe
    }

    /// Ready once a segment is on the way and no partition holds it.
    fn poll_ready_to_deliver(&self, cx: &mut Context<'_>) -> Poll<()> {
        let stale = self.state.with_mut(|p| {
            if !p.in_flight.is_empty() && !p.held {
                return Ok(());
            }
            Err(p.deliverer.replace(cx.waker().clone()))
        });
        match stale {
            Ok(()) => Poll::Ready(()),
            Err(stale) => {
                self.state.waiting("deliver", "nothing on the way");
                drop(stale);
                Poll::Pending
            }
        }
    }

    /// Sets what a segment arriving after the reader is gone does (see `on_orphan`).
    pub(crate) fn on_orphan(&self, f: impl Fn() + Send + Sync + 'static) {
        let _ = self.on_orphan.set(Box::new(f));
    }

    /// The delivery task's step (the wake-up that was granted it): the first segment on the
    /// way arrives.
    fn deliver_one(&self) {
        let mut orphan = false;
        let (arrived, reader) = self.state.with_mut(|p| {
            if p.held {
                return (None, None);
            }
            let arrived = match p.in_flight.pop_front() {
                Some(Segment::Data(seq, bytes)) => {
                    let n = bytes.len();
                    orphan = p.reader_gone;
                    if !p.reader_gone {
                        p.readable.extend(bytes);
                        p.unread.push_back((seq, n));
                    }
                    Some(format!("{n} bytes arrive"))
                }
                Some(Segment::Fin) => {
                    p.eof = true;
                    Some("the end of the stream arrives".to_string())
                }
                None => None,
            };
            (arrived, p.reader.take())
        });
        if let Some(text) = arrived {
            sim::fault::note(|| format!("{}: {text}", self.name));
        }
        if let Some(w) = reader {
            w.wake();
        }
        if orphan {
            sim::fault::note(|| format!("{}: its reader closed: a reset answers", self.name));
            if let Some(rst) = self.on_orphan.get() {
                rst();
            }
        }
    }

    /// A read's attempt (after its scheduling point): bytes that arrived, the end, the reset,
    /// or the reader's waker stored.
    pub(crate) fn poll_read(
        &self,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let mut stale = None;
        let mut begun = Vec::new();
        let got = self.state.with_mut(|p| {
            if !p.readable.is_empty() {
                let n = buf.remaining().min(p.readable.len());
                let (a, b) = p.readable.as_slices();
                let from_a = n.min(a.len());
                buf.put_slice(&a[..from_a]);
                buf.put_slice(&b[..n - from_a]);
                p.readable.drain(..n);
                begun = p.take_read(n);
                return Poll::Ready(Ok(()));
            }
            if p.eof || buf.remaining() == 0 {
                return Poll::Ready(Ok(()));
            }
            if p.reset {
                // Reported once, as a socket's pending error; then reads see the end.
                return match std::mem::replace(&mut p.reset_reported, true) {
                    false => Poll::Ready(Err(reset())),
                    true => Poll::Ready(Ok(())),
                };
            }
            stale = p.reader.replace(cx.waker().clone());
            Poll::Pending
        });
        if got.is_pending() {
            self.state.waiting("read", "nothing has arrived");
        }
        for seq in begun {
            sim::mark::on_wire(format_args!("{} #{seq}", self.name));
        }
        drop(stale);
        got
    }

    /// A write (after its scheduling point): on its way (a reader that is gone answers its
    /// arrival with a reset), or the error tokio gives.
    pub(crate) fn write(&self, bytes: &[u8]) -> io::Result<usize> {
        let got = self.state.with_mut(|p| {
            if p.reset || p.shut {
                return Err(io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "Broken pipe (os error 32)",
                ));
            }
            p.written += 1;
            p.in_flight
                .push_back(Segment::Data(p.written, bytes.to_vec()));
            Ok((p.written, p.deliverer.take()))
        });
        let (seq, deliverer) = got?;
        sim::mark::enqueued(format_args!("{} #{seq}", self.name));
        if let Some(w) = deliverer {
            w.wake();
        }
        Ok(bytes.len())
    }

    /// The socket's pending error for a write, if no operation has reported it yet: the first
    /// after a reset reports `ConnectionReset`, once (a read reports it only once what arrived
    /// has been read, and never after the end of the stream).
    pub(crate) fn take_reset(&self) -> Option<io::Error> {
        self.state.with_mut(|p| {
            let pending = p.reset && !p.reset_reported;
            if pending {
                p.reset_reported = true;
            }
            // A reset after the peer's end of stream arrived (Linux's CLOSE_WAIT) is EPIPE.
            pending.then(|| match p.eof {
                true => io::Error::new(io::ErrorKind::BrokenPipe, "Broken pipe (os error 32)"),
                false => reset(),
            })
        })
    }

    /// Whether bytes arrived that the reader has not read (closing then resets the connection).
    pub(crate) fn has_unread(&self) -> bool {
        self.state.with(|p| !p.readable.is_empty())
    }

    /// The writer's end: no more writes, and the reader sees the end once what was written
    /// before has arrived.
    pub(crate) fn shut(&self) {
        let deliverer = self.state.with_mut(|p| {
            if p.shut || p.reset {
                return None;
            }
            p.shut = true;
            p.in_flight.push_back(Segment::Fin);
            p.deliverer.take()
        });
        if let Some(w) = deliverer {
            w.wake();
        }
    }

    /// The reader is gone.
    pub(crate) fn reader_gone(&self) {
        self.state.with_mut(|p| {
            p.reader_gone = true;
            p.readable.clear();
            p.unread.clear();
            p.read_of_first = 0;
        });
    }

    /// A reset: what was on the way is dropped; what arrived can still be read, then reads
    /// fail with `ConnectionReset`, writes with `BrokenPipe`.
    pub(crate) fn reset(&self) {
        let wakers = self.state.with_mut(|p| {
            p.reset = true;
            p.in_flight.clear();
            [p.reader.take(), p.deliverer.take()]
        });
        for w in wakers.into_iter().flatten() {
            w.wake();
        }
    }

    /// Holds (a partition) or releases (its heal) the delivery.
    pub(crate) fn hold(&self, held: bool) {
        let deliverer = self.state.with_mut(|p| {
            p.held = held;
            p.deliverer.take()
        });
        if let Some(w) = deliverer {
            w.wake();
        }
    }
}

fn reset() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionReset,
        "Connection reset by peer (os error 104)",
    )
}
