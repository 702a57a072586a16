//! UUIDv7 and ULID: the conformance vectors of `tests/vectors/formats.json` (RFC 9562's
//! example, the ULID spec's), text at the limits and bad text, and the generators' rewind guard,
//! batches and monotonic increments on injected clocks.

use polyflake::{
    format_ulid, format_uuid, parse_ulid, parse_uuid, ulid_timestamp_ms, uuid7_timestamp_ms,
    ErrorKind, HealthStatus, ManualClock, Mode, TimeIdBuilder,
};
use serde_json::Value;
use std::collections::HashSet;

fn vectors() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/formats.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn big(v: &Value) -> u128 {
    v.as_str().unwrap().parse().unwrap()
}

#[test]
fn uuid_vectors() {
    let v = vectors();
    let ex = &v["uuid"]["rfc9562_example"];
    let u = parse_uuid(ex["text"].as_str().unwrap()).unwrap();
    assert_eq!(u, big(&ex["value"]));
    assert_eq!(format_uuid(u), ex["canonical"]);
    assert_eq!(uuid7_timestamp_ms(u).unwrap(), ex["unix_ts_ms"]);
    assert_eq!(((u >> 76) & 0xf) as u64, ex["version"].as_u64().unwrap());
    assert_eq!(((u >> 62) & 0b11) as u64, ex["variant"].as_u64().unwrap());
    assert_eq!(((u >> 64) & 0xfff) as u64, ex["rand_a"].as_u64().unwrap());
    assert_eq!(u & ((1 << 62) - 1), big(&ex["rand_b"]));
    for lim in v["uuid"]["limits"].as_array().unwrap() {
        let text = lim["text"].as_str().unwrap();
        let u = parse_uuid(text).unwrap();
        assert_eq!(format_uuid(u), text);
        assert_eq!(uuid7_timestamp_ms(u).unwrap(), lim["unix_ts_ms"]);
    }
    for bad in v["uuid"]["bad_text"].as_array().unwrap() {
        let e = parse_uuid(bad.as_str().unwrap()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidId, "{bad}");
    }
    for not7 in v["uuid"]["not_v7"].as_array().unwrap() {
        let u = parse_uuid(not7.as_str().unwrap()).unwrap();
        assert_eq!(
            uuid7_timestamp_ms(u).unwrap_err().kind(),
            ErrorKind::InvalidId
        );
    }
}

#[test]
fn ulid_vectors() {
    let v = vectors();
    for ex in v["ulid"]["examples"].as_array().unwrap() {
        let u = parse_ulid(ex["text"].as_str().unwrap()).unwrap();
        assert_eq!(u, big(&ex["value"]));
        assert_eq!(format_ulid(u), ex["text"]);
        assert_eq!(ulid_timestamp_ms(u), ex["unix_ts_ms"]);
    }
    let pair = v["ulid"]["monotonic_pair"].as_array().unwrap();
    let (a, b) = (
        parse_ulid(pair[0].as_str().unwrap()).unwrap(),
        parse_ulid(pair[1].as_str().unwrap()).unwrap(),
    );
    assert_eq!(b - a, 1, "the spec's increment carries across a digit");
    for lim in v["ulid"]["limits"].as_array().unwrap() {
        let text = lim["text"].as_str().unwrap();
        let u = parse_ulid(text).unwrap();
        assert_eq!(format_ulid(u), text);
        assert_eq!(ulid_timestamp_ms(u), lim["unix_ts_ms"]);
    }
    for alias in v["ulid"]["aliases"].as_array().unwrap() {
        let u = parse_ulid(alias["text"].as_str().unwrap()).unwrap();
        assert_eq!(format_ulid(u), alias["canonical"]);
    }
    for bad in v["ulid"]["bad_text"].as_array().unwrap() {
        let e = parse_ulid(bad.as_str().unwrap()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidId, "{bad}");
    }
}

const T: i64 = 1_737_747_358_021;

#[test]
fn uuid7_is_version_7_time_ordered_and_carries_the_sub_millisecond() {
    let g = TimeIdBuilder::new().build_uuid7().unwrap();
    let mut prev = 0u128;
    let mut seen = HashSet::new();
    for _ in 0..50_000 {
        let u = g.next_uuid().unwrap();
        assert!(u > prev, "UUIDs strictly increase");
        assert!(seen.insert(u));
        assert_eq!((u >> 76) & 0xf, 7);
        assert_eq!((u >> 62) & 0b11, 0b10);
        prev = u;
    }
    let now = polyflake::SystemClock::read_ms();
    assert!(
        uuid7_timestamp_ms(prev).unwrap() <= now,
        "strict: never ahead of the clock"
    );
    // On a manual clock (whole milliseconds) the sub-millisecond bits are 0.
    let clock = ManualClock::new(T);
    let m = TimeIdBuilder::new()
        .clock(clock.clone())
        .build_uuid7()
        .unwrap();
    let u = m.next_uuid().unwrap();
    assert_eq!(uuid7_timestamp_ms(u).unwrap(), T);
    assert_eq!((u >> 64) & 0xfff, 0);
}

#[test]
fn the_rewind_guard_is_the_snowflakes() {
    let clock = ManualClock::new(T);
    let u = TimeIdBuilder::new()
        .clock(clock.clone())
        .build_uuid7()
        .unwrap();
    let l = TimeIdBuilder::new()
        .clock(clock.clone())
        .build_ulid()
        .unwrap();
    u.next_uuid().unwrap();
    l.next_ulid().unwrap();
    clock.advance(-600);
    assert_eq!(
        u.next_uuid().unwrap_err().kind(),
        ErrorKind::ClockMovedBackwards
    );
    assert_eq!(
        l.next_ulid().unwrap_err().kind(),
        ErrorKind::ClockMovedBackwards
    );
    assert_eq!(u.health().status, HealthStatus::ClockBehind);
    clock.advance(600);
    // Monotonic mode absorbs the same rewind by running ahead.
    let m = TimeIdBuilder::new()
        .mode(Mode::Monotonic)
        .clock(clock.clone())
        .build_uuid7()
        .unwrap();
    let a = m.next_uuid().unwrap();
    clock.advance(-600);
    assert!(m.next_uuid().unwrap() > a);
    // A forward step is refused in strict mode.
    clock.advance(600 + 31_536_000_000);
    assert_eq!(
        u.next_uuid().unwrap_err().kind(),
        ErrorKind::ClockJumpedAhead
    );
}

#[test]
fn a_frozen_clock_gives_32768_ulids_each_one_more_than_the_last_then_a_refusal() {
    let clock = ManualClock::new(T);
    let g = TimeIdBuilder::new()
        .clock(clock.clone())
        .max_wait_ms(0.0)
        .build_ulid()
        .unwrap();
    let mut ids = vec![0u128; 32_768];
    g.next_ulids(&mut ids).unwrap();
    assert!(
        ids.windows(2).all(|w| w[1] == w[0] + 1),
        "+1 within a millisecond"
    );
    assert!(ids.iter().all(|&u| ulid_timestamp_ms(u) == T));
    let e = g.next_ulid().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ClockMovedBackwards, "{e}");
    clock.elapse(1);
    let next = g.next_ulid().unwrap();
    assert_eq!(ulid_timestamp_ms(next), T + 1);
    assert!(next > ids[32_767]);
}

#[test]
fn a_monotonic_burst_borrows_milliseconds_and_stays_ordered() {
    let clock = ManualClock::new(T);
    let g = TimeIdBuilder::new()
        .mode(Mode::Monotonic)
        .clock(clock.clone())
        .build_uuid7()
        .unwrap();
    let mut ids = vec![0u128; 100_000];
    g.next_uuids(&mut ids).unwrap();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(uuid7_timestamp_ms(ids[0]).unwrap(), T);
    assert_eq!(uuid7_timestamp_ms(ids[99_999]).unwrap(), T + 3);
    let h = g.health();
    assert_eq!(h.ids_issued, 100_000);
    assert!(h.ms_borrowed >= 3);
}

#[test]
fn ulids_from_two_generators_in_one_millisecond_differ() {
    let clock = ManualClock::new(T);
    let a = TimeIdBuilder::new()
        .clock(clock.clone())
        .build_ulid()
        .unwrap();
    let b = TimeIdBuilder::new()
        .clock(clock.clone())
        .build_ulid()
        .unwrap();
    let (x, y) = (a.next_ulid().unwrap(), b.next_ulid().unwrap());
    assert_ne!(x, y, "independent keys give independent bases");
    assert_eq!(ulid_timestamp_ms(x), ulid_timestamp_ms(y));
    // A base leaves room for every increment: its top bit is 0.
    assert_eq!((x >> 79) & 1, 0);
}
