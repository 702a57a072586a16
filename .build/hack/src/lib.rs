//! polyflake-hack: no code, only dependencies. Every workspace crate depends on it (the core as
//! a dev-dependency), asking for the union of the features the workspace uses, so that every
//! package selection (`cargo build -p ...`, maturin, napi build) compiles the dependency tree
//! once per profile. Kept by cargo-hakari (.config/hakari.toml); `tests/build/check_unified.py`
//! (in `make test`) fails when a selection drifts from the workspace's features.
