//! Layer 1, the experiment as data: the TOML types, validated, the units they are written
//! in and the names of the files a run writes. Nothing here touches the host.

mod definition;
mod dimensions;
pub mod layout;
mod matrix;
mod parts;
pub mod units;

pub use definition::*;
pub use dimensions::{DimensionError, Filesystem, Gc, MountOptions};
pub use matrix::Cell;
pub use parts::{
    is_plain_name, validate_steps, Bounds, GovernorSpec, MemoryCgroup, MemoryCgroupSpec, PartError,
    PrepareStep, PressureSpec, SlowDeviceSpec, StressorSpec, SwapSpec, Thresholds, CHUNK,
};
