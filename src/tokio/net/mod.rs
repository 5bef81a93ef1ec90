//! tokio's `net` over braid's simulated network: `TcpListener`, `TcpStream` (with `split`,
//! `into_split`, `peer_addr`, `local_addr` and shutdown), `UdpSocket`, and `lookup_host`, implementing
//! tokio's own `AsyncRead`/`AsyncWrite`, so `tokio::io`'s utilities and codecs built on those
//! traits (tokio-util's `Framed`) work unchanged.
//!
//! Hosts: the test body is the host `main`; each `braid::node::start(name, ..)` is a host of
//! that name, so a node that binds `0.0.0.0:7000` is reached by `TcpStream::connect("kv:7000")`.
//! Connecting where nothing listens gives `ConnectionRefused`; binding a port twice on a host
//! gives `AddrInUse`; an unknown host name is an error that lists the run's hosts.
//!
//! What the strategy decides: each write arrives in order, but *when* is a step of the
//! connection's delivery task, so another task, or another connection's bytes, may come
//! first. With [`Check::network_faults(n)`](crate::Check::network_faults), up to `n` faults
//! per run: a connection's reset (what had arrived can still be read; the next read or write
//! reports `ConnectionReset` once, or `BrokenPipe` if the peer's end of stream had arrived;
//! then reads see the end and writes fail with `BrokenPipe`, as on Linux; closing a stream with
//! unread bytes resets it too), and a partition between two hosts (their
//! traffic and connects are held until the heal, 60 s later in virtual time: the hosts' own
//! shorter timeouts fire first; a clock jump may bring the heal earlier). With
//! [`Check::crashes(n)`](crate::Check::crashes), a node's crash resets its connections and
//! closes its listeners. Every one of these is a decision a replay file names.
//!
//! `UdpSocket` (`bind`, `send_to`, `recv_from`, `connect`, `send`, `recv`): each datagram's
//! arrival is a step of its socket's delivery task, in the order sent unless a fault strikes:
//! with `network_faults`, the first datagram on the way may be dropped, duplicated or sent
//! behind the others; between partitioned hosts it is lost. A datagram to a port nobody bound
//! is dropped.
//!
//! Not simulated: back-pressure (a write never waits for the reader), `try_read`/`peek`,
//! socket options beyond `set_nodelay`/`nodelay` (accepted, no effect).
//!
//! ```
//! use braid::tokio::io::{AsyncReadExt, AsyncWriteExt};
//! use braid::tokio::net::{TcpListener, TcpStream};
//!
//! braid::check(|| async {
//!     braid::node::start("echo", || async {
//!         let listener = TcpListener::bind("0.0.0.0:7000").await.unwrap();
//!         loop {
//!             let (mut stream, _) = listener.accept().await.unwrap();
//!             braid::tokio::spawn(async move {
//!                 let mut buf = [0; 5];
//!                 stream.read_exact(&mut buf).await.unwrap();
//!                 stream.write_all(&buf).await.unwrap();
//!             });
//!         }
//!     });
//!     // The listener may not be bound yet: retry until it is.
//!     let mut stream = loop {
//!         match TcpStream::connect("echo:7000").await {
//!             Ok(s) => break s,
//!             Err(_) => braid::tokio::task::yield_now().await,
//!         }
//!     };
//!     stream.write_all(b"hello").await.unwrap();
//!     let mut reply = [0; 5];
//!     stream.read_exact(&mut reply).await.unwrap();
//!     assert_eq!(&reply, b"hello");
//! })
//! .assert_holds();
//! ```

#[macro_use]
mod side_io;
mod addr;
mod split;
mod tcp_listener;
mod tcp_stream;
mod udp_socket;

pub use addr::{lookup_host, ToSocketAddrs};
pub use split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, WriteHalf};
pub use tcp_listener::TcpListener;
pub use tcp_stream::TcpStream;
pub use udp_socket::UdpSocket;

/// tokio's `tokio::net::tcp` paths for the split halves.
pub mod tcp {
    pub use super::split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, WriteHalf};
}
