//! The settings every generator takes, Snowflake and the 128-bit formats alike: the wait, lead
//! and forward-step bounds, the kernel's clock-error bound and the clock, read from an options object into one core
//! [`polyflake::Settings`] for either of the core's two builders. A setting left out keeps
//! [`polyflake::Settings::default`], so every default is the core's.

use crate::clock::{JsFnClock, ManualClock, ScriptedClock};
use crate::fast::Reads;
use crate::js::{f64_arg, narrow, string_arg, Fail, Ty, Val};
use napi::bindgen_prelude::Env;
use polyflake::{ClockSource, Mode, Settings as CoreSettings};
use std::sync::Arc;

/// What the option readers return.
pub(crate) type FResult<T> = std::result::Result<T, Fail>;

/// The keys [`read`] takes from every generator (see [`keys`]).
const KEYS: [&str; 6] = [
    "maxWaitMs",
    "maxForwardStepMs",
    "forwardConfirmMs",
    "maxClockErrorMs",
    "clock",
    "clockSource",
];

/// The settings read from an options object: the ONE core value a builder takes whole.
pub(crate) struct Settings {
    /// What the options say, every setting left out at the core's default.
    pub(crate) core: CoreSettings,
    /// The clock the options give (the system's unless `clock` is a clock object or function).
    pub(crate) reads: Reads,
}

/// Refuse `options` unless it is an object (`what` names the call).
pub(crate) fn object(options: Val, what: &str) -> FResult<()> {
    if options.is_object()? {
        return Ok(());
    }
    let got = options.describe();
    Err(Fail::Type(format!(
        "{what} takes an options object, got {got}"
    )))
}

/// Refuse `options` unless it is an object whose keys are all in `allowed`.
pub(crate) fn only_keys(options: Val, what: &str, allowed: &[&str]) -> FResult<()> {
    object(options, what)?;
    match options
        .keys()?
        .into_iter()
        .find(|k| !allowed.contains(&k.as_str()))
    {
        Some(k) => Err(Fail::Type(format!(
            "unknown option {k:?} for {what}: expected one of {}",
            allowed.join(", ")
        ))),
        None => Ok(()),
    }
}

/// An integer, or `None` for `null` (no bound).
fn or_null<T: TryFrom<i128>>(v: Val, name: &'static str) -> FResult<Option<T>> {
    match v.ty()? {
        Ty::Null => Ok(None),
        _ => narrow(v, name).map(Some),
    }
}

/// A clock source by name (`'precise'`, `'coarse'`; the core checks it).
fn source(v: Val, name: &str) -> FResult<ClockSource> {
    Ok(ClockSource::from_name(&string_arg(v, name)?)?)
}

/// The keys a generator of `mode` takes besides its own: [`KEYS`], and `maxLeadMs` when it is
/// monotonic.
pub(crate) fn keys(mode: Mode) -> Vec<&'static str> {
    let lead: &[&str] = match mode {
        Mode::Strict => &[],
        Mode::Monotonic => &["maxLeadMs"],
    };
    [&KEYS[..], lead].concat()
}

/// Read the shared settings of `options` for a generator of `mode`, whose keys were checked
/// against [`keys`] (a leased generator takes no clock function: its background thread reads the
/// clock too).
pub(crate) fn read(env: Env, options: Val, mode: Mode, leased: bool) -> FResult<Settings> {
    let core = CoreSettings {
        mode,
        ..CoreSettings::default()
    };
    let (mut s, o) = (
        Settings {
            core,
            reads: Reads::System,
        },
        options,
    );
    o.read("maxWaitMs", f64_arg, &mut s.core.max_wait_ms)?;
    o.read("maxLeadMs", or_null, &mut s.core.max_lead_ms)?;
    o.read("maxForwardStepMs", or_null, &mut s.core.max_forward_step_ms)?;
    o.read("forwardConfirmMs", narrow, &mut s.core.forward_confirm_ms)?;
    o.read("maxClockErrorMs", or_null, &mut s.core.max_clock_error_ms)?;
    let mut named = None;
    o.read_some("clockSource", source, &mut named)?;
    if let Some(source) = named {
        s.core.clock_source = source;
    }
    let Some(v) = options.get_opt("clock")? else {
        return Ok(s);
    };
    match v.ty()? {
        Ty::String if named.is_some() => {
            return Err(Fail::Type(
                "clock names the clock source already: give clock: 'coarse' or clockSource, not both".into(),
            ))
        }
        Ty::String => s.core.clock_source = source(v, "clock")?,
        Ty::Function if leased => {
            return Err(Fail::Type(
                "a leased generator's background thread reads the clock too, and a JS function can only be called on its own thread: pass a ManualClock or a ScriptedClock".into(),
            ))
        }
        Ty::Function => {
            s.core.clock = Some(Arc::new(JsFnClock::new(v)?));
            s.reads = Reads::JsFunction;
        }
        _ => {
            if let Some(c) = v.instance::<ManualClock>(&env)? {
                s.core.clock = Some(Arc::new(c.inner.clone()));
                s.reads = Reads::Injected;
                return Ok(s);
            }
            if let Some(c) = v.instance::<ScriptedClock>(&env)? {
                s.core.clock = Some(c.inner.clone());
                s.reads = Reads::Injected;
                return Ok(s);
            }
            return Err(Fail::Type(format!(
                "clock must be 'precise', 'coarse', a ManualClock, a ScriptedClock or a function returning Unix ms, got {}",
                v.describe()
            )))
        }
    }
    Ok(s)
}
