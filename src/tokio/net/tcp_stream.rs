//! `TcpStream`: one side of a simulated connection. Each read and write poll is a scheduling
//! point (a system call another thread can race with in tokio), right before it touches the
//! connection. Each takes a unit of the task's cooperative budget first, as tokio's I/O
//! registration does: with none left it returns `Pending` without the system call.

use std::fmt;
use std::io;
use std::net::SocketAddr;

use std::sync::Arc;
use std::task::{ready, Context, Poll};

use tokio::io::ReadBuf;

use super::addr::{addresses, ToSocketAddrs};
use super::split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, WriteHalf};
use crate::tokio::coop;
use crate::world::hosts;
use crate::world::network::{network, Conn};

/// One side of a connection, shared by a stream's halves; dropping the last closes it.
pub(super) struct Side {
    pub(super) conn: Arc<Conn>,
    /// 0: the connecting side; 1: the accepting side.
    pub(super) side: usize,
}

impl Side {
    pub(super) fn poll_read(
        &self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let coop = ready!(coop::poll_proceed(cx));
        let pipe = &self.conn.pipes[1 - self.side];
        pipe.state.write_point_as("read");
        coop.settle(pipe.poll_read(cx, buf))
    }

    pub(super) fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        ready!(coop::poll_proceed(cx)).made_progress();
        let pipe = &self.conn.pipes[self.side];
        pipe.state.write_point_as("write");
        // A reset not reported yet is this write's error (Linux's pending socket error).
        if let Some(e) = self.conn.pipes[1 - self.side].take_reset() {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(pipe.write(buf))
    }

    pub(super) fn shutdown(&self) {
        let pipe = &self.conn.pipes[self.side];
        pipe.state.write_point_as("shutdown");
        pipe.shut();
    }

    pub(super) fn local_addr(&self) -> SocketAddr {
        self.conn.addrs[self.side]
    }

    pub(super) fn peer_addr(&self) -> SocketAddr {
        self.conn.addrs[1 - self.side]
    }
}

impl Drop for Side {
    fn drop(&mut self) {
        if !sim::engine_running() {
            return;
        }
        // Closing is a system call: another task may look first.
        let (out, incoming) = (&self.conn.pipes[self.side], &self.conn.pipes[1 - self.side]);
        out.state.write_point_as("close");
        if incoming.has_unread() {
            // Linux closes a socket with unread bytes with a reset, not the end of the stream.
            sim::fault::note(|| "closed with unread bytes: a reset".to_string());
            self.conn.reset();
        } else {
            out.shut();
        }
        incoming.reader_gone();
        self.conn.close_side();
    }
}

/// A TCP connection's side, as tokio's.
pub struct TcpStream {
    pub(super) side: Arc<Side>,
}

impl TcpStream {
    pub(super) fn new(conn: Arc<Conn>, side: usize) -> Self {
        TcpStream {
            side: Arc::new(Side { conn, side }),
        }
    }

    /// Connects to `addr` from the running task's host: a scheduling point, then (while a
    /// partition cuts the two hosts off) a wait for the heal. `ConnectionRefused` when nothing
    /// listens there.
    pub async fn connect<A: ToSocketAddrs>(addr: A) -> io::Result<TcpStream> {
        let addrs = addresses(&addr)?;
        // tokio's waits for the socket to be writable, which takes a unit of budget.
        coop::consume_budget().await;
        let net = network();
        net.point("connect");
        let mut last = None;
        for to in addrs {
            let to_host = hosts::at(to.ip())?;
            std::future::poll_fn(|cx| net.poll_reachable(&to_host, cx)).await;
            match net.connect(to) {
                Ok(conn) => return Ok(TcpStream::new(conn, 0)),
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("at least one address"))
    }

    /// This side's address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.side.local_addr())
    }

    /// The other side's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.side.peer_addr())
    }

    /// Accepted; no effect in the simulation (writes are never coalesced).
    pub fn set_nodelay(&self, _nodelay: bool) -> io::Result<()> {
        Ok(())
    }

    /// Always `true`: writes are never coalesced.
    pub fn nodelay(&self) -> io::Result<bool> {
        Ok(true)
    }

    /// Splits into halves that borrow the stream.
    pub fn split(&mut self) -> (ReadHalf<'_>, WriteHalf<'_>) {
        (
            ReadHalf { side: &self.side },
            WriteHalf { side: &self.side },
        )
    }

    /// Splits into halves that own it: the connection closes once both are dropped, and
    /// dropping the write half shuts its direction down, as tokio's.
    pub fn into_split(self) -> (OwnedReadHalf, OwnedWriteHalf) {
        let side = self.side.clone();
        (
            OwnedReadHalf { side: self.side },
            OwnedWriteHalf {
                side,
                shut_on_drop: true,
            },
        )
    }
}

impl fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpStream")
            .field("local", &self.side.local_addr())
            .field("peer", &self.side.peer_addr())
            .finish()
    }
}

read_via_side!(TcpStream);
write_via_side!(TcpStream);
