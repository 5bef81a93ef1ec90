//! Each host's disk: files and directories as the host's tasks see them (the page cache), and
//! what is durable. A write is durable once its file is synced (`sync_all`, `sync_data`); a
//! file's creation, rename or removal once its directory is (`File::open(dir)` then
//! `sync_all`, as on Linux). When the host crashes, the strategy decides, for each write not
//! yet durable, whether it was lost, kept, or kept as a torn prefix, and for each name change
//! not yet durable, whether it was lost or kept; the host then sees only what is durable.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::io;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use sim::sync::Shared;

use super::hosts;

/// A file's or directory's number on its disk.
pub(crate) type Inode = usize;

/// A change to a file's bytes not yet durable.
#[derive(Clone)]
enum DataOp {
    Write { offset: u64, bytes: Vec<u8> },
    SetLen(u64),
}

/// A change to a directory's entries not yet durable.
#[derive(Clone)]
enum NameOp {
    Link { path: PathBuf, inode: Inode },
    Unlink { path: PathBuf },
}

impl NameOp {
    fn path(&self) -> &Path {
        match self {
            NameOp::Link { path, .. } | NameOp::Unlink { path } => path,
        }
    }
}

struct Node {
    is_dir: bool,
    data: Vec<u8>,
    durable: Vec<u8>,
    pending: Vec<DataOp>,
}

/// One host's file system.
pub(crate) struct Fs {
    nodes: Vec<Node>,
    names: BTreeMap<PathBuf, Inode>,
    durable_names: BTreeMap<PathBuf, Inode>,
    pending_names: Vec<NameOp>,
}

/// The engine hashes what a task could see: the names and sizes, and what is pending.
impl Hash for Fs {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for (path, &inode) in &self.names {
            (path, inode, self.nodes[inode].data.len()).hash(state);
        }
        self.pending_names.len().hash(state);
        for n in &self.nodes {
            n.pending.len().hash(state);
        }
    }
}

impl Default for Fs {
    fn default() -> Self {
        let root = Node {
            is_dir: true,
            data: Vec::new(),
            durable: Vec::new(),
            pending: Vec::new(),
        };
        let names = BTreeMap::from([(PathBuf::from("/"), 0)]);
        Fs {
            nodes: vec![root],
            durable_names: names.clone(),
            names,
            pending_names: Vec::new(),
        }
    }
}

/// What `stat` says.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stat {
    pub(crate) is_dir: bool,
    pub(crate) len: u64,
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("No such file or directory (os error 2): {}", path.display()),
    )
}

fn is_dir_error(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::IsADirectory,
        format!("Is a directory (os error 21): {}", path.display()),
    )
}

impl Fs {
    pub(crate) fn lookup(&self, path: &Path) -> io::Result<Inode> {
        self.names.get(path).copied().ok_or_else(|| not_found(path))
    }

    pub(crate) fn stat(&self, inode: Inode) -> Stat {
        let n = &self.nodes[inode];
        Stat {
            is_dir: n.is_dir,
            len: n.data.len() as u64,
        }
    }

    /// The parent directory must exist.
    fn parent_exists(&self, path: &Path) -> io::Result<()> {
        let parent = path.parent().unwrap_or(Path::new("/"));
        match self.names.get(parent) {
            Some(&i) if self.nodes[i].is_dir => Ok(()),
            Some(_) => Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("Not a directory (os error 20): {}", parent.display()),
            )),
            None => Err(not_found(parent)),
        }
    }

    fn link(&mut self, path: &Path, inode: Inode) {
        self.names.insert(path.to_path_buf(), inode);
        self.pending_names.push(NameOp::Link {
            path: path.to_path_buf(),
            inode,
        });
    }

    fn unlink(&mut self, path: &Path) {
        self.names.remove(path);
        self.pending_names.push(NameOp::Unlink {
            path: path.to_path_buf(),
        });
    }

    /// Opens or creates a file (`create`: make it if missing; `create_new`: it must not
    /// exist; `truncate`: empty it).
    pub(crate) fn open(
        &mut self,
        path: &Path,
        create: bool,
        create_new: bool,
        truncate: bool,
    ) -> io::Result<Inode> {
        match self.names.get(path).copied() {
            Some(_) if create_new => Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("File exists (os error 17): {}", path.display()),
            )),
            Some(i) => {
                if truncate && !self.nodes[i].is_dir {
                    self.set_len(i, 0);
                }
                Ok(i)
            }
            None if create || create_new => {
                self.parent_exists(path)?;
                self.nodes.push(Node {
                    is_dir: false,
                    data: Vec::new(),
                    durable: Vec::new(),
                    pending: Vec::new(),
                });
                let inode = self.nodes.len() - 1;
                self.link(path, inode);
                Ok(inode)
            }
            None => Err(not_found(path)),
        }
    }

    pub(crate) fn read_at(&self, inode: Inode, offset: u64, buf: &mut [u8]) -> usize {
        let data = &self.nodes[inode].data;
        let start = (offset as usize).min(data.len());
        let n = buf.len().min(data.len() - start);
        buf[..n].copy_from_slice(&data[start..start + n]);
        n
    }

    pub(crate) fn contents(&self, inode: Inode, path: &Path) -> io::Result<Vec<u8>> {
        match self.nodes[inode].is_dir {
            true => Err(is_dir_error(path)),
            false => Ok(self.nodes[inode].data.clone()),
        }
    }

    pub(crate) fn write_at(&mut self, inode: Inode, offset: u64, bytes: &[u8]) {
        let node = &mut self.nodes[inode];
        apply(
            &mut node.data,
            &DataOp::Write {
                offset,
                bytes: bytes.to_vec(),
            },
        );
        node.pending.push(DataOp::Write {
            offset,
            bytes: bytes.to_vec(),
        });
    }

    pub(crate) fn set_len(&mut self, inode: Inode, len: u64) {
        let node = &mut self.nodes[inode];
        apply(&mut node.data, &DataOp::SetLen(len));
        node.pending.push(DataOp::SetLen(len));
    }

    /// `sync_all`: the file's bytes are durable; for a directory, its entries.
    pub(crate) fn sync(&mut self, inode: Inode) {
        let node = &mut self.nodes[inode];
        node.durable = node.data.clone();
        node.pending.clear();
        if !node.is_dir {
            return;
        }
        let dirs: Vec<&PathBuf> = self
            .names
            .iter()
            .filter(|(_, &i)| i == inode)
            .map(|(p, _)| p)
            .collect();
        let (synced, kept): (Vec<NameOp>, Vec<NameOp>) = std::mem::take(&mut self.pending_names)
            .into_iter()
            .partition(|op| dirs.iter().any(|d| op.path().parent() == Some(d.as_path())));
        for op in &synced {
            apply_name(&mut self.durable_names, op);
        }
        self.pending_names = kept;
    }

    pub(crate) fn create_dir(&mut self, path: &Path) -> io::Result<()> {
        if self.names.contains_key(path) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("File exists (os error 17): {}", path.display()),
            ));
        }
        self.parent_exists(path)?;
        self.nodes.push(Node {
            is_dir: true,
            data: Vec::new(),
            durable: Vec::new(),
            pending: Vec::new(),
        });
        let inode = self.nodes.len() - 1;
        self.link(path, inode);
        Ok(())
    }

    pub(crate) fn remove_file(&mut self, path: &Path) -> io::Result<()> {
        let inode = self.lookup(path)?;
        if self.nodes[inode].is_dir {
            return Err(is_dir_error(path));
        }
        self.unlink(path);
        Ok(())
    }

    pub(crate) fn remove_dir(&mut self, path: &Path) -> io::Result<()> {
        let inode = self.lookup(path)?;
        if !self.nodes[inode].is_dir {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("Not a directory (os error 20): {}", path.display()),
            ));
        }
        if self.names.keys().any(|p| p.parent() == Some(path)) {
            return Err(io::Error::new(
                io::ErrorKind::DirectoryNotEmpty,
                format!("Directory not empty (os error 39): {}", path.display()),
            ));
        }
        self.unlink(path);
        Ok(())
    }

    /// Removes a directory and everything under it.
    pub(crate) fn remove_dir_all(&mut self, path: &Path) -> io::Result<()> {
        let inode = self.lookup(path)?;
        if !self.nodes[inode].is_dir {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("Not a directory (os error 20): {}", path.display()),
            ));
        }
        if path == Path::new("/") {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "braid does not remove a host's root",
            ));
        }
        // Deepest first, so a directory is empty when it goes.
        let mut under: Vec<PathBuf> = self
            .names
            .keys()
            .filter(|p| p.starts_with(path))
            .cloned()
            .collect();
        under.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
        for p in under {
            self.unlink(&p);
        }
        Ok(())
    }

    /// Renames a file (replacing what `to` named), as `rename(2)`.
    pub(crate) fn rename(&mut self, from: &Path, to: &Path) -> io::Result<()> {
        let inode = self.lookup(from)?;
        self.parent_exists(to)?;
        if self.nodes[inode].is_dir {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "braid's file system renames files only, not directories: {}",
                    from.display()
                ),
            ));
        }
        if let Some(&old) = self.names.get(to) {
            if self.nodes[old].is_dir {
                return Err(is_dir_error(to));
            }
        }
        self.unlink(from);
        self.link(to, inode);
        Ok(())
    }

    /// The entries of a directory, in name order.
    pub(crate) fn list(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        let inode = self.lookup(dir)?;
        if !self.nodes[inode].is_dir {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("Not a directory (os error 20): {}", dir.display()),
            ));
        }
        Ok(self
            .names
            .keys()
            .filter(|p| p.parent() == Some(dir) && p.as_path() != Path::new("/"))
            .cloned()
            .collect())
    }

    /// A file put there durably before the run's tasks use it (a test seeding a host's disk):
    /// its directories are made as needed, and everything is synced.
    pub(crate) fn seed(&mut self, path: &Path, contents: &[u8]) -> io::Result<()> {
        let mut at = PathBuf::from("/");
        for part in path.parent().unwrap_or(Path::new("/")).iter().skip(1) {
            at.push(part);
            if self.lookup(&at).is_err() {
                self.create_dir(&at)?;
            }
        }
        let inode = self.open(path, true, false, true)?;
        if self.nodes[inode].is_dir {
            return Err(is_dir_error(path));
        }
        self.write_at(inode, 0, contents);
        let node = &mut self.nodes[inode];
        node.durable = node.data.clone();
        node.pending.clear();
        for op in std::mem::take(&mut self.pending_names) {
            apply_name(&mut self.durable_names, &op);
        }
        Ok(())
    }

    /// The host crashed: the strategy decides what became of each change not yet durable;
    /// then the host sees only what is durable.
    fn crash(&mut self, disk: &str) {
        let mut paths: BTreeMap<Inode, String> = BTreeMap::new();
        for (p, &i) in &self.names {
            paths.entry(i).or_insert_with(|| p.display().to_string());
        }
        for (inode, node) in self.nodes.iter_mut().enumerate() {
            let file = paths
                .get(&inode)
                .cloned()
                .unwrap_or_else(|| format!("removed file #{inode}"));
            for op in std::mem::take(&mut node.pending) {
                if let Some(kept) = data_fate(disk, &file, op) {
                    apply(&mut node.durable, &kept);
                }
            }
            node.data = node.durable.clone();
        }
        for op in std::mem::take(&mut self.pending_names) {
            let what = match &op {
                NameOp::Link { path, .. } => format!("entry {}", path.display()),
                NameOp::Unlink { path } => format!("removal of {}", path.display()),
            };
            match sim::fault::draw(2, || format!("{disk}: the unsynced {what}: 0 kept, 1 lost")) {
                1 => sim::fault::note(|| format!("{disk}: the unsynced {what} is lost")),
                _ => {
                    sim::fault::note(|| format!("{disk}: the unsynced {what} is kept"));
                    apply_name(&mut self.durable_names, &op);
                }
            }
        }
        // A name whose directory is gone is gone too.
        let durable = self.durable_names.clone();
        self.durable_names
            .retain(|p, _| p.parent().is_none_or(|d| durable.contains_key(d)));
        self.names = self.durable_names.clone();
    }
}

/// What a crash left of one unsynced change to `file`, as the strategy draws it: kept whole
/// (0, the weakest outcome, what the shrinker weakens to), lost (1, `None`), or for a write of
/// more than one byte, torn (2: its first half kept).
fn data_fate(disk: &str, file: &str, op: DataOp) -> Option<DataOp> {
    let what = match &op {
        DataOp::Write { offset, bytes } => {
            format!("write of {} bytes at {offset} to {file}", bytes.len())
        }
        DataOp::SetLen(len) => format!("set_len({len}) of {file}"),
    };
    let fate = match &op {
        DataOp::Write { bytes, .. } if bytes.len() > 1 => sim::fault::draw(3, || {
            format!("{disk}: the unsynced {what}: 0 kept, 1 lost, 2 torn")
        }),
        _ => sim::fault::draw(2, || format!("{disk}: the unsynced {what}: 0 kept, 1 lost")),
    };
    match (fate, op) {
        (1, _) => {
            sim::fault::note(|| format!("{disk}: the unsynced {what} is lost"));
            None
        }
        (2, DataOp::Write { offset, mut bytes }) => {
            bytes.truncate(bytes.len() / 2);
            let kept = bytes.len();
            sim::fault::note(|| format!("{disk}: the unsynced {what} is torn: {kept} bytes kept"));
            Some(DataOp::Write { offset, bytes })
        }
        (_, op) => {
            sim::fault::note(|| format!("{disk}: the unsynced {what} is kept"));
            Some(op)
        }
    }
}

fn apply(data: &mut Vec<u8>, op: &DataOp) {
    match op {
        DataOp::Write { offset, bytes } => {
            let start = *offset as usize;
            if data.len() < start + bytes.len() {
                data.resize(start + bytes.len(), 0);
            }
            data[start..start + bytes.len()].copy_from_slice(bytes);
        }
        DataOp::SetLen(len) => data.resize(*len as usize, 0),
    }
}

fn apply_name(names: &mut BTreeMap<PathBuf, Inode>, op: &NameOp) {
    match op {
        NameOp::Link { path, inode } => {
            names.insert(path.clone(), *inode);
        }
        NameOp::Unlink { path } => {
            names.remove(path);
        }
    }
}

/// A host's disk: its file system behind one engine object, so each operation is a step on it.
pub(crate) struct Disk {
    pub(crate) fs: Shared<Fs>,
}

/// The run's disks, one per host, made on first use.
#[derive(Default)]
pub(crate) struct Disks {
    by_host: std::cell::RefCell<BTreeMap<String, Arc<Disk>>>,
}

/// The running task's host's disk.
pub(crate) fn disk() -> Arc<Disk> {
    disk_of(&hosts::current())
}

/// A host's disk (made, empty, on first use; its crash hook registered with the first disk).
pub(crate) fn disk_of(host: &str) -> Arc<Disk> {
    let disks: Rc<Disks> = sim::fault::run_local::<Disks>();
    let mut by_host = disks.by_host.borrow_mut();
    if by_host.is_empty() {
        // Every file call is a step on its host's disk, one object (see `network()` for how
        // this is checked).
        sim::node::on_crash(|host| {
            let disks = sim::fault::run_local::<Disks>();
            let disk = disks.by_host.borrow().get(host).cloned();
            if let Some(disk) = disk {
                let name = format!("disk({host})");
                disk.fs.with_mut(|fs| fs.crash(&name));
            }
        });
    }
    by_host
        .entry(host.to_string())
        .or_insert_with(|| {
            Arc::new(Disk {
                fs: Shared::new(format!("disk({host})"), Fs::default()),
            })
        })
        .clone()
}

/// `path` on the host's disk: relative paths from its root; `..` may not leave the root.
pub(crate) fn resolve(path: &Path) -> io::Result<PathBuf> {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::RootDir | Component::CurDir => {}
            Component::Normal(part) => out.push(part),
            Component::ParentDir => {
                if !out.pop() {
                    return Err(outside(path));
                }
            }
            Component::Prefix(_) => return Err(outside(path)),
        }
    }
    Ok(out)
}

fn outside(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is outside the host's file system (braid gives each host its own, rooted at /)",
            path.display()
        ),
    )
}
