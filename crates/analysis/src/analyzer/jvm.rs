//! What the input says of the JVM: its version, its collector and its options, and what
//! the pauses tell of the collector when no line names it.

use pauselab_pause::record::{Format, Record};
use pauselab_pause::Collector;

use crate::analyzer::report::FileSummary;
use crate::rules::causes::JvmFlags;
use crate::totals::TotalsByName;

#[derive(Default)]
pub(super) struct JvmFacts {
    version: Option<String>,
    collector: Option<String>,
    /// The first pause's name, which tells the collector when no line states it.
    pub(super) first_pause_name: Option<String>,
    /// The collector that a pause's generations or cause, or a G1 detail line, names
    /// (see [`JvmFacts::told`]).
    told: Option<Collector>,
    /// The JVM's options, when the input states them.
    pub(super) flags: JvmFlags,
}

impl JvmFacts {
    /// A line of the JVM's header: the first version and collector stated count.
    pub(super) fn header(&mut self, record: Record) {
        match record {
            Record::Collector(c) => {
                self.collector.get_or_insert(c);
            }
            Record::Flags(options) => {
                if self.collector.is_none() {
                    self.collector = Collector::from_flags(&options).map(|c| c.name().to_string());
                }
                self.flags.add(&options);
            }
            Record::Version(v) => {
                self.version.get_or_insert(v);
            }
            _ => {}
        }
    }

    /// Something of the log names `collector` without stating it: a JDK 6-8 full
    /// collection's generations, a cause only one collector gives, JDK 8 G1's
    /// `[Eden: ...]` line. CMS's name wins over any other (a CMS log's young collections
    /// may be Serial's `DefNew`), and ParNew's with Serial's old generation over Serial's
    /// (its full collections are Serial's), else the first one counts.
    pub(super) fn told(&mut self, collector: Option<Collector>) {
        if let Some(c) = collector {
            let wins = c == Collector::Cms
                || (c == Collector::ParNew && self.told != Some(Collector::Cms));
            if self.told.is_none() || wins {
                self.told = Some(c);
            }
        }
    }

    /// The version stated, else JDK 8's format says "8 or earlier".
    pub(super) fn version(&self, files: &[FileSummary]) -> Option<String> {
        self.version.clone().or_else(|| {
            (files.iter().any(|f| f.format == Some(Format::Jdk8))
                && !files.iter().any(|f| f.format == Some(Format::Unified)))
            .then(|| "8 or earlier (JDK 6-8 log format)".to_string())
        })
    }

    /// Not stated in JDK 8 logs without the flags line, nor in a rotated unified log's
    /// later files: the pause names (`by_name`) tell, and what the log names otherwise
    /// ([`JvmFacts::told`]). CMS's own pauses first (a CMS young collection may be
    /// `DefNew`), then the first pause, then what the log names, then any pause that tells.
    pub(super) fn collector(&self, by_name: &TotalsByName, cms_failures: bool) -> Option<String> {
        self.collector.clone().or_else(|| {
            let names = || by_name.names();
            names()
                .find(|n| n.starts_with("CMS"))
                .and_then(Collector::from_pause_name)
                .or_else(|| {
                    self.told
                        .filter(|&c| c == Collector::Cms || c == Collector::ParNew)
                })
                // ParNew's young collections and Serial's full ones (`[Full GC [Tenured:
                // ...`): `-XX:+UseParNewGC` without CMS, whose young collections ParNew's
                // name would otherwise make CMS's.
                .or_else(|| {
                    (self.told == Some(Collector::Serial) && names().any(|n| n == "ParNew"))
                        .then_some(Collector::ParNew)
                })
                .or_else(|| {
                    self.first_pause_name
                        .as_deref()
                        .and_then(Collector::from_pause_name)
                })
                .or(self.told)
                .or_else(|| names().find_map(Collector::from_pause_name))
                // Only CMS reports a concurrent mode failure or `(promotion failed)`
                // (Parallel's failed promotion is `GC--`, counted apart).
                .or_else(|| cms_failures.then_some(Collector::Cms))
                .map(|c| c.name().to_string())
        })
    }
}

/// The feature release of a version as inputs state it: `17` of `17.0.15+6-LTS`, `25` of
/// `25+36`, `8` of `1.8.0_372` and of "8 or earlier (JDK 6-8 log format)".
pub(super) fn feature_release(version: &str) -> Option<u32> {
    let version = version.strip_prefix("1.").unwrap_or(version);
    let digits = version.bytes().take_while(u8::is_ascii_digit).count();
    version[..digits].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::feature_release;

    #[test]
    fn the_feature_release_is_read_from_every_form_of_version() {
        for (version, feature) in [
            ("17.0.15+6-Debian-1deb12u1", Some(17)),
            ("25+36-LTS", Some(25)),
            ("21.0.8+9-LTS", Some(21)),
            ("11.0.13+8", Some(11)),
            ("1.8.0_372-b07", Some(8)),
            ("1.7.0_80", Some(7)),
            ("8 or earlier (JDK 6-8 log format)", Some(8)),
            ("OpenJDK", None),
        ] {
            assert_eq!(feature_release(version), feature, "{version}");
        }
    }
}
