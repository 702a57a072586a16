//! [`Builder`]: the settings of one generator, checked all at once by [`Builder::build`], which
//! reads the clock's capabilities, claims the node id (or takes a lease's slot) and makes the
//! [`Generator`].

use super::engine::{PaddedState, Stats, TimeSource, NOT_CLOSED, NOT_STUCK};
use super::Generator;
use crate::clock::{Clock, ClockSource, SystemClock, MAX_COARSE_TICK_NS};
use crate::error::{Error, Result};
use crate::fork;
use crate::forward::ForwardGuard;
use crate::layout::{Layout, DEFAULT_EPOCH_MS};
use crate::lease::{LeaseRuntime, LeaseState, NodeSource, SlotContext};
use crate::registry;
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
        }
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
    /// unbounded). Past it, calls are refused and health reports unhealthy.
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
    /// independent of each other and of the one-node-id-per-process rule; any other clock
    /// follows that rule like the system clock.
    pub fn clock<C: Clock + 'static>(mut self, clock: C) -> Self {
        self.settings.clock = Some(Arc::new(clock));
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
        // 128-bit formats have no node id.
        let claims = self.kind == Kind::Snowflake
            && match &clock {
                TimeSource::System => true,
                TimeSource::Injected(c) => !c.is_test_clock(),
            };
        let forward = Arc::new(ForwardGuard::new(max_forward_step_ms, forward_confirm_ms));
        if system {
            // Anchor the system clock now; an injected clock is not read before the first call.
            forward.check(system_now, SystemClock::boot_ms);
        }
        let lease_state = Arc::new(LeaseState::unleased(layout, self.epoch_ms));
        let (node_id, claim, start_state, lease) = match fixed_node_id {
            Some(node_id) => {
                let (claim, resume) = if claims {
                    let (c, resume) =
                        registry::claim(node_id, self.epoch_ms, layout, fork_generation, true)?;
                    // The node id's previous holder on this host (a process that just died, a
                    // parent that exited) may have issued in this very millisecond, and its last
                    // state died with it: count this millisecond as spent.
                    let spent_now = match &clock {
                        TimeSource::System => {
                            let elapsed = system_now.saturating_sub(self.epoch_ms);
                            (elapsed << layout.sequence_bits()) | layout.max_sequence() as i64
                        }
                        TimeSource::Injected(_) => -1,
                    };
                    (Some(c), resume.max(spent_now))
                } else {
                    (None, -1)
                };
                (node_id, claim, resume, None)
            }
            None => {
                let lease_clock: Arc<dyn Clock> = match &clock {
                    TimeSource::System => Arc::new(SystemClock),
                    TimeSource::Injected(c) => c.clone(),
                };
                let ctx = SlotContext {
                    layout,
                    epoch_ms: self.epoch_ms,
                    clock: lease_clock,
                    forward: forward.clone(),
                    state: lease_state.clone(),
                    claims,
                    system_clock: system,
                    generation: fork_generation,
                };
                let (runtime, slot) = LeaseRuntime::acquire(self.source, ctx, fork_generation)?;
                (slot, None, -1, Some(runtime))
            }
        };
        let seq_bits = layout.sequence_bits();
        let max_wait = Duration::from_secs_f64(max_wait_ms / 1000.0);
        Ok(Generator {
            state: PaddedState(AtomicI64::new(start_state)),
            seq_bits,
            ts_shift: layout.node_bits() + seq_bits,
            seq_mask: layout.max_sequence() as i64,
            node_part: StdAtomicU64::new(u64::from(node_id) << seq_bits),
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
            node_id: StdAtomicU64::new(u64::from(node_id)),
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
        })
    }
}
