//! Layer 1, the experiment as data: the TOML types, validated, the units they are written
//! in and the names of the files a run writes. Nothing here touches the host.

mod definition;
pub mod layout;
pub mod units;

pub use definition::*;
