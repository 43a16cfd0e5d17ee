//! Layer 6, the run: the plan, turns, progress, memory per turn, test points; a
//! matrix's plan and its executor.

pub mod matrix;
mod matrix_run;
mod memory;
pub mod runner;
mod testpoint;

pub use matrix_run::{run_matrix, Executed, Executor, Matrix, MatrixObserver, MatrixOutcome};
