//! Addresses a connect or bind accepts, as tokio's `ToSocketAddrs`: a `SocketAddr`, an
//! `(ip, port)`, or text (`"kv:7000"`, `"10.0.0.2:7000"`, `"localhost:7000"`), resolved
//! against the run's hosts.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use crate::world::hosts;

/// What `connect`, `bind` and `lookup_host` accept (tokio's trait of the same name).
pub trait ToSocketAddrs {
    /// The addresses it names in this run.
    #[doc(hidden)]
    fn to_braid_addrs(&self) -> io::Result<Vec<SocketAddr>>;
}

impl ToSocketAddrs for SocketAddr {
    fn to_braid_addrs(&self) -> io::Result<Vec<SocketAddr>> {
        Ok(vec![*self])
    }
}

impl ToSocketAddrs for SocketAddrV4 {
    fn to_braid_addrs(&self) -> io::Result<Vec<SocketAddr>> {
        Ok(vec![SocketAddr::V4(*self)])
    }
}

impl ToSocketAddrs for SocketAddrV6 {
    fn to_braid_addrs(&self) -> io::Result<Vec<SocketAddr>> {
        Ok(vec![SocketAddr::V6(*self)])
    }
}

impl ToSocketAddrs for (IpAddr, u16) {
    fn to_braid_addrs(&self) -> io::Result<Vec<SocketAddr>> {
        Ok(vec![SocketAddr::new(self.0, self.1)])
    }
}

impl ToSocketAddrs for (Ipv4Addr, u16) {
    fn to_braid_addrs(&self) -> io::Result<Vec<SocketAddr>> {
        Ok(vec![SocketAddr::new(self.0.into(), self.1)])
    }
}

impl ToSocketAddrs for (Ipv6Addr, u16) {
    fn to_braid_addrs(&self) -> io::Result<Vec<SocketAddr>> {
        Ok(vec![SocketAddr::new(self.0.into(), self.1)])
    }
}

impl ToSocketAddrs for (&str, u16) {
    fn to_braid_addrs(&self) -> io::Result<Vec<SocketAddr>> {
        Ok(vec![SocketAddr::new(hosts::resolve(self.0)?, self.1)])
    }
}

impl ToSocketAddrs for (String, u16) {
    fn to_braid_addrs(&self) -> io::Result<Vec<SocketAddr>> {
        (self.0.as_str(), self.1).to_braid_addrs()
    }
}

impl ToSocketAddrs for str {
    fn to_braid_addrs(&self) -> io::Result<Vec<SocketAddr>> {
        Ok(vec![hosts::resolve_addr(self)?])
    }
}

impl ToSocketAddrs for String {
    fn to_braid_addrs(&self) -> io::Result<Vec<SocketAddr>> {
        self.as_str().to_braid_addrs()
    }
}

impl ToSocketAddrs for [SocketAddr] {
    fn to_braid_addrs(&self) -> io::Result<Vec<SocketAddr>> {
        Ok(self.to_vec())
    }
}

impl<T: ToSocketAddrs + ?Sized> ToSocketAddrs for &T {
    fn to_braid_addrs(&self) -> io::Result<Vec<SocketAddr>> {
        (**self).to_braid_addrs()
    }
}

/// Resolves a host name (`"kv:7000"`) to its addresses, as tokio's `lookup_host`.
pub async fn lookup_host<T: ToSocketAddrs>(
    host: T,
) -> io::Result<impl Iterator<Item = SocketAddr>> {
    Ok(host.to_braid_addrs()?.into_iter())
}

/// The addresses `addr` names, or an error saying it names none.
pub(super) fn addresses<A: ToSocketAddrs>(addr: &A) -> io::Result<Vec<SocketAddr>> {
    let addrs = addr.to_braid_addrs()?;
    if addrs.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "could not resolve to any address",
        ));
    }
    Ok(addrs)
}
