//! tokio's `fs` over each host's simulated disk: `read`, `read_to_string`, `write`,
//! `create_dir`, `create_dir_all`, `remove_file`, `remove_dir`, `remove_dir_all`, `copy`,
//! `rename`, `metadata`,
//! `try_exists`, `read_dir`, and [`File`] / [`OpenOptions`] (`AsyncRead`, `AsyncWrite`,
//! `AsyncSeek`, `sync_all`, `sync_data`, `set_len`, `metadata`). Each call runs as tokio
//! runs it: on a blocking task of its own (named `fs` in traces) that the caller awaits, so
//! its effect on the disk is a step other tasks' steps can fall before or after, and it
//! happens even if the caller is aborted while it waits. A `File`'s write, as tokio's, returns
//! at once and lands later: a `flush` (or the file's next read, seek, sync or `set_len`)
//! waits for it, and a write error is reported there.
//!
//! Each host (the test body is `main`, each `braid::node::start(name, ..)` one more) has its own
//! file system, empty at the start of every run; relative paths resolve from its root `/`.
//! Durability is Linux's: a write survives a crash once its file is synced (`sync_all` or
//! `sync_data`), a file's creation, rename or removal once its directory is (open the
//! directory with `File::open` and `sync_all` it). When a host crashes
//! ([`Check::crashes`](crate::Check::crashes)), the strategy decides for each write not yet
//! durable whether it was lost, kept, or kept as a torn prefix (its first half), and for each
//! name change not yet durable whether it was lost or kept; each is a decision a replay file
//! records and the trace names.
//!
//! Differences from tokio: [`Metadata`] is braid's own (`len`, `is_file`, `is_dir`); no
//! permissions, links, timestamps, or renaming of directories.
//!
//! ```
//! use std::{cell::Cell, rc::Rc};
//! use braid::tokio::fs;
//!
//! // A file whose directory was never synced may be gone after the crash.
//! let report = braid::check(|| async {
//!     let boots = Rc::new(Cell::new(0));
//!     let b = boots.clone();
//!     braid::node::start("db", move || {
//!         let b = b.clone();
//!         async move {
//!             b.set(b.get() + 1);
//!             if b.get() == 1 {
//!                 fs::write("state", b"1").await.unwrap();
//!             } else {
//!                 assert!(fs::try_exists("state").await.unwrap(), "the state file is gone");
//!             }
//!         }
//!     });
//!     // Time for the node to write, crash and start again.
//!     for _ in 0..10 {
//!         braid::tokio::task::yield_now().await;
//!     }
//! })
//! .crashes(1)
//! .run();
//! assert!(report.failure().is_some());
//! ```

mod blocking;
mod file;
mod gate;
mod open_options;

use std::io;
use std::path::{Path, PathBuf};

use crate::world::disk::{self, Stat};

use blocking::{call, look};

pub use file::File;
pub use open_options::OpenOptions;

/// What `metadata` says of a file or directory.
#[derive(Clone, Debug)]
pub struct Metadata {
    stat: Stat,
}

impl Metadata {
    /// Its length in bytes (0 for a directory).
    pub fn len(&self) -> u64 {
        self.stat.len
    }

    /// Whether it is a file of 0 bytes.
    pub fn is_empty(&self) -> bool {
        self.stat.len == 0
    }

    /// Whether it is a file.
    pub fn is_file(&self) -> bool {
        !self.stat.is_dir
    }

    /// Whether it is a directory.
    pub fn is_dir(&self) -> bool {
        self.stat.is_dir
    }
}

/// Reads a whole file.
pub async fn read(path: impl AsRef<Path>) -> io::Result<Vec<u8>> {
    let path = disk::resolve(path.as_ref())?;
    look("read", move |fs| {
        let inode = fs.lookup(&path)?;
        fs.contents(inode, &path)
    })
    .await
}

/// Reads a whole file as UTF-8.
pub async fn read_to_string(path: impl AsRef<Path>) -> io::Result<String> {
    String::from_utf8(read(path).await?).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// Creates or truncates a file and writes `contents` (not synced: see the module's note).
pub async fn write(path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> io::Result<()> {
    let path = disk::resolve(path.as_ref())?;
    let contents = contents.as_ref().to_vec();
    call("write", move |fs| {
        let inode = fs.open(&path, true, false, true)?;
        if fs.stat(inode).is_dir {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "Is a directory (os error 21)",
            ));
        }
        fs.write_at(inode, 0, &contents);
        Ok(())
    })
    .await
}

/// Creates a directory; its parent must exist.
pub async fn create_dir(path: impl AsRef<Path>) -> io::Result<()> {
    let path = disk::resolve(path.as_ref())?;
    call("create_dir", move |fs| fs.create_dir(&path)).await
}

/// Creates a directory and every missing parent.
pub async fn create_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    let path = disk::resolve(path.as_ref())?;
    call("create_dir_all", move |fs| {
        let mut at = PathBuf::from("/");
        for part in path.iter().skip(1) {
            at.push(part);
            match fs.lookup(&at) {
                Ok(i) if fs.stat(i).is_dir => {}
                Ok(_) => {
                    return Err(io::Error::new(
                        io::ErrorKind::NotADirectory,
                        format!("Not a directory (os error 20): {}", at.display()),
                    ))
                }
                Err(_) => fs.create_dir(&at)?,
            }
        }
        Ok(())
    })
    .await
}

/// Removes a file.
pub async fn remove_file(path: impl AsRef<Path>) -> io::Result<()> {
    let path = disk::resolve(path.as_ref())?;
    call("remove_file", move |fs| fs.remove_file(&path)).await
}

/// Removes an empty directory.
pub async fn remove_dir(path: impl AsRef<Path>) -> io::Result<()> {
    let path = disk::resolve(path.as_ref())?;
    call("remove_dir", move |fs| fs.remove_dir(&path)).await
}

/// Removes a directory and everything under it.
pub async fn remove_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    let path = disk::resolve(path.as_ref())?;
    call("remove_dir_all", move |fs| fs.remove_dir_all(&path)).await
}

/// Copies a file's contents to `to` (created or truncated); the number of bytes copied.
pub async fn copy(from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<u64> {
    let from = disk::resolve(from.as_ref())?;
    let to = disk::resolve(to.as_ref())?;
    call("copy", move |fs| {
        let bytes = fs.contents(fs.lookup(&from)?, &from)?;
        let inode = fs.open(&to, true, false, true)?;
        fs.write_at(inode, 0, &bytes);
        Ok(bytes.len() as u64)
    })
    .await
}

/// Renames a file, replacing what `to` named (durable once both directories are synced).
pub async fn rename(from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<()> {
    let from = disk::resolve(from.as_ref())?;
    let to = disk::resolve(to.as_ref())?;
    call("rename", move |fs| fs.rename(&from, &to)).await
}

/// What a path names.
pub async fn metadata(path: impl AsRef<Path>) -> io::Result<Metadata> {
    let path = disk::resolve(path.as_ref())?;
    look("metadata", move |fs| {
        let inode = fs.lookup(&path)?;
        Ok(Metadata {
            stat: fs.stat(inode),
        })
    })
    .await
}

/// Whether a path names something.
pub async fn try_exists(path: impl AsRef<Path>) -> io::Result<bool> {
    let path = disk::resolve(path.as_ref())?;
    look("try_exists", move |fs| Ok(fs.lookup(&path).is_ok())).await
}

/// The entries of a directory, in name order (tokio's `ReadDir`, simplified to its paths).
pub async fn read_dir(path: impl AsRef<Path>) -> io::Result<ReadDir> {
    let path = disk::resolve(path.as_ref())?;
    let entries = look("read_dir", move |fs| fs.list(&path)).await?;
    Ok(ReadDir {
        entries: entries.into_iter(),
    })
}

/// A directory's entries, as `read_dir` found them.
#[derive(Debug)]
pub struct ReadDir {
    entries: std::vec::IntoIter<PathBuf>,
}

impl ReadDir {
    /// The next entry, or `None` at the end.
    pub async fn next_entry(&mut self) -> io::Result<Option<DirEntry>> {
        Ok(self.entries.next().map(|path| DirEntry { path }))
    }
}

/// One entry of a directory.
#[derive(Debug)]
pub struct DirEntry {
    path: PathBuf,
}

impl DirEntry {
    /// Its full path on the host.
    pub fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// Its name within the directory.
    pub fn file_name(&self) -> std::ffi::OsString {
        self.path.file_name().unwrap_or_default().to_os_string()
    }
}
