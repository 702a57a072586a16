//! The CLI's errors, and its one mapping of the core's error categories to exit codes (the
//! service's, to HTTP statuses, is `polyflake_service::http_status`).

use std::fmt;

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
            CliError::Core(e) if e.kind().is_configuration() => 2,
            CliError::Core(_) => 1,
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
