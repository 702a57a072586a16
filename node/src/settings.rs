//! The settings every generator takes, Snowflake and the 128-bit formats alike: the wait, lead
//! and forward-step bounds and the clock, read from an options object for the core's two
//! builders ([`polyflake::Builder`], [`polyflake::TimeIdBuilder`], whose setters share names).
//! A setting left out is never set, so every default is the core's.

use crate::clock::{JsFnClock, ManualClock, ScriptedClock};
use crate::js::{f64_arg, narrow, string_arg, Fail, Ty, Val};
use napi::bindgen_prelude::Env;
use polyflake::{Clock, ClockSource, Mode};
use std::sync::Arc;

/// What the option readers return.
pub(crate) type FResult<T> = std::result::Result<T, Fail>;

/// The keys [`read`] takes from every generator (see [`keys`]).
const KEYS: [&str; 5] = [
    "maxWaitMs",
    "maxForwardStepMs",
    "forwardConfirmMs",
    "clock",
    "clockSource",
];

/// The settings read from an options object, for [`apply!`].
#[derive(Default)]
pub(crate) struct Settings {
    pub(crate) max_wait_ms: Option<f64>,
    pub(crate) max_lead_ms: Option<i64>,
    pub(crate) max_forward_step_ms: Option<Option<u64>>,
    pub(crate) forward_confirm_ms: Option<u64>,
    pub(crate) clock_source: Option<ClockSource>,
    pub(crate) clock: Option<Arc<dyn Clock>>,
    /// The clock is a JS function (only its own thread may call it).
    pub(crate) js_clock: bool,
}

/// Apply [`Settings`] to either core builder.
macro_rules! apply {
    ($builder:expr, $s:expr) => {{
        let (mut b, s) = ($builder, $s);
        if let Some(ms) = s.max_wait_ms {
            b = b.max_wait_ms(ms);
        }
        if s.max_lead_ms.is_some() {
            b = b.max_lead_ms(s.max_lead_ms);
        }
        if let Some(step) = s.max_forward_step_ms {
            b = b.max_forward_step_ms(step);
        }
        if let Some(ms) = s.forward_confirm_ms {
            b = b.forward_confirm_ms(ms);
        }
        if let Some(source) = s.clock_source {
            b = b.clock_source(source);
        }
        if let Some(clock) = &s.clock {
            b = b.shared_clock(Arc::clone(clock));
        }
        b
    }};
}
pub(crate) use apply;

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

/// Read the shared settings of `options`, whose keys were checked against [`keys`] (a leased
/// generator takes no clock function: its background thread reads the clock too).
pub(crate) fn read(env: Env, options: Val, leased: bool) -> FResult<Settings> {
    let (mut s, o) = (Settings::default(), options);
    o.read_some("maxWaitMs", f64_arg, &mut s.max_wait_ms)?;
    o.read("maxLeadMs", or_null, &mut s.max_lead_ms)?;
    o.read_some("maxForwardStepMs", or_null, &mut s.max_forward_step_ms)?;
    o.read_some("forwardConfirmMs", narrow, &mut s.forward_confirm_ms)?;
    o.read_some("clockSource", source, &mut s.clock_source)?;
    let Some(v) = options.get_opt("clock")? else {
        return Ok(s);
    };
    match v.ty()? {
        Ty::String if s.clock_source.is_some() => {
            return Err(Fail::Type(
                "clock names the clock source already: give clock: 'coarse' or clockSource, not both".into(),
            ))
        }
        Ty::String => s.clock_source = Some(source(v, "clock")?),
        Ty::Function if leased => {
            return Err(Fail::Type(
                "a leased generator's background thread reads the clock too, and a JS function can only be called on its own thread: pass a ManualClock or a ScriptedClock".into(),
            ))
        }
        Ty::Function => {
            s.clock = Some(Arc::new(JsFnClock::new(v)?));
            s.js_clock = true;
        }
        _ => {
            if let Some(c) = v.instance::<ManualClock>(&env)? {
                s.clock = Some(Arc::new(c.inner.clone()));
                return Ok(s);
            }
            if let Some(c) = v.instance::<ScriptedClock>(&env)? {
                s.clock = Some(c.inner.clone());
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
