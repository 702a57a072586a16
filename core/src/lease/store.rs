//! What every lease store shares, file or remote: the error naming the store, and the slot
//! number a file name or a key ends in.

use super::record;
use crate::error::Error;
use std::path::{Path, PathBuf};

/// Where a store error happened: a lease directory, or a remote store (by its name, such as
/// `etcd http://... prefix /polyflake`).
pub(crate) enum Place<'a> {
    Dir(&'a Path),
    Store(&'a str),
}

impl<'a> From<&'a Path> for Place<'a> {
    fn from(dir: &'a Path) -> Self {
        Place::Dir(dir)
    }
}

impl<'a> From<&'a PathBuf> for Place<'a> {
    fn from(dir: &'a PathBuf) -> Self {
        Place::Dir(dir)
    }
}

impl<'a> From<&'a str> for Place<'a> {
    fn from(store: &'a str) -> Self {
        Place::Store(store)
    }
}

impl<'a> From<&'a String> for Place<'a> {
    fn from(store: &'a String) -> Self {
        Place::Store(store)
    }
}

/// A store error naming the store: `{what} in lease directory {dir}: {e}`, or
/// `{what} ({store}): {e}`.
pub(crate) fn store_error<'a>(
    at: impl Into<Place<'a>>,
    what: &str,
    e: impl std::fmt::Display,
) -> Error {
    let reason = match at.into() {
        Place::Dir(dir) => format!("{what} in lease directory {}: {e}", dir.display()),
        Place::Store(store) => format!("{what} ({store}): {e}"),
    };
    Error::LeaseStore { reason }
}

/// The slot number a name ends in, spelled as a holder spells it: after its last `/`, a `stem`
/// then the number (`slot_number("slot-0007", "slot-")`, `slot_number(".../slot/0007", "")`).
pub(crate) fn slot_number(name: &str, stem: &str) -> Option<u32> {
    record::parse_slot_name(name.rsplit('/').next()?.strip_prefix(stem)?)
}
