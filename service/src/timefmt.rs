//! ISO-8601 UTC text for a Unix-millisecond timestamp (what `decode` prints and the service
//! returns). Plain calendar arithmetic, so the binary needs no date crate.

/// `2025-01-24T19:35:58.021Z` for 1737747358021. Years outside 0000..=9999 (a custom layout
/// with many timestamp bits can reach them) use ISO 8601's expanded form with a sign, `+12345-...`.
pub fn iso_utc(unix_ms: i64) -> String {
    const MS_PER_DAY: i64 = 86_400_000;
    let days = unix_ms.div_euclid(MS_PER_DAY);
    let ms_of_day = unix_ms.rem_euclid(MS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    let hour = ms_of_day / 3_600_000;
    let minute = ms_of_day / 60_000 % 60;
    let second = ms_of_day / 1000 % 60;
    let milli = ms_of_day % 1000;
    let year = if (0..=9999).contains(&year) {
        format!("{year:04}")
    } else {
        format!("{year:+05}")
    };
    format!("{year}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{milli:03}Z")
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`, exact for every `i64` day count we can meet).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11], March = 0
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::iso_utc;

    // Reference strings from Python's datetime.utcfromtimestamp, not from this code.
    #[test]
    fn known_instants() {
        assert_eq!(iso_utc(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_utc(1_704_067_200_000), "2024-01-01T00:00:00.000Z");
        assert_eq!(iso_utc(1_737_747_358_021), "2025-01-24T19:35:58.021Z");
        assert_eq!(iso_utc(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso_utc(3_903_090_455_551), "2093-09-06T15:47:35.551Z");
        assert_eq!(iso_utc(253_402_300_799_999), "9999-12-31T23:59:59.999Z");
        assert_eq!(iso_utc(253_402_300_800_000), "+10000-01-01T00:00:00.000Z");
        assert_eq!(iso_utc(-1), "1969-12-31T23:59:59.999Z");
    }
}
