//! The polyflake command line as a library: the `polyflake` binary (`main.rs`) parses arguments
//! and calls in here. The HTTP service itself is the `polyflake-service` crate (service/):
//! `serve` builds the generators from the flags and hands them to it.
//!
//! Every rule about IDs is the core's (`polyflake` crate); this crate parses arguments, calls the
//! core and prints.

#![deny(missing_docs)]

pub mod error;
pub mod options;
pub mod serve;
