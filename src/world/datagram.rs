//! UDP: each bound socket has datagrams on the way to it and datagrams that arrived. A delivery
//! task moves the first on the way to the arrived ones, a step the strategy schedules; with
//! `Check::network_faults`, three fault sites per socket may strike while something is on the
//! way: drop the first datagram, duplicate it, or send it to the back (a reordering). A
//! datagram between partitioned hosts is dropped when it would arrive.

use std::collections::VecDeque;
use std::hash::{Hash, Hasher};
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use sim::fault::Site;
use sim::sync::Shared;

use super::network::network;

/// A datagram: its sender's address, its destination host, and its bytes.
#[derive(Clone)]
struct Datagram {
    from: SocketAddr,
    from_host: String,
    bytes: Vec<u8>,
}

#[derive(Default)]
pub(crate) struct Mailbox {
    in_flight: VecDeque<Datagram>,
    arrived: VecDeque<Datagram>,
    closed: bool,
    reader: Option<Waker>,
    deliverer: Option<Waker>,
}

impl Hash for Mailbox {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self.in_flight.len(), self.arrived.len(), self.closed).hash(state);
    }
}

/// A bound socket's mailbox, with its delivery task and fault sites.
pub(crate) struct Port {
    pub(crate) addr: SocketAddr,
    pub(crate) host: String,
    pub(crate) mailbox: Shared<Mailbox>,
    name: Arc<str>,
    sites: [Site; 3],
}

/// What a fault site does to the first datagram on the way.
#[derive(Clone, Copy)]
enum Strike {
    Drop,
    Duplicate,
    Reorder,
}

impl Port {
    /// A port on `host` at `addr`, its delivery task and its fault sites.
    pub(crate) fn start(host: &str, addr: SocketAddr) -> Arc<Port> {
        let name: Arc<str> = format!("udp {host}:{}", addr.port()).into();
        let mailbox = Shared::new(name.to_string(), Mailbox::default());
        let port = Arc::new_cyclic(|me: &std::sync::Weak<Port>| {
            let site = |what: &str, strike: Strike| {
                let me = me.clone();
                Site::start(format!("{what} {name}"), false, move || {
                    if let Some(port) = me.upgrade() {
                        port.strike(strike);
                    }
                })
            };
            Port {
                addr,
                host: host.to_string(),
                mailbox,
                sites: [
                    site("drop", Strike::Drop),
                    site("duplicate", Strike::Duplicate),
                    site("reorder", Strike::Reorder),
                ],
                name: name.clone(),
            }
        });
        let deliverer = port.clone();
        sim::fault::spawn_daemon(format!("deliver {name}"), async move {
            loop {
                std::future::poll_fn(|cx| deliverer.poll_ready_to_deliver(cx)).await;
                deliverer.deliver_one();
            }
        });
        port
    }

    /// Sites strike only while a datagram is on the way (a reordering, while two are).
    fn arm(&self, on_the_way: usize) {
        self.sites[0].arm(on_the_way > 0);
        self.sites[1].arm(on_the_way > 0);
        self.sites[2].arm(on_the_way > 1);
    }

    fn strike(&self, strike: Strike) {
        let on_the_way = self.mailbox.with_mut(|m| {
            match strike {
                Strike::Drop => drop(m.in_flight.pop_front()),
                Strike::Duplicate => {
                    if let Some(d) = m.in_flight.front().cloned() {
                        m.in_flight.insert(1, d);
                    }
                }
                Strike::Reorder => {
                    if let Some(d) = m.in_flight.pop_front() {
                        m.in_flight.push_back(d);
                    }
                }
            }
            m.in_flight.len()
        });
        let what = match strike {
            Strike::Drop => "the first datagram on the way is dropped",
            Strike::Duplicate => {
                "the first datagram on the way is duplicated (the copy right behind it)"
            }
            Strike::Reorder => "the first datagram on the way goes behind the others",
        };
        sim::fault::note(|| format!("{}: {what}", self.name));
        self.arm(on_the_way);
    }

    fn poll_ready_to_deliver(&self, cx: &mut Context<'_>) -> Poll<()> {
        let stale = self.mailbox.with_mut(|m| match m.in_flight.is_empty() {
            false => Ok(()),
            true => Err(m.deliverer.replace(cx.waker().clone())),
        });
        match stale {
            Ok(()) => Poll::Ready(()),
            Err(stale) => {
                self.mailbox.waiting("deliver", "nothing on the way");
                drop(stale);
                Poll::Pending
            }
        }
    }

    fn deliver_one(&self) {
        let Some(first) = self.mailbox.with(|m| m.in_flight.front().cloned()) else {
            return;
        };
        let cut_off = network().partitioned(&first.from_host, &self.host);
        let (reader, on_the_way) = self.mailbox.with_mut(|m| {
            let d = m.in_flight.pop_front();
            if let (Some(d), false) = (d, cut_off || m.closed) {
                m.arrived.push_back(d);
            }
            (m.reader.take(), m.in_flight.len())
        });
        sim::fault::note(|| match cut_off {
            true => format!(
                "{}: a datagram from {} is lost to the partition",
                self.name, first.from
            ),
            false => format!(
                "{}: {} bytes from {} arrive",
                self.name,
                first.bytes.len(),
                first.from
            ),
        });
        self.arm(on_the_way);
        if let Some(w) = reader {
            w.wake();
        }
    }

    /// A datagram sent to this port (after the sender's scheduling point).
    pub(crate) fn send(&self, from: SocketAddr, from_host: &str, bytes: &[u8]) {
        let (deliverer, on_the_way) = self.mailbox.with_mut(|m| {
            m.in_flight.push_back(Datagram {
                from,
                from_host: from_host.to_string(),
                bytes: bytes.to_vec(),
            });
            (m.deliverer.take(), m.in_flight.len())
        });
        self.arm(on_the_way);
        if let Some(w) = deliverer {
            w.wake();
        }
    }

    /// A receive's attempt (after its scheduling point): the first datagram that arrived
    /// (truncated to `buf`, as UDP does), or the reader's waker stored.
    pub(crate) fn poll_recv(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<(usize, SocketAddr)>> {
        let mut stale = None;
        let got = self.mailbox.with_mut(|m| match m.arrived.pop_front() {
            Some(d) => {
                let n = d.bytes.len().min(buf.len());
                buf[..n].copy_from_slice(&d.bytes[..n]);
                Poll::Ready(Ok((n, d.from)))
            }
            None => {
                stale = m.reader.replace(cx.waker().clone());
                Poll::Pending
            }
        });
        if got.is_pending() {
            self.mailbox.waiting("recv_from", "no datagram has arrived");
        }
        drop(stale);
        got
    }

    /// The socket is closed: what is on the way is dropped on arrival; no fault strikes.
    pub(crate) fn close(&self) {
        self.mailbox.with_mut(|m| {
            m.closed = true;
            m.in_flight.clear();
        });
        self.arm(0);
    }
}
