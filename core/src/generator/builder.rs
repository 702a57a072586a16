//! [`Builder`]: the settings of one generator, checked all at once by [`Builder::build`], which
//! reads the clock's capabilities, claims the node id (or takes a lease's slot) and makes the
//! [`Generator`].
//!
//! ## Decisions
//!
//! - **A lease takes its slot as the last step of `build()`**, after every other setting is
//!   checked, so a configuration error never holds a slot (or touches a directory).
//! - **Injected clocks are not read at construction**, so a `ScriptedClock`'s first value goes
//!   to the first ID. The epoch is checked against the system clock only when the generator uses
//!   it ("the epoch lies in the future", "the window has already ended"); on an injected clock a
//!   reading outside the window is a `TimestampOverflow` at the call. The epoch may never be
//!   before 1970.

use super::engine::{Stats, TimeSource, NOT_CLOSED, NOT_STUCK};
use super::Generator;
use crate::clock::{Clock, ClockSource, SystemClock, MAX_COARSE_TICK_NS};
use crate::error::{Error, Result};
use crate::fork;
use crate::forward::ForwardGuard;
use crate::layout::{Layout, DEFAULT_EPOCH_MS};
use crate::lease::host::{self, Outcome};
use crate::lease::{
    LeaseRuntime, LeaseState, NodeSource, RestartGuard, RestartGuardOptions, SlotContext,
};
use crate::registry::{self, Reach};
use crate::settings::{Mode, Settings};
use crate::sync::{AtomicI64, AtomicU64};
use std::fmt;
use std::sync::atomic::AtomicU64 as StdAtomicU64;
use std::sync::Arc;
use std::time::Duration;

/// Settings for a generator. Make one with [`Generator::builder`].
///
/// ```
/// use polyflake::{Generator, Layout, ManualClock, Mode};
/// let clock = ManualClock::new(1_737_747_358_021);
/// let g = Generator::builder(37)
///     .mode(Mode::Strict)
///     .layout(Layout::DEFAULT)
///     .max_wait_ms(5.0)
///     .clock(clock.clone())
///     .build()
///     .unwrap();
/// assert_eq!(g.next_id().unwrap(), 141264821508263936);
/// ```
#[derive(Clone)]
pub struct Builder {
    source: NodeSource,
    layout: Layout,
    epoch_ms: i64,
    /// The settings every generator shares: the one-field setters write here.
    settings: Settings,
    kind: Kind,
    /// A fixed node id's restart guard.
    restart_guard: RestartGuardOptions,
    /// The host scope (`None`: `POLYFLAKE_HOST_SCOPE`).
    host_scope: Option<String>,
}

/// What a generator's state words become: Snowflake IDs, or the time-ordered 128-bit formats
/// (whose state is Unix ms << 15 | 15 bits below the millisecond).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `elapsed << seq_bits | seq`: the Snowflake layouts.
    Snowflake,
    /// UUIDv7: 12 bits of sub-millisecond time and a 3-bit counter seeded randomly.
    Uuid7,
    /// ULID: a 15-bit counter per millisecond.
    Ulid,
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("source", &self.source)
            .field("layout", &self.layout)
            .field("epoch_ms", &self.epoch_ms)
            .field("settings", &self.settings)
            .field("restart_guard", &self.restart_guard)
            .field("host_scope", &self.host_scope)
            .finish()
    }
}

impl Builder {
    /// A builder for `source` with every other setting at its default.
    pub(super) fn new(source: NodeSource) -> Builder {
        Builder {
            source,
            layout: Layout::DEFAULT,
            epoch_ms: DEFAULT_EPOCH_MS,
            settings: Settings::default(),
            kind: Kind::Snowflake,
            restart_guard: RestartGuardOptions::default(),
            host_scope: None,
        }
    }
    /// A fixed node id's restart guard (static, environment, hostname, IPv4 on the system
    /// clock): whether and where its mark on the host is kept, how far ahead, and how long a
    /// call waits for it (see [`RestartGuardOptions`] and docs/node-ids.md).
    ///
    /// ```
    /// use polyflake::{Generator, RestartGuard, RestartGuardOptions};
    /// let dir = std::env::temp_dir().join(format!("polyflake-guard-doc-{}", std::process::id()));
    /// let guard = RestartGuardOptions {
    ///     mode: Some(RestartGuard::Required),
    ///     state_dir: Some(dir.clone()),
    ///     ..RestartGuardOptions::default()
    /// };
    /// let g = Generator::builder(906).restart_guard(guard.clone()).build().unwrap();
    /// let id = g.next_id().unwrap();
    /// drop(g); // a clean close leaves the last ID's state in the mark
    /// let g = Generator::builder(906).restart_guard(guard).build().unwrap();
    /// assert!(g.next_id().unwrap() > id);
    /// # drop(g); std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn restart_guard(mut self, options: RestartGuardOptions) -> Self {
        self.restart_guard = options;
        self
    }
    /// The host scope of the node id's claim (default: `POLYFLAKE_HOST_SCOPE`, else the host's
    /// one scope): generators in different scopes may hold the same node id and layout on one
    /// host, on purpose (services writing to different tables). See [`crate::host_scope`].
    pub fn host_scope(mut self, scope: impl Into<String>) -> Self {
        self.host_scope = Some(scope.into());
        self
    }
    /// Every shared setting at once (mode, wait budget, lead limit, forward-step bound and its
    /// confirmation, clock source, clock), replacing what the one-field setters wrote.
    pub fn settings(mut self, settings: Settings) -> Self {
        self.settings = settings;
        self
    }
    /// Strict or monotonic (default strict).
    pub fn mode(mut self, mode: Mode) -> Self {
        self.settings.mode = mode;
        self
    }
    /// The bit layout (default 41/10/12).
    pub fn layout(mut self, layout: Layout) -> Self {
        self.layout = layout;
        self
    }
    /// The epoch in Unix milliseconds (default 2024-01-01T00:00:00Z = 1704067200000).
    pub fn epoch_ms(mut self, epoch_ms: i64) -> Self {
        self.epoch_ms = epoch_ms;
        self
    }
    /// Strict mode's wait budget in milliseconds (default 5.0): a rewind up to this size is
    /// waited out, a larger one refused; a spent sequence waits at most `max(this, 1)` ms.
    pub fn max_wait_ms(mut self, max_wait_ms: f64) -> Self {
        self.settings.max_wait_ms = max_wait_ms;
        self
    }
    /// Monotonic mode's limit on running ahead of the wall clock, in milliseconds (default
    /// [`crate::DEFAULT_MAX_LEAD_MS`]; `None`: unbounded). Past it, calls are refused and health
    /// reports unhealthy.
    pub fn max_lead_ms(mut self, max_lead_ms: Option<i64>) -> Self {
        self.settings.max_lead_ms = max_lead_ms;
        self
    }
    /// How far ahead of the time elapsed since it was last trusted the wall clock may read
    /// before it is a forward STEP, in ms (default 60,000; `None` turns the check off). A
    /// reading past it is not issued from (strict mode refuses with
    /// [`Error::ClockJumpedAhead`]; monotonic mode keeps its floor at the trusted time; a lease
    /// does not move R to it) until it comes back, or until the new offset has held for
    /// `forward_confirm_ms`.
    pub fn max_forward_step_ms(mut self, max_forward_step_ms: Option<u64>) -> Self {
        self.settings.max_forward_step_ms = max_forward_step_ms;
        self
    }
    /// Which reading of the clock each ID takes (default [`ClockSource::Precise`]); see
    /// [`ClockSource::Coarse`] for the fast path and its trade-off.
    pub fn clock_source(mut self, source: ClockSource) -> Self {
        self.settings.clock_source = source;
        self
    }
    /// How long a stepped-ahead clock must hold its new offset before it is believed as a
    /// correction, in ms of elapsed time (default 300,000: as long as NTP itself waits before
    /// stepping).
    pub fn forward_confirm_ms(mut self, forward_confirm_ms: u64) -> Self {
        self.settings.forward_confirm_ms = forward_confirm_ms;
        self
    }
    /// Read time from this clock instead of the system clock. Its clock is not read until the
    /// first call (so a [`crate::ScriptedClock`]'s first value goes to the first ID).
    /// Generators on the test clocks ([`crate::ManualClock`], [`crate::ScriptedClock`]) are
    /// independent of each other and of the one-node-id-per-process rule. Any other injected
    /// clock (a user's time source) follows that rule in this process, but is exempt from the
    /// host-wide claim and the restart guard: its times are not the host's, so a mark written
    /// from one could neither guard nor be guarded by the system clock's history (and a
    /// background thread could not read a clock that only its own thread may call).
    pub fn clock<C: Clock + 'static>(mut self, clock: C) -> Self {
        self.settings.clock = Some(Arc::new(clock));
        self
    }
    /// Refuse to issue while the kernel says the system clock is unsynchronized or its maximum
    /// error exceeds `max_clock_error_ms` (default `None`: reported in health only). See
    /// [`Settings::max_clock_error_ms`].
    pub fn max_clock_error_ms(mut self, max_clock_error_ms: Option<u64>) -> Self {
        self.settings.max_clock_error_ms = max_clock_error_ms;
        self
    }
    /// Like [`Builder::clock`], for a clock already shared behind an `Arc`.
    pub fn shared_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.settings.clock = Some(clock);
        self
    }

    /// The builder of a time-ordered 128-bit format: Unix-ms epoch, no node id.
    pub(crate) fn time_ordered(mut self, kind: Kind) -> Self {
        self.kind = kind;
        self.layout = Layout::TIME_ORDERED;
        self.epoch_ms = 0;
        self
    }

    /// Check every setting and make the generator. All configuration errors surface here,
    /// never later. A lease source takes its slot here (the last step, after every check), and
    /// may fail with [`Error::NoFreeSlot`] or [`Error::LeaseStore`].
    pub fn build(self) -> Result<Generator> {
        let layout = self.layout;
        let source_kind = self.source.kind();
        let fixed_node_id = self.source.fixed_node_id(layout)?;
        self.settings.validate()?;
        let Settings {
            mode,
            max_wait_ms,
            max_lead_ms,
            max_forward_step_ms,
            forward_confirm_ms,
            clock_source,
            clock,
            max_clock_error_ms,
        } = self.settings;
        let system_now = SystemClock::read_ms();
        let bad_epoch = |reason| Error::InvalidEpoch {
            epoch_ms: self.epoch_ms,
            now_ms: system_now,
            reason,
        };
        if self.epoch_ms < 0 {
            return Err(bad_epoch("the epoch may not be before 1970-01-01"));
        }
        let fork_generation = fork::fork_generation();
        let (clock, system) = match clock {
            Some(c) => (TimeSource::Injected(c), false),
            None => {
                if self.epoch_ms > system_now {
                    return Err(bad_epoch("the epoch lies in the future"));
                }
                if (system_now - self.epoch_ms) as u64 > layout.max_elapsed_ms() {
                    return Err(bad_epoch(
                        "the layout's timestamp window, counted from this epoch, has already ended",
                    ));
                }
                (TimeSource::System, true)
            }
        };
        // The coarse source on the system clock only where its tick is fine enough.
        let (coarse, clock_tick_ns, clock_note) = match (clock_source, &clock) {
            (ClockSource::Precise, TimeSource::System) => (
                false,
                SystemClock::resolution_ns().unwrap_or(0),
                String::new(),
            ),
            (ClockSource::Precise, TimeSource::Injected(_)) => (false, 0, String::new()),
            (ClockSource::Coarse, TimeSource::Injected(c)) if c.coarse_is_precise() => (
                false,
                0,
                "the injected clock has no coarse reading of its own: the precise one serves"
                    .to_string(),
            ),
            (ClockSource::Coarse, TimeSource::Injected(_)) => (true, 0, String::new()),
            (ClockSource::Coarse, TimeSource::System) => {
                match SystemClock::coarse_resolution_ns() {
                    Some(tick) if tick <= MAX_COARSE_TICK_NS => (true, tick, String::new()),
                    other => (
                        false,
                        SystemClock::resolution_ns().unwrap_or(0),
                        match other {
                            Some(tick) => format!(
                            "the coarse clock's tick is {} us, over {} us: using the precise clock",
                            tick / 1000,
                            MAX_COARSE_TICK_NS / 1000
                        ),
                            None => "this system has no coarse clock: using the precise clock"
                                .to_string(),
                        },
                    ),
                }
            }
        };
        // Only the test clocks are exempt from the one-generator-per-node-id rule; the
        // 128-bit formats have no node id. Only the system clock claims host-wide.
        let claims = self.kind == Kind::Snowflake
            && match &clock {
                TimeSource::System => true,
                TimeSource::Injected(c) => !c.is_test_clock(),
            };
        if self.restart_guard.mode == Some(RestartGuard::Required) && !system {
            return Err(Error::InvalidArgument {
                name: "restart_guard",
                reason: "\"required\" goes with the system clock: a generator on an injected clock keeps no mark on the host (its times are not the host's)".to_string(),
            });
        }
        let (scope, guard_cfg) = if claims {
            let scope = registry::host_scope(self.host_scope.as_deref())?;
            (scope, Some(self.restart_guard.resolve()?))
        } else {
            (String::new(), None)
        };
        let forward = Arc::new(ForwardGuard::new(max_forward_step_ms, forward_confirm_ms));
        if system {
            // Anchor the system clock now; an injected clock is not read before the first call.
            forward.check(system_now, SystemClock::boot_ms);
        }
        let lease_state = Arc::new(LeaseState::unleased(layout, self.epoch_ms));
        if let Some(bound) = max_clock_error_ms {
            // Before the slot or the mark is taken: from the first ID on.
            crate::clocksync::watch(&lease_state, bound);
        }
        let ctx = SlotContext {
            layout,
            epoch_ms: self.epoch_ms,
            clock: match &clock {
                TimeSource::System => Arc::new(SystemClock),
                TimeSource::Injected(c) => c.clone(),
            },
            forward: forward.clone(),
            state: lease_state.clone(),
            claims,
            system_clock: system,
            generation: fork_generation,
            scope,
            host: guard_cfg.clone().filter(|_| system),
        };
        let seq_bits = layout.sequence_bits();
        // The state word that counts the current millisecond as spent: where a successor
        // starts when nothing tells it what its predecessor issued (the clock read now, after
        // the claim: the previous holder issued nothing after this reading).
        let spent_now = || -> Result<i64> {
            let elapsed = ctx.now_ms()?.saturating_sub(self.epoch_ms);
            Ok((elapsed << seq_bits) | layout.max_sequence() as i64)
        };
        let mut restart_guard_note = String::new();
        let mut restart_wait = None;
        let (node_id, claim, start_state, lease) = match fixed_node_id {
            Some(node_id) if claims && system => {
                let guard = guard_cfg.expect("resolved for every claim");
                let (claim, resume) =
                    registry::claim(node_id, layout, &ctx.scope, fork_generation, Reach::Host)?;
                let unguarded = |why: String| {
                    let note = format!(
                        "no restart guard for node id {node_id} on this host: {why}; a successor after a clock stepped back could repeat its IDs"
                    );
                    warn_once(&note);
                    note
                };
                match guard.mode {
                    RestartGuard::Off => {
                        restart_guard_note = "off (restart_guard = off): a successor after a clock stepped back could repeat this node id's IDs".to_string();
                        (node_id, Some(claim), resume.max(spent_now()?), None)
                    }
                    _ => match host::hold(
                        node_id,
                        &guard,
                        ctx.for_generation(fork_generation),
                        fork_generation,
                        claim,
                    )? {
                        Outcome::Held(held) => {
                            // The mark's state to continue after, and never in the millisecond
                            // of a reading taken after the claim: a holder that kept no mark
                            // may have issued in it (found by the host model:
                            // `finding-markless-then-static`).
                            let mut start = resume.max(held.start_state).max(spent_now()?);
                            if mode == Mode::Monotonic {
                                // It may borrow over the guard up to its lead limit: its state
                                // starts above the guard, its window's floor that much lower.
                                let floor =
                                    lease_state.floor.load(std::sync::atomic::Ordering::Acquire);
                                start = start.max(((floor + 1) << seq_bits) - 1);
                                lease_state.lower_floor(match max_lead_ms {
                                    Some(lead) => floor.saturating_sub(lead),
                                    None => -1,
                                });
                            }
                            restart_wait = Some(Duration::from_millis(guard.max_wait_ms));
                            let rt = LeaseRuntime::of_mark(
                                self.source.clone(),
                                held.store,
                                ctx,
                                held.session,
                            );
                            (node_id, None, start, Some(Arc::new(rt)))
                        }
                        Outcome::Unavailable(why, claim) => {
                            if guard.mode == RestartGuard::Required {
                                return Err(Error::LeaseStore {
                                    reason: format!(
                                        "restart_guard = required, but node id {node_id} cannot keep its mark in {}: {why}. Give this process a writable state directory it owns (POLYFLAKE_STATE_DIR, or a volume in a read-only container), or set restart_guard = auto to issue without one",
                                        guard.dir.display()
                                    ),
                                });
                            }
                            restart_guard_note = unguarded(why);
                            (node_id, Some(claim), resume.max(spent_now()?), None)
                        }
                    },
                }
            }
            Some(node_id) => {
                let (claim, resume) = if claims {
                    let (c, resume) = registry::claim(
                        node_id,
                        layout,
                        &ctx.scope,
                        fork_generation,
                        Reach::Process,
                    )?;
                    (Some(c), resume)
                } else {
                    (None, -1)
                };
                (node_id, claim, resume, None)
            }
            None => {
                let (runtime, slot) = LeaseRuntime::acquire(self.source, ctx, fork_generation)?;
                (slot, None, -1, Some(Arc::new(runtime)))
            }
        };
        lease_state.set_node(node_id);
        let max_wait = Duration::from_secs_f64(max_wait_ms / 1000.0);
        // Above what the take may have counted as spent already (a lease's first millisecond).
        let taken_state = lease_state.state.0.load(crate::sync::Ordering::Acquire);
        let start_state = start_state.max(taken_state);
        lease_state
            .state
            .0
            .store(start_state, crate::sync::Ordering::Release);
        // From here on a lost lease heals, if it does.
        if let Some(rt) = &lease {
            rt.arm_heal();
        }
        Ok(Generator {
            seq_bits,
            ts_shift: layout.node_bits() + seq_bits,
            seq_mask: layout.max_sequence() as i64,
            max_elapsed: layout.max_elapsed_ms() as i64,
            epoch_ms: self.epoch_ms,
            mode,
            clock,
            sub_ms: self.kind == Kind::Uuid7,
            fork_ok: self.kind != Kind::Snowflake,
            exact_issued: AtomicU64::new(0),
            coarse,
            clock_tick_ns,
            clock_note,
            fork_generation: StdAtomicU64::new(fork_generation),
            layout,
            max_wait_ms,
            max_wait,
            exhaust_budget: max_wait.max(Duration::from_millis(1)),
            interrupts: AtomicU64::new(0),
            max_lead_ms,
            stats: Stats::default(),
            stuck_at: AtomicI64::new(NOT_STUCK),
            closed_state: AtomicI64::new(NOT_CLOSED),
            issued_before: if start_state >= 0 {
                (start_state & layout.max_sequence() as i64) as u64 + 1
            } else {
                0
            },
            forward,
            lease_state,
            lease,
            source_kind,
            claim,
            restart_wait,
            restart_guard_note,
            max_clock_error_ms,
        })
    }
}

/// Say once per process, on stderr, that a fixed node id issues without a restart guard (health
/// says it every time: `restart_guard_note`).
fn warn_once(note: &str) {
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        eprintln!("polyflake: {note} (set POLYFLAKE_RESTART_GUARD=required to refuse instead)");
    }
}
