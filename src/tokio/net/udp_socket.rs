//! `UdpSocket`: a port bound on the running task's host. Each send and receive is a scheduling
//! point; each datagram's arrival is a delivery task's step, and with
//! `Check::network_faults` a datagram on the way may be dropped, duplicated or reordered.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::ready;

use super::addr::{addresses, ToSocketAddrs};
use crate::tokio::coop;
use crate::world::datagram::Port;
use crate::world::network::network;

/// A UDP socket, as tokio's.
pub struct UdpSocket {
    port: Arc<Port>,
    /// Where `send` sends and whose datagrams `recv` takes (after `connect`).
    peer: Mutex<Option<SocketAddr>>,
}

impl UdpSocket {
    /// Binds `addr` (port 0 for a free one) on the running task's host.
    pub async fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<UdpSocket> {
        let addrs = addresses(&addr)?;
        let net = network();
        net.point("bind udp");
        let mut last = None;
        for a in addrs {
            match net.bind_udp(a) {
                Ok(port) => {
                    return Ok(UdpSocket {
                        port,
                        peer: Mutex::new(None),
                    })
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("at least one address"))
    }

    /// Sends a datagram to `target`. It may never arrive (nothing bound there, a partition, a
    /// fault); the send succeeds all the same, as UDP's does.
    pub async fn send_to<A: ToSocketAddrs>(&self, buf: &[u8], target: A) -> io::Result<usize> {
        let to = addresses(&target)?[0];
        // tokio's takes a unit of budget before its send (with none left, it yields first).
        coop::consume_budget().await;
        self.port.mailbox.write_point_as("send_to");
        network().send_udp(&self.port, to, buf)?;
        Ok(buf.len())
    }

    /// Waits for the next datagram: its length (truncated to `buf`) and its sender.
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.port.mailbox.write_point_as("recv_from");
        std::future::poll_fn(|cx| {
            // tokio's takes a unit of budget once a datagram is there, before its receive.
            let coop = ready!(coop::poll_proceed(cx));
            coop.settle(self.port.poll_recv(cx, buf))
        })
        .await
    }

    /// Sets the peer `send` sends to and `recv` takes from.
    pub async fn connect<A: ToSocketAddrs>(&self, addr: A) -> io::Result<()> {
        let to = addresses(&addr)?[0];
        *self.peer() = Some(to);
        Ok(())
    }

    /// Sends to the connected peer.
    pub async fn send(&self, buf: &[u8]) -> io::Result<usize> {
        let to = self.connected()?;
        self.send_to(buf, to).await
    }

    /// Waits for the next datagram from the connected peer (others are dropped).
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        let peer = self.connected()?;
        loop {
            let (n, from) = self.recv_from(buf).await?;
            if from == peer {
                return Ok(n);
            }
        }
    }

    /// This socket's address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.port.addr)
    }

    /// The connected peer's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.connected()
    }

    fn connected(&self) -> io::Result<SocketAddr> {
        self.peer().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotConnected,
                "Transport endpoint is not connected (os error 107)",
            )
        })
    }

    fn peer(&self) -> std::sync::MutexGuard<'_, Option<SocketAddr>> {
        self.peer.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for UdpSocket {
    fn drop(&mut self) {
        if sim::engine_running() {
            self.port.mailbox.write_point_as("close");
            network().unbind_udp(&self.port);
        }
    }
}

impl fmt::Debug for UdpSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UdpSocket")
            .field("addr", &self.port.addr)
            .finish()
    }
}
