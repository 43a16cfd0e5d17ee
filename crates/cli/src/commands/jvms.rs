//! `pauselab jvms`: every HotSpot JVM on this host (found by its libjvm.so mapping, so also
//! those with -XX:+PerfDisableSharedMem and those in containers), with where its counters
//! can be read from.

use std::io::Write;
use std::process::ExitCode;

use pauselab_hsperf::{discover_jvms, JvmDetails, JvmProcess, Route, Source};
use pauselab_render::{render_jvms, ListedJvm};

#[derive(clap::Args)]
pub struct Args {
    /// A JSON array, one object per JVM
    #[arg(long)]
    json: bool,
}

fn describe(process: JvmProcess) -> ListedJvm {
    let (source, details, error) = match pauselab_hsperf::Reader::open(process.pid, Source::Auto)
        .and_then(|mut r| Ok((r.route().clone(), r.snapshot()?)))
    {
        Ok((route, snapshot)) => (
            Some(match route {
                Route::File { .. } => "file",
                Route::Memory { .. } => "memory",
            }),
            JvmDetails::from_snapshot(&snapshot),
            None,
        ),
        Err(e) => (None, JvmDetails::default(), Some(e.to_string())),
    };
    ListedJvm {
        shared: process.shares_perf_data(),
        process,
        source,
        error,
        details,
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let listed: Vec<ListedJvm> = discover_jvms().into_iter().map(describe).collect();
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&listed)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    write!(out, "{}", render_jvms(&listed))?;
    if listed.is_empty() {
        pauselab_pause::eprintln_lossy!(
            "no HotSpot JVM found (processes of other users are only visible to root)"
        );
    }
    Ok(ExitCode::SUCCESS)
}
