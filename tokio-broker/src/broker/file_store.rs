//! Session storage on a file (`rt::fs`): the messages in flight to c as an append-only log of
//! records, `+ <publisher> <seq> <packet_id>` when one is persisted and `- <packet_id>` when
//! one is removed, replayed in order at load. With [`Durability::Synced`] a call returns once
//! its record is synced, so what the broker puts on the wire is on disk first;
//! [`Durability::AckBeforeSync`] returns once the record is written, never synced: the "ack
//! before sync" bug, whose records a crash may lose.
//!
//! A crash may tear the last unsynced record (a prefix, no newline) and, when several are
//! unsynced, leave zeros where lost ones were: `open` cuts a torn tail off, so the next record
//! starts a line, and the load skips what does not parse. The log is never compacted (a real
//! store would; a test's logs are a few lines).

use std::io;
use std::path::{Path, PathBuf};

use super::rt::fs::{self, File, OpenOptions};
use super::rt::io::AsyncWriteExt;
use super::rt::sync::Mutex;
use super::{Msg, MsgId, SessionStore};

/// The log's name in the store's directory.
pub const LOG_FILE: &str = "inflight.log";

/// When a store call returns, against when its record is durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Once its record is synced (`sync_all`).
    Synced,
    /// Once its record is written, not synced: the broker goes on (puts the message on the
    /// wire) while a crash can still lose the record.
    AckBeforeSync,
}

pub struct FileStore {
    path: PathBuf,
    durability: Durability,
    /// The log, opened to append; the lock keeps each record whole and the records in call
    /// order.
    log: Mutex<File>,
}

impl FileStore {
    /// Opens (or creates) the log in `dir`, which must exist. A new log's name is made durable
    /// (its directory synced), whatever the durability of the records.
    pub async fn open(dir: impl AsRef<Path>, durability: Durability) -> io::Result<FileStore> {
        let dir = dir.as_ref();
        let path = dir.join(LOG_FILE);
        let created = !fs::try_exists(&path).await?;
        let log = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .await?;
        if created {
            log.sync_all().await?;
            File::open(dir).await?.sync_all().await?;
        }
        let bytes = fs::read(&path).await?;
        let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        if whole < bytes.len() {
            log.set_len(whole as u64).await?;
            log.sync_all().await?;
        }
        Ok(FileStore {
            path,
            durability,
            log: Mutex::new(log),
        })
    }

    async fn append(&self, record: String) {
        let mut log = self.log.lock().await;
        // A store that cannot reach its disk cannot keep its promise: it stops the broker.
        log.write_all(record.as_bytes())
            .await
            .expect("the session log takes the record");
        // Real tokio hands a file's writes to a blocking thread: flush waits until the OS has
        // it (still not durable), so a load reads it back.
        log.flush().await.expect("the session log takes the record");
        if self.durability == Durability::Synced {
            log.sync_all().await.expect("the session log syncs");
        }
    }
}

/// The messages in flight after the log's records, in the order first persisted. Zeros and
/// torn records (what a crash leaves of unsynced writes) are skipped.
fn replay(bytes: &[u8]) -> Vec<Msg> {
    let mut inflight: Vec<Msg> = Vec::new();
    for record in bytes.split(|&b| b == b'\n' || b == 0) {
        let Ok(record) = std::str::from_utf8(record) else {
            continue;
        };
        let words: Vec<&str> = record.split_whitespace().collect();
        match words.as_slice() {
            ["+", publisher, seq, packet_id] => {
                let (Ok(publisher), Ok(seq), Ok(packet_id)) =
                    (publisher.parse(), seq.parse(), packet_id.parse::<u16>())
                else {
                    continue;
                };
                inflight.retain(|m| m.packet_id != Some(packet_id));
                inflight.push(Msg {
                    id: MsgId { publisher, seq },
                    packet_id: Some(packet_id),
                    dup: false,
                });
            }
            ["-", packet_id] => {
                if let Ok(packet_id) = packet_id.parse::<u16>() {
                    inflight.retain(|m| m.packet_id != Some(packet_id));
                }
            }
            _ => {}
        }
    }
    inflight
}

impl SessionStore for FileStore {
    async fn load_persisted_inflight(&self) -> Vec<Msg> {
        let bytes = fs::read(&self.path)
            .await
            .expect("the session log is readable");
        replay(&bytes)
    }

    async fn persist_inflight(&self, msg: Msg) {
        let packet_id = msg.packet_id.expect("a message in flight has a packet id");
        self.append(format!(
            "+ {} {} {packet_id}\n",
            msg.id.publisher, msg.id.seq
        ))
        .await;
    }

    async fn remove_inflight(&self, packet_id: u16) {
        self.append(format!("- {packet_id}\n")).await;
    }
}
