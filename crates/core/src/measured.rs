//! Working-set measurements kept on disk beside the compiled circuits (issue 29 item 3).
//!
//! Until a circuit's first partition has been synthesized and measured, its partitions
//! reserve the shape's worst case (a porep-32g partition 6.8 GiB where it holds ~0.3 GiB), so
//! a restarted daemon on a small box refused work it could do. The estimate calibrated from
//! the first measured partition ([`WorkingSetEstimate::from_measured`]) is written here, one
//! small text file per circuit id (`<dir>/<circuit_id>.working-set`, `<dir>` the planner's
//! [`crate::Planner::measurement_dir`]: the Filecoin planner's compiled-circuit cache), and a
//! later start reserves that for its first partitions; that start's own first measurement
//! replaces it.
//!
//! A measurement holds for the binary and the provers that made it: the file carries a key of
//! both (the executable's length and modification time, the backends' names), and a file
//! whose key differs, or that does not parse, is ignored with one log line (measured again,
//! then rewritten). Files are written whole or not at all (`cuzk_groth16::atomic`); a
//! directory that cannot be written costs a log line, never a proof.
use crate::estimate::{KeptEstimates, WorkingSetEstimate};
use crate::planner::Planner;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The first line of every file: its format.
const HEADER: &str = "cuzk working-set measurement v1";

/// Where a circuit's measurement goes (`None`: nowhere).
type DirOf = Box<dyn Fn(&str) -> Option<PathBuf> + Send + Sync>;

/// Where measurements are kept, and the key they must carry.
pub(crate) struct MeasurementStore {
    dir: DirOf,
    key: String,
}

impl std::fmt::Debug for MeasurementStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MeasurementStore")
            .field("key", &self.key)
            .finish()
    }
}

impl MeasurementStore {
    /// Measurements where `planner` keeps its circuits' ([`Planner::measurement_dir`]), for
    /// this executable proving on `backends`.
    pub(crate) fn new(planner: Arc<dyn Planner>, backends: &[String]) -> MeasurementStore {
        let exe = std::env::current_exe()
            .and_then(std::fs::metadata)
            .map(|m| {
                let mtime = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                format!("{}-{mtime}", m.len())
            })
            .unwrap_or_else(|_| "unknown".into());
        MeasurementStore::with_key(
            move |id| planner.measurement_dir(id),
            format!(
                "cuzk {} binary {exe} backends {}",
                env!("CARGO_PKG_VERSION"),
                backends.join(",")
            ),
        )
    }

    /// Measurements in `dir(circuit_id)` that must carry `key`.
    pub(crate) fn with_key(
        dir: impl Fn(&str) -> Option<PathBuf> + Send + Sync + 'static,
        key: String,
    ) -> MeasurementStore {
        // One line: the key is written and compared as a line.
        let key = key.replace(['\n', '\r'], " ");
        MeasurementStore {
            dir: Box::new(dir),
            key,
        }
    }

    fn path(&self, circuit_id: &str) -> Option<PathBuf> {
        Some((self.dir)(circuit_id)?.join(format!("{circuit_id}.working-set")))
    }
}

impl KeptEstimates for MeasurementStore {
    /// The measurement of `circuit_id` an earlier run kept, if one is there and usable.
    fn load(&self, circuit_id: &str) -> Option<WorkingSetEstimate> {
        let path = self.path(circuit_id)?;
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                tracing::info!(path = %path.display(), error = %e, "working-set measurement unreadable; measuring again");
                return None;
            }
        };
        match parse(&text, &self.key, circuit_id) {
            Ok(e) => {
                tracing::info!(
                    circuit = circuit_id,
                    reserved = e.admission_bytes(),
                    "first partitions reserve the working set measured by an earlier run"
                );
                Some(e)
            }
            Err(why) => {
                tracing::info!(path = %path.display(), why, "working-set measurement not used; measuring again");
                None
            }
        }
    }

    /// Keeps `e` as `circuit_id`'s measurement.
    fn save(&self, circuit_id: &str, e: &WorkingSetEstimate) {
        let Some(path) = self.path(circuit_id) else {
            return;
        };
        let text = render(e, &self.key, circuit_id);
        let dir = path.parent().unwrap_or(Path::new("."));
        let written = std::fs::create_dir_all(dir).and_then(|()| {
            cuzk_groth16::atomic::write_atomic(&path, 4096, |w| {
                std::io::Write::write_all(w, text.as_bytes())
            })
        });
        if let Err(e) = written {
            tracing::warn!(path = %path.display(), error = %e, "could not keep the working-set measurement; the next start measures again");
        }
    }
}

/// The fields, in file order.
const FIELDS: [&str; 5] = [
    "synthesis_peak",
    "proving",
    "after_start",
    "after_finish",
    "measured",
];

fn values(e: &WorkingSetEstimate) -> [u64; 5] {
    [
        e.synthesis_peak,
        e.proving,
        e.after_start,
        e.after_finish,
        e.measured,
    ]
}

fn render(e: &WorkingSetEstimate, key: &str, circuit_id: &str) -> String {
    let mut s = format!("{HEADER}\nkey {key}\ncircuit {circuit_id}\n");
    for (name, v) in FIELDS.iter().zip(values(e)) {
        let _ = writeln!(s, "{name} {v}");
    }
    s
}

fn parse(text: &str, key: &str, circuit_id: &str) -> Result<WorkingSetEstimate, String> {
    let mut lines = text.lines();
    if lines.next() != Some(HEADER) {
        return Err("not a working-set measurement of this format".into());
    }
    match lines.next().and_then(|l| l.strip_prefix("key ")) {
        Some(k) if k == key => {}
        Some(k) => return Err(format!("made by another binary or provers ({k})")),
        None => return Err("no key".into()),
    }
    if lines.next().and_then(|l| l.strip_prefix("circuit ")) != Some(circuit_id) {
        return Err("of another circuit".into());
    }
    let mut v = [0u64; 5];
    for (slot, name) in v.iter_mut().zip(FIELDS) {
        let line = lines.next().ok_or_else(|| format!("no {name}"))?;
        *slot = line
            .strip_prefix(name)
            .and_then(|r| r.strip_prefix(' '))
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("a damaged {name} line"))?;
    }
    if lines.next().is_some() {
        return Err("trailing lines".into());
    }
    let [synthesis_peak, proving, after_start, after_finish, measured] = v;
    if measured == 0 || proving < measured {
        return Err("figures that no measurement gives".into());
    }
    Ok(WorkingSetEstimate {
        synthesis_peak,
        proving,
        after_start,
        after_finish,
        calibrated: true,
        measured,
    })
}

/// The directory measurements go to beside a compiled-circuit cache at `compiled_cache`.
pub(crate) fn dir_beside(compiled_cache: &Path) -> PathBuf {
    compiled_cache.join("working-set")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> WorkingSetEstimate {
        WorkingSetEstimate {
            synthesis_peak: 300 << 20,
            proving: 320 << 20,
            after_start: 100 << 20,
            after_finish: 192,
            calibrated: true,
            measured: 290 << 20,
        }
    }

    #[test]
    fn a_kept_measurement_is_read_back_by_the_same_key_only() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        let store = MeasurementStore::with_key(move |_| Some(d.clone()), "k1".into());
        assert_eq!(store.load("porep-32g"), None);
        store.save("porep-32g", &sample());
        assert_eq!(store.load("porep-32g"), Some(sample()));
        assert_eq!(store.load("snap-32g"), None);
        let d = dir.path().to_path_buf();
        let other = MeasurementStore::with_key(move |_| Some(d.clone()), "k2".into());
        assert_eq!(
            other.load("porep-32g"),
            None,
            "another binary's measurement"
        );
    }

    #[test]
    fn a_damaged_or_truncated_measurement_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        let store = MeasurementStore::with_key(move |_| Some(d.clone()), "k".into());
        store.save("porep-32g", &sample());
        let path = store.path("porep-32g").unwrap();
        let good = std::fs::read_to_string(&path).unwrap();
        let cut = &good[..good.len() - 12];
        let zeroed = good.replace(&format!("measured {}", 290u64 << 20), "measured 0");
        let garbled = good.replace("proving ", "proving x");
        for bad in [cut, &zeroed, &garbled, "", "junk\n"] {
            std::fs::write(&path, bad).unwrap();
            assert_eq!(store.load("porep-32g"), None, "{bad:?}");
        }
        // The circuit line guards against a file copied under another name.
        std::fs::write(store.path("snap-32g").unwrap(), &good).unwrap();
        assert_eq!(store.load("snap-32g"), None);
    }

    #[test]
    fn a_directory_that_cannot_be_written_costs_nothing_but_the_measurement() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-dir");
        std::fs::write(&file, b"x").unwrap();
        let under_a_file = file.join("sub");
        let store = MeasurementStore::with_key(move |_| Some(under_a_file.clone()), "k".into());
        store.save("porep-32g", &sample());
        assert_eq!(store.load("porep-32g"), None);
    }
}
