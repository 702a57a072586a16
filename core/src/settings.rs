//! The settings every generator shares, in one value: [`Settings`] (mode, wait budget, lead
//! limit, forward-step bound and its confirmation, clock source, clock). Their defaults live here
//! and only here: [`Settings::default`] and the `DEFAULT_*` constants beside it, which the
//! bindings' documentation is checked against (`tests/docs/check_defaults.py`, from the
//! `settings_defaults` example). [`Settings::validate`] is the one check every builder runs.
//!
//! ## Decisions
//!
//! - **One value, one check.** [`Settings`] holds the defaults and the range checks in one
//!   place; `Builder::settings` and `TimeIdBuilder::settings` take it whole and
//!   `Generator::settings()` gives it back. Each binding turns what its user passed into one
//!   `Settings` in one function (C `polyflake_timeid_config::settings`, Python
//!   `core_settings`, Node `settings::read`, the CLI's `GenArgs::settings`), so no binding
//!   copies fields with a macro.
//! - **Ranges.** `max_wait_ms` must be finite, `>= 0` and at most [`MAX_WAIT_LIMIT_MS`] (a
//!   minute-long wait is a hang); `max_lead_ms` must be `>= 0`; either forward setting at most
//!   a day. A setting a caller wrote reaches this check as written: no binding clamps.
//! - **The forward-step bound and its confirmation** ([`DEFAULT_MAX_FORWARD_STEP_MS`],
//!   [`DEFAULT_FORWARD_CONFIRM_MS`]): a boot clock and a wall clock move together through NTP
//!   slewing (at most 500 ppm), suspend and a paused VM whose kvmclock resumes with the host's
//!   time, so a step a minute ahead of elapsed time is a fault or a restore; and ntpd believes a
//!   new offset only after it held for its stepout interval (300 s), so a correction worth
//!   believing holds that long. Strict generators refuse for up to five minutes after a VM
//!   restored from a snapshot is set forward; monotonic ones keep issuing from trusted time.

use crate::clock::{Clock, ClockSource};
use crate::error::{Error, Result};
use std::fmt;
use std::sync::Arc;

/// The default mode: [`Mode::Strict`].
pub const DEFAULT_MODE: Mode = Mode::Strict;
/// The default wait budget: rewinds up to this many milliseconds are waited out, larger ones
/// refused.
pub const DEFAULT_MAX_WAIT_MS: f64 = 5.0;
/// The largest wait budget accepted, in ms: a wait that long is a hang.
pub const MAX_WAIT_LIMIT_MS: f64 = 60_000.0;
/// The default bound on a forward step, in ms: a minute (why: the module's decisions).
pub const DEFAULT_MAX_FORWARD_STEP_MS: u64 = 60_000;
/// The default time a stepped offset must hold before it is believed, in ms.
pub const DEFAULT_FORWARD_CONFIRM_MS: u64 = 300_000;
/// The default lead limit of a monotonic generator, in ms: one reserve. A successor of a
/// monotonic holder on the same node id waits at most this long for its lead (within a call's
/// restart wait, [`crate::DEFAULT_MAX_RESTART_WAIT_MS`]), a lease's R (the clock plus the
/// reserve) covers it, and the largest batch one call may ask for ([`crate::MAX_BATCH`]: 4.0 s of
/// IDs on the default layout) fits under it. A monotonic generator absorbs bursts and rewinds;
/// it does not raise the layout's rate: one thread minting flat out (29 M IDs/s on the precise
/// clock, 73 M on the coarse one, against the default layout's 4.096 M) gains 6 to 17 s of lead
/// a second and meets the limit within a second, then refuses (BENCHMARKS.md, "The monotonic
/// lead"; `cargo run --release -p polyflake --example monotonic_lead`). `None` (set explicitly)
/// is unbounded: for a benchmark or a bulk import that should run ahead, knowing that whoever
/// takes the node id next waits out the lead. A lease's R, or a static node id's mark (one
/// reserve ahead of the clock), still bounds it: raise that reserve too, or keep no mark.
pub const DEFAULT_MAX_LEAD_MS: i64 = 5_000;
/// The largest value either forward setting accepts (a day).
pub(crate) const MAX_FORWARD_SETTING_MS: u64 = 86_400_000;

/// How a generator treats the wall clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// `Snowflake`: an issued timestamp never exceeds the wall clock. Small rewinds are waited
    /// out, large ones refused; a spent sequence sleeps to the next millisecond.
    Strict,
    /// `MonotonicSnowflake`: never waits. The wall clock only floors a logical clock that
    /// borrows from the next millisecond on a rewind or a spent sequence, so timestamps may run
    /// ahead of real time (bounded by `max_lead_ms` if set).
    Monotonic,
}

impl Mode {
    /// `"strict"` or `"monotonic"`.
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Strict => "strict",
            Mode::Monotonic => "monotonic",
        }
    }

    /// The mode named `"strict"` or `"monotonic"` (what bindings take as a `mode` option).
    ///
    /// ```
    /// use polyflake::Mode;
    /// assert_eq!(Mode::from_name("monotonic").unwrap(), Mode::Monotonic);
    /// assert!(Mode::from_name("Strict").is_err());
    /// ```
    pub fn from_name(name: &str) -> Result<Mode> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| Error::InvalidArgument {
                name: "mode",
                reason: format!("{name:?} is not a mode: use \"strict\" or \"monotonic\""),
            })
    }

    /// Both modes.
    pub const ALL: [Mode; 2] = [Mode::Strict, Mode::Monotonic];
}

/// The settings every generator shares (Snowflake, UUIDv7 and ULID alike): what
/// [`crate::Builder::settings`] and [`crate::TimeIdBuilder::settings`] take whole, what the
/// builders' one-field setters write into, and what [`crate::Generator::settings`] returns.
/// The node id, layout and epoch are not here: only Snowflake generators have them.
///
/// ```
/// use polyflake::{Generator, ManualClock, Mode, Settings};
/// let settings = Settings {
///     mode: Mode::Monotonic,
///     max_lead_ms: Some(1_000),
///     clock: Some(std::sync::Arc::new(ManualClock::new(1_737_747_358_021))),
///     ..Settings::default()
/// };
/// let g = Generator::builder(37).settings(settings).build().unwrap();
/// assert_eq!(g.settings().mode, Mode::Monotonic);
/// assert_eq!(g.settings().max_lead_ms, Some(1_000));
/// assert_eq!(g.settings().max_wait_ms, polyflake::DEFAULT_MAX_WAIT_MS);
/// ```
#[derive(Clone)]
pub struct Settings {
    /// Strict or monotonic (default [`DEFAULT_MODE`], strict).
    pub mode: Mode,
    /// Strict mode's wait budget in milliseconds (default [`DEFAULT_MAX_WAIT_MS`], 5.0): a
    /// rewind up to this size is waited out, a larger one refused; a spent sequence waits at
    /// most `max(this, 1)` ms. 0 to 60,000.
    pub max_wait_ms: f64,
    /// Monotonic mode's limit on running ahead of the wall clock, in milliseconds (default
    /// [`DEFAULT_MAX_LEAD_MS`], 5,000; `None`: unbounded). Past it, calls are refused and health
    /// reports unhealthy.
    pub max_lead_ms: Option<i64>,
    /// How far ahead of the time elapsed since it was last trusted the wall clock may read
    /// before it is a forward STEP, in ms (default [`DEFAULT_MAX_FORWARD_STEP_MS`], 60,000;
    /// `None` turns the check off; 1 to 86,400,000). A reading past it is not issued from
    /// (strict mode refuses with [`Error::ClockJumpedAhead`]; monotonic mode keeps its floor at
    /// the trusted time; a lease does not move R to it) until it comes back, or until the new
    /// offset has held for `forward_confirm_ms`.
    pub max_forward_step_ms: Option<u64>,
    /// How long a stepped-ahead clock must hold its new offset before it is believed as a
    /// correction, in ms of elapsed time (default [`DEFAULT_FORWARD_CONFIRM_MS`], 300,000: as
    /// long as NTP itself waits before stepping; 0 to 86,400,000).
    pub forward_confirm_ms: u64,
    /// Which reading of the clock each ID takes (default [`ClockSource::Precise`]); see
    /// [`ClockSource::Coarse`] for the fast path and its trade-off.
    pub clock_source: ClockSource,
    /// Read time from this clock instead of the system clock (default `None`: the system
    /// clock). Its clock is not read until the first call.
    pub clock: Option<Arc<dyn Clock>>,
    /// Refuse to issue ([`crate::Error::ClockUnsynchronized`], health
    /// `clock_unsynchronized`) while the kernel says the system clock is not synchronized or
    /// its maximum error exceeds this many ms (default `None`: the kernel's word is reported in
    /// health, never a reason to refuse). Checked once a second off the hot path; 1 to
    /// 16,000 (the kernel's largest maximum error). An injected clock is not the kernel's: the
    /// setting is refused with one.
    pub max_clock_error_ms: Option<u64>,
}

impl Default for Settings {
    /// Every setting at its default (the one place the defaults are written).
    fn default() -> Settings {
        Settings {
            mode: DEFAULT_MODE,
            max_wait_ms: DEFAULT_MAX_WAIT_MS,
            max_lead_ms: Some(DEFAULT_MAX_LEAD_MS),
            max_forward_step_ms: Some(DEFAULT_MAX_FORWARD_STEP_MS),
            forward_confirm_ms: DEFAULT_FORWARD_CONFIRM_MS,
            clock_source: ClockSource::Precise,
            clock: None,
            max_clock_error_ms: None,
        }
    }
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("mode", &self.mode)
            .field("max_wait_ms", &self.max_wait_ms)
            .field("max_lead_ms", &self.max_lead_ms)
            .field("max_forward_step_ms", &self.max_forward_step_ms)
            .field("forward_confirm_ms", &self.forward_confirm_ms)
            .field("clock_source", &self.clock_source)
            .field("injected_clock", &self.clock.is_some())
            .field("max_clock_error_ms", &self.max_clock_error_ms)
            .finish()
    }
}

impl Settings {
    /// Check every setting's range: the [`Error::InvalidArgument`] a builder's `build` returns
    /// (naming the setting), or `Ok`. Every builder runs this one check.
    ///
    /// ```
    /// use polyflake::Settings;
    /// assert!(Settings::default().validate().is_ok());
    /// let bad = Settings { max_wait_ms: -1.0, ..Settings::default() };
    /// assert_eq!(
    ///     bad.validate().unwrap_err().to_string(),
    ///     "invalid max_wait_ms: -1 is not a finite number >= 0"
    /// );
    /// ```
    pub fn validate(&self) -> Result<()> {
        if !self.max_wait_ms.is_finite() || self.max_wait_ms < 0.0 {
            return Err(Error::InvalidArgument {
                name: "max_wait_ms",
                reason: format!("{} is not a finite number >= 0", self.max_wait_ms),
            });
        }
        if self.max_wait_ms > MAX_WAIT_LIMIT_MS {
            return Err(Error::InvalidArgument {
                name: "max_wait_ms",
                reason: format!(
                    "{} ms is over the 60000 ms limit: a wait that long is a hang",
                    self.max_wait_ms
                ),
            });
        }
        if let Some(lead) = self.max_lead_ms {
            if lead < 0 {
                return Err(Error::InvalidArgument {
                    name: "max_lead_ms",
                    reason: format!("{lead} is negative"),
                });
            }
        }
        if let Some(step) = self.max_forward_step_ms {
            if step == 0 || step > MAX_FORWARD_SETTING_MS {
                return Err(Error::InvalidArgument {
                    name: "max_forward_step_ms",
                    reason: format!(
                        "{step} is out of range: 1 to {MAX_FORWARD_SETTING_MS} (or none to turn the check off)"
                    ),
                });
            }
        }
        if let Some(bound) = self.max_clock_error_ms {
            if !(1..=16_000).contains(&bound) {
                return Err(Error::InvalidArgument {
                    name: "max_clock_error_ms",
                    reason: format!(
                        "{bound} is out of range: 1 to 16000 (the kernel's largest maximum error), or none"
                    ),
                });
            }
            if self.clock.is_some() {
                return Err(Error::InvalidArgument {
                    name: "max_clock_error_ms",
                    reason: format!(
                        "{bound} goes with the system clock: the kernel says nothing of an injected clock"
                    ),
                });
            }
        }
        if self.forward_confirm_ms > MAX_FORWARD_SETTING_MS {
            return Err(Error::InvalidArgument {
                name: "forward_confirm_ms",
                reason: format!(
                    "{} is out of range: 0 to {MAX_FORWARD_SETTING_MS}",
                    self.forward_confirm_ms
                ),
            });
        }
        Ok(())
    }
}
