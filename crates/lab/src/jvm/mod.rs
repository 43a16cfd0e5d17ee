//! Layer 3, launching JVMs: JDK lookup, the jars pauselab ships, command lines and their
//! placeholders, preparation steps.

pub mod java;
pub mod jdk_lookup;
pub mod prepare;
