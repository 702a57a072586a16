//! The service's OpenAPI 3.1 description: the request and response shapes as `utoipa` schemas,
//! and the finishing touches (the count cap, the ID pattern) applied to the document the
//! `#[utoipa::path]` annotations on the handlers in `serve.rs` generate.
//!
//! The handlers write their JSON themselves; these types describe it, and `schemathesis`
//! (`make test-cli`) checks every answer of the running service against them.
//! The document is served at `GET /openapi.json` and checked in as `cli/openapi.json`
//! (regenerate with `make openapi-cli`; `make test-cli` fails when it drifts).
//!
//! ## Decisions
//!
//! - **What the derive cannot say is added in `finish`**: the request body is optional and has no
//!   other field, the running service's count cap (the checked-in file has the default cap), the
//!   exact text of an ID (a pattern for 0 to 2^63 - 1, leading zeros allowed), and a 200 answer
//!   that is `oneOf` the three formats' shapes. The test-clock route is not described (it exists
//!   only with the hidden `--test-clock`).
//! - **schemathesis runs every check** (`--checks all`) with a hook that fails on an ID handed out
//!   twice; `--include-path-regex '^/'` makes it test `GET /openapi.json` too.

// The types only describe the JSON: nothing reads their fields.
#![allow(dead_code)]

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// `POST /v1/ids` request body (optional: an empty body or `{}` asks for one ID).
#[derive(ToSchema)]
pub struct IdsRequest {
    /// How many IDs to mint, from 1 to the service's `--max-count` (default 4,096); 1 when
    /// absent. Not null, not a string. An integer as in JSON Schema: a number whose value has no
    /// fractional part, however written (`3664.0` and `3.664e3` are 3664; `3664.5` is refused).
    #[schema(minimum = 1, required = false)]
    count: u64,
    /// The ID format: `snowflake` (the 64-bit ID, when absent), `uuidv7` (RFC 9562) or `ulid`.
    #[schema(required = false)]
    format: String,
}

/// `POST /v1/ids` answer for `"format": "uuidv7"`.
#[derive(ToSchema)]
pub struct Uuid7IdsResponse {
    /// `uuidv7`.
    format: String,
    /// The UUIDs, in increasing order, in canonical lower-case text.
    ids: Vec<Uuid7Text>,
}

/// `POST /v1/ids` answer for `"format": "ulid"`.
#[derive(ToSchema)]
pub struct UlidIdsResponse {
    /// `ulid`.
    format: String,
    /// The ULIDs, in increasing order, as 26 upper-case characters of Crockford's base32.
    ids: Vec<UlidText>,
}

/// A UUID version 7 in canonical text: 8-4-4-4-12 lower-case hex digits, version 7, RFC 9562
/// variant.
#[derive(ToSchema)]
pub struct Uuid7Text(String);

/// A ULID: 26 characters of Crockford's base32 (upper case), the first at most `7`.
#[derive(ToSchema)]
pub struct UlidText(String);

/// `POST /v1/ids` answer.
#[derive(ToSchema, Serialize)]
pub struct IdsResponse {
    /// The IDs, in increasing order, as decimal strings (a JavaScript Number would round them).
    pub ids: Vec<IdText>,
    /// The node id in the IDs.
    pub node_id: u32,
    /// The generator's epoch, Unix milliseconds.
    pub epoch_ms: i64,
}

/// An ID as decimal text: digits only, below 2^63.
#[derive(ToSchema, Serialize)]
pub struct IdText(pub String);

/// `GET /v1/ids/{id}` answer: the ID's fields with the service's layout and epoch.
#[derive(ToSchema)]
pub struct DecodedId {
    /// The ID, as decimal text without leading zeros.
    id: IdText,
    /// When it was made (at the latest), ISO-8601 UTC with milliseconds.
    time: String,
    /// The same instant in Unix milliseconds.
    unix_ms: i64,
    /// The node that made it.
    node_id: u32,
    /// Its position within that node's millisecond.
    sequence: u32,
}

/// `GET /v1/health` answer (200 when the generator can issue now, else 503 with the same shape).
#[derive(ToSchema)]
pub struct HealthResponse {
    /// True when the generator can issue now.
    ok: bool,
    /// `ok`, or why not (`clock_behind`, `lease_expired`, `restart_guard`, ...).
    status: String,
    /// Why it is or is not healthy, in words; empty when ok.
    reason: String,
    /// The generator's node id.
    node_id: u32,
    /// `strict` or `monotonic`.
    mode: String,
    /// The layout as T/N/S bits.
    layout: String,
    /// The generator's epoch, Unix ms.
    epoch_ms: i64,
    /// Unix ms of the last issued ID; null before the first.
    last_issued_ms: Option<i64>,
    /// The wall clock when the snapshot was taken, Unix ms.
    wall_ms: i64,
    /// How far the last issued millisecond is ahead of the wall clock.
    lead_ms: i64,
    /// The clock reading in use: `precise`, or `coarse` when asked for (`--clock coarse`) and
    /// the system's coarse clock is fine enough.
    clock_source: String,
    /// The resolution of the system clock in use, in ns (the coarse clock's tick, or the
    /// precise clock's); 0 for an injected clock.
    clock_tick_ns: u64,
    /// Why a requested coarse clock is not in use; empty otherwise.
    clock_note: String,
    /// How far the wall clock reads ahead of what elapsed time vouches for, while not yet
    /// believed (0 otherwise).
    clock_ahead_ms: i64,
    /// Where the node id came from (`static`, `env`, `file_lease`, `etcd`, ...).
    source: String,
    /// The kernel's word on the system clock (`adjtimex`).
    clock_sync: ClockSyncStatus,
    /// Why a static node id keeps no mark on this host (its restart guard); empty otherwise.
    restart_guard_note: String,
    /// The lease, when the node id is leased, or a static node id's mark (kind `host`); null
    /// otherwise.
    lease: Option<LeaseStatus>,
    /// The generator's counters.
    counters: Counters,
}

/// The kernel's word on the system clock.
#[derive(ToSchema)]
pub struct ClockSyncStatus {
    /// `ok`, `insert_leap`, `delete_leap`, `leap_in_progress`, `leap_done`, `unsynchronized` or
    /// `unavailable`.
    state: String,
    /// True when a time daemon keeps the clock synchronized.
    synchronized: bool,
    /// The kernel's maximum error, microseconds (-1 when unavailable).
    max_error_us: i64,
    /// The kernel's estimated error, microseconds (-1 when unavailable).
    est_error_us: i64,
}

/// The lease part of the health answer.
#[derive(ToSchema)]
pub struct LeaseStatus {
    /// `file`, `etcd`, `zookeeper`, or `host` (a static node id's mark on the host).
    kind: String,
    /// The lease directory, the etcd endpoints and prefix, or the mark's path.
    store: String,
    /// The slot held, which is the node id.
    slot: u32,
    /// `held`, `restart_guard`, `expired` or `lost`.
    state: String,
    /// The high-water mark R, Unix ms: nothing is issued past it.
    high_water_ms: i64,
    /// The previous holder's R found when the slot was taken; null if none.
    guard_until_ms: Option<i64>,
    /// True while the restart guard waits.
    guard_waiting: bool,
    /// How long the restart guard still waits, ms.
    guard_remaining_ms: u64,
    /// True once the lease is lost.
    lost: bool,
    /// The last store error, or why the lease was lost; empty if none.
    last_error: String,
}

/// The generator's counters.
#[derive(ToSchema)]
pub struct Counters {
    /// IDs issued.
    ids_issued: u64,
    /// Calls that waited out a small clock rewind.
    rewinds_waited: u64,
    /// Calls refused: the clock was behind or stuck past the wait budget.
    rewinds_refused: u64,
    /// Times a millisecond's sequence was spent and a strict call waited.
    sequence_exhaustions: u64,
    /// Sleeps taken while waiting.
    wait_sleeps: u64,
    /// Milliseconds a monotonic generator moved ahead of the wall clock.
    ms_borrowed: u64,
    /// Monotonic calls refused by max_lead_ms.
    lead_refused: u64,
    /// Strict calls refused because the wall clock had stepped ahead of elapsed time.
    forward_refused: u64,
    /// Lease renewals.
    lease_renewals: u64,
    /// Failed lease renewals.
    lease_failures: u64,
    /// Calls that waited for a static node id's restart guard.
    restart_waits: u64,
}

/// Every error answer: `{"error": {"code": ..., "message": ...}}`.
#[derive(ToSchema)]
pub struct ErrorResponse {
    /// What went wrong.
    error: ErrorDetail,
}

/// The error's code and message.
#[derive(ToSchema)]
pub struct ErrorDetail {
    /// A stable upper-case code: `INVALID_COUNT`, `MALFORMED_JSON`, `DUPLICATE_KEY`, the core's
    /// `CLOCK_MOVED_BACKWARDS`, ...
    code: String,
    /// What was wrong, in words.
    message: String,
}

/// A regular expression (ECMA-262 and Python `re` alike) for the decimal text of the numbers
/// 0 to `max`: digits only, leading zeros allowed (`"007"` is 7), as `polyflake::parse_id`
/// reads them.
///
/// ```
/// let re = polyflake_service::openapi::decimal_at_most(305);
/// assert_eq!(re, "^0*(?:[0-9]{1,2}|[0-2][0-9]{2}|30[0-4]|305)$");
/// ```
pub fn decimal_at_most(max: u64) -> String {
    let digits: Vec<u8> = max.to_string().bytes().map(|b| b - b'0').collect();
    let len = digits.len();
    let mut alternatives = Vec::new();
    if len > 1 {
        alternatives.push(if len == 2 {
            "[0-9]".to_string()
        } else {
            format!("[0-9]{{1,{}}}", len - 1)
        });
    }
    for (i, &d) in digits.iter().enumerate() {
        if d == 0 {
            continue;
        }
        let prefix: String = digits[..i].iter().map(|d| char::from(b'0' + d)).collect();
        let lower = if d == 1 {
            "0".to_string()
        } else {
            format!("[0-{}]", d - 1)
        };
        let rest = match len - i - 1 {
            0 => String::new(),
            1 => "[0-9]".to_string(),
            n => format!("[0-9]{{{n}}}"),
        };
        alternatives.push(format!("{prefix}{lower}{rest}"));
    }
    alternatives.push(max.to_string());
    format!("^0*(?:{})$", alternatives.join("|"))
}

/// Apply what the derive cannot say: the count cap of this service, that the request body is
/// optional and has no other field, the exact text of an ID (in the schema and in the `{id}`
/// parameter).
pub fn finish(mut doc: Value, max_count: usize) -> Value {
    let id_pattern = Value::String(decimal_at_most(polyflake::MAX_ID));
    let schemas = &mut doc["components"]["schemas"];
    schemas["IdsRequest"]["additionalProperties"] = Value::Bool(false);
    schemas["IdsRequest"]["properties"]["count"]["maximum"] = Value::from(max_count);
    schemas["IdText"]["pattern"] = id_pattern.clone();
    schemas["IdsRequest"]["properties"]["format"]["enum"] =
        serde_json::json!(["snowflake", "uuidv7", "ulid"]);
    // The text forms the core writes (format_uuid: lower-case hex, version 7 and variant 0b10
    // set by the generator; format_ulid: upper-case Crockford base32).
    schemas["Uuid7Text"]["pattern"] =
        Value::from("^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
    schemas["UlidText"]["pattern"] = Value::from("^[0-7][0-9A-HJKMNP-TV-Z]{25}$");
    schemas["Uuid7IdsResponse"]["properties"]["format"]["enum"] = serde_json::json!(["uuidv7"]);
    schemas["UlidIdsResponse"]["properties"]["format"]["enum"] = serde_json::json!(["ulid"]);
    // The 64-bit answer has no `format`; the other two have nothing else: exactly one matches.
    schemas["Uuid7IdsResponse"]["additionalProperties"] = Value::Bool(false);
    schemas["UlidIdsResponse"]["additionalProperties"] = Value::Bool(false);
    let ok = &mut doc["paths"]["/v1/ids"]["post"]["responses"]["200"]["content"]
        ["application/json"]["schema"];
    *ok = serde_json::json!({"oneOf": [
        {"$ref": "#/components/schemas/IdsResponse"},
        {"$ref": "#/components/schemas/Uuid7IdsResponse"},
        {"$ref": "#/components/schemas/UlidIdsResponse"},
    ]});
    // An empty body asks for one ID.
    doc["paths"]["/v1/ids"]["post"]["requestBody"]["required"] = Value::Bool(false);
    if let Some(params) = doc["paths"]["/v1/ids/{id}"]["get"]["parameters"].as_array_mut() {
        for p in params {
            if p["name"] == "id" {
                p["schema"]["pattern"] = id_pattern.clone();
            }
        }
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::decimal_at_most;
    use regex::Regex;

    #[test]
    fn pattern_is_exactly_the_numbers_up_to_max() {
        for max in [0u64, 1, 9, 10, 19, 20, 99, 100, 101, 305, 1000, 4096, 9099] {
            let re = Regex::new(&decimal_at_most(max)).unwrap();
            for n in 0..=max * 2 + 20 {
                for text in [n.to_string(), format!("00{n}")] {
                    assert_eq!(re.is_match(&text), n <= max, "{re} on {text}");
                }
            }
            assert!(!re.is_match(""));
            assert!(!re.is_match("-1"));
            assert!(!re.is_match("1 "));
        }
        let re = Regex::new(&decimal_at_most(polyflake::MAX_ID)).unwrap();
        for (text, ok) in [
            ("9223372036854775807", true),
            ("9223372036854775808", false),
            ("09223372036854775807", true),
            ("9223372036854775799", true),
            ("9223372036854775710", true),
            ("9223372036854775900", false),
            ("9999999999999999999", false),
            ("10000000000000000000", false),
            ("141264821508263936", true),
            ("0", true),
            ("", false),
        ] {
            assert_eq!(re.is_match(text), ok, "{text}");
            assert_eq!(polyflake::parse_id(text).is_ok(), ok, "{text}");
        }
    }
}
