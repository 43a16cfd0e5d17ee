//! Layer 3, launching JVMs: JDK lookup, the jars pauselab ships, command lines and their
//! placeholders, preparation steps.

pub mod java;
mod jdk_lookup;
mod prepare;

pub use prepare::run as run_preparation;
