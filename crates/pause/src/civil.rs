//! UTC calendar arithmetic for the time stamps pauselab reads and prints (GC log
//! decorations, interval log headers, bundle names), in one place.
//!
//! Written here rather than taken from `chrono` or `time`: the readers need only these two
//! conversions, in the proleptic Gregorian calendar without time zones or leap seconds
//! (Howard Hinnant's `days_from_civil` / `civil_from_days`), and every crate depends on this one.

/// Days since 1970-01-01 of a date: `year`, `month` 1..=12, `day` 1..=31.
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let march_based_month = (month + 9) % 12;
    let day_of_year = (153 * march_based_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date (year, month 1..=12, day 1..=31) `days` after 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let march_based_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * march_based_month + 2) / 5 + 1;
    let month = if march_based_month < 10 {
        march_based_month + 3
    } else {
        march_based_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A moment in UTC split into its calendar fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UtcTime {
    /// Proleptic Gregorian year (1970, 2026, also before 1970).
    pub year: i64,
    /// 1..=12.
    pub month: i64,
    /// 1..=31.
    pub day: i64,
    /// 0..=23.
    pub hour: i64,
    /// 0..=59.
    pub minute: i64,
    /// 0..=59.
    pub second: i64,
    /// 0..=999.
    pub millis: i64,
    /// Days since 1970-01-01 (a Thursday): gives the weekday.
    pub days_since_epoch: i64,
}

impl UtcTime {
    /// The calendar fields of `ms` milliseconds since 1970-01-01T00:00:00Z.
    pub fn from_epoch_ms(ms: i64) -> UtcTime {
        let secs = ms.div_euclid(1000);
        let days = secs.div_euclid(86_400);
        let of_day = secs.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        UtcTime {
            year,
            month,
            day,
            hour: of_day / 3600,
            minute: of_day % 3600 / 60,
            second: of_day % 60,
            millis: ms.rem_euclid(1000),
            days_since_epoch: days,
        }
    }

    /// English three-letter name of the weekday, as Java's `Date.toString()` prints it.
    pub fn weekday_abbrev(&self) -> &'static str {
        const FROM_THURSDAY: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
        FROM_THURSDAY[self.days_since_epoch.rem_euclid(7) as usize]
    }

    /// English three-letter name of the month.
    pub fn month_abbrev(&self) -> &'static str {
        const MONTHS: [&str; 12] = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        MONTHS[(self.month - 1) as usize]
    }
}

/// Formats milliseconds since the epoch as `2026-11-21T22:42:43.549Z`.
pub fn format_epoch_ms(ms: i64) -> String {
    let t = UtcTime::from_epoch_ms(ms);
    if !(0..=9999).contains(&t.year) {
        return format_fields(&t);
    }
    // Digit by digit: `format!` cost 3,000 instructions a call, and the analysis writes the
    // wall time of each pause that becomes one of a finding's examples.
    let mut text = *b"0000-00-00T00:00:00.000Z";
    for (at, width, value) in [
        (0, 4, t.year),
        (5, 2, t.month),
        (8, 2, t.day),
        (11, 2, t.hour),
        (14, 2, t.minute),
        (17, 2, t.second),
        (20, 3, t.millis),
    ] {
        let mut value = value;
        for digit in text[at..at + width].iter_mut().rev() {
            *digit = b'0' + (value % 10) as u8;
            value /= 10;
        }
    }
    text.iter().map(|&b| char::from(b)).collect()
}

/// [`format_epoch_ms`] of any year, by `format!`.
fn format_fields(t: &UtcTime) -> String {
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year, t.month, t.day, t.hour, t.minute, t.second, t.millis
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_day_over_eight_centuries() {
        // 1600-03-01 .. 2400: every leap rule (4, 100, 400) and dates before the epoch.
        for days in -135_080..157_000 {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
    }

    #[test]
    fn wall_times_are_written_as_format_writes_them() {
        // Every day of years 0 to 9999 (at a time of day that changes with it), and years
        // outside them.
        let day_ms = 86_400_000i64;
        let first = UtcTime::from_epoch_ms(-62_167_219_200_000).days_since_epoch;
        for day in (first..first + 3_652_425).step_by(7) {
            let ms = day * day_ms + (day.rem_euclid(86_399_999));
            assert_eq!(
                format_epoch_ms(ms),
                format_fields(&UtcTime::from_epoch_ms(ms)),
                "{ms}"
            );
        }
        for ms in [
            -62_167_219_200_001,
            253_402_300_800_000,
            i64::MIN / 2,
            i64::MAX / 2,
        ] {
            assert_eq!(
                format_epoch_ms(ms),
                format_fields(&UtcTime::from_epoch_ms(ms))
            );
        }
        assert_eq!(format_epoch_ms(0), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn known_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(days_from_civil(2000, 2, 29), 11_016);
        assert_eq!(civil_from_days(11_017), (2000, 3, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        // `date -u -d 2026-11-21 +%s` = 1795219200
        assert_eq!(days_from_civil(2026, 11, 21) * 86_400, 1_795_219_200);
        let t = UtcTime::from_epoch_ms(1_795_272_163_549);
        assert_eq!(
            (t.year, t.month, t.day, t.hour, t.minute, t.second, t.millis),
            (2026, 11, 21, 14, 42, 43, 549)
        );
        assert_eq!((t.weekday_abbrev(), t.month_abbrev()), ("Sat", "Nov"));
        let before = UtcTime::from_epoch_ms(-1);
        assert_eq!((before.year, before.second, before.millis), (1969, 59, 999));
    }
}
