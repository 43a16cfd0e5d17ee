//! One snapshot of every host-wide fact, for reports and result bundles.

use serde::Serialize;

use crate::cgroup::{cpu_limits, CpuLimits};
use crate::kernel::{kernel_version, KernelVersion};
use crate::mounts::{filesystem_of, PathFilesystem};
use crate::pressure::{host_pressure, HostPressure};
use crate::probe::{effective_user_name, hsperf_dir};
use crate::vm::{
    dirty_settings, swap, transparent_huge_pages, DirtySettings, Swap, TransparentHugePages,
};

/// Host facts at one moment. A fact that could not be read is `None` and its error is in
/// `unavailable`, so one unreadable file never hides the rest.
#[derive(Debug, Clone, Serialize)]
pub struct HostFacts {
    pub kernel: Option<KernelVersion>,
    /// Filesystem of the hsperf directory of the effective user (`/tmp` if it does not
    /// exist yet: the JVM creates it there).
    pub hsperf_filesystem: Option<PathFilesystem>,
    pub transparent_huge_pages: Option<TransparentHugePages>,
    pub swap: Option<Swap>,
    pub dirty: Option<DirtySettings>,
    /// CPU limits of the calling process (a JVM started by it inherits them).
    pub cpu: Option<CpuLimits>,
    /// `None` also when the kernel has no PSI.
    pub pressure: Option<HostPressure>,
    pub unavailable: Vec<String>,
}

impl HostFacts {
    pub fn collect() -> HostFacts {
        let mut unavailable = Vec::new();
        let kernel = keep(kernel_version(), &mut unavailable);
        let hsperf_filesystem = keep(
            filesystem_of(&hsperf_dir(&effective_user_name())),
            &mut unavailable,
        );
        let transparent_huge_pages = keep(transparent_huge_pages(), &mut unavailable);
        let swap = keep(swap(), &mut unavailable);
        let dirty = keep(dirty_settings(), &mut unavailable);
        let cpu = keep(cpu_limits(std::process::id()), &mut unavailable);
        let pressure = keep(host_pressure(), &mut unavailable).flatten();
        HostFacts {
            kernel,
            hsperf_filesystem,
            transparent_huge_pages,
            swap,
            dirty,
            cpu,
            pressure,
            unavailable,
        }
    }
}

fn keep<T>(result: crate::Result<T>, unavailable: &mut Vec<String>) -> Option<T> {
    result.map_err(|err| unavailable.push(err.to_string())).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_this_host_and_serializes() {
        let facts = HostFacts::collect();
        assert!(facts.unavailable.is_empty(), "{:?}", facts.unavailable);
        assert!(facts.kernel.is_some() && facts.dirty.is_some() && facts.swap.is_some());
        let json = serde_json::to_value(&facts).unwrap();
        assert!(json["hsperf_filesystem"]["fs_type"].is_string(), "{json}");
    }
}
