//! The service's errors, and its one mapping of the core's error categories to HTTP statuses
//! (the CLI maps the same categories to exit codes).

use axum::http::StatusCode;
use polyflake::{ErrorCategory, ErrorKind};
use std::fmt;

/// The HTTP status the service answers a core error with: 400 for a bad request
/// (configuration), 503 while the generator cannot issue (retry later or elsewhere), 500 when it
/// cannot be made or used in this process at all (conflict).
pub fn http_status(kind: ErrorKind) -> StatusCode {
    match kind.category() {
        ErrorCategory::Configuration => StatusCode::BAD_REQUEST,
        ErrorCategory::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCategory::Conflict => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// Why the service did not start, or stopped with an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServiceError {
    /// A setting of [`Config`](crate::Config) is out of range (a usage mistake).
    Config(String),
    /// The process could not serve: the async runtime did not start, the address could not be
    /// bound.
    Io(String),
}

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServiceError::Config(m) | ServiceError::Io(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ServiceError {}
