//! The polyflake command line and HTTP service as a library: the `polyflake` binary (`main.rs`)
//! parses arguments and calls in here, and the fuzz targets (`verify/fuzz/`) call the same request
//! parsing and the same router the running service uses.
//!
//! Every rule about IDs is the core's (`polyflake` crate); this crate parses arguments and
//! requests, calls the core and prints or answers.

#![deny(missing_docs)]

pub mod clock;
mod conns;
pub mod error;
pub mod guardwait;
mod metrics;
pub mod openapi;
pub mod options;
pub mod request;
pub mod serve;
pub mod timefmt;
pub mod timeid;
