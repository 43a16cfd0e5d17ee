//! `pauselab perf PID --pages`'s output: the table of the perf-data region's pages (which
//! a JVM writes, how often, in intervals with a safepoint) or one JSON object.

use std::io::Write;
use std::time::Duration;

use pauselab_hsperf::{PageMap, Reader};
use pauselab_pause::input::escape_control;

/// Changed counters named per page in the text output (`--json` lists them all).
const NAMED_PER_PAGE: usize = 3;

/// `--json`: the JVM, the route, the interval, whether a signal cut the sampling short, and
/// the map.
pub fn write_pages_json(
    out: &mut impl Write,
    reader: &Reader,
    interval: Duration,
    interrupted: bool,
    map: &PageMap,
) -> anyhow::Result<()> {
    let doc = serde_json::json!({
        "pid": reader.pid(),
        "route": reader.route(),
        "interval_ms": interval.as_secs_f64() * 1e3,
        "interrupted": interrupted,
        "map": map,
    });
    serde_json::to_writer(&mut *out, &doc)?;
    writeln!(out)?;
    Ok(())
}

/// The region's summary line, a row per page with its most changed counters, and the pages
/// written per second as laid out and packed.
pub fn write_pages_text(
    out: &mut impl Write,
    reader: &Reader,
    interval: Duration,
    map: &PageMap,
) -> std::io::Result<()> {
    let subject = match reader.pid() {
        Some(pid) => format!("pid {pid}"),
        None => "the file".to_string(),
    };
    writeln!(
        out,
        "{subject}: {} counters in {} bytes ({} pages of {} KiB); {} intervals of {} ms over {:.1} s, {} of them with a safepoint",
        map.counters,
        map.region_bytes_in_use,
        map.pages.len(),
        map.page_size / 1024,
        map.intervals,
        interval.as_secs_f64() * 1e3,
        map.seconds,
        map.safepoint_intervals,
    )?;
    writeln!(
        out,
        "{:>4} {:>7} {:>8} {:>8} {:>7} {:>9} {:>12}  most changed counters (intervals)",
        "page", "offset", "counters", "variable", "changed", "written %", "in safepnt %"
    )?;
    for page in &map.pages {
        let named: Vec<String> = page
            .changed
            .iter()
            .take(NAMED_PER_PAGE)
            .map(|c| format!("{} ({})", escape_control(&c.name), c.changes))
            .collect();
        let more = page.changed.len().saturating_sub(NAMED_PER_PAGE);
        let in_safepoint = if page.written_intervals > 0 {
            format!("{:.1}", page.in_safepoint_share * 100.0)
        } else {
            "n/a".to_string()
        };
        writeln!(
            out,
            "{:>4} {:>#7x} {:>8} {:>8} {:>7} {:>9.1} {:>12}  {}{}",
            page.page,
            page.offset,
            page.counters,
            page.variable_counters,
            page.changed_counters,
            page.written_share * 100.0,
            in_safepoint,
            named.join(", "),
            if more > 0 {
                format!(", +{more} more")
            } else {
                String::new()
            }
        )?;
    }
    writeln!(
        out,
        "pages written per second: {:.1} as laid out, {:.1} packed ({} changing counters in {} page{} at the start of the region){}",
        map.pages_written_per_second,
        map.packed_pages_written_per_second,
        map.changed_counters,
        map.packed_pages,
        if map.packed_pages == 1 { "" } else { "s" },
        if map.packed_covers_every_interval {
            ""
        } else {
            "; the packed figure covers the first intervals only"
        }
    )
}
