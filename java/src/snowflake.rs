//! `dev.polyflake.Snowflake`: the core's [`Generator`] behind a handle. The builder's options
//! become the core's `Settings`, `Layout` and `NodeSource` here (type conversion only: every
//! range and rule is the core's), and the calls map one to one.

use crate::clock::from_handle;
use crate::error::{kinds, run, run_fast, Fail};
use crate::wire::{bad, encode_fields, Options};
use jni::objects::{JClass, JLongArray, JString};
use jni::sys::{jboolean, jint, jlong};
use jni::{Env, EnvUnowned};
use polyflake::{
    batch_len, interruptible, ClockSource, Error, EtcdLeaseOptions, FileLeaseOptions, Generator,
    Layout, LeaseCommon, Mode, NodeSource, RemoteStore, RestartGuard, RestartGuardOptions, Result,
    Settings, ZooKeeperLeaseOptions,
};
use std::time::Duration;

/// A Java string argument (the Java side never sends null).
pub(crate) fn string(env: &Env<'_>, s: &JString<'_>) -> Result<String, Fail> {
    Ok(s.try_to_string(env)?)
}

/// The settings every generator kind shares, from `o`, over the core's defaults; and the clock.
pub(crate) fn settings(o: &mut Options, clock: jlong) -> Result<Settings> {
    let mut s = Settings::default();
    if let Some(m) = o.take("mode") {
        s.mode = Mode::from_name(&m)?;
    }
    if let Some(v) = o.number("max_wait_ms")? {
        s.max_wait_ms = v;
    }
    match o.take("max_lead_ms").as_deref() {
        Some("off") => s.max_lead_ms = None,
        Some(v) => {
            let lead = v.parse::<i64>();
            s.max_lead_ms = Some(lead.map_err(|_| Error::too_wide("max_lead_ms", v))?);
        }
        None => {}
    }
    if let Some(v) = o.number("max_clock_error_ms")? {
        s.max_clock_error_ms = Some(v);
    }
    match o.take("max_forward_step_ms").as_deref() {
        Some("off") => s.max_forward_step_ms = None,
        Some(v) => {
            let step = v.parse::<u64>();
            s.max_forward_step_ms =
                Some(step.map_err(|_| Error::too_wide("max_forward_step_ms", v))?);
        }
        None => {}
    }
    if let Some(v) = o.number("forward_confirm_ms")? {
        s.forward_confirm_ms = v;
    }
    if let Some(name) = o.take("clock_source") {
        s.clock_source = ClockSource::from_name(&name)?;
    }
    s.clock = from_handle(clock).map(|c| c.shared());
    Ok(s)
}

/// A lease's `LeaseCommon` (slots, identity, reserve, guard wait, heal) over the core's defaults.
fn lease_common(o: &mut Options) -> Result<LeaseCommon> {
    let mut c = LeaseCommon::default();
    if let Some(v) = o.number("slots")? {
        c.slots = Some(v);
    }
    if let Some(v) = o.take("identity") {
        c.identity = Some(v);
    }
    if let Some(v) = o.number("reserve_ms")? {
        c.reserve_ms = v;
    }
    if let Some(v) = o.number("max_guard_wait_ms")? {
        c.max_guard_wait_ms = v;
    }
    if let Some(v) = o.take("heal") {
        c.heal = v
            .parse()
            .map_err(|_| bad("heal", format!("{v:?} is not true or false")))?;
    }
    Ok(c)
}

/// A remote store's prefix, connect timeout and credentials over `store`.
fn remote_store(o: &mut Options, mut store: RemoteStore) -> Result<RemoteStore> {
    if let Some(v) = o.take("prefix") {
        store.prefix = v;
    }
    if let Some(v) = o.number("connect_timeout_ms")? {
        store.connect_timeout_ms = v;
    }
    for pair in o.take_all("credential") {
        let (key, value) = pair.split_once('=').unwrap_or((&pair, ""));
        store.credentials.set(key, Some(value.into()))?;
    }
    Ok(store)
}

/// Where the node id comes from: `source` (absent: the static `node_id`).
fn node_source(o: &mut Options) -> Result<NodeSource> {
    let source = o.take("source");
    Ok(match source.as_deref() {
        None => {
            let id = o.take("node_id").unwrap_or_default();
            let id = id.parse::<i128>();
            NodeSource::Static(id.map_err(|_| bad("node_id", "no node id given".into()))?)
        }
        Some("file_lease") => NodeSource::FileLease(FileLeaseOptions {
            dir: o.take("dir").unwrap_or_default().into(),
            common: lease_common(o)?,
        }),
        Some("etcd") => {
            let mut e = EtcdLeaseOptions::new(o.take_all("endpoint"));
            if let Some(v) = o.number("ttl_s")? {
                e.ttl_s = v;
            }
            e.store = remote_store(o, e.store)?;
            e.common = lease_common(o)?;
            NodeSource::Etcd(e)
        }
        Some("zookeeper") => {
            let mut z =
                ZooKeeperLeaseOptions::from_ensemble(&o.take("ensemble").unwrap_or_default());
            if let Some(v) = o.number("session_timeout_ms")? {
                z.session_timeout_ms = v;
            }
            z.store = remote_store(o, z.store)?;
            z.common = lease_common(o)?;
            NodeSource::ZooKeeper(z)
        }
        Some("env") => NodeSource::Env {
            var: o.take("var").unwrap_or_default(),
        },
        Some("hostname") => NodeSource::Hostname {
            hostname: o.take("hostname"),
        },
        Some("ipv4") => {
            let addr = o.take("addr").unwrap_or_default();
            NodeSource::ipv4(&addr, o.number("prefix_len")?.unwrap_or(-1))?
        }
        Some(other) => return Err(bad("source", format!("{other:?} is not a node source"))),
    })
}

/// A fixed node id's restart guard (whether and where its mark is kept, how far ahead, how
/// long a call waits for it) over the core's defaults. `reserve_ms` is still there only for a
/// fixed node id: a lease's options took theirs.
fn restart_guard(o: &mut Options) -> Result<RestartGuardOptions> {
    let mut g = RestartGuardOptions::default();
    if let Some(name) = o.take("restart_guard") {
        g.mode = Some(RestartGuard::from_name(&name)?);
    }
    if let Some(dir) = o.take("state_dir") {
        g.state_dir = Some(dir.into());
    }
    if let Some(v) = o.number("reserve_ms")? {
        g.reserve_ms = v;
    }
    if let Some(v) = o.number("max_restart_wait_ms")? {
        g.max_wait_ms = v;
    }
    Ok(g)
}

/// A layout from `"41,10,12"` or a preset's name.
pub(crate) fn layout(text: &str) -> Result<Layout> {
    let bits: Vec<&str> = text.split(',').collect();
    match bits[..] {
        [t, n, s] => {
            let num = |name, v: &str| v.parse::<u32>().map_err(|_| Error::too_wide(name, v));
            let t = num("timestamp_bits", t)?;
            Layout::new(t, num("node_bits", n)?, num("sequence_bits", s)?)
        }
        _ => Layout::from_name(text),
    }
}

/// The generator `options` and `clock` describe.
fn build(options: &str, clock: jlong) -> Result<Generator> {
    let mut o = Options::parse(options)?;
    let source = node_source(&mut o)?;
    let settings = settings(&mut o, clock)?;
    let guard = restart_guard(&mut o)?;
    let mut b = Generator::builder_from(source)
        .settings(settings)
        .restart_guard(guard);
    if let Some(scope) = o.take("host_scope") {
        b = b.host_scope(scope);
    }
    if let Some(l) = o.take("layout") {
        b = b.layout(layout(&l)?);
    }
    if let Some(e) = o.number("epoch_ms")? {
        b = b.epoch_ms(e);
    }
    o.finish()?;
    b.build()
}

/// The generator behind `handle`.
fn gen(handle: jlong) -> &'static Generator {
    // SAFETY: the handle is a `Box<Generator>` from `snowflakeNew`, freed only by the Java
    // object's Cleaner once it is unreachable, and the Java side keeps it reachable through
    // every call (reachabilityFence).
    unsafe { &*(handle as *const Generator) }
}

/// `Snowflake.Builder.build()`: a handle.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_snowflakeNew<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    options: JString<'l>,
    clock: jlong,
) -> jlong {
    run(&mut env, |env| {
        let g = build(&string(env, &options)?, clock)?;
        Ok(Box::into_raw(Box::new(g)) as jlong)
    })
}

/// One ID if it needs no wait; -1 where the core would wait (IDs are never negative).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_snowflakeTryNext<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jlong {
    run_fast(&mut env, || {
        Ok(gen(handle).try_next_id()?.map_or(-1, |id| id as jlong))
    })
}

/// Run a call that may wait. For a Java thread already interrupted it runs under the core's
/// interrupt hook saying stop: it issues what needs no wait and otherwise fails with the core's
/// `Interrupted` at once, rather than sleeping in native code (up to a restart guard's
/// `max_wait_ms`, 10 s by default) on a thread asked to stop.
pub(crate) fn waiting<T>(interrupted: jboolean, call: impl FnOnce() -> T) -> T {
    if interrupted {
        interruptible(&|| true, call)
    } else {
        call()
    }
}

/// One ID, waiting as the core waits (an injected clock's calls, and the last attempt on the
/// system clock once the Java side has parked for the wait budget); `interrupted`: see
/// [`waiting`].
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_snowflakeNext<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    interrupted: jboolean,
) -> jlong {
    run(&mut env, |_| {
        Ok(waiting(interrupted, || gen(handle).next_id())? as jlong)
    })
}

/// Fill `buf[0..n]` with a batch: `may_wait` false is the core's all-or-nothing
/// `try_next_ids` (false: nothing issued, it would wait), true its waiting `next_ids`
/// (`interrupted`: see [`waiting`]).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_snowflakeNextIds<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    buf: JLongArray<'l>,
    may_wait: jboolean,
    interrupted: jboolean,
) -> jboolean {
    if !may_wait {
        let raw = env.as_raw();
        let array = buf.as_raw();
        // SAFETY: `raw` is this call's JNIEnv and `array` a live long[] (the Java side checked
        // it is not null); see `try_fill_in_place`.
        return run_fast(&mut env, || unsafe {
            try_fill_in_place(raw, array, gen(handle))
        });
    }
    run(&mut env, |env| {
        let n = buf.len(env)?;
        let mut ids = vec![0u64; n];
        waiting(interrupted, || gen(handle).next_ids(&mut ids))?;
        // u64 and i64 share a layout, and every ID is below 2^63.
        let ids: Vec<i64> = ids.into_iter().map(|id| id as i64).collect();
        buf.set_region(env, 0, &ids)?;
        Ok(true)
    })
}

/// The core's `try_next_ids` written straight into the Java array, inside a JNI critical
/// section (no copy, no allocation): `try_next_ids` never sleeps, makes no JNI call and waits on
/// no Java thread, which is what a critical section allows (at most, a file lease whose renewal
/// thread is late renews in the caller's thread: file I/O, not a wait on the JVM; on JDK 17 a
/// garbage collection then waits for it, from JDK 22 on G1 only pins the array's region). It
/// writes nothing unless it issues the whole batch (all or nothing), so the array is left as it
/// was otherwise. Raw JNI: the `jni` crate's checked calls (an exception check before each)
/// would cost more than a batch's IDs.
///
/// # Safety
/// `env` is the current thread's JNIEnv in a native method call and `array` a live `long[]`.
unsafe fn try_fill_in_place(
    env: *mut jni::sys::JNIEnv,
    array: jni::sys::jlongArray,
    g: &Generator,
) -> Result<bool> {
    // SAFETY (all of this block): a valid JNIEnv's function table, called as the JNI spec
    // allows; between Get and Release only the core runs.
    unsafe {
        let jni = &**env;
        let n = (jni.v1_1.GetArrayLength)(env, array);
        let n = usize::try_from(n).unwrap_or(0);
        let ptr = (jni.v1_2.GetPrimitiveArrayCritical)(env, array, std::ptr::null_mut());
        if ptr.is_null() {
            // The JVM left an OutOfMemoryError pending: it is thrown as this call returns.
            return Ok(false);
        }
        // u64 and i64 share a layout, and every ID is below 2^63.
        let ids = std::slice::from_raw_parts_mut(ptr.cast::<u64>(), n);
        let issued = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| g.try_next_ids(ids)));
        let mode = if matches!(issued, Ok(Ok(true))) {
            0
        } else {
            jni::sys::JNI_ABORT
        };
        (jni.v1_2.ReleasePrimitiveArrayCritical)(env, array, ptr, mode);
        issued.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }
}

/// The core's check of a batch size (`nextIds(n)` with n negative or too large).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_batchLen<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    n: jlong,
) -> jint {
    run(&mut env, |_| Ok(batch_len(n.into())? as jint))
}

/// Decode `id` into `out` = [timestamp ms, node id, sequence] with the generator's layout and
/// epoch (`handle` 0: the default layout and epoch).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_decode<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    id: jlong,
    out: JLongArray<'l>,
) {
    run(&mut env, |env| {
        let id = polyflake::id_from_i128(id.into());
        let d = match handle {
            0 => polyflake::decode(id?)?,
            h => gen(h).decode(id?)?,
        };
        out.set_region(
            env,
            0,
            &[d.timestamp_ms, d.node_id.into(), d.sequence.into()],
        )?;
        Ok(())
    })
}

/// The health snapshot, as fields.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_snowflakeHealth<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> JString<'l> {
    run(&mut env, |env| {
        Ok(env.new_string(encode_fields(&gen(handle).health().fields()))?)
    })
}

/// The node id: a lease's current slot (a heal changes it).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_snowflakeNodeId<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jlong {
    run_fast(&mut env, || Ok(gen(handle).node_id().into()))
}

/// The generator's settings as fields: node_id, mode, layout bits, epoch, the wait budget,
/// whether its clock is injected, the clock source in use.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_snowflakeInfo<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> JString<'l> {
    use polyflake::Value::{Bool, Float, Int, Null, Text};
    run(&mut env, |env| {
        let g = gen(handle);
        let l = g.layout();
        let fields = vec![
            ("node_id", Int(g.node_id().into())),
            ("mode", Text(g.mode().name().into())),
            ("timestamp_bits", Int(l.timestamp_bits().into())),
            ("node_bits", Int(l.node_bits().into())),
            ("sequence_bits", Int(l.sequence_bits().into())),
            ("epoch_ms", Int(g.epoch_ms().into())),
            ("max_wait_ms", Float(g.max_wait_ms())),
            (
                "max_lead_ms",
                g.max_lead_ms().map_or(Null, |v| Int(v.into())),
            ),
            ("injected_clock", Bool(g.has_injected_clock())),
            ("clock_source", Text(g.clock_source().name().into())),
            ("source", Text(g.node_source().name().into())),
        ];
        Ok(env.new_string(encode_fields(&fields))?)
    })
}

/// Whether the restart guard (a lease's, or a fixed node id's mark) has passed: true, false
/// (still holding), or the core's error (closed, lost). `how`: 0 asks; 1 throws the guard's
/// `LeaseNotReady` while it holds; 2 is for an interrupted thread: the core's `Interrupted`
/// while it holds. Asking, a lease that heals (the core's `Generator::heals`) counts a lost
/// lease as one being healed: false, as the core's `wait_ready` waits through it. Never waits.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_snowflakeReady<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    how: jint,
) -> jboolean {
    run(&mut env, |_| {
        let ready = match how {
            // A wait the hook stops at its first slice: `Interrupted` if there is one to wait.
            2 => waiting(true, || gen(handle).wait_ready(Duration::from_secs(3_600))),
            _ => gen(handle).wait_ready(Duration::ZERO),
        };
        match ready {
            Ok(()) => Ok(true),
            Err(Error::LeaseNotReady { .. }) if how == 0 => Ok(false),
            Err(Error::LeaseLost { .. }) if how == 0 && gen(handle).heals() => Ok(false),
            Err(e) => Err(e.into()),
        }
    })
}

/// `close()`: stop issuing, free a lease's slot (the memory stays until the Cleaner runs).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_snowflakeClose<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    run(&mut env, |_| {
        gen(handle).close();
        Ok(())
    })
}

/// Free the generator (closing it first if it was not): the Cleaner's action, run once.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_snowflakeFree<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    run(&mut env, |_| {
        // SAFETY: made by `snowflakeNew`; the Cleaner runs once, after the last call.
        drop(unsafe { Box::from_raw(handle as *mut Generator) });
        Ok(())
    })
}

/// A layout's three widths from `"41,10,12"` or a preset's name, into `out`; the core's
/// `InvalidLayout` / `UnknownLayout` otherwise.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_layout<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    text: JString<'l>,
    out: JLongArray<'l>,
) {
    run(&mut env, |env| {
        let l = layout(&string(env, &text)?)?;
        let bits = [l.timestamp_bits(), l.node_bits(), l.sequence_bits()];
        out.set_region(env, 0, &bits.map(i64::from))?;
        Ok(())
    })
}

/// The core's constants the Java API shows: fields.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_polyflake_Native_constants<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
) -> JString<'l> {
    use polyflake::Value::{Float, Int, Text};
    run(&mut env, |env| {
        let presets = Layout::PRESETS.iter().map(|(name, l)| {
            let bits = [l.timestamp_bits(), l.node_bits(), l.sequence_bits()];
            (*name, Text(bits.map(|b| b.to_string()).join(",")))
        });
        let fields = vec![
            ("version", Text(polyflake::VERSION.into())),
            ("default_epoch_ms", Int(polyflake::DEFAULT_EPOCH_MS.into())),
            ("default_max_wait_ms", Float(polyflake::DEFAULT_MAX_WAIT_MS)),
            ("max_id", Int(polyflake::MAX_ID.into())),
            ("presets", polyflake::Value::Fields(presets.collect())),
            ("error_kinds", Text(kinds())),
        ];
        Ok(env.new_string(encode_fields(&fields))?)
    })
}
