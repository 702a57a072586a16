//! The Java binding of polyflake: the JNI functions behind `dev.polyflake.Native`.
//!
//! A translation of the core, like the Python and Node bindings: every default, range, rule and
//! message is the core's. What crosses the boundary is kept small and plain:
//! - options go in as one string of `key US value` pairs ([`wire::Options`]), typed by the Java
//!   builders and parsed here into the core's builders (the core checks every range);
//! - health snapshots and error fields come out as one string of tagged values
//!   ([`wire::encode_fields`]), which `dev.polyflake.Fields` reads back into a map;
//! - a core error becomes the Java class named after its kind (`ClockMovedBackwards` ->
//!   `dev.polyflake.ClockMovedBackwardsException`), thrown here, one mapping for every call
//!   ([`error::throw_core`]).
//!
//! No call sleeps in native code on the system clock: the Java side asks `try_next_id` first
//! and parks (`LockSupport.parkNanos`) while the core says the call would wait, so a virtual
//! thread unmounts; only after the generator's own wait budget has gone by parked does it hand
//! the call to the core's waiting `next_id`, whose deadline and refusal are the core's (a thread
//! already interrupted hands it over under the core's interrupt hook saying stop, so it never
//! sleeps there: see `snowflake::waiting`). A restart guard (a lease's, or a fixed node id's
//! mark) is parked for the same way. Handles
//! are boxed core objects passed as `long`; Java frees them once (`Cleaner`). No panic crosses
//! the boundary: every entry point runs inside `EnvUnowned::with_env`, which catches them.

#![deny(missing_docs)]

mod clock;
mod error;
mod snowflake;
mod timeid;
mod wire;

pub use wire::{encode_fields, Options, SEP};
