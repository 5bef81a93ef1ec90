//! Hosts: the test body is the host `main`; each `braid::node::start(name, ..)` starts a host
//! of that name. A host's name resolves to its address (`main` is 10.0.0.1, then each node in
//! the order it started: 10.0.0.2, ...), and `localhost` to the host a task runs on.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// The test body's host.
pub(crate) const MAIN: &str = "main";

/// The host the running task is on.
pub(crate) fn current() -> String {
    sim::node::current().unwrap_or_else(|| MAIN.to_string())
}

/// A host's address, if it exists.
pub(crate) fn ip_of(host: &str) -> Option<Ipv4Addr> {
    if host == MAIN {
        return Some(Ipv4Addr::new(10, 0, 0, 1));
    }
    let i = sim::node::names().iter().position(|n| n == host)?;
    let i = u8::try_from(i + 2).ok()?;
    Some(Ipv4Addr::new(10, 0, 0, i))
}

/// The host at an address (a loopback or unspecified address: the running task's own).
pub(crate) fn at(ip: IpAddr) -> io::Result<String> {
    if ip.is_loopback() || ip.is_unspecified() {
        return Ok(current());
    }
    let IpAddr::V4(v4) = ip else {
        return Err(unknown(&ip.to_string()));
    };
    match v4.octets() {
        [10, 0, 0, 1] => Ok(MAIN.to_string()),
        [10, 0, 0, i] if i >= 2 => sim::node::names()
            .get(usize::from(i) - 2)
            .cloned()
            .ok_or_else(|| unknown(&ip.to_string())),
        _ => Err(unknown(&ip.to_string())),
    }
}

/// Resolves `host` (a host's name, `localhost`, or an address) to an address.
pub(crate) fn resolve(host: &str) -> io::Result<IpAddr> {
    if host == "localhost" {
        return Ok(IpAddr::V4(Ipv4Addr::LOCALHOST));
    }
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(ip);
    }
    ip_of(host).map(IpAddr::V4).ok_or_else(|| unknown(host))
}

/// Resolves `"host:port"` (or an address and port) to a socket address.
pub(crate) fn resolve_addr(text: &str) -> io::Result<SocketAddr> {
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let (host, port) = text.rsplit_once(':').ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("invalid socket address '{text}': expected host:port"),
        )
    })?;
    let port = port.parse::<u16>().map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("invalid port in '{text}': expected a number from 0 to 65535"),
        )
    })?;
    Ok(SocketAddr::new(resolve(host)?, port))
}

fn unknown(host: &str) -> io::Error {
    let known = std::iter::once(MAIN.to_string())
        .chain(sim::node::names())
        .collect::<Vec<_>>()
        .join(", ");
    io::Error::other(format!(
        "failed to lookup address information: unknown host '{host}' (braid's hosts are `main`, \
         the test body, and the names given to braid::node::start; this run has: {known})"
    ))
}
