//! A stream's halves: borrowed (`split`) or owned (`into_split`), each reading or writing its
//! direction of the same connection.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::tcp_stream::Side;

/// The reading half of `TcpStream::split`.
pub struct ReadHalf<'a> {
    pub(super) side: &'a Side,
}

/// The writing half of `TcpStream::split`.
pub struct WriteHalf<'a> {
    pub(super) side: &'a Side,
}

/// The reading half of `TcpStream::into_split`.
pub struct OwnedReadHalf {
    pub(super) side: Arc<Side>,
}

/// The writing half of `TcpStream::into_split`: dropping it shuts its direction down.
pub struct OwnedWriteHalf {
    pub(super) side: Arc<Side>,
    pub(super) shut_on_drop: bool,
}

impl OwnedReadHalf {
    /// The other side's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.side.peer_addr())
    }

    /// This side's address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.side.local_addr())
    }
}

impl OwnedWriteHalf {
    /// The other side's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.side.peer_addr())
    }

    /// This side's address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.side.local_addr())
    }

    /// Drops the half without shutting its direction down.
    pub fn forget(mut self) {
        self.shut_on_drop = false;
    }
}

impl Drop for OwnedWriteHalf {
    fn drop(&mut self) {
        if self.shut_on_drop && sim::engine_running() {
            self.side.shutdown();
        }
    }
}

macro_rules! read_half {
    ($t:ty) => {
        impl AsyncRead for $t {
            fn poll_read(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut ReadBuf<'_>,
            ) -> Poll<io::Result<()>> {
                self.side.poll_read(cx, buf)
            }
        }

        impl fmt::Debug for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($t))
                    .field("peer", &self.side.peer_addr())
                    .finish()
            }
        }
    };
}

macro_rules! write_half {
    ($t:ty) => {
        impl AsyncWrite for $t {
            fn poll_write(
                self: Pin<&mut Self>,
                _cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                self.side.poll_write(buf)
            }

            fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(()))
            }

            fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.side.shutdown();
                Poll::Ready(Ok(()))
            }
        }

        impl fmt::Debug for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($t))
                    .field("peer", &self.side.peer_addr())
                    .finish()
            }
        }
    };
}

read_half!(ReadHalf<'_>);
read_half!(OwnedReadHalf);
write_half!(WriteHalf<'_>);
write_half!(OwnedWriteHalf);
