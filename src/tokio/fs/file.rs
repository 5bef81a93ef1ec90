//! `File`: an open file on a host's disk, with a position; each read, write, seek and sync is
//! a scheduling point on the disk.

use std::fmt;
use std::io::{self, SeekFrom};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncSeek, AsyncWrite, ReadBuf};

use super::{Metadata, OpenOptions};
use crate::world::disk::{Disk, Inode};

/// An open file, as tokio's.
pub struct File {
    disk: Arc<Disk>,
    inode: Inode,
    path: PathBuf,
    readable: bool,
    writable: bool,
    append: bool,
    pos: Mutex<u64>,
    seek_to: Option<u64>,
}

impl File {
    pub(super) fn new(
        disk: Arc<Disk>,
        inode: Inode,
        path: PathBuf,
        readable: bool,
        writable: bool,
        append: bool,
    ) -> Self {
        File {
            disk,
            inode,
            path,
            readable,
            writable,
            append,
            pos: Mutex::new(0),
            seek_to: None,
        }
    }

    /// Opens a file to read.
    pub async fn open(path: impl AsRef<Path>) -> io::Result<File> {
        OpenOptions::new().read(true).open(path).await
    }

    /// Creates (or truncates) a file to write.
    pub async fn create(path: impl AsRef<Path>) -> io::Result<File> {
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .await
    }

    /// Creates a file to write, failing if it exists.
    pub async fn create_new(path: impl AsRef<Path>) -> io::Result<File> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .await
    }

    /// The options `open` takes.
    pub fn options() -> OpenOptions {
        OpenOptions::new()
    }

    /// Makes its bytes durable (for a directory, its entries): a crash after this keeps them.
    pub async fn sync_all(&self) -> io::Result<()> {
        self.sync("sync_all")
    }

    /// As `sync_all` (braid keeps no metadata apart from the bytes).
    pub async fn sync_data(&self) -> io::Result<()> {
        self.sync("sync_data")
    }

    /// A sync, as the step `op`.
    fn sync(&self, op: &'static str) -> io::Result<()> {
        self.disk.fs.write_point_as(op);
        self.disk.fs.with_mut(|fs| fs.sync(self.inode));
        Ok(())
    }

    /// Truncates or extends it (with zeros).
    pub async fn set_len(&self, size: u64) -> io::Result<()> {
        self.check_writable()?;
        self.disk.fs.write_point_as("set_len");
        self.disk.fs.with_mut(|fs| fs.set_len(self.inode, size));
        Ok(())
    }

    /// What it is now.
    pub async fn metadata(&self) -> io::Result<Metadata> {
        self.disk.fs.write_point_as("metadata");
        let stat = self.disk.fs.with(|fs| fs.stat(self.inode));
        Ok(Metadata { stat })
    }

    fn check_writable(&self) -> io::Result<()> {
        match self.writable {
            true => Ok(()),
            false => Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "Bad file descriptor (os error 9): {} is not open for writing",
                    self.path.display()
                ),
            )),
        }
    }

    fn pos(&self) -> std::sync::MutexGuard<'_, u64> {
        self.pos.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for File {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("File").field("path", &self.path).finish()
    }
}

impl AsyncRead for File {
    fn poll_read(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if !self.readable {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "Bad file descriptor (os error 9): not open for reading",
            )));
        }
        if self.disk.fs.with(|fs| fs.stat(self.inode).is_dir) {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "Is a directory (os error 21)",
            )));
        }
        self.disk.fs.write_point_as("read");
        let mut pos = self.pos();
        let n = self
            .disk
            .fs
            .with(|fs| fs.read_at(self.inode, *pos, buf.initialize_unfilled()));
        buf.advance(n);
        *pos += n as u64;
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for File {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.check_writable()?;
        self.disk.fs.write_point_as("write");
        let mut pos = self.pos();
        let inode = self.inode;
        let append = self.append;
        self.disk.fs.with_mut(|fs| {
            if append {
                *pos = fs.stat(inode).len;
            }
            fs.write_at(inode, *pos, bytes);
        });
        *pos += bytes.len() as u64;
        Poll::Ready(Ok(bytes.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl AsyncSeek for File {
    fn start_seek(mut self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        let len = self.disk.fs.with(|fs| fs.stat(self.inode).len);
        let cur = *self.pos();
        let to = match position {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => len.checked_add_signed(d),
            SeekFrom::Current(d) => cur.checked_add_signed(d),
        };
        let to = to.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "invalid seek to a negative or overflowing position",
            )
        })?;
        self.seek_to = Some(to);
        Ok(())
    }

    fn poll_complete(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        if let Some(to) = self.seek_to.take() {
            *self.pos() = to;
        }
        Poll::Ready(Ok(*self.pos()))
    }
}
