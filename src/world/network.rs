//! The network between hosts: listeners by (host, port), connections as two pipes, and the
//! faults the strategy may inject (a connection's reset, a partition between two hosts and its
//! heal). A host's crash resets its connections and closes its listeners.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::hash::{Hash, Hasher};
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use sim::fault::Site;
use sim::sync::Shared;

use super::datagram::Port;
use super::hosts;
use super::pipe::Pipe;

/// How long a partition lasts, in virtual time.
pub(crate) const PARTITION_LASTS: std::time::Duration = std::time::Duration::from_secs(60);

/// The first port handed out for port 0 (Linux's ephemeral range starts here).
const FIRST_EPHEMERAL_PORT: u16 = 49152;

/// A connection: `pipes[0]` carries what the connecting side writes, `pipes[1]` the other way.
pub(crate) struct Conn {
    /// The connecting side's and the accepting side's hosts and addresses.
    pub(crate) hosts: [String; 2],
    pub(crate) addrs: [SocketAddr; 2],
    pub(crate) pipes: [Arc<Pipe>; 2],
    site: Site,
    /// Sides not closed yet.
    open: std::sync::atomic::AtomicU8,
}

impl Conn {
    /// Resets both directions (a fault, a crash, or a write to a peer that is gone).
    pub(crate) fn reset(&self) {
        self.site.arm(false);
        for p in &self.pipes {
            p.reset();
        }
    }

    /// Whether it joins hosts `a` and `b`.
    fn joins(&self, a: &str, b: &str) -> bool {
        (self.hosts[0] == a && self.hosts[1] == b) || (self.hosts[0] == b && self.hosts[1] == a)
    }

    /// One side closed; once both have, no fault can strike it any more.
    pub(crate) fn close_side(&self) {
        use std::sync::atomic::Ordering::Relaxed;
        if self.open.fetch_sub(1, Relaxed) == 1 {
            self.site.arm(false);
        }
    }
}

/// What a listener has been sent and not accepted yet.
#[derive(Default)]
pub(crate) struct Backlog {
    queue: VecDeque<Arc<Conn>>,
    closed: bool,
    acceptor: Option<Waker>,
}

impl Hash for Backlog {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self.queue.len(), self.closed).hash(state);
    }
}

/// A listening socket.
pub(crate) struct Listener {
    pub(crate) addr: SocketAddr,
    host: String,
    pub(crate) backlog: Shared<Backlog>,
}

impl Listener {
    /// An accept's attempt (after its scheduling point).
    pub(crate) fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<Arc<Conn>>> {
        let mut stale = None;
        let got = self.backlog.with_mut(|b| match b.queue.pop_front() {
            Some(conn) => Poll::Ready(Ok(conn)),
            None if b.closed => Poll::Ready(Err(io::Error::other("the listener's host crashed"))),
            None => {
                stale = b.acceptor.replace(cx.waker().clone());
                Poll::Pending
            }
        });
        if got.is_pending() {
            self.backlog.waiting("accept", "no connection has come");
        }
        drop(stale);
        got
    }

    /// Closes it: connections not accepted yet are reset.
    fn close(&self) {
        let (queued, waker) = self.backlog.with_mut(|b| {
            b.closed = true;
            (std::mem::take(&mut b.queue), b.acceptor.take())
        });
        for conn in queued {
            conn.reset();
        }
        if let Some(w) = waker {
            w.wake();
        }
    }
}

/// The run's network (see `sim::fault::run_local`).
#[derive(Default)]
pub(crate) struct Network {
    state: RefCell<NetState>,
}

#[derive(Default)]
struct NetState {
    /// The registry's scheduling points: binds, connects and closes are steps on it.
    registry: Option<Rc<Shared<u64>>>,
    listeners: BTreeMap<(String, u16), Arc<Listener>>,
    /// Bound UDP sockets, by host and port.
    ports: BTreeMap<(String, u16), Arc<Port>>,
    conns: Vec<Arc<Conn>>,
    next_port: BTreeMap<String, u16>,
    /// Pairs of hosts (in name order) cut off from each other, and the fault site of each
    /// pair that has had a connection.
    partitions: BTreeSet<(String, String)>,
    partition_sites: BTreeMap<(String, String), Site>,
    /// Connects waiting for a partition's heal.
    heal_waiters: Vec<Waker>,
}

fn pair(a: &str, b: &str) -> (String, String) {
    match a <= b {
        true => (a.to_string(), b.to_string()),
        false => (b.to_string(), a.to_string()),
    }
}

/// The run's network, made (and its crash hook registered) on first use.
pub(crate) fn network() -> Rc<Network> {
    let net = sim::fault::run_local::<Network>();
    if net.state.borrow().registry.is_none() {
        // Every step on the network is an access to an object the reduction sees: the
        // registry (binds, connects, sends, closes), a listener's backlog, each direction of
        // each connection (its writes, deliveries and reads), each socket's datagrams.
        // Checked against plain search on generated programs (`tests/net_fs_reduction.rs`).
        let registry = Rc::new(Shared::new("network", 0u64));
        net.state.borrow_mut().registry = Some(registry);
        sim::node::on_crash(|host| network().crash(host));
    }
    net
}

impl Network {
    fn registry(&self) -> Rc<Shared<u64>> {
        self.state
            .borrow()
            .registry
            .clone()
            .expect("made with the network")
    }

    /// A scheduling point on the registry (a bind, a connect), labelled `op`.
    pub(crate) fn point(&self, op: &'static str) {
        let registry = self.registry();
        registry.write_point_as(op);
        // The step writes the registry (what a bind or connect changes lives beside it).
        registry.with_mut(|n| *n += 1);
    }

    /// Binds a listener on the running task's host (after the point).
    pub(crate) fn bind(&self, addr: SocketAddr) -> io::Result<Arc<Listener>> {
        let host = hosts::current();
        let mut st = self.state.borrow_mut();
        let port = match addr.port() {
            0 => next_port(&mut st, &host),
            p => p,
        };
        if st.listeners.contains_key(&(host.clone(), port)) {
            return Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                format!(
                    "Address already in use (os error 98): {host} already listens on port {port}"
                ),
            ));
        }
        let ip = match addr.ip().is_unspecified() || addr.ip().is_loopback() {
            true => addr.ip(),
            false => {
                if hosts::at(addr.ip())? != host {
                    return Err(io::Error::new(
                        io::ErrorKind::AddrNotAvailable,
                        format!("Cannot assign requested address (os error 99): {} is not host {host}'s", addr.ip()),
                    ));
                }
                addr.ip()
            }
        };
        let listener = Arc::new(Listener {
            addr: SocketAddr::new(ip, port),
            host: host.clone(),
            backlog: Shared::new(format!("listener {host}:{port}"), Backlog::default()),
        });
        st.listeners.insert((host, port), listener.clone());
        Ok(listener)
    }

    /// Forgets a listener that was dropped.
    pub(crate) fn unbind(&self, listener: &Listener) {
        let key = (listener.host.clone(), listener.addr.port());
        let mine = {
            let mut st = self.state.borrow_mut();
            match st.listeners.get(&key) {
                Some(l) if std::ptr::eq(&**l, listener) => st.listeners.remove(&key),
                _ => None,
            }
        };
        if let Some(l) = mine {
            l.close();
        }
    }

    /// Whether hosts `a` and `b` are cut off from each other now.
    pub(crate) fn partitioned(&self, a: &str, b: &str) -> bool {
        self.state.borrow().partitions.contains(&pair(a, b))
    }

    /// Binds a UDP socket on the running task's host (after the point).
    pub(crate) fn bind_udp(&self, addr: SocketAddr) -> io::Result<Arc<Port>> {
        let host = hosts::current();
        let port = {
            let mut st = self.state.borrow_mut();
            let port = match addr.port() {
                0 => next_port(&mut st, &host),
                p => p,
            };
            if st.ports.contains_key(&(host.clone(), port)) {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!("Address already in use (os error 98): {host} already has a UDP socket on port {port}"),
                ));
            }
            port
        };
        let ip = hosts::ip_of(&host).expect("the running host exists");
        let bound = Port::start(&host, SocketAddr::new(ip.into(), port));
        self.state
            .borrow_mut()
            .ports
            .insert((host, port), bound.clone());
        Ok(bound)
    }

    /// Forgets a UDP socket that was dropped.
    pub(crate) fn unbind_udp(&self, port: &Port) {
        let key = (port.host.clone(), port.addr.port());
        let mut st = self.state.borrow_mut();
        if st.ports.get(&key).is_some_and(|p| std::ptr::eq(&**p, port)) {
            st.ports.remove(&key);
        }
        drop(st);
        port.close();
    }

    /// Sends a datagram from `from` to `to` (after the point): dropped if nothing is bound
    /// there, as UDP does.
    pub(crate) fn send_udp(&self, from: &Port, to: SocketAddr, bytes: &[u8]) -> io::Result<()> {
        let to_host = hosts::at(to.ip())?;
        if to_host != from.host {
            self.partition_site(&from.host, &to_host);
        }
        let dest = self
            .state
            .borrow()
            .ports
            .get(&(to_host, to.port()))
            .cloned();
        match dest {
            Some(dest) => dest.send(from.addr, &from.host, bytes),
            None => sim::fault::note(|| {
                format!("a datagram to {to} is dropped: nothing is bound there")
            }),
        }
        Ok(())
    }

    /// Whether the running task's host is cut off from `to`'s host: then a connect waits.
    pub(crate) fn poll_reachable(&self, to: &str, cx: &mut Context<'_>) -> Poll<()> {
        let from = hosts::current();
        let mut st = self.state.borrow_mut();
        if !st.partitions.contains(&pair(&from, to)) {
            return Poll::Ready(());
        }
        st.heal_waiters.push(cx.waker().clone());
        Poll::Pending
    }

    /// Connects the running task's host to `to` (after the point): a connection queued on the
    /// listener, or `ConnectionRefused` when nothing listens there.
    pub(crate) fn connect(&self, to: SocketAddr) -> io::Result<Arc<Conn>> {
        let from = hosts::current();
        let to_host = hosts::at(to.ip())?;
        let listener = self
            .state
            .borrow()
            .listeners
            .get(&(to_host.clone(), to.port()))
            .cloned();
        let Some(listener) = listener else {
            return Err(io::Error::new(
                io::ErrorKind::ConnectionRefused,
                format!(
                    "Connection refused (os error 111): nothing listens on {to_host}:{}",
                    to.port()
                ),
            ));
        };
        let conn = self.open(&from, &to_host, to.port());
        if from != to_host {
            self.partition_site(&from, &to_host);
        }
        let acceptor = listener.backlog.with_mut(|b| {
            b.queue.push_back(conn.clone());
            b.acceptor.take()
        });
        if let Some(w) = acceptor {
            w.wake();
        }
        Ok(conn)
    }

    /// A new connection from `from` (on an ephemeral port) to `to_host`'s `port`: its pipes,
    /// their delivery tasks and its reset site, held if the two hosts are cut off.
    fn open(&self, from: &str, to_host: &str, port: u16) -> Arc<Conn> {
        let (id, local, held) = {
            let mut st = self.state.borrow_mut();
            let local_port = next_port(&mut st, from);
            let ip = hosts::ip_of(from).expect("the running host exists");
            let held = st.partitions.contains(&pair(from, to_host));
            (
                st.conns.len() + 1,
                SocketAddr::new(ip.into(), local_port),
                held,
            )
        };
        let name = format!("conn#{id} {from}->{to_host}:{port}");
        let pipes = [
            Pipe::start(format!("{name} (sent by {from})"), held),
            Pipe::start(format!("{name} (sent by {to_host})"), held),
        ];
        let to_reset = pipes.clone();
        let site = Site::start(format!("reset {name}"), true, move || {
            sim::fault::note(|| "the connection is reset".to_string());
            for p in &to_reset {
                p.reset();
            }
        });
        let remote_ip = hosts::ip_of(to_host).expect("the listener's host exists");
        let conn = Arc::new(Conn {
            hosts: [from.to_string(), to_host.to_string()],
            addrs: [local, SocketAddr::new(remote_ip.into(), port)],
            pipes,
            site,
            open: std::sync::atomic::AtomicU8::new(2),
        });
        for pipe in &conn.pipes {
            let weak = Arc::downgrade(&conn);
            pipe.on_orphan(move || {
                if let Some(conn) = weak.upgrade() {
                    conn.reset();
                }
            });
        }
        self.state.borrow_mut().conns.push(conn.clone());
        conn
    }

    /// The fault site that partitions `a` from `b`, started with their first connection.
    pub(crate) fn partition_site(&self, a: &str, b: &str) {
        let key = pair(a, b);
        if self.state.borrow().partition_sites.contains_key(&key) {
            return;
        }
        let name = format!("partition {}|{}", key.0, key.1);
        let site_key = key.clone();
        let site = Site::start(name, true, move || network().partition(&site_key));
        self.state.borrow_mut().partition_sites.insert(key, site);
    }

    /// A partition strikes: traffic between the two hosts is held until the heal, a timer
    /// `PARTITION_LASTS` later in virtual time (so the hosts' own timeouts, shorter than that,
    /// fire first when nothing else can run; a clock jump may bring the heal earlier).
    fn partition(&self, key: &(String, String)) {
        sim::fault::note(|| format!("{} and {} are cut off", key.0, key.1));
        self.state.borrow_mut().partitions.insert(key.clone());
        self.hold(key, true);
        let heal_key = key.clone();
        sim::fault::spawn_daemon(format!("heal {}|{}", key.0, key.1), async move {
            sim::time::sleep(PARTITION_LASTS).await;
            network().heal(&heal_key);
        });
    }

    fn heal(&self, key: &(String, String)) {
        sim::fault::note(|| format!("{} and {} reach each other again", key.0, key.1));
        let (waiters, site) = {
            let mut st = self.state.borrow_mut();
            st.partitions.remove(key);
            (
                std::mem::take(&mut st.heal_waiters),
                st.partition_sites.get(key).copied(),
            )
        };
        self.hold(key, false);
        if let Some(site) = site {
            site.arm(true);
        }
        for w in waiters {
            w.wake();
        }
    }

    fn hold(&self, key: &(String, String), held: bool) {
        let conns: Vec<_> = self.state.borrow().conns.clone();
        for c in conns.iter().filter(|c| c.joins(&key.0, &key.1)) {
            for p in &c.pipes {
                p.hold(held);
            }
        }
    }

    /// A host crashed: its connections are reset and its listeners closed.
    fn crash(&self, host: &str) {
        let (conns, listeners) = {
            let mut st = self.state.borrow_mut();
            let conns: Vec<_> = st
                .conns
                .iter()
                .filter(|c| c.hosts.iter().any(|h| h == host))
                .cloned()
                .collect();
            let keys: Vec<_> = st
                .listeners
                .keys()
                .filter(|(h, _)| h == host)
                .cloned()
                .collect();
            let listeners: Vec<_> = keys.iter().filter_map(|k| st.listeners.remove(k)).collect();
            (conns, listeners)
        };
        for c in conns {
            c.reset();
        }
        for l in listeners {
            l.close();
        }
    }
}

/// The next free ephemeral port on `host`.
fn next_port(st: &mut NetState, host: &str) -> u16 {
    let next = st
        .next_port
        .entry(host.to_string())
        .or_insert(FIRST_EPHEMERAL_PORT);
    while st.listeners.contains_key(&(host.to_string(), *next)) {
        *next = next.wrapping_add(1).max(FIRST_EPHEMERAL_PORT);
    }
    let port = *next;
    *next = next.wrapping_add(1).max(FIRST_EPHEMERAL_PORT);
    port
}
