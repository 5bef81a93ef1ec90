//! `TcpListener`: a port bound on the running task's host; each accept is a scheduling point,
//! then a wait for a connection.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use super::addr::{addresses, ToSocketAddrs};
use super::tcp_stream::TcpStream;
use crate::tokio::coop;
use crate::world::network::{network, Listener};

/// A listening socket, as tokio's.
pub struct TcpListener {
    inner: Arc<Listener>,
}

impl TcpListener {
    /// Binds `addr` (`"0.0.0.0:7000"`, or port 0 for a free one) on the running task's host.
    /// `AddrInUse` when the host already listens there.
    pub async fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<TcpListener> {
        let addrs = addresses(&addr)?;
        let net = network();
        net.point("bind");
        let mut last = None;
        for a in addrs {
            match net.bind(a) {
                Ok(inner) => return Ok(TcpListener { inner }),
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("at least one address"))
    }

    /// Waits for the next connection: the stream and the connecting side's address.
    pub async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        self.inner.backlog.write_point_as("accept");
        let conn = std::future::poll_fn(|cx| {
            // tokio's takes a unit of budget once the listener is ready, before its accept.
            let coop = ready!(coop::poll_proceed(cx));
            coop.settle(self.inner.poll_accept(cx))
        })
        .await?;
        let peer = conn.addrs[0];
        Ok((TcpStream::new(conn, 1), peer))
    }

    /// Polls for the next connection (each poll a scheduling point, after a unit of the
    /// task's cooperative budget, as tokio's readiness check takes one).
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr)>> {
        let coop = ready!(coop::poll_proceed(cx));
        self.inner.backlog.write_point_as("poll_accept");
        let accepted = coop.settle(self.inner.poll_accept(cx));
        accepted.map_ok(|conn| {
            let peer = conn.addrs[0];
            (TcpStream::new(conn, 1), peer)
        })
    }

    /// The address it is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.inner.addr)
    }
}

impl Drop for TcpListener {
    fn drop(&mut self) {
        if sim::engine_running() {
            self.inner.backlog.write_point_as("close");
            network().unbind(&self.inner);
        }
    }
}

impl fmt::Debug for TcpListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpListener")
            .field("addr", &self.inner.addr)
            .finish()
    }
}
