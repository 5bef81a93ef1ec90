//! `OpenOptions`: how `File` opens a path, as tokio's and std's.

use std::io;
use std::path::Path;
use std::sync::Arc;

use super::blocking;
use super::file::File;
use crate::world::disk;

/// Options for opening a file, as tokio's.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    read: bool,
    write: bool,
    append: bool,
    truncate: bool,
    create: bool,
    create_new: bool,
}

impl OpenOptions {
    /// All options off.
    pub fn new() -> Self {
        Self::default()
    }

    /// Open to read.
    pub fn read(&mut self, read: bool) -> &mut Self {
        self.read = read;
        self
    }

    /// Open to write.
    pub fn write(&mut self, write: bool) -> &mut Self {
        self.write = write;
        self
    }

    /// Every write goes to the end.
    pub fn append(&mut self, append: bool) -> &mut Self {
        self.append = append;
        self
    }

    /// Empty the file when it is opened.
    pub fn truncate(&mut self, truncate: bool) -> &mut Self {
        self.truncate = truncate;
        self
    }

    /// Create it if it does not exist.
    pub fn create(&mut self, create: bool) -> &mut Self {
        self.create = create;
        self
    }

    /// Create, failing with `AlreadyExists` if it exists.
    pub fn create_new(&mut self, create_new: bool) -> &mut Self {
        self.create_new = create_new;
        self
    }

    /// Opens `path` on the running task's host: one fs call (see the module `fs`).
    pub async fn open(&self, path: impl AsRef<Path>) -> io::Result<File> {
        let writes = self.write || self.append;
        if !self.read && !writes {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "Invalid argument (os error 22): open with neither read nor write",
            ));
        }
        if (self.create || self.create_new || self.truncate) && !writes {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "Invalid argument (os error 22): create or truncate without write",
            ));
        }
        let path = disk::resolve(path.as_ref())?;
        let d = disk::disk();
        let (create, create_new, truncate) = (self.create, self.create_new, self.truncate);
        let at = path.clone();
        let inode = blocking::call_on(&d, "open", move |fs| {
            let path = at;
            let inode = fs.open(&path, create, create_new, false)?;
            let is_dir = fs.stat(inode).is_dir;
            if is_dir && writes {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    format!("Is a directory (os error 21): {}", path.display()),
                ));
            }
            if truncate && !is_dir {
                fs.set_len(inode, 0);
            }
            Ok(inode)
        })
        .await?;
        Ok(File::new(
            Arc::clone(&d),
            inode,
            path,
            self.read,
            writes,
            self.append,
        ))
    }
}
