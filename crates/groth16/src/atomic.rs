//! Files written whole or not at all: the parameter files, a streamed setup, a compiled
//! circuit. A writer fills `<name>.tmp.<pid>` beside the final name, syncs it and renames it
//! over; a reader never sees half a file, and the temporaries a killed writer leaves are
//! found by their pid ([`remove_orphaned_temporaries`]).
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The temporary file this process writes `path` through.
pub fn temp_path(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".tmp.{}", std::process::id()));
    path.with_file_name(name)
}

/// Writes `path` through its temporary file, buffered by `capacity` bytes: `fill` writes,
/// then the file is synced and renamed over `path`. A failure removes the temporary file.
pub fn write_atomic(
    path: &Path,
    capacity: usize,
    fill: impl FnOnce(&mut BufWriter<&File>) -> io::Result<()>,
) -> io::Result<()> {
    through_temp(path, |file| {
        let mut w = BufWriter::with_capacity(capacity, file);
        fill(&mut w)?;
        w.flush()
    })
}

/// Writes `path`, `len` bytes long, through its temporary file: `fill` writes where it will
/// (from any thread: `FileExt::write_all_at`), then the file is synced and renamed over
/// `path`. A failure removes the temporary file.
pub fn write_atomic_at(
    path: &Path,
    len: u64,
    fill: impl FnOnce(&File) -> io::Result<()>,
) -> io::Result<()> {
    through_temp(path, |file| {
        file.set_len(len)?;
        fill(file)
    })
}

/// `fill` writes the temporary file of `path`, which is then synced and renamed over `path`;
/// a failure removes it.
fn through_temp(path: &Path, fill: impl FnOnce(&File) -> io::Result<()>) -> io::Result<()> {
    let tmp = temp_path(path);
    let result = (|| {
        let file = File::create(&tmp)?;
        fill(&file)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Whether this process can create files in `dir` (made if missing): a probe file is
/// created and removed.
pub fn dir_is_writable(dir: &Path) -> bool {
    let probe = dir.join(format!(".cuzk-probe.{}", std::process::id()));
    let ok = std::fs::create_dir_all(dir).is_ok() && File::create(&probe).is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}

/// Removes the temporary files that writers of `path` left when they were killed mid-write
/// (`<name>.tmp.<pid>` whose process is gone: no `/proc/<pid>`), so a `kill -9` during a
/// write costs no disk. A running writer's file is left alone. Returns how many went; a
/// directory that cannot be read or written removes none.
pub fn remove_orphaned_temporaries(path: &Path) -> usize {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return 0;
    };
    let prefix = format!("{}.tmp.", name.to_string_lossy());
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(pid) = file
            .to_str()
            .and_then(|f| f.strip_prefix(&prefix))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let alive = pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists();
        if !alive && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}
