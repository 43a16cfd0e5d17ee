//! Layer 4, what runs beside the variants: stressors, the memory filler, the THP
//! governor and the hsperf reader.

mod companion;
mod error;
mod pressure;
mod stressors;
mod thp;

pub use companion::{hsperf_reader, READER_LOG};
pub use error::StressError;
pub use pressure::{heaps_fit, Filler};
pub use stressors::{Counters, Stressors, Targets};
pub use thp::{vmstat, vmstat_delta, Governor, ENABLED, GOVERNOR_LOG};
