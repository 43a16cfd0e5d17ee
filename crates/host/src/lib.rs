//! Host facts and probes for stall diagnosis.
//!
//! Every fact records where it was read (`source`), so a finding built on it can show its
//! evidence. Modules:
//! - [`mounts`]: filesystem, mount and block device of a path (bind mounts, other mount
//!   namespaces through `/proc/<pid>/root`), the device's `stable_writes`;
//! - [`vm`]: transparent huge pages, swap, swappiness, dirty page settings;
//! - [`cgroup`]: CPU quota (cgroup v1 and v2) of a process;
//! - [`kernel`]: kernel release;
//! - [`pressure`]: pressure stall information (`/proc/pressure/*`);
//! - [`vmstat`]: `/proc/vmstat` snapshots and deltas;
//! - [`threads`]: threads of a process in uninterruptible sleep, with `wchan`;
//! - [`probe`]: the mmap store-latency probe;
//! - [`watch`]: per-interval JVM and host deltas and the likely cause of stalled intervals;
//! - [`trust`]: opening what another process names with its rights, inside its root, and
//!   directories made for other users through descriptors (docs/ARCHITECTURE.md, Trust);
//! - [`facts`]: all host-wide facts in one serializable snapshot ([`facts::HostFacts`]).

pub mod cgroup;
pub mod doctor;
pub mod facts;
pub mod jvm_options;
pub mod kernel;
pub mod mounts;
pub mod pressure;
pub mod probe;
pub mod threads;
pub mod trust;
pub mod vm;
pub mod vmstat;
pub mod watch;

mod error;
mod read;

pub use error::HostError;

pub type Result<T> = std::result::Result<T, HostError>;
