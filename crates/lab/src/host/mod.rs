//! Layer 2, changes to the host: the journal and every change it records and undoes
//! (mounts, slow devices, cgroups, swap, host settings, the run's mount namespace). The only
//! layer that calls libc to change the host.

pub mod cgroup;
pub mod cgroup_filler;
pub mod fault;
pub mod hostsettings;
pub mod isolation;
pub mod journal;
pub mod swap;
pub mod sys;
