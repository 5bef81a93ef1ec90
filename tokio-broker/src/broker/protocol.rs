//! The line protocol between c and the broker's TCP front end: one frame a line, its words
//! separated by spaces. Enough of MQTT's shape for the bind race: c's CONNECT (clean_start=0:
//! its session resumes) and the broker's CONNACK, the broker's QoS1 PUBLISH with its packet id
//! and DUP flag, and c's PUBACK.

use super::{Msg, MsgId};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// `CONNECT <client>`: the first frame of a connection.
    Connect { client: String },
    /// `CONNACK <generation>`: the session is attached to this connection, its generation
    /// (not MQTT's: c's log needs it to know what this connection's bind re-sends).
    Connack { generation: u64 },
    /// `PUBLISH <publisher> <seq> <packet_id> <dup: 0 or 1>`: a message for c, sent.
    Publish(Msg),
    /// `PUBACK <packet_id>`.
    Puback(u16),
}

impl Frame {
    /// The frame as one line, newline included.
    pub fn to_line(&self) -> String {
        match self {
            Frame::Connect { client } => format!("CONNECT {client}\n"),
            Frame::Connack { generation } => format!("CONNACK {generation}\n"),
            Frame::Publish(msg) => format!(
                "PUBLISH {} {} {} {}\n",
                msg.id.publisher,
                msg.id.seq,
                msg.packet_id
                    .expect("a PUBLISH on the wire has a packet id"),
                u8::from(msg.dup)
            ),
            Frame::Puback(packet_id) => format!("PUBACK {packet_id}\n"),
        }
    }

    /// Parses a line (without its newline); `None` if it is not a frame.
    pub fn parse(line: &str) -> Option<Frame> {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["CONNECT", client] => Some(Frame::Connect {
                client: client.to_string(),
            }),
            ["CONNACK", generation] => Some(Frame::Connack {
                generation: generation.parse().ok()?,
            }),
            ["PUBLISH", publisher, seq, packet_id, dup] => Some(Frame::Publish(Msg {
                id: MsgId {
                    publisher: publisher.parse().ok()?,
                    seq: seq.parse().ok()?,
                },
                packet_id: Some(packet_id.parse().ok()?),
                dup: match *dup {
                    "0" => false,
                    "1" => true,
                    _ => return None,
                },
            })),
            ["PUBACK", packet_id] => Some(Frame::Puback(packet_id.parse().ok()?)),
            _ => None,
        }
    }
}
