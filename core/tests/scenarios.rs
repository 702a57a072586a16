//! Runs every scenario file in `tests/vectors/scenarios/` (the schema is in the README beside
//! them) through the Rust core. Every binding runs the same files.

use polyflake::{
    ulid_timestamp_ms, uuid7_timestamp_ms, ClockSource, Error, FileLeaseOptions, Generator, Health,
    Layout, ManualClock, Mode, NodeSource, ScriptedClock, TimeIdBuilder, UlidGenerator,
    Uuid7Generator, DEFAULT_EPOCH_MS,
};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn scenario_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/scenarios")
}

/// Expand a scripted clock's values: plain integers, or runs `{start, count, step?, each?}`
/// giving `start + step * (i / each)` for i in 0..count.
fn expand_values(values: &[Value]) -> Vec<i64> {
    let mut out = Vec::new();
    for v in values {
        if let Some(n) = v.as_i64() {
            out.push(n);
            continue;
        }
        let start = v["start"].as_i64().expect("run.start");
        let count = v["count"].as_i64().expect("run.count");
        let step = v.get("step").and_then(Value::as_i64).unwrap_or(0);
        let each = v.get("each").and_then(Value::as_i64).unwrap_or(1);
        out.extend((0..count).map(|i| start + step * (i / each)));
    }
    out
}

fn layout_of(v: Option<&Value>) -> Result<Layout, Error> {
    match v {
        None => Ok(Layout::DEFAULT),
        Some(Value::String(name)) => Layout::from_name(name),
        Some(Value::Array(bits)) => {
            let b: Vec<u32> = bits.iter().map(|x| x.as_u64().unwrap() as u32).collect();
            Layout::new(b[0], b[1], b[2])
        }
        Some(other) => panic!("bad layout {other}"),
    }
}

struct Built {
    gen: Gen,
    manual: Option<ManualClock>,
}

/// A scenario's generator: a Snowflake one, or one of the 128-bit formats (`"format"`).
enum Gen {
    Flake(Generator),
    Uuid7(Uuid7Generator),
    Ulid(UlidGenerator),
}

impl Gen {
    fn next_id(&self) -> Result<u128, Error> {
        match self {
            Gen::Flake(g) => g.next_id().map(u128::from),
            Gen::Uuid7(g) => g.next_uuid(),
            Gen::Ulid(g) => g.next_ulid(),
        }
    }
    fn next_ids(&self, n: usize) -> Result<Vec<u128>, Error> {
        match self {
            Gen::Flake(g) => {
                let mut buf = vec![0u64; n];
                g.next_ids(&mut buf)?;
                Ok(buf.into_iter().map(u128::from).collect())
            }
            Gen::Uuid7(g) => {
                let mut buf = vec![0u128; n];
                g.next_uuids(&mut buf)?;
                Ok(buf)
            }
            Gen::Ulid(g) => {
                let mut buf = vec![0u128; n];
                g.next_ulids(&mut buf)?;
                Ok(buf)
            }
        }
    }
    fn health(&self) -> Health {
        match self {
            Gen::Flake(g) => g.health(),
            Gen::Uuid7(g) => g.health(),
            Gen::Ulid(g) => g.health(),
        }
    }
    fn close(&self) {
        match self {
            Gen::Flake(g) => g.close(),
            Gen::Uuid7(g) => g.close(),
            Gen::Ulid(g) => g.close(),
        }
    }
    fn flake(&self) -> &Generator {
        match self {
            Gen::Flake(g) => g,
            _ => panic!("a Snowflake-only step on a UUIDv7/ULID generator"),
        }
    }
    /// The decoded fields a `first`/`last` expectation names: all three for Snowflake IDs,
    /// only `timestamp_ms` for the 128-bit formats.
    fn check(&self, id: u128, want: &Value, what: &str) {
        match self {
            Gen::Flake(g) => check_decoded(g, id as u64, want, what),
            Gen::Uuid7(_) | Gen::Ulid(_) => {
                only_keys(want, &["timestamp_ms"], what);
                let ms = match self {
                    Gen::Uuid7(_) => uuid7_timestamp_ms(id).unwrap(),
                    _ => ulid_timestamp_ms(id),
                };
                assert_eq!(
                    ms,
                    want["timestamp_ms"].as_i64().unwrap(),
                    "{what}: timestamp"
                );
            }
        }
    }
}

thread_local! {
    /// The clock source every generator of the running scenario uses (every file runs on the
    /// precise source and again on the coarse one).
    static SOURCE: std::cell::Cell<ClockSource> = const { std::cell::Cell::new(ClockSource::Precise) };
}

/// `lease_dir`: the scenario's one temporary directory for its file-lease generators.
fn build(spec: &Value, lease_dir: &Path) -> Result<Built, Error> {
    let mode = match spec["mode"].as_str().expect("mode") {
        "strict" => Mode::Strict,
        "monotonic" => Mode::Monotonic,
        m => panic!("bad mode {m}"),
    };
    if let Some(format) = spec.get("format") {
        return build_format(spec, format.as_str().expect("format"), mode);
    }
    let b = match spec.get("source") {
        None => Generator::builder(spec["node_id"].as_i64().expect("node_id")),
        Some(source) => {
            only_keys(source, &["kind", "slots", "reserve_ms"], "source");
            assert_eq!(source["kind"], "file_lease", "source kind");
            let mut o = FileLeaseOptions::new(lease_dir);
            o.common.slots = source.get("slots").map(|v| v.as_u64().unwrap() as u32);
            if let Some(r) = source.get("reserve_ms") {
                o.common.reserve_ms = r.as_u64().unwrap();
            }
            Generator::builder_from(NodeSource::FileLease(o))
        }
    };
    let mut b = b
        .mode(mode)
        .layout(layout_of(spec.get("layout"))?)
        .epoch_ms(
            spec.get("epoch_ms")
                .and_then(Value::as_i64)
                .unwrap_or(DEFAULT_EPOCH_MS),
        );
    if let Some(w) = spec.get("max_wait_ms").and_then(Value::as_f64) {
        b = b.max_wait_ms(w);
    }
    if let Some(l) = spec.get("max_lead_ms").and_then(Value::as_i64) {
        b = b.max_lead_ms(Some(l));
    }
    if let Some(step) = spec.get("max_forward_step_ms") {
        b = b.max_forward_step_ms(step.as_u64());
    }
    if let Some(c) = spec.get("forward_confirm_ms").and_then(Value::as_u64) {
        b = b.forward_confirm_ms(c);
    }
    b = b.clock_source(SOURCE.with(|s| s.get()));
    let mut manual = None;
    if let Some(clock) = spec.get("clock") {
        match clock["kind"].as_str().expect("clock.kind") {
            "manual" => {
                let c = ManualClock::new(clock["start_ms"].as_i64().unwrap());
                manual = Some(c.clone());
                b = b.clock(c);
            }
            "scripted" => {
                let values = expand_values(clock["values"].as_array().unwrap());
                b = b.clock(ScriptedClock::new(values));
            }
            k => panic!("bad clock kind {k}"),
        }
    }
    Ok(Built {
        gen: Gen::Flake(b.build()?),
        manual,
    })
}

/// A `"format": "uuidv7" | "ulid"` generator: mode, wait and lead settings, forward settings and
/// a clock (no node id, layout, epoch or source).
fn build_format(spec: &Value, format: &str, mode: Mode) -> Result<Built, Error> {
    only_keys(
        spec,
        &[
            "mode",
            "format",
            "deferred",
            "max_wait_ms",
            "max_lead_ms",
            "max_forward_step_ms",
            "forward_confirm_ms",
            "clock",
        ],
        "format generator",
    );
    let mut b = TimeIdBuilder::new()
        .mode(mode)
        .clock_source(SOURCE.with(|s| s.get()));
    if let Some(w) = spec.get("max_wait_ms").and_then(Value::as_f64) {
        b = b.max_wait_ms(w);
    }
    if let Some(l) = spec.get("max_lead_ms").and_then(Value::as_i64) {
        b = b.max_lead_ms(Some(l));
    }
    if let Some(step) = spec.get("max_forward_step_ms") {
        b = b.max_forward_step_ms(step.as_u64());
    }
    if let Some(c) = spec.get("forward_confirm_ms").and_then(Value::as_u64) {
        b = b.forward_confirm_ms(c);
    }
    let mut manual = None;
    if let Some(clock) = spec.get("clock") {
        match clock["kind"].as_str().expect("clock.kind") {
            "manual" => {
                let c = ManualClock::new(clock["start_ms"].as_i64().unwrap());
                manual = Some(c.clone());
                b = b.clock(c);
            }
            "scripted" => {
                b = b.clock(ScriptedClock::new(expand_values(
                    clock["values"].as_array().unwrap(),
                )))
            }
            k => panic!("bad clock kind {k}"),
        }
    }
    let gen = match format {
        "uuidv7" => Gen::Uuid7(b.build_uuid7()?),
        "ulid" => Gen::Ulid(b.build_ulid()?),
        f => panic!("unknown format {f}"),
    };
    Ok(Built { gen, manual })
}

fn check_decoded(gen: &Generator, id: u64, want: &Value, what: &str) {
    let d = gen.decode(id).unwrap();
    assert_eq!(
        d.timestamp_ms,
        want["timestamp_ms"].as_i64().unwrap(),
        "{what}: timestamp"
    );
    assert_eq!(
        i64::from(d.node_id),
        want["node_id"].as_i64().unwrap(),
        "{what}: node"
    );
    assert_eq!(
        i64::from(d.sequence),
        want["sequence"].as_i64().unwrap(),
        "{what}: sequence"
    );
}

fn health_field(h: &Health, key: &str) -> Value {
    match key {
        "ok" => Value::from(h.ok),
        "status" => Value::from(h.status.name()),
        "lead_ms" => Value::from(h.lead_ms),
        "ids_issued" => Value::from(h.ids_issued),
        "rewinds_waited" => Value::from(h.rewinds_waited),
        "rewinds_refused" => Value::from(h.rewinds_refused),
        "sequence_exhaustions" => Value::from(h.sequence_exhaustions),
        "wait_sleeps" => Value::from(h.wait_sleeps),
        "ms_borrowed" => Value::from(h.ms_borrowed),
        "lead_refused" => Value::from(h.lead_refused),
        "clock_ahead_ms" => Value::from(h.clock_ahead_ms),
        "forward_refused" => Value::from(h.forward_refused),
        other => panic!("unknown health field {other}"),
    }
}

/// A health expectation is a value, or `{min, max}` bounds for counters.
fn check_expectation(got: &Value, want: &Value, what: &str) {
    if let Some(obj) = want.as_object() {
        let g = got.as_f64().unwrap();
        if let Some(min) = obj.get("min") {
            assert!(g >= min.as_f64().unwrap(), "{what}: {g} < min {min}");
        }
        if let Some(max) = obj.get("max") {
            assert!(g <= max.as_f64().unwrap(), "{what}: {g} > max {max}");
        }
    } else {
        assert_eq!(got, want, "{what}");
    }
}

/// Fork; the child calls `next_id` once on `g` and writes the outcome (an error code, or "ok")
/// into a pipe, which the parent returns.
fn next_id_in_child(g: &Generator) -> String {
    let mut fds = [0i32; 2];
    // SAFETY: pipe and fork as documented; the child only calls the generator, writes and exits.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe");
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let outcome: &str = match g.next_id() {
            Ok(_) => "ok",
            Err(e) => e.code(),
        };
        unsafe {
            libc::write(fds[1], outcome.as_ptr().cast(), outcome.len());
            libc::_exit(0);
        }
    }
    unsafe { libc::close(fds[1]) };
    let mut buf = [0u8; 64];
    let mut len = 0;
    loop {
        let n = unsafe { libc::read(fds[0], buf[len..].as_mut_ptr().cast(), buf.len() - len) };
        if n <= 0 {
            break;
        }
        len += n as usize;
    }
    let mut status = 0;
    unsafe {
        libc::close(fds[0]);
        libc::waitpid(pid, &mut status, 0);
    }
    assert!(libc::WIFEXITED(status), "child died: status {status}");
    String::from_utf8_lossy(&buf[..len]).into_owned()
}

/// Fail on any key this runner does not know: a misspelt expectation must not pass silently.
fn only_keys(v: &Value, allowed: &[&str], what: &str) {
    for k in v
        .as_object()
        .unwrap_or_else(|| panic!("{what}: not an object"))
        .keys()
    {
        assert!(allowed.contains(&k.as_str()), "{what}: unknown key {k:?}");
    }
}

const SPEC_KEYS: &[&str] = &[
    "mode",
    "node_id",
    "source",
    "deferred",
    "layout",
    "epoch_ms",
    "max_wait_ms",
    "max_lead_ms",
    "max_forward_step_ms",
    "forward_confirm_ms",
    "clock",
    "format",
];
const STEP_KEYS: &[&str] = &[
    "op",
    "gen",
    "count",
    "id",
    "ms",
    "config",
    "expect",
    "within_ms",
];
const ID_EXPECT_KEYS: &[&str] = &[
    "error",
    "ids",
    "sequences",
    "max_sequence",
    "first",
    "last",
    "increasing",
];

fn run_scenario(path: &PathBuf) -> usize {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let name = doc["name"].as_str().unwrap().to_string();
    only_keys(
        &doc,
        &[
            "name",
            "description",
            "source",
            "needs",
            "generators",
            "steps",
        ],
        &name,
    );
    // Rust offers every need: fork (libc::fork) and leases on an injected clock.
    for need in doc
        .get("needs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let need = need.as_str().unwrap();
        assert!(["fork"].contains(&need), "{name}: unknown need {need:?}");
    }
    let lease_dir =
        std::env::temp_dir().join(format!("polyflake-scenario-{}-{name}", std::process::id()));
    assert_eq!(
        path.file_stem().unwrap().to_str().unwrap(),
        name,
        "file name and scenario name differ"
    );
    for spec in doc["generators"].as_object().unwrap().values() {
        only_keys(spec, SPEC_KEYS, &name);
    }
    let mut gens: BTreeMap<String, Built> = BTreeMap::new();
    for (key, spec) in doc["generators"].as_object().unwrap() {
        if spec.get("deferred") == Some(&Value::Bool(true)) {
            continue;
        }
        let built =
            build(spec, &lease_dir).unwrap_or_else(|e| panic!("{name}: building {key}: {e}"));
        gens.insert(key.clone(), built);
    }
    let mut all: HashSet<u128> = HashSet::new();
    let mut last_per_gen: BTreeMap<String, u128> = BTreeMap::new();
    let mut checks = 0;
    for (i, step) in doc["steps"].as_array().unwrap().iter().enumerate() {
        let what = format!("{name} step {i}");
        only_keys(step, STEP_KEYS, &what);
        let op = step["op"].as_str().unwrap();
        let expect = &step["expect"];
        if op == "next_id" || op == "next_ids" {
            only_keys(expect, ID_EXPECT_KEYS, &what);
        }
        if op == "construct" {
            only_keys(&step["config"], SPEC_KEYS, &what);
            only_keys(expect, &["error", "ok"], &what);
        }
        if (op == "create" || op == "fork") && !expect.is_null() {
            only_keys(expect, &["error"], &what);
        }
        if op == "close" {
            assert!(expect.is_null(), "{what}: close expects nothing");
        }
        if op == "decode" {
            only_keys(expect, &["decoded"], &what);
        }
        let started = Instant::now();
        match op {
            "create" => {
                let key = step["gen"].as_str().unwrap();
                let spec = &doc["generators"][key];
                assert_eq!(spec["deferred"], true, "{what}: {key} is not deferred");
                assert!(!gens.contains_key(key), "{what}: {key} exists already");
                match (build(spec, &lease_dir), expect.get("error")) {
                    (Ok(built), None) => {
                        gens.insert(key.to_string(), built);
                    }
                    (Err(e), Some(code)) => assert_eq!(e.code(), code, "{what}: {e}"),
                    (Ok(_), Some(code)) => panic!("{what}: expected {code}, built"),
                    (Err(e), None) => panic!("{what}: {e}"),
                }
            }
            "close" => {
                let key = step["gen"].as_str().unwrap();
                gens.get(key)
                    .unwrap_or_else(|| panic!("{what}: no {key}"))
                    .gen
                    .close();
            }
            "fork" => {
                let g = &gens[step["gen"].as_str().unwrap()];
                let outcome = next_id_in_child(g.gen.flake());
                let want = expect.get("error").and_then(Value::as_str).unwrap_or("ok");
                assert_eq!(outcome, want, "{what}: the child's next_id");
            }
            "construct" => {
                let got = build(&step["config"], &lease_dir);
                match expect.get("error").and_then(Value::as_str) {
                    Some(code) => {
                        let err = got.err().unwrap_or_else(|| panic!("{what}: built"));
                        assert_eq!(err.code(), code, "{what}: {err}");
                    }
                    None => assert!(got.is_ok(), "{what}: {:?}", got.err()),
                }
            }
            "clock_set" | "clock_advance" | "clock_elapse" => {
                let g = &gens[step["gen"].as_str().unwrap()];
                let c = g.manual.as_ref().expect("manual clock");
                let ms = step["ms"].as_i64().unwrap();
                match op {
                    "clock_set" => c.set(ms),
                    "clock_advance" => c.advance(ms),
                    _ => c.elapse(u64::try_from(ms).expect("elapse: ms >= 0")),
                }
            }
            "decode" => {
                let g = &gens[step["gen"].as_str().unwrap()];
                let id: u64 = step["id"].as_str().unwrap().parse().unwrap();
                check_decoded(g.gen.flake(), id, &expect["decoded"], &what);
            }
            "health" => {
                let g = &gens[step["gen"].as_str().unwrap()];
                let h = g.gen.health();
                for (k, want) in expect.as_object().unwrap() {
                    check_expectation(&health_field(&h, k), want, &format!("{what}: {k}"));
                }
            }
            "next_id" | "next_ids" => {
                let key = step["gen"].as_str().unwrap();
                let gen = &gens[key].gen;
                let count = step.get("count").and_then(Value::as_u64).unwrap_or(1) as usize;
                let want_error = expect.get("error").and_then(Value::as_str);
                let mut ids = Vec::with_capacity(count);
                let mut failure = None;
                if op == "next_id" {
                    for _ in 0..count {
                        match gen.next_id() {
                            Ok(id) => ids.push(id),
                            Err(e) => {
                                failure = Some(e);
                                break;
                            }
                        }
                    }
                } else {
                    match gen.next_ids(count) {
                        Ok(buf) => ids = buf,
                        Err(e) => failure = Some(e),
                    }
                }
                match (want_error, &failure) {
                    (Some(code), Some(e)) => {
                        assert_eq!(e.code(), code, "{what}: {e}");
                        // With a repeat count, every call but the last must have succeeded.
                        if op == "next_id" {
                            assert_eq!(ids.len(), count - 1, "{what}: failed early");
                        }
                    }
                    (Some(code), None) => panic!("{what}: expected {code}, got IDs"),
                    (None, Some(e)) => panic!("{what}: unexpected error {e}"),
                    (None, None) => {}
                }
                if let Some(want) = expect.get("ids") {
                    let want: Vec<u128> = want
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_str().unwrap().parse().unwrap())
                        .collect();
                    assert_eq!(ids, want, "{what}: ids");
                }
                if let Some(want) = expect.get("sequences") {
                    let g = gen.flake();
                    let got: Vec<u64> = ids
                        .iter()
                        .map(|id| u64::from(g.decode(*id as u64).unwrap().sequence))
                        .collect();
                    let want: Vec<u64> = want
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_u64().unwrap())
                        .collect();
                    assert_eq!(got, want, "{what}: sequences");
                }
                if let Some(want) = expect.get("max_sequence") {
                    let g = gen.flake();
                    let got = ids
                        .iter()
                        .map(|id| g.decode(*id as u64).unwrap().sequence)
                        .max();
                    assert_eq!(got.map(u64::from), want.as_u64(), "{what}: max_sequence");
                }
                if let Some(want) = expect.get("first") {
                    gen.check(ids[0], want, &format!("{what}: first"));
                }
                if let Some(want) = expect.get("last") {
                    gen.check(*ids.last().unwrap(), want, &format!("{what}: last"));
                }
                // Always: strictly increasing per generator across steps, unique across all.
                let mut prev = last_per_gen.get(key).copied();
                for id in &ids {
                    assert!(prev.map_or(true, |p| *id > p), "{what}: not increasing");
                    assert!(all.insert(*id), "{what}: duplicate {id}");
                    prev = Some(*id);
                }
                if let Some(p) = prev {
                    last_per_gen.insert(key.to_string(), p);
                }
            }
            other => panic!("{what}: unknown op {other}"),
        }
        if let Some(bound) = step.get("within_ms").and_then(Value::as_f64) {
            let took = started.elapsed().as_secs_f64() * 1000.0;
            assert!(took < bound, "{what}: took {took:.1} ms, bound {bound} ms");
        }
        checks += 1;
    }
    drop(gens);
    let _ = std::fs::remove_dir_all(&lease_dir);
    checks
}

#[test]
fn every_scenario_file_passes() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(scenario_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    // The 128-bit formats' scenarios wait in formats/ until every runner runs them.
    let mut formats: Vec<PathBuf> = std::fs::read_dir(scenario_dir().join("formats"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    formats.sort();
    for f in &formats {
        for source in ClockSource::ALL {
            SOURCE.with(|s| s.set(source));
            assert!(run_scenario(f) > 0, "{} has no steps", f.display());
        }
    }
    assert!(files.len() >= 15, "scenario files missing: {}", files.len());
    let mut coverage = String::new();
    for f in &files {
        for source in ClockSource::ALL {
            SOURCE.with(|s| s.set(source));
            let steps = run_scenario(f);
            assert!(steps > 0, "{} has no steps", f.display());
            eprintln!(
                "scenario {} ok on the {} clock ({steps} steps)",
                f.display(),
                source.name()
            );
        }
        coverage += &format!("{} ok\n", f.file_stem().unwrap().to_str().unwrap());
    }
    // The coverage record `make test` checks (tests/vectors/check_coverage.py).
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let dir = target.join("scenario-coverage");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("rust.txt"), coverage).unwrap();
}
