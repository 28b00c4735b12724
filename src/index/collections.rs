//! Collections: folders outside repos (a notes folder, an exported wiki, a folder of specs)
//! registered under a name, then indexed, watched and searched like a repo (each keeps its
//! own state, as a repo does). The names live in one small file of the state dir,
//! `collections.json`: changed under an exclusive lock and replaced whole, so a daemon and a
//! CLI changing it at once never lose each other's change, and a reader never sees half a file.

use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::protocol::{Collection, DocdexError, ErrorCode, Result};

const FILE: &str = "collections.json";
const LOCK: &str = "collections.lock";
const MAX_NAME_CHARS: usize = 64;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Registry {
    collections: Vec<Collection>,
}

impl Registry {
    /// `not_found` for `name`, listing the names there are.
    fn missing(&self, name: &str) -> DocdexError {
        let known: Vec<&str> = self.collections.iter().map(|c| c.name.as_str()).collect();
        DocdexError::new(ErrorCode::NotFound, format!("no collection `{name}`")).with_hint(if known.is_empty() {
            "add one with `docdexd collection add NAME PATH` (or POST /v1/collections)".to_string()
        } else {
            format!("collections: {}", known.join(", "))
        })
    }
}

/// The collections of one state dir.
#[derive(Debug, Clone)]
pub struct Collections {
    dir: PathBuf,
}

/// A name is a word of letters, digits, `-`, `_` and `.`, not starting with `.`: it goes in
/// URLs (`/v1/collections/NAME`) and on command lines as it is.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(DocdexError::invalid(format!(
            "`{name}` is not a collection name: 1-{MAX_NAME_CHARS} letters, digits, `-`, `_` or `.`, not starting with `.`"
        )))
    }
}

impl Collections {
    pub fn at(state_dir: &Path) -> Collections {
        Collections { dir: state_dir.to_path_buf() }
    }

    pub fn list(&self) -> Result<Vec<Collection>> {
        Ok(self.read()?.collections)
    }

    /// The folder of the collection `name`.
    pub fn path_of(&self, name: &str) -> Result<PathBuf> {
        let registry = self.read()?;
        match registry.collections.iter().find(|c| c.name == name) {
            Some(collection) => Ok(PathBuf::from(&collection.path)),
            None => Err(registry.missing(name)),
        }
    }

    /// Registers `path` (canonical, checked by the caller) as `name`. The same name for the
    /// same folder again is no change; a name or a folder taken otherwise is refused.
    pub fn add(&self, name: &str, path: &Path) -> Result<Collection> {
        check_name(name)?;
        let wanted = Collection { name: name.to_string(), path: path.display().to_string() };
        self.change(|registry| {
            if let Some(same) = registry.collections.iter().find(|c| c.name == name || c.path == wanted.path) {
                if *same == wanted {
                    return Ok(());
                }
                return Err(DocdexError::new(
                    ErrorCode::Conflict,
                    format!("collection `{}` is the folder {}", same.name, same.path),
                )
                .with_hint("remove it first (`docdexd collection remove NAME`), or choose another name"));
            }
            registry.collections.push(wanted.clone());
            registry.collections.sort_by(|a, b| a.name.cmp(&b.name));
            Ok(())
        })?;
        Ok(wanted)
    }

    /// Unregisters `name`; its folder is left as it is.
    pub fn remove(&self, name: &str) -> Result<Collection> {
        let mut removed = None;
        self.change(|registry| {
            let at = registry.collections.iter().position(|c| c.name == name).ok_or_else(|| registry.missing(name))?;
            removed = Some(registry.collections.remove(at));
            Ok(())
        })?;
        removed.ok_or_else(|| DocdexError::internal("a removed collection went missing"))
    }

    fn read(&self) -> Result<Registry> {
        match std::fs::read_to_string(self.dir.join(FILE)) {
            Ok(text) => serde_json::from_str(&text).map_err(|err| {
                DocdexError::internal(format!("{} is unreadable: {err}", self.dir.join(FILE).display()))
                    .with_hint("fix or delete it, then add the collections again")
            }),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Registry::default()),
            Err(err) => Err(err.into()),
        }
    }

    /// Read, change and replace the registry under the lock.
    fn change(&self, edit: impl FnOnce(&mut Registry) -> Result<()>) -> Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let lock = std::fs::OpenOptions::new().write(true).create(true).truncate(false).open(self.dir.join(LOCK))?;
        // SAFETY: flock on an open descriptor; released when `lock` is closed.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(std::io::Error::last_os_error().into());
        }
        let mut registry = self.read()?;
        edit(&mut registry)?;
        let mut temp = tempfile::NamedTempFile::new_in(&self.dir)?;
        temp.write_all(serde_json::to_string_pretty(&registry)?.as_bytes())?;
        temp.as_file().sync_all()?;
        temp.persist(self.dir.join(FILE)).map_err(|err| DocdexError::from(err.error))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_added_listed_refused_when_taken_and_removed_by_two_processes_alike() {
        let state = tempfile::tempdir().unwrap();
        let (one, other) = (Collections::at(state.path()), Collections::at(state.path()));
        one.add("notes", Path::new("/srv/notes")).unwrap();
        other.add("specs", Path::new("/srv/specs")).unwrap();
        // Again, the same: no change. Either taken otherwise: refused.
        one.add("notes", Path::new("/srv/notes")).unwrap();
        assert_eq!(one.add("notes", Path::new("/srv/other")).unwrap_err().code, ErrorCode::Conflict);
        assert_eq!(one.add("again", Path::new("/srv/specs")).unwrap_err().code, ErrorCode::Conflict);
        let names: Vec<String> = other.list().unwrap().into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["notes", "specs"]);
        assert_eq!(one.path_of("specs").unwrap(), Path::new("/srv/specs"));
        let missing = one.path_of("wiki").unwrap_err();
        assert_eq!(missing.code, ErrorCode::NotFound);
        assert!(missing.hint.unwrap().contains("notes, specs"));
        for bad in ["", ".hidden", "a/b", "sp ace", &"x".repeat(65)] {
            assert!(one.add(bad, Path::new("/srv/x")).is_err(), "{bad:?}");
        }
        assert_eq!(other.remove("notes").unwrap().path, "/srv/notes");
        assert_eq!(one.remove("notes").unwrap_err().code, ErrorCode::NotFound);
        assert_eq!(one.list().unwrap().len(), 1);
    }

    #[test]
    fn concurrent_adds_from_many_threads_all_land() {
        let state = tempfile::tempdir().unwrap();
        std::thread::scope(|scope| {
            for i in 0..16 {
                let collections = Collections::at(state.path());
                scope.spawn(move || collections.add(&format!("c{i}"), Path::new(&format!("/srv/{i}"))).unwrap());
            }
        });
        assert_eq!(Collections::at(state.path()).list().unwrap().len(), 16);
    }
}
