//! See the crate description in Cargo.toml and docs/ARCHITECTURE.md.
