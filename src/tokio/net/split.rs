//! A stream's halves: borrowed (`split`) or owned (`into_split`), each reading or writing its
//! direction of the same connection.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

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

/// A half's `Debug`: its type and the other side's address.
macro_rules! debug_half {
    ($t:ty) => {
        impl fmt::Debug for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($t))
                    .field("peer", &self.side.peer_addr())
                    .finish()
            }
        }
    };
}

read_via_side!(ReadHalf<'_>);
read_via_side!(OwnedReadHalf);
write_via_side!(WriteHalf<'_>);
write_via_side!(OwnedWriteHalf);
debug_half!(ReadHalf<'_>);
debug_half!(OwnedReadHalf);
debug_half!(WriteHalf<'_>);
debug_half!(OwnedWriteHalf);
