//! The CLI's one mapping of the core's error categories: every kind's [`ErrorCategory`] lands in
//! a [`Class`], and the class decides the exit code (commands) and the HTTP status (the service).

use polyflake::{ErrorCategory, ErrorKind};
use std::fmt;

/// What a core error means to a caller of the CLI or the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// The caller asked for something invalid (bad layout, node id, node source, epoch, count, ID).
    BadInput,
    /// The generator cannot issue right now (clock behind or stuck, lead limit, clock failure,
    /// outside the window, restart guard, lease expired or lost, lease store down): retry later
    /// or elsewhere.
    Unavailable,
    /// The generator cannot be made or used in this process at all (node id taken, used after
    /// fork, every lease slot held).
    Conflict,
}

/// Place a core error kind: by the core's own category.
pub fn class(kind: ErrorKind) -> Class {
    match kind.category() {
        ErrorCategory::Configuration => Class::BadInput,
        ErrorCategory::Unavailable => Class::Unavailable,
        ErrorCategory::Conflict => Class::Conflict,
    }
}

impl Class {
    /// The HTTP status the service answers with.
    pub fn http_status(self) -> u16 {
        match self {
            Class::BadInput => 400,
            Class::Unavailable => 503,
            Class::Conflict => 500,
        }
    }

    /// The process exit code a command ends with.
    pub fn exit_code(self) -> u8 {
        match self {
            Class::BadInput => 2,
            Class::Unavailable | Class::Conflict => 1,
        }
    }
}

/// An error a command ends with: printed as one line on stderr.
#[derive(Debug)]
pub enum CliError {
    /// From the core, with its own message.
    Core(polyflake::Error),
    /// A usage mistake the argument parser cannot see (a missing node source, ...): exit 2.
    Usage(String),
    /// Anything else (I/O, binding a socket): exit 1.
    Runtime(String),
}

impl CliError {
    /// The exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Core(e) => class(e.kind()).exit_code(),
            CliError::Usage(_) => 2,
            CliError::Runtime(_) => 1,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Core(e) => write!(f, "{e} [{}]", e.code()),
            CliError::Usage(m) | CliError::Runtime(m) => f.write_str(m),
        }
    }
}

impl From<polyflake::Error> for CliError {
    fn from(e: polyflake::Error) -> Self {
        CliError::Core(e)
    }
}
