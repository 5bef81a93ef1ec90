//! Writing an output file atomically and only where braid may: a regular file or a new path.
//!
//! The bytes go to a temporary file in the target's directory (`.braid-<pid>-<random>.tmp`),
//! which is then renamed over the target: a reader never sees half a file, a failed write
//! removes its temporary file, and a device node, directory, fifo or symlink at the path is
//! never replaced. Temporary files of braid's naming that a killed run left behind are removed
//! by the next write to the same directory.

use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// The prefix and suffix of braid's temporary files.
const TEMP_PREFIX: &str = ".braid-";
const TEMP_SUFFIX: &str = ".tmp";

/// A temporary file this old is stale even when its process id is in use (a reused id, or a
/// system without `/proc`).
const STALE_AFTER: Duration = Duration::from_secs(3600);

/// Refuses `path` unless it is a new path or a regular file, and its directory, if it exists,
/// is a directory.
pub fn check_target(path: &Path) -> std::io::Result<()> {
    let refuse = |what: &str| {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "{} is {what}: braid writes only to a regular file or a new path",
                path.display()
            ),
        ))
    };
    if path.file_name().is_none() {
        return refuse("not a file name");
    }
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(m) if m.file_type().is_file() => Ok(()),
        Ok(m) if m.is_dir() => refuse("a directory"),
        Ok(m) if m.file_type().is_symlink() => refuse("a symbolic link"),
        Ok(_) => refuse("not a regular file"),
    }
}

/// Writes `bytes` to `path` atomically, creating its directory if needed (see the module).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    check_target(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    remove_stale_temp_files(dir);
    let prefix = format!("{TEMP_PREFIX}{}-", std::process::id());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(TEMP_SUFFIX);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        // As a plain `File::create` would make it (before the umask), not tempfile's 0600.
        builder.permissions(std::fs::Permissions::from_mode(0o644));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    // Checked again just before the rename: something may have appeared at the path meanwhile.
    check_target(path)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Removes the temporary files of braid's naming in `dir` whose process is gone (or that are
/// older than `STALE_AFTER`). Best effort: a file it cannot judge or remove is left.
pub fn remove_stale_temp_files(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(temp_file_pid) else {
            continue;
        };
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        let old = meta
            .modified()
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_some_and(|age| age >= STALE_AFTER);
        if meta.is_file() && (old || process_gone(pid)) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The process id in a temporary file name of braid's (`.braid-<pid>-<random>.tmp`).
fn temp_file_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(TEMP_PREFIX)?.strip_suffix(TEMP_SUFFIX)?;
    let (pid, random) = rest.split_once('-')?;
    if random.is_empty() || !random.chars().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    pid.parse().ok()
}

/// Whether process `pid` is known to have exited (only where `/proc` says so).
fn process_gone(pid: u32) -> bool {
    pid != std::process::id()
        && Path::new("/proc/self").exists()
        && !Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_braids_own_naming_is_a_temp_file() {
        assert_eq!(temp_file_pid(".braid-123-aB9xYz.tmp"), Some(123));
        for name in [
            ".braid-123-.tmp",
            ".braid-x-abc.tmp",
            "braid-123-abc.tmp",
            ".braid-123-abc.json",
            ".delivery-order.json.123.tmp",
            ".braid-123-a/b.tmp",
        ] {
            assert_eq!(temp_file_pid(name), None, "{name}");
        }
    }
}
