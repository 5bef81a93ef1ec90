//! The broker's TCP front end: accepts c's connections, and bridges each to a client handler's
//! in-memory end (`Connection`: the wire it sends PUBLISHes on, the acks it reads) in the line
//! protocol of [`Frame`]. Each CONNECT is a new connection generation: it takes c's session
//! over from the previous connection, whose handler must end first (two handlers would drain
//! the same queue), and then binds. A connection c has given up on may still take the session
//! over (its CONNECT arrived before it failed), as in MQTT: c's live connection is then closed
//! and c connects again.

use std::sync::Arc;

use super::protocol::Frame;
use super::rt::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use super::rt::net::{TcpListener, TcpStream};
use super::rt::sync::{Mutex, Notify};
use super::rt::task::JoinHandle;
use super::{rt, Broker, Connection, SessionStore, CLIENT};

pub struct FrontEnd<S> {
    broker: Arc<Broker<S>>,
    session: Mutex<Session>,
}

/// c's session as the front end sees it: the latest connection's generation and handler.
struct Session {
    generation: u64,
    attached: Option<Attached>,
}

/// The connection c's session is attached to.
struct Attached {
    handler: JoinHandle<()>,
    /// Tells the connection's bridge to let go of the handler.
    detach: Arc<Notify>,
}

impl<S: SessionStore> FrontEnd<S> {
    /// A front end whose connections' generations count up from `first_generation` (not 0,
    /// which means bound): a restarted broker starts past its previous boot's, so that a
    /// generation names one connection for the whole run.
    pub fn new(broker: Arc<Broker<S>>, first_generation: u64) -> Arc<Self> {
        assert!(first_generation > 0, "generation 0 means bound");
        Arc::new(FrontEnd {
            broker,
            session: Mutex::new(Session {
                generation: first_generation - 1,
                attached: None,
            }),
        })
    }

    /// Accepts connections until the listener fails, each served by its own task.
    pub async fn serve(self: Arc<Self>, listener: TcpListener) {
        while let Ok((stream, _)) = listener.accept().await {
            rt::spawn(self.clone().connection(stream));
        }
    }

    /// One connection: CONNECT and CONNACK, then PUBLISHes out and PUBACKs in until either
    /// side ends it or a newer connection takes the session over.
    async fn connection(self: Arc<Self>, stream: TcpStream) {
        let (read, mut write) = stream.into_split();
        let mut lines = BufReader::new(read).lines();
        match lines.next_line().await {
            Ok(Some(line)) if Frame::parse(&line) == Some(connect_frame()) => {}
            _ => return,
        }
        let (generation, detach, mut conn) = self.attach().await;
        let connack = Frame::Connack { generation }.to_line();
        if write.write_all(connack.as_bytes()).await.is_err() {
            return;
        }
        loop {
            rt::select! {
                line = lines.next_line() => {
                    let Ok(Some(line)) = line else { break };
                    if let Some(Frame::Puback(packet_id)) = Frame::parse(&line) {
                        if conn.acks.send(packet_id).await.is_err() {
                            break;
                        }
                    }
                }
                msg = conn.wire.recv() => {
                    let Some(msg) = msg else { break };
                    let line = Frame::Publish(msg).to_line();
                    if write.write_all(line.as_bytes()).await.is_err() {
                        break;
                    }
                }
                _ = detach.notified() => break,
            }
        }
        // Dropping `conn` closes the acks: the handler ends.
    }

    /// Takes c's session over for a new connection: ends the previous connection's handler
    /// (what it had in flight stays persisted, its lane goes back to the queue), then starts
    /// this one's. The lock makes concurrent CONNECTs take turns.
    async fn attach(&self) -> (u64, Arc<Notify>, Connection) {
        let mut session = self.session.lock().await;
        if let Some(previous) = session.attached.take() {
            previous.detach.notify_one();
            let _ = previous.handler.await;
        }
        session.generation += 1;
        let (handler, conn) = self.broker.connect(session.generation);
        let detach = Arc::new(Notify::new());
        session.attached = Some(Attached {
            handler: rt::spawn(handler.run()),
            detach: detach.clone(),
        });
        (session.generation, detach, conn)
    }
}

/// The only CONNECT the broker serves: c's.
fn connect_frame() -> Frame {
    Frame::Connect {
        client: CLIENT.to_string(),
    }
}
