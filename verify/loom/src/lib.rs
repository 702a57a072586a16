//! Nothing but a home for `tests/loom.rs`, the loom model of the core's compare-and-swap step:
//! `make loom` runs it with `RUSTFLAGS="--cfg loom"` (see the test file).
