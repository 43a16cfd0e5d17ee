//! Layer 4, what runs beside the variants: stressors, the memory filler, the THP
//! governor and the hsperf reader.

pub mod companion;
pub mod pressure;
pub mod stressors;
pub mod thp;
