//! The settings of a fixed node id's restart guard: [`RestartGuard`] (whether a mark is kept),
//! [`RestartGuardOptions`] (where, how far ahead, how long a call waits for it), and the
//! environment variables that set them in every language.

use crate::error::{Error, Result};
use std::path::PathBuf;

/// The environment variable that sets [`RestartGuardOptions::mode`] where the program does not:
/// `auto`, `required` or `off`.
pub const RESTART_GUARD_ENV: &str = "POLYFLAKE_RESTART_GUARD";
/// The environment variable that names the state directory of the restart guard (default: the
/// lease directory, [`crate::default_lease_dir`]).
pub const STATE_DIR_ENV: &str = "POLYFLAKE_STATE_DIR";
/// The default longest wait of a call for a fixed node id's restart guard, in ms: two reserves.
/// A successor of a crashed holder on an honest clock waits at most one reserve; the second
/// absorbs a clock stepped back by up to as much again. Past it, the call is refused with
/// [`Error::LeaseNotReady`] (and [`crate::Generator::wait_ready`] waits as long as asked).
pub const DEFAULT_MAX_RESTART_WAIT_MS: u64 = 10_000;

/// Whether a fixed node id (static, environment, hostname, IPv4) keeps a mark on the host, so
/// that its next holder on this host starts above everything it could have issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RestartGuard {
    /// Keep a mark where the state directory allows it; where it does not (a read-only
    /// container, another user's directory), issue without one, say so once on stderr and in
    /// health (`restart_guard_note`).
    #[default]
    Auto,
    /// Keep a mark or refuse to build ([`Error::LeaseStore`], naming the directory and the
    /// fixes).
    Required,
    /// Keep no mark: a successor after a clock stepped back can repeat IDs. For hosts where
    /// the node id never outlives a process (a fresh id per start from an orchestrator).
    Off,
}

impl RestartGuard {
    /// `"auto"`, `"required"` or `"off"`.
    pub const fn name(self) -> &'static str {
        match self {
            RestartGuard::Auto => "auto",
            RestartGuard::Required => "required",
            RestartGuard::Off => "off",
        }
    }

    /// Every value, in a fixed order.
    pub const ALL: [RestartGuard; 3] = [
        RestartGuard::Auto,
        RestartGuard::Required,
        RestartGuard::Off,
    ];

    /// The value named `name` (what bindings and [`RESTART_GUARD_ENV`] take).
    ///
    /// ```
    /// use polyflake::RestartGuard;
    /// assert_eq!(RestartGuard::from_name("required").unwrap(), RestartGuard::Required);
    /// assert!(RestartGuard::from_name("yes").unwrap_err().to_string().contains("\"yes\""));
    /// ```
    pub fn from_name(name: &str) -> Result<RestartGuard> {
        RestartGuard::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| Error::InvalidArgument {
                name: "restart_guard",
                reason: format!(
                    "{name:?} is not a restart guard: use \"auto\", \"required\" or \"off\""
                ),
            })
    }
}

/// A fixed node id's restart guard: a mark per node id, layout and scope in a state directory,
/// kept one reserve ahead of use and durable before use, as a lease keeps its R.
///
/// ```
/// use polyflake::{RestartGuard, RestartGuardOptions, DEFAULT_MAX_RESTART_WAIT_MS, DEFAULT_RESERVE_MS};
/// let o = RestartGuardOptions::default();
/// assert_eq!((o.mode, o.state_dir, o.reserve_ms), (None, None, DEFAULT_RESERVE_MS));
/// assert_eq!(o.max_wait_ms, DEFAULT_MAX_RESTART_WAIT_MS);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestartGuardOptions {
    /// Keep a mark or not (default `None`: [`RESTART_GUARD_ENV`] when set, else
    /// [`RestartGuard::Auto`]).
    pub mode: Option<RestartGuard>,
    /// The state directory (default `None`: [`STATE_DIR_ENV`] when set, else the lease
    /// directory). Under the lease directory's rules: nothing there is followed, and only this
    /// user's own files are written or trusted.
    pub state_dir: Option<PathBuf>,
    /// How far ahead of the clock the mark is kept, in ms (default
    /// [`crate::DEFAULT_RESERVE_MS`], 5,000): the longest a successor of a crashed holder waits.
    pub reserve_ms: u64,
    /// How long a call waits for the guard before it is refused, in ms (default
    /// [`DEFAULT_MAX_RESTART_WAIT_MS`]).
    pub max_wait_ms: u64,
}

impl Default for RestartGuardOptions {
    fn default() -> Self {
        RestartGuardOptions {
            mode: None,
            state_dir: None,
            reserve_ms: crate::lease::DEFAULT_RESERVE_MS,
            max_wait_ms: DEFAULT_MAX_RESTART_WAIT_MS,
        }
    }
}

/// The options resolved: the mode and directory from the environment where left unset.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    pub mode: RestartGuard,
    pub dir: PathBuf,
    pub reserve_ms: i64,
    pub max_wait_ms: u64,
}

impl RestartGuardOptions {
    /// Check the ranges and fill in what the environment says.
    pub(crate) fn resolve(&self) -> Result<Resolved> {
        let mode = match self.mode {
            Some(m) => m,
            None => match std::env::var_os(RESTART_GUARD_ENV) {
                None => RestartGuard::Auto,
                Some(v) if v.is_empty() => RestartGuard::Auto,
                Some(v) => match v.to_str() {
                    Some(s) => RestartGuard::from_name(s).map_err(|_| Error::InvalidArgument {
                        name: RESTART_GUARD_ENV,
                        reason: format!(
                            "{s:?} is not a restart guard: use \"auto\", \"required\" or \"off\""
                        ),
                    })?,
                    None => {
                        return Err(Error::InvalidArgument {
                            name: RESTART_GUARD_ENV,
                            reason: format!("{v:?} is not valid UTF-8"),
                        })
                    }
                },
            },
        };
        if !(10..=86_400_000).contains(&self.reserve_ms) {
            return Err(Error::InvalidArgument {
                name: "restart_guard.reserve_ms",
                reason: format!("{} is out of range: 10 to 86400000", self.reserve_ms),
            });
        }
        if self.max_wait_ms > 86_400_000 {
            return Err(Error::InvalidArgument {
                name: "restart_guard.max_wait_ms",
                reason: format!("{} is out of range: 0 to 86400000", self.max_wait_ms),
            });
        }
        let dir = match &self.state_dir {
            Some(d) => d.clone(),
            None => match std::env::var_os(STATE_DIR_ENV).filter(|d| !d.is_empty()) {
                Some(d) => PathBuf::from(d),
                None => crate::lease::default_lease_dir(),
            },
        };
        Ok(Resolved {
            mode,
            dir,
            reserve_ms: self.reserve_ms as i64,
            max_wait_ms: self.max_wait_ms,
        })
    }
}
