//! Client c over TCP: connects to the broker's front end (retrying while nothing listens, as
//! while the broker restarts), checks each PUBLISH against its log's ordering rules (what the
//! connection's bind re-sends first: the CONNACK names the connection) and acknowledges it,
//! and reconnects whenever the connection fails, until the log is complete.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::protocol::Frame;
use super::rt::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use super::rt::net::TcpStream;
use super::{rt, ClientLog, CLIENT};

/// How long c waits before connecting again to a broker that refused it.
const RETRY: Duration = Duration::from_millis(10);

pub struct TcpClient {
    /// The broker's address (`"broker:1883"`, `"127.0.0.1:PORT"`).
    pub addr: String,
    pub log: Arc<Mutex<ClientLog>>,
    /// c hangs up after the `n`th PUBLISH of a connection, before acknowledging it, and
    /// reconnects (once: a client-side disconnect, where a test has no faults to inject).
    pub hang_up_after: Option<usize>,
}

impl TcpClient {
    pub fn new(addr: &str, log: Arc<Mutex<ClientLog>>) -> Self {
        TcpClient {
            addr: addr.to_string(),
            log,
            hang_up_after: None,
        }
    }

    /// Runs until c's log is complete; returns how many connections that took.
    pub async fn run(mut self) -> usize {
        let mut connections = 0;
        // A reconnection may find the log complete already: the connection that received the
        // last message failed after it.
        while !self.log.lock().unwrap().complete() {
            let stream = self.connect().await;
            connections += 1;
            self.session(stream).await;
        }
        connections
    }

    async fn connect(&self) -> TcpStream {
        loop {
            match TcpStream::connect(self.addr.as_str()).await {
                Ok(stream) => return stream,
                Err(_) => rt::time::sleep(RETRY).await,
            }
        }
    }

    /// One connection, until it fails, c hangs up, or the log is complete.
    async fn session(&mut self, stream: TcpStream) {
        let (read, mut write) = stream.into_split();
        let connect = Frame::Connect {
            client: CLIENT.to_string(),
        };
        if write.write_all(connect.to_line().as_bytes()).await.is_err() {
            return;
        }
        let mut lines = BufReader::new(read).lines();
        let generation = match lines.next_line().await {
            Ok(Some(line)) => match Frame::parse(&line) {
                Some(Frame::Connack { generation }) => generation,
                _ => return,
            },
            _ => return,
        };
        let mut received = 0;
        while let Ok(Some(line)) = lines.next_line().await {
            let Some(Frame::Publish(msg)) = Frame::parse(&line) else {
                continue;
            };
            received += 1;
            let complete = {
                let mut log = self.log.lock().unwrap();
                if received == 1 {
                    log.reading_connection(generation);
                }
                log.on_publish(&msg);
                log.complete()
            };
            if complete {
                return;
            }
            if self.hang_up_after == Some(received) {
                self.hang_up_after = None;
                return;
            }
            let packet_id = msg
                .packet_id
                .expect("a PUBLISH on the wire has a packet id");
            let puback = Frame::Puback(packet_id).to_line();
            if write.write_all(puback.as_bytes()).await.is_err() {
                return;
            }
        }
    }
}
