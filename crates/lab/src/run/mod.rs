//! Layer 6, the run: the plan, turns, instances, progress, memory per turn, test points.

mod instance;
pub mod matrix;
mod memory;
pub mod runner;
mod testpoint;
