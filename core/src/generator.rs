//! The generator: one packed state word `P = elapsed << seq_bits | seq`, advanced by
//! compare-and-swap as `P' = max(P + 1, now << seq_bits)`. A new millisecond resets the sequence,
//! the same millisecond increments it, and a spent sequence carries into the next millisecond.
//! The two modes differ only in how far `P'` may run ahead of the wall clock.

use crate::clock::{Clock, ClockSource, SystemClock, MAX_COARSE_TICK_NS};
use crate::error::{Error, Result, Value};
use crate::fork;
use crate::forward::{
    ForwardGuard, Verdict, DEFAULT_FORWARD_CONFIRM_MS, DEFAULT_MAX_FORWARD_STEP_MS,
    MAX_FORWARD_SETTING_MS,
};
use crate::interrupt::Checks;
use crate::layout::{Decoded, Layout, DEFAULT_EPOCH_MS};
use crate::lease::{
    LeaseHealth, LeaseRuntime, LeaseState, NodeSource, NodeSourceKind, Release, SlotContext,
};
use crate::registry::{self, Claim};
use crate::sync::{AtomicI64, AtomicU64, Ordering};
use std::fmt;
// Plain std atomics for what changes only at a fork re-lease: loom models the state word only.
use std::sync::atomic::{AtomicU64 as StdAtomicU64, Ordering as StdOrdering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The largest batch one `next_ids` call may ask for through a binding (2^24 = 16,777,216 IDs).
pub const MAX_BATCH: usize = 1 << 24;

/// The default wait budget: rewinds up to this many milliseconds are waited out, larger ones
/// refused.
pub const DEFAULT_MAX_WAIT_MS: f64 = 5.0;

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

/// Where the wall clock comes from. The system clock is matched directly so its hot path is a
/// plain `clock_gettime`, with no virtual call.
#[derive(Clone)]
enum TimeSource {
    System,
    Injected(Arc<dyn Clock>),
}

impl TimeSource {
    #[inline]
    fn now_ms(&self) -> Result<i64> {
        match self {
            TimeSource::System => Ok(SystemClock::read_ms()),
            TimeSource::Injected(c) => c.now_ms().map_err(|e| Error::ClockFailed { reason: e.0 }),
        }
    }

    fn until_next_ms(&self) -> Duration {
        match self {
            TimeSource::System => SystemClock.until_next_ms(),
            TimeSource::Injected(c) => c.until_next_ms(),
        }
    }

    fn boot_ms(&self) -> i64 {
        match self {
            TimeSource::System => SystemClock::boot_ms(),
            TimeSource::Injected(c) => c.boot_ms(),
        }
    }

    #[inline]
    fn now_ns(&self) -> Result<i64> {
        match self {
            TimeSource::System => Ok(SystemClock::read_ns()),
            TimeSource::Injected(c) => c.now_ns().map_err(|e| Error::ClockFailed { reason: e.0 }),
        }
    }

    #[inline]
    fn coarse_ms(&self) -> Result<i64> {
        match self {
            TimeSource::System => Ok(SystemClock::read_coarse_ms()),
            TimeSource::Injected(c) => c
                .coarse_ms()
                .map_err(|e| Error::ClockFailed { reason: e.0 }),
        }
    }
}

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
    mode: Mode,
    layout: Layout,
    epoch_ms: i64,
    max_wait_ms: f64,
    max_lead_ms: Option<i64>,
    max_forward_step_ms: Option<u64>,
    forward_confirm_ms: u64,
    clock: Option<Arc<dyn Clock>>,
    clock_source: ClockSource,
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
            .field("mode", &self.mode)
            .field("layout", &self.layout)
            .field("epoch_ms", &self.epoch_ms)
            .field("max_wait_ms", &self.max_wait_ms)
            .field("max_lead_ms", &self.max_lead_ms)
            .field("max_forward_step_ms", &self.max_forward_step_ms)
            .field("forward_confirm_ms", &self.forward_confirm_ms)
            .field("injected_clock", &self.clock.is_some())
            .field("clock_source", &self.clock_source)
            .finish()
    }
}

impl Builder {
    /// Strict or monotonic (default strict).
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
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
        self.max_wait_ms = max_wait_ms;
        self
    }
    /// Monotonic mode's limit on running ahead of the wall clock, in milliseconds (default
    /// unbounded). Past it, calls are refused and health reports unhealthy.
    pub fn max_lead_ms(mut self, max_lead_ms: Option<i64>) -> Self {
        self.max_lead_ms = max_lead_ms;
        self
    }
    /// How far ahead of the time elapsed since it was last trusted the wall clock may read
    /// before it is a forward STEP, in ms (default 60,000; `None` turns the check off). A
    /// reading past it is not issued from (strict mode refuses with
    /// [`Error::ClockJumpedAhead`]; monotonic mode keeps its floor at the trusted time; a lease
    /// does not move R to it) until it comes back, or until the new offset has held for
    /// `forward_confirm_ms`.
    pub fn max_forward_step_ms(mut self, max_forward_step_ms: Option<u64>) -> Self {
        self.max_forward_step_ms = max_forward_step_ms;
        self
    }
    /// Which reading of the clock each ID takes (default [`ClockSource::Precise`]); see
    /// [`ClockSource::Coarse`] for the fast path and its trade-off.
    pub fn clock_source(mut self, source: ClockSource) -> Self {
        self.clock_source = source;
        self
    }
    /// How long a stepped-ahead clock must hold its new offset before it is believed as a
    /// correction, in ms of elapsed time (default 300,000: as long as NTP itself waits before
    /// stepping).
    pub fn forward_confirm_ms(mut self, forward_confirm_ms: u64) -> Self {
        self.forward_confirm_ms = forward_confirm_ms;
        self
    }
    /// Read time from this clock instead of the system clock. Its clock is not read until the
    /// first call (so a [`crate::ScriptedClock`]'s first value goes to the first ID).
    /// Generators on the test clocks ([`crate::ManualClock`], [`crate::ScriptedClock`]) are
    /// independent of each other and of the one-node-id-per-process rule; any other clock
    /// follows that rule like the system clock.
    pub fn clock<C: Clock + 'static>(mut self, clock: C) -> Self {
        self.clock = Some(Arc::new(clock));
        self
    }
    /// Like [`Builder::clock`], for a clock already shared behind an `Arc`.
    pub fn shared_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock);
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
        if !self.max_wait_ms.is_finite() || self.max_wait_ms < 0.0 {
            return Err(Error::InvalidArgument {
                name: "max_wait_ms",
                reason: format!("{} is not a finite number >= 0", self.max_wait_ms),
            });
        }
        if self.max_wait_ms > 60_000.0 {
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
        if self.forward_confirm_ms > MAX_FORWARD_SETTING_MS {
            return Err(Error::InvalidArgument {
                name: "forward_confirm_ms",
                reason: format!(
                    "{} is out of range: 0 to {MAX_FORWARD_SETTING_MS}",
                    self.forward_confirm_ms
                ),
            });
        }
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
        let (clock, system) = match self.clock {
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
        let (coarse, clock_tick_ns, clock_note) = match (self.clock_source, &clock) {
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
        let forward = Arc::new(ForwardGuard::new(
            self.max_forward_step_ms,
            self.forward_confirm_ms,
        ));
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
        let max_wait = Duration::from_secs_f64(self.max_wait_ms / 1000.0);
        Ok(Generator {
            state: PaddedState(AtomicI64::new(start_state)),
            seq_bits,
            ts_shift: layout.node_bits() + seq_bits,
            seq_mask: layout.max_sequence() as i64,
            node_part: StdAtomicU64::new(u64::from(node_id) << seq_bits),
            max_elapsed: layout.max_elapsed_ms() as i64,
            epoch_ms: self.epoch_ms,
            mode: self.mode,
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
            max_wait_ms: self.max_wait_ms,
            max_wait,
            exhaust_budget: max_wait.max(Duration::from_millis(1)),
            interrupts: AtomicU64::new(0),
            max_lead_ms: self.max_lead_ms,
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

/// The state word on a cache line of its own, so threads that CAS it do not also invalidate the
/// read-only settings beside it.
#[repr(align(64))]
struct PaddedState(AtomicI64);

#[derive(Default)]
struct Stats {
    /// IDs issued in milliseconds before the state's current one.
    completed: AtomicU64,
    rewinds_waited: AtomicU64,
    rewinds_refused: AtomicU64,
    sequence_exhaustions: AtomicU64,
    wait_sleeps: AtomicU64,
    ms_borrowed: AtomicU64,
    lead_refused: AtomicU64,
    forward_refused: AtomicU64,
}

/// No stuck refusal recorded (see `Generator::stuck_at`).
const NOT_STUCK: i64 = i64::MIN;
/// The state word of a closed generator: far past every layout's window (so every step from it
/// is refused) yet far enough from `i64::MAX` that adding a batch cannot overflow.
const CLOSED_STATE: i64 = i64::MAX / 4;
/// `closed_state` before the generator is closed.
const NOT_CLOSED: i64 = i64::MIN;

fn bump(counter: &AtomicU64, by: u64) {
    counter.fetch_add(by, Ordering::Relaxed);
}

/// A generator of unique, time-sortable 64-bit IDs for one node id. Thread-safe: share it
/// (`&Generator` or `Arc<Generator>`) between threads; the hot path is one clock read and one
/// compare-and-swap, with no mutex.
///
/// ```
/// use polyflake::{Generator, ManualClock};
/// let clock = ManualClock::new(1_737_747_358_021);
/// let g = Generator::builder(37).clock(clock.clone()).build().unwrap();
/// let a = g.next_id().unwrap();
/// let b = g.next_id().unwrap();
/// assert!(b > a);
/// assert_eq!(g.decode(b).unwrap().sequence, 1);
/// ```
pub struct Generator {
    state: PaddedState,
    seq_bits: u32,
    ts_shift: u32,
    seq_mask: i64,
    /// `node_id << seq_bits`; changes only when a lease-backed generator re-leases after fork.
    node_part: StdAtomicU64,
    max_elapsed: i64,
    epoch_ms: i64,
    mode: Mode,
    clock: TimeSource,
    /// UUIDv7: a reading's floor carries its sub-millisecond fraction (12 bits) and a random
    /// counter seed (2 bits) below the millisecond.
    sub_ms: bool,
    /// The 128-bit formats carry no node id: a forked child goes on issuing (their random
    /// parts are reseeded there).
    fork_ok: bool,
    /// IDs issued, counted per step (UUIDv7, whose milliseconds do not start at 0).
    exact_issued: AtomicU64,
    /// True when IDs read the coarse clock first (`ClockSource::Coarse`, in effect).
    coarse: bool,
    /// The resolution of the clock in use, ns (0 for an injected clock).
    clock_tick_ns: u64,
    /// Why a requested coarse source is not in use; empty otherwise.
    clock_note: String,
    /// The fork generation this generator (or its lease) belongs to.
    fork_generation: StdAtomicU64,
    node_id: StdAtomicU64,
    layout: Layout,
    max_wait_ms: f64,
    max_wait: Duration,
    exhaust_budget: Duration,
    /// Bumped by `interrupt_waits`: calls waiting when it moves are cut short.
    interrupts: AtomicU64,
    max_lead_ms: Option<i64>,
    stats: Stats,
    /// The elapsed ms at which a strict call last gave up on a clock that did not advance;
    /// health reports the clock stuck until it reads past this.
    stuck_at: AtomicI64,
    /// The state word as it was when the generator was closed (for health).
    closed_state: AtomicI64,
    /// IDs of the starting millisecond issued by a predecessor with this node id (the state
    /// continues after them), which `ids_issued` must not count.
    issued_before: u64,
    /// Whether a wall reading is a forward step (shared with the lease's renewal).
    forward: Arc<ForwardGuard>,
    /// The issuing window (`floor < now`, `ms <= limit`): fixed without a lease (until
    /// closed), moved by the lease's background thread with one.
    lease_state: Arc<LeaseState>,
    lease: Option<LeaseRuntime>,
    source_kind: NodeSourceKind,
    claim: Option<Claim>,
}

impl fmt::Debug for Generator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Generator")
            .field("node_id", &self.node_id())
            .field("source", &self.source_kind)
            .field("mode", &self.mode)
            .field("layout", &self.layout)
            .field("epoch_ms", &self.epoch_ms)
            .finish_non_exhaustive()
    }
}

/// Per-call wait bookkeeping: ONE monotonic deadline for the whole call, started at the first
/// wait, so a clock that keeps retreating (or never advances) ends in a refusal, never a hang.
/// The deadline restarts only when a spent-sequence wait sees the clock has advanced (the
/// millisecond was taken by other threads): that is contention, not a stuck clock.
struct Wait {
    started: Option<Instant>,
    rewound: bool,
    exhausted: bool,
    /// The reading at which the sequence was last found spent.
    exhausted_at: Option<i64>,
    /// The generator's interrupt count when the call began: a higher one stops the call.
    interrupts_seen: u64,
    /// When the call first waited (for the refusal's figure) and the binding's hook was asked.
    first_wait: Option<Instant>,
    checks: Checks,
}

impl Wait {
    fn new(interrupts_seen: u64) -> Wait {
        Wait {
            started: None,
            rewound: false,
            exhausted: false,
            exhausted_at: None,
            interrupts_seen,
            first_wait: None,
            checks: Checks::default(),
        }
    }
    /// A millisecond of progress: the deadlines start again (the interrupt bookkeeping does not).
    fn progressed(&mut self) {
        self.started = None;
        self.rewound = false;
        self.exhausted = false;
        self.exhausted_at = None;
    }
    fn spent(&mut self) -> Duration {
        self.started.get_or_insert_with(Instant::now).elapsed()
    }
}

impl Generator {
    /// A builder for a generator with this node id and every other setting at its default
    /// (`Generator::builder_from(NodeSource::Static(node_id))`).
    pub fn builder(node_id: impl Into<i128>) -> Builder {
        Generator::builder_from(NodeSource::Static(node_id.into()))
    }

    /// A builder for a generator whose node id comes from `source` (an environment variable,
    /// a hostname's ordinal, an IPv4 address, a file lease or an etcd lease), with every other
    /// setting at its default.
    ///
    /// ```
    /// use polyflake::{FileLeaseOptions, Generator, NodeSource};
    /// let dir = std::env::temp_dir().join(format!("polyflake-doc-{}", std::process::id()));
    /// let mut opts = FileLeaseOptions::new(&dir);
    /// opts.common.slots = Some(4);
    /// opts.common.reserve_ms = 50;
    /// let a = Generator::builder_from(NodeSource::FileLease(opts.clone())).build().unwrap();
    /// let b = Generator::builder_from(NodeSource::FileLease(opts)).build().unwrap();
    /// assert_ne!(a.node_id(), b.node_id()); // two slots of one directory
    /// // A new slot file is guarded for one reserve (nobody can tell who held it before).
    /// a.wait_ready(std::time::Duration::from_secs(1)).unwrap();
    /// assert!(a.next_id().unwrap() > 0);
    /// # drop((a, b)); std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn builder_from(source: NodeSource) -> Builder {
        Builder {
            source,
            mode: Mode::Strict,
            layout: Layout::DEFAULT,
            epoch_ms: DEFAULT_EPOCH_MS,
            max_wait_ms: DEFAULT_MAX_WAIT_MS,
            max_lead_ms: None,
            max_forward_step_ms: Some(DEFAULT_MAX_FORWARD_STEP_MS),
            forward_confirm_ms: DEFAULT_FORWARD_CONFIRM_MS,
            clock: None,
            clock_source: ClockSource::Precise,
            kind: Kind::Snowflake,
        }
    }

    /// A strict generator (`Snowflake`) on the system clock with the default layout and epoch.
    ///
    /// ```
    /// let g = polyflake::Generator::strict(901).unwrap();
    /// assert!(g.next_id().unwrap() > 0);
    /// ```
    pub fn strict(node_id: impl Into<i128>) -> Result<Generator> {
        Generator::builder(node_id).build()
    }

    /// A monotonic generator (`MonotonicSnowflake`) on the system clock with the default layout
    /// and epoch.
    ///
    /// ```
    /// let g = polyflake::Generator::monotonic(902).unwrap();
    /// let mut buf = [0u64; 10_000];
    /// g.next_ids(&mut buf).unwrap();
    /// assert!(buf.windows(2).all(|w| w[0] < w[1]));
    /// ```
    pub fn monotonic(node_id: impl Into<i128>) -> Result<Generator> {
        Generator::builder(node_id).mode(Mode::Monotonic).build()
    }

    /// This generator's node id (a lease's slot; in a forked child, the child's fresh slot
    /// once it has taken one).
    pub fn node_id(&self) -> u32 {
        self.node_id.load(StdOrdering::Relaxed) as u32
    }
    /// The kind of source this generator's node id came from.
    pub fn node_source(&self) -> NodeSourceKind {
        self.source_kind
    }
    /// This generator's mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }
    /// This generator's layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }
    /// This generator's epoch, Unix milliseconds.
    pub fn epoch_ms(&self) -> i64 {
        self.epoch_ms
    }
    /// Strict mode's wait budget in milliseconds.
    pub fn max_wait_ms(&self) -> f64 {
        self.max_wait_ms
    }
    /// Monotonic mode's lead limit in milliseconds, if any.
    pub fn max_lead_ms(&self) -> Option<i64> {
        self.max_lead_ms
    }
    /// True when time comes from an injected clock rather than the system clock.
    pub fn has_injected_clock(&self) -> bool {
        matches!(self.clock, TimeSource::Injected(_))
    }
    /// The clock reading in use: [`ClockSource::Coarse`] only when it was asked for and the
    /// system's coarse clock is fine enough (see [`Health::clock_note`]).
    pub fn clock_source(&self) -> ClockSource {
        if self.coarse {
            ClockSource::Coarse
        } else {
            ClockSource::Precise
        }
    }
    /// The bound on a forward step of the wall clock, in ms (`None`: no check).
    pub fn max_forward_step_ms(&self) -> Option<u64> {
        self.forward.max_step_ms()
    }
    /// How long a stepped-ahead clock must hold before it is believed, in ms.
    pub fn forward_confirm_ms(&self) -> u64 {
        self.forward.confirm_ms()
    }

    /// Decode an ID with this generator's layout and epoch.
    pub fn decode(&self, id: u64) -> Result<Decoded> {
        self.layout.decode(id, self.epoch_ms)
    }

    #[inline]
    fn id_of(&self, p: i64) -> u64 {
        (((p >> self.seq_bits) as u64) << self.ts_shift)
            | self.node_part.load(StdOrdering::Relaxed)
            | (p & self.seq_mask) as u64
    }

    /// The wall clock as elapsed ms since the epoch, refused outside the issuing window: the
    /// layout's window, narrowed by a lease to `(floor, R]`. Strict mode issues at `now`, so this
    /// one check covers both its bounds; monotonic mode also checks its ID's ms (`check_ahead`).
    /// A reading past the forward-step bound goes the cold way, which refuses it (strict) or
    /// replaces it with the time elapsed time vouches for (monotonic).
    #[inline]
    fn now_elapsed(&self) -> Result<i64> {
        self.elapsed_of(self.clock.now_ms()?)
    }

    /// A reading as elapsed ms and the state floor it gives (`ms << seq_bits`, or for UUIDv7
    /// with the sub-millisecond fraction and a counter seed below it).
    #[inline]
    fn read(&self) -> Result<(i64, i64)> {
        if self.sub_ms {
            return self.read_sub_ms(false);
        }
        let ms = self.now_elapsed()?;
        Ok((ms, ms << self.seq_bits))
    }

    /// [`Generator::read`] on the coarse reading when the coarse source is in effect.
    #[inline]
    fn read_fast(&self) -> Result<(i64, i64)> {
        if !self.coarse {
            return self.read();
        }
        if self.sub_ms {
            return self.read_sub_ms(true);
        }
        let ms = self.coarse_elapsed()?;
        Ok((ms, ms << self.seq_bits))
    }

    #[cold]
    fn read_sub_ms(&self, coarse: bool) -> Result<(i64, i64)> {
        let ns = if coarse {
            self.clock.coarse_ms()?.saturating_mul(1_000_000)
        } else {
            self.clock.now_ns()?
        };
        let ms = self.elapsed_of(ns.div_euclid(1_000_000))?;
        // 12 bits of the millisecond (RFC 9562, 6.2 method 3), then a counter whose start in
        // each new tick is random (method 1): the state's 15 bits below the millisecond.
        let frac = (ns.rem_euclid(1_000_000) << 12) / 1_000_000;
        let seed = (crate::random::random_u64() & 3) as i64;
        Ok((ms, (ms << self.seq_bits) | (frac << 3) | seed))
    }

    /// The coarse reading (the coarse source), checked like [`Generator::now_elapsed`].
    #[inline]
    fn coarse_elapsed(&self) -> Result<i64> {
        self.elapsed_of(self.clock.coarse_ms()?)
    }

    #[inline]
    fn elapsed_of(&self, now: i64) -> Result<i64> {
        let elapsed = i128::from(now) - i128::from(self.epoch_ms);
        let window = &*self.lease_state;
        if elapsed <= i128::from(window.floor.load(StdOrdering::Relaxed))
            || elapsed > i128::from(window.limit.load(StdOrdering::Relaxed))
            || !self.forward.trusts(now)
        {
            return self.now_elapsed_cold(now);
        }
        Ok(elapsed as i64)
    }

    #[cold]
    #[inline(never)]
    fn now_elapsed_cold(&self, now: i64) -> Result<i64> {
        let now = match self.forward.check(now, || self.clock.boot_ms()) {
            Verdict::Trusted => now,
            Verdict::Ahead {
                expected_ms,
                ahead_ms,
                confirm_remaining_ms,
            } => {
                if self.lease_state.is_closed() {
                    return Err(Error::GeneratorClosed {
                        node_id: self.node_id(),
                    });
                }
                match self.mode {
                    Mode::Strict => {
                        bump(&self.stats.forward_refused, 1);
                        return Err(Error::ClockJumpedAhead {
                            node_id: self.node_id(),
                            ahead_ms,
                            max_forward_step_ms: self.forward.max_step_ms().unwrap_or(0),
                            confirm_remaining_ms,
                        });
                    }
                    // Monotonic mode does not move its floor up to a bad step: it issues from
                    // the time elapsed time vouches for (borrowing ahead of it as usual).
                    Mode::Monotonic => expected_ms,
                }
            }
        };
        let elapsed = i128::from(now) - i128::from(self.epoch_ms);
        let window = &*self.lease_state;
        if elapsed <= i128::from(window.floor.load(StdOrdering::Relaxed))
            || elapsed > i128::from(window.limit.load(StdOrdering::Relaxed))
        {
            return Err(self.outside(now, elapsed));
        }
        Ok(elapsed as i64)
    }

    /// Why `now` (Unix ms) is outside the issuing window.
    #[cold]
    fn outside(&self, now: i64, elapsed: i128) -> Error {
        if self.lease_state.is_closed() {
            return Error::GeneratorClosed {
                node_id: self.node_id(),
            };
        }
        if elapsed < 0 || elapsed > i128::from(self.max_elapsed) {
            return self.overflow(now);
        }
        // Strict mode issues at the clock's millisecond: never ahead of it.
        self.lease_state
            .refusal(self.node_id(), now, Some(now), self.last_issued_unix_ms())
    }

    /// The millisecond of the last ID this generator issued (Unix ms), if any.
    fn last_issued_unix_ms(&self) -> Option<i64> {
        let p = self.state.0.load(Ordering::Relaxed);
        (p >= 0 && self.closed_state.load(Ordering::Relaxed) == NOT_CLOSED)
            .then(|| self.epoch_ms + (p >> self.seq_bits))
    }

    fn overflow(&self, unix_ms: i64) -> Error {
        Error::TimestampOverflow {
            unix_ms,
            epoch_ms: self.epoch_ms,
            max_elapsed_ms: self.max_elapsed as u64,
        }
    }

    #[inline]
    fn check_fork(&self) -> Result<()> {
        if fork::current_fork_generation() != self.fork_generation.load(StdOrdering::Acquire) {
            return self.after_fork();
        }
        Ok(())
    }

    /// This is a forked child: a static generator refuses; a 128-bit format goes on; a
    /// lease-backed one takes a fresh
    /// slot (the parent's stays the parent's) and restarts its renewal before issuing.
    // Modelled in model/file.pml: Holder, the relet_after_fork step; model/fork.pml: the child's
    // inherited generator (make model).
    #[cold]
    #[inline(never)]
    fn after_fork(&self) -> Result<()> {
        if self.fork_ok {
            // No node id to share: the child goes on (the format reseeds its random parts).
            self.fork_generation
                .store(fork::current_fork_generation(), StdOrdering::Release);
            return Ok(());
        }
        let Some(lease) = &self.lease else {
            return Err(Error::UsedAfterFork {
                node_id: self.node_id(),
            });
        };
        let generation = fork::current_fork_generation();
        let done = || self.fork_generation.load(StdOrdering::Acquire) == generation;
        let slot = lease.relet_after_fork(generation, &done)?;
        self.node_id.store(u64::from(slot), StdOrdering::Relaxed);
        self.node_part
            .store(u64::from(slot) << self.seq_bits, StdOrdering::Relaxed);
        // Publish the new node id with the generation: a call that sees the generation sees it.
        self.fork_generation.store(generation, StdOrdering::Release);
        Ok(())
    }

    /// Count what a successful step from `p` to `next` (reserving `n` values) did.
    #[inline]
    fn record(&self, p: i64, next: i64, n: i64, now: i64) {
        if self.sub_ms {
            bump(&self.exact_issued, n as u64);
        }
        let (old_ms, new_ms) = (p >> self.seq_bits, next >> self.seq_bits);
        if new_ms != old_ms {
            // Every millisecond starts at sequence 0, so the IDs issued so far are `completed`
            // plus the current millisecond's `seq + 1`. Only a change of millisecond moves
            // `completed`, which keeps a shared counter off the per-ID path.
            let before = if p >= 0 { (p & self.seq_mask) + 1 } else { 0 };
            let done = before + n - ((next & self.seq_mask) + 1);
            bump(&self.stats.completed, done as u64);
            let borrowed = new_ms - old_ms.max(now);
            if borrowed > 0 {
                bump(&self.stats.ms_borrowed, borrowed as u64);
            }
        }
    }

    /// Issue one ID.
    ///
    /// Strict mode may wait (at most `max_wait_ms` for a rewind, `max(max_wait_ms, 1)` ms for a
    /// spent sequence) and refuses with [`Error::ClockMovedBackwards`] past that. Monotonic mode
    /// never waits.
    ///
    /// ```
    /// use polyflake::{ErrorKind, Generator, ManualClock};
    /// let clock = ManualClock::new(1_704_067_201_000);
    /// let g = Generator::builder(7).clock(clock.clone()).build().unwrap();
    /// g.next_id().unwrap();
    /// clock.advance(-600); // an NTP step back
    /// assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::ClockMovedBackwards);
    /// ```
    #[inline]
    pub fn next_id(&self) -> Result<u64> {
        self.check_fork()?;
        match self.mode {
            Mode::Strict => match self.next_strict(true)? {
                Some(id) => Ok(id),
                None => {
                    unreachable!("a strict call that may wait always returns an ID or an error")
                }
            },
            Mode::Monotonic => self.next_monotonic(),
        }
    }

    /// Issue one ID if that needs no wait: `Ok(None)` where [`Generator::next_id`] would sleep
    /// (a small rewind, or a spent sequence in strict mode). Refusals are errors exactly as in
    /// `next_id`. Bindings use it to hold a runtime lock (Python's GIL) only on the fast path and
    /// release it before a call that waits.
    ///
    /// ```
    /// use polyflake::{Generator, ManualClock};
    /// let g = Generator::builder(1).clock(ManualClock::new(1_704_067_200_005)).build().unwrap();
    /// for _ in 0..4096 {
    ///     assert!(g.try_next_id().unwrap().is_some());
    /// }
    /// assert_eq!(g.try_next_id().unwrap(), None); // the frozen millisecond is spent
    /// ```
    #[inline]
    pub fn try_next_id(&self) -> Result<Option<u64>> {
        self.check_fork()?;
        match self.mode {
            Mode::Strict => self.next_strict(false),
            Mode::Monotonic => self.next_monotonic().map(Some),
        }
    }

    /// Strict mode. With `may_wait` false, returns `Ok(None)` instead of sleeping.
    // Modelled in model/lease.pml: CAN_ISSUE and inline issue (strict mode, issued eagerly) (make
    // model).
    #[inline]
    fn next_strict(&self, may_wait: bool) -> Result<Option<u64>> {
        let s = self.seq_bits;
        let mut wait = self.new_wait();
        loop {
            // Load the state BEFORE reading the clock: every ID in it was issued at a reading
            // taken before ours, so `now < last` means the clock really went back, not that
            // another thread read it a moment later than we did.
            let p = self.state.0.load(Ordering::Acquire);
            let last = p >> s;
            let (mut now, mut floor) = self.read_fast()?;
            // The coarse reading is a past tick of the same clock, never ahead of it: issuing at
            // max(last, coarse) keeps strict mode's promise. Only when it is behind the last
            // issued millisecond (a tick's lag, or a real rewind) or that millisecond is spent
            // does the precise reading decide.
            if self.coarse && (now < last || ((p + 1).max(floor) >> s) > now) {
                (now, floor) = self.read()?;
            }
            if now < last {
                if !may_wait && (last - now) as f64 <= self.max_wait_ms {
                    return Ok(None);
                }
                self.wait_rewind(&mut wait, (last - now) as u64)?;
                continue;
            }
            let next = (p + 1).max(floor);
            if next >> s > now {
                // This millisecond's sequence is spent; strict mode never borrows ahead.
                if !may_wait {
                    return Ok(None);
                }
                self.wait_exhausted(&mut wait, now)?;
                continue;
            }
            if self
                .state
                .0
                .compare_exchange_weak(p, next, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                self.record(p, next, 1, now);
                if wait.rewound {
                    bump(&self.stats.rewinds_waited, 1);
                }
                return Ok(Some(self.id_of(next)));
            }
        }
    }

    // Modelled in model/lease.pml: CAN_ISSUE with MONO=1, inline issue (make model).
    #[inline]
    fn next_monotonic(&self) -> Result<u64> {
        let s = self.seq_bits;
        let (now, floor) = self.read_fast()?;
        let mut p = self.state.0.load(Ordering::Relaxed);
        loop {
            let next = (p + 1).max(floor);
            self.check_ahead(next >> s, now)?;
            match self
                .state
                .0
                .compare_exchange_weak(p, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => {
                    self.record(p, next, 1, now);
                    return Ok(self.id_of(next));
                }
                Err(actual) => p = actual,
            }
        }
    }

    /// Monotonic mode: refuse a step whose millisecond leaves the window or runs further ahead
    /// of the wall clock than `max_lead_ms`.
    #[inline]
    fn check_ahead(&self, ms: i64, now: i64) -> Result<()> {
        if ms > self.lease_state.limit.load(StdOrdering::Relaxed) {
            if self.lease_state.is_closed() {
                return Err(Error::GeneratorClosed {
                    node_id: self.node_id(),
                });
            }
            if ms > self.max_elapsed {
                return Err(self.overflow(self.epoch_ms.saturating_add(ms)));
            }
            return Err(self.lease_state.refusal(
                self.node_id(),
                self.epoch_ms + now,
                Some(self.epoch_ms + ms),
                self.last_issued_unix_ms(),
            ));
        }
        if let Some(max_lead) = self.max_lead_ms {
            if ms - now > max_lead {
                // A coarse reading lags by up to a tick: the precise one decides a refusal.
                if self.coarse && ms - self.now_elapsed()? <= max_lead {
                    return Ok(());
                }
                bump(&self.stats.lead_refused, 1);
                return Err(Error::LeadLimitExceeded {
                    node_id: self.node_id(),
                    lead_ms: (ms - now) as u64,
                    max_lead_ms: max_lead as u64,
                });
            }
        }
        Ok(())
    }

    /// The clock is `behind` ms behind the last issued millisecond: refuse beyond the budget,
    /// otherwise sleep towards it under the call's one monotonic deadline.
    fn wait_rewind(&self, wait: &mut Wait, behind: u64) -> Result<()> {
        let refuse = || {
            bump(&self.stats.rewinds_refused, 1);
            Err(Error::ClockMovedBackwards {
                node_id: self.node_id(),
                behind_ms: behind,
                stuck: false,
                max_wait_ms: self.max_wait_ms,
            })
        };
        // A rewind larger than the budget is a real event (an NTP step, a leap second): refuse
        // at once so the caller can go to another node.
        if behind as f64 > self.max_wait_ms {
            return refuse();
        }
        // Below the budget it is slew jitter: wait, but the deadline bounds the whole call, not
        // one sample of the drift, so a clock that keeps retreating cannot hold us here.
        let spent = wait.spent();
        if spent >= self.max_wait {
            return refuse();
        }
        wait.rewound = true;
        bump(&self.stats.wait_sleeps, 1);
        self.sleep(
            wait,
            Duration::from_millis(behind).min(self.max_wait - spent),
        )
    }

    /// The interrupt bookkeeping for a call that may wait.
    #[inline]
    fn new_wait(&self) -> Wait {
        Wait::new(self.interrupts.load(Ordering::Relaxed))
    }

    /// Sleep in slices, stopping with [`Error::Interrupted`] when the binding's hook or
    /// [`Generator::interrupt_waits`] says so.
    fn sleep(&self, wait: &mut Wait, d: Duration) -> Result<()> {
        let first = *wait.first_wait.get_or_insert_with(Instant::now);
        let seen = wait.interrupts_seen;
        if wait
            .checks
            .sleep(d, || self.interrupts.load(Ordering::Relaxed) != seen)
        {
            return Ok(());
        }
        Err(Error::Interrupted {
            node_id: self.node_id(),
            waited_ms: first.elapsed().as_millis() as u64,
        })
    }

    /// Cut short every call of this generator that is waiting now (a strict rewind, a spent
    /// sequence, a batch spanning milliseconds): each fails with [`Error::Interrupted`] within
    /// [`SLICE`](crate::interrupt::SLICE), having issued nothing its caller does not get.
    /// Calls that begin afterwards are not affected. The C ABI's cancel call and the service's
    /// shutdown use it.
    ///
    /// ```
    /// use polyflake::{ErrorKind, Generator, ManualClock};
    /// use std::sync::Arc;
    /// let clock = ManualClock::new(1_704_167_201_000);
    /// let g = Arc::new(Generator::builder(7).max_wait_ms(60_000.0).clock(clock.clone()).build().unwrap());
    /// g.next_id().unwrap();
    /// clock.advance(-30_000); // next_id would wait 30 s
    /// let waiter = { let g = g.clone(); std::thread::spawn(move || g.next_id()) };
    /// std::thread::sleep(std::time::Duration::from_millis(50));
    /// g.interrupt_waits();
    /// assert_eq!(waiter.join().unwrap().unwrap_err().kind(), ErrorKind::Interrupted);
    /// ```
    pub fn interrupt_waits(&self) {
        self.interrupts.fetch_add(1, Ordering::Relaxed);
    }

    /// The sequence for the current millisecond is spent: sleep to the millisecond boundary (a
    /// spin would burn a core for up to a millisecond), under a deadline of max(budget, 1 ms),
    /// because a frozen clock is the same fault as one that retreats.
    fn wait_exhausted(&self, wait: &mut Wait, now: i64) -> Result<()> {
        if !wait.exhausted {
            bump(&self.stats.sequence_exhaustions, 1);
        }
        if wait.exhausted_at != Some(now) {
            // First wait, or the clock has moved on since and other threads spent the new
            // millisecond first: the clock is not stuck, so the deadline starts again. Only a
            // reading that stays put for the whole budget is refused.
            wait.exhausted = true;
            wait.exhausted_at = Some(now);
            wait.started = Some(Instant::now());
        }
        let spent = wait.spent();
        if spent >= self.exhaust_budget {
            bump(&self.stats.rewinds_refused, 1);
            self.stuck_at.store(now, Ordering::Relaxed);
            return Err(Error::ClockMovedBackwards {
                node_id: self.node_id(),
                behind_ms: 0,
                stuck: true,
                max_wait_ms: self.exhaust_budget.as_secs_f64() * 1000.0,
            });
        }
        bump(&self.stats.wait_sleeps, 1);
        let d = self.clock.until_next_ms().min(self.exhaust_budget - spent);
        self.sleep(wait, d)
    }

    /// Fill `out` with consecutive IDs.
    ///
    /// Monotonic mode reserves the whole batch with one atomic step. Strict mode fills the
    /// current millisecond and waits into the next ones (100,000 IDs take about 25 ms with the
    /// default layout), with the wait deadline restarting after each millisecond of progress.
    /// On an error the buffer is left exactly as it was (nothing is written unless the whole
    /// batch was issued), so a binding may pass the caller's own memory.
    ///
    /// ```
    /// use polyflake::{Generator, ManualClock, Mode};
    /// let g = Generator::builder(3).mode(Mode::Monotonic)
    ///     .clock(ManualClock::new(1_704_067_200_005)).build().unwrap();
    /// let mut ids = vec![0u64; 10_000];
    /// g.next_ids(&mut ids).unwrap();
    /// assert!(ids.windows(2).all(|w| w[1] == w[0] + 1 || w[1] > w[0]));
    /// ```
    pub fn next_ids(&self, out: &mut [u64]) -> Result<()> {
        self.check_fork()?;
        if out.is_empty() {
            return Ok(());
        }
        match self.mode {
            Mode::Strict => self.fill_strict(out),
            Mode::Monotonic => self.fill_monotonic(out),
        }
    }

    /// Fill `out` only if that needs no wait: `Ok(false)` where [`Generator::next_ids`] would
    /// sleep (in strict mode: a small rewind, or fewer IDs left in the current millisecond than
    /// `out` holds), with `out` untouched and nothing issued. Refusals are errors exactly as in
    /// `next_ids`; monotonic mode never waits, so it always fills. Bindings use it to fill a
    /// batch that fits the current millisecond on the caller's thread and hand only a batch that
    /// must wait to another thread (an event loop must not sleep).
    ///
    /// ```
    /// use polyflake::{Generator, ManualClock};
    /// let g = Generator::builder(1).clock(ManualClock::new(1_704_067_200_005)).build().unwrap();
    /// let mut ids = vec![0u64; 4_000];
    /// assert!(g.try_next_ids(&mut ids).unwrap()); // 4,000 of the millisecond's 4,096
    /// let mut more = vec![0u64; 100];
    /// assert!(!g.try_next_ids(&mut more).unwrap()); // 96 left: next_ids would wait
    /// assert!(more.iter().all(|&id| id == 0));
    /// assert!(g.try_next_ids(&mut more[..96]).unwrap());
    /// ```
    pub fn try_next_ids(&self, out: &mut [u64]) -> Result<bool> {
        self.check_fork()?;
        if out.is_empty() {
            return Ok(true);
        }
        match self.mode {
            Mode::Strict => self.try_fill_strict(out),
            Mode::Monotonic => self.fill_monotonic(out).map(|()| true),
        }
    }

    /// Strict mode's batch in ONE millisecond run, or `Ok(false)` (see `try_next_ids`).
    fn try_fill_strict(&self, out: &mut [u64]) -> Result<bool> {
        let s = self.seq_bits;
        let n = i64::try_from(out.len()).map_err(|_| self.overflow(i64::MAX))?;
        loop {
            // The state before the clock, as in `next_strict`.
            let p = self.state.0.load(Ordering::Acquire);
            let (now, floor) = self.read()?;
            let last = p >> s;
            if now < last {
                if (last - now) as f64 <= self.max_wait_ms {
                    return Ok(false);
                }
                // Beyond the budget this refuses at once, without sleeping.
                return self
                    .wait_rewind(&mut self.new_wait(), (last - now) as u64)
                    .map(|()| false);
            }
            let start = (p + 1).max(floor);
            let room = ((now << s) | self.seq_mask) - start + 1;
            if start >> s > now || room < n {
                return Ok(false);
            }
            let end = start + n - 1;
            if self
                .state
                .0
                .compare_exchange_weak(p, end, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                self.record(p, end, n, now);
                self.write_run(out, start);
                return Ok(true);
            }
        }
    }

    fn fill_monotonic(&self, out: &mut [u64]) -> Result<()> {
        let s = self.seq_bits;
        let n = i64::try_from(out.len()).map_err(|_| self.overflow(i64::MAX))?;
        let (now, floor) = self.read()?;
        let mut p = self.state.0.load(Ordering::Relaxed);
        loop {
            let start = (p + 1).max(floor);
            let end = start
                .checked_add(n - 1)
                .ok_or_else(|| self.overflow(i64::MAX))?;
            self.check_ahead(end >> s, now)?;
            match self
                .state
                .0
                .compare_exchange_weak(p, end, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => {
                    self.record(p, end, n, now);
                    self.write_run(out, start);
                    return Ok(());
                }
                Err(actual) => p = actual,
            }
        }
    }

    fn fill_strict(&self, out: &mut [u64]) -> Result<()> {
        let s = self.seq_bits;
        let mut filled = 0usize;
        let mut wait = self.new_wait();
        // The runs reserved so far (one per millisecond), written into `out` only once the
        // whole batch is reserved: a batch that fails part-way leaves the caller's buffer as it
        // was (its reserved values are never issued: a gap, never a duplicate).
        let mut runs: Vec<(i64, usize)> = Vec::new();
        reserve_batch(&mut runs, out.len() / (1usize << s) + 2, out.len())?;
        while filled < out.len() {
            // Load the state BEFORE reading the clock: every ID in it was issued at a reading
            // taken before ours, so `now < last` means the clock really went back, not that
            // another thread read it a moment later than we did.
            let p = self.state.0.load(Ordering::Acquire);
            let (now, floor) = self.read()?;
            let last = p >> s;
            if now < last {
                self.wait_rewind(&mut wait, (last - now) as u64)?;
                continue;
            }
            let start = (p + 1).max(floor);
            if start >> s > now {
                self.wait_exhausted(&mut wait, now)?;
                continue;
            }
            let room = ((now << s) | self.seq_mask) - start + 1;
            let k = room.min((out.len() - filled) as i64);
            let end = start + k - 1;
            if self
                .state
                .0
                .compare_exchange_weak(p, end, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                self.record(p, end, k, now);
                if wait.rewound {
                    bump(&self.stats.rewinds_waited, 1);
                }
                runs.push((start, k as usize));
                filled += k as usize;
                wait.progressed();
            }
        }
        let mut at = 0;
        for (start, k) in runs {
            self.write_run(&mut out[at..at + k], start);
            at += k;
        }
        Ok(())
    }

    /// Write the IDs of the consecutive states `start, start + 1, ...` into `out`. Within one
    /// millisecond consecutive states are consecutive IDs, so each run is a plain count.
    fn write_run(&self, out: &mut [u64], start: i64) {
        let mut p = start;
        let mut rest = out;
        while !rest.is_empty() {
            let room = (self.seq_mask - (p & self.seq_mask) + 1) as usize;
            let take = room.min(rest.len());
            let (run, tail) = rest.split_at_mut(take);
            let base = self.id_of(p);
            for (k, slot) in run.iter_mut().enumerate() {
                *slot = base + k as u64;
            }
            p += take as i64;
            rest = tail;
        }
    }

    /// A snapshot of this generator's state and counters. Reads the clock once.
    ///
    /// ```
    /// use polyflake::{Generator, ManualClock};
    /// let clock = ManualClock::new(1_704_067_201_000);
    /// let g = Generator::builder(7).clock(clock.clone()).build().unwrap();
    /// g.next_id().unwrap();
    /// assert!(g.health().ok);
    /// clock.advance(-600);
    /// let h = g.health();
    /// assert!(!h.ok);
    /// assert_eq!(h.status, polyflake::HealthStatus::ClockBehind);
    /// ```
    pub fn health(&self) -> Health {
        // In a forked child a lease-backed generator takes its fresh slot here too.
        let fork_error = self.check_fork().err();
        let s = self.seq_bits;
        let p = match self.closed_state.load(Ordering::Relaxed) {
            NOT_CLOSED => self.state.0.load(Ordering::Relaxed),
            closed => closed,
        };
        let issued = if self.sub_ms {
            self.exact_issued.load(Ordering::Relaxed)
        } else {
            (self.stats.completed.load(Ordering::Relaxed)
                + if p >= 0 {
                    (p & self.seq_mask) as u64 + 1
                } else {
                    0
                })
            .saturating_sub(self.issued_before)
        };
        let last_issued_ms = (p >= 0).then(|| self.epoch_ms + (p >> s));
        let reading = self.clock.now_ms();
        let wall_ms = *reading.as_ref().unwrap_or(&0);
        let verdict = match &reading {
            Ok(now) => self.forward.check(*now, || self.clock.boot_ms()),
            Err(_) => Verdict::Trusted,
        };
        let clock_ahead_ms = match verdict {
            Verdict::Ahead { ahead_ms, .. } => ahead_ms,
            Verdict::Trusted => 0,
        };
        let lead_ms = match last_issued_ms {
            Some(last) if reading.is_ok() => (last - wall_ms).max(0),
            _ => 0,
        };
        // While a forward step is in doubt, the time elapsed time vouches for (what a monotonic
        // generator and the lease use).
        let trusted_ms = match verdict {
            Verdict::Ahead { expected_ms, .. } => expected_ms,
            Verdict::Trusted => wall_ms,
        };
        let elapsed = i128::from(trusted_ms) - i128::from(self.epoch_ms);
        let limit = i128::from(self.lease_state.limit.load(StdOrdering::Relaxed));
        let next_ms = if self.mode == Mode::Monotonic {
            i128::from((p + 1).max((elapsed.max(0) as i64) << s) >> s)
        } else {
            elapsed
        };
        let lease = self.lease.as_ref().map(|l| {
            let mut h = l.health(self.node_id(), reading.as_ref().ok().map(|_| trusted_ms));
            h.expired = !h.lost && !h.guard_waiting && next_ms > limit;
            h
        });
        let (status, reason) = if self.lease_state.is_closed() {
            (HealthStatus::Closed, "the generator is closed".to_string())
        } else if let Some(e) = fork_error {
            if e.kind() == crate::error::ErrorKind::UsedAfterFork {
                (HealthStatus::UsedAfterFork, "used after fork".to_string())
            } else {
                (
                    HealthStatus::LeaseLost,
                    format!("forked child could not take a fresh slot: {e}"),
                )
            }
        } else if self.lease.is_some() && self.lease_state.is_lost() {
            (
                if self.lease_state.is_rolled_back() {
                    HealthStatus::StoreRolledBack
                } else {
                    HealthStatus::LeaseLost
                },
                self.lease_state
                    .refusal(self.node_id(), 0, None, None)
                    .to_string(),
            )
        } else if let Err(e) = &reading {
            (HealthStatus::ClockFailed, e.to_string())
        } else if let (
            Mode::Strict,
            Verdict::Ahead {
                ahead_ms,
                confirm_remaining_ms,
                ..
            },
        ) = (self.mode, verdict)
        {
            (
                HealthStatus::ClockAhead,
                Error::ClockJumpedAhead {
                    node_id: self.node_id(),
                    ahead_ms,
                    max_forward_step_ms: self.forward.max_step_ms().unwrap_or(0),
                    confirm_remaining_ms,
                }
                .to_string(),
            )
        } else if elapsed < 0
            || elapsed > i128::from(self.max_elapsed)
            || next_ms > i128::from(self.max_elapsed)
        {
            (
                HealthStatus::ClockOutsideWindow,
                if next_ms > i128::from(self.max_elapsed) && elapsed <= i128::from(self.max_elapsed)
                {
                    format!(
                        "the next ID would pass the layout's last millisecond ({} ms): the window is spent",
                        self.epoch_ms + self.max_elapsed
                    )
                } else {
                    self.overflow(wall_ms).to_string()
                },
            )
        } else if lease.as_ref().is_some_and(|l| l.guard_waiting) {
            let refusal =
                self.lease_state
                    .refusal(self.node_id(), trusted_ms, None, last_issued_ms);
            // The refusal carries the guard note (why the guard is long, or the fence).
            (HealthStatus::RestartGuard, refusal.to_string())
        } else if lease.as_ref().is_some_and(|l| l.expired) {
            (
                HealthStatus::LeaseExpired,
                self.lease_state
                    .refusal(
                        self.node_id(),
                        trusted_ms,
                        Some(self.epoch_ms + next_ms as i64),
                        last_issued_ms,
                    )
                    .to_string(),
            )
        } else if self.mode == Mode::Strict && lead_ms > 0 {
            // Behind at all: a call now waits (a frozen or slow clock may never catch up within
            // the budget), or is refused at once past the budget.
            (
                HealthStatus::ClockBehind,
                if lead_ms as f64 > self.max_wait_ms {
                    format!(
                        "clock is {lead_ms} ms behind the last issued millisecond, more than the wait budget ({} ms): calls are refused until it catches up",
                        self.max_wait_ms
                    )
                } else {
                    format!(
                        "clock is {lead_ms} ms behind the last issued millisecond: calls wait for it to catch up, at most the wait budget ({} ms), and are refused if it does not",
                        self.max_wait_ms
                    )
                },
            )
        } else if self.mode == Mode::Strict
            && elapsed <= i128::from(self.stuck_at.load(Ordering::Relaxed))
        {
            (
                HealthStatus::ClockStuck,
                "the clock has not advanced past a millisecond whose sequence is spent".to_string(),
            )
        } else if self.mode == Mode::Monotonic
            && self.max_lead_ms.is_some_and(|max| {
                // Unhealthy when the next call would be refused.
                let next = (p + 1).max((elapsed as i64) << s);
                (next >> s) - elapsed as i64 > max
            })
        {
            (
                HealthStatus::LeadTooLarge,
                format!(
                    "the next ID would run more than max_lead_ms = {} ms ahead of the wall clock (now {lead_ms} ms ahead)",
                    self.max_lead_ms.unwrap_or_default()
                ),
            )
        } else {
            (HealthStatus::Ok, String::new())
        };
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Health {
            ok: status == HealthStatus::Ok,
            status,
            reason,
            node_id: self.node_id(),
            source: self.source_kind,
            mode: self.mode,
            last_issued_ms,
            wall_ms,
            lead_ms,
            ids_issued: issued,
            rewinds_waited: load(&self.stats.rewinds_waited),
            rewinds_refused: load(&self.stats.rewinds_refused),
            sequence_exhaustions: load(&self.stats.sequence_exhaustions),
            wait_sleeps: load(&self.stats.wait_sleeps),
            ms_borrowed: load(&self.stats.ms_borrowed),
            lead_refused: load(&self.stats.lead_refused),
            lease_renewals: self.lease_state.renewals(),
            lease_failures: self.lease_state.failures(),
            clock_ahead_ms,
            forward_refused: load(&self.stats.forward_refused),
            clock_source: self.clock_source(),
            clock_tick_ns: self.clock_tick_ns,
            clock_note: self.clock_note.clone(),
            lease,
        }
    }

    /// Stop issuing, for good, and give the node id back: a lease frees its slot, leaving as
    /// the slot's high-water mark the last millisecond really issued from (never less than the
    /// guard it started behind; with nothing issued, the time of closing), and a fixed node id
    /// may be used by a new generator of this process, which continues after the last ID this
    /// one issued (so even a successor in the same millisecond repeats nothing). Every later
    /// call fails with [`Error::GeneratorClosed`]; a call in flight either completes before the close or
    /// fails. Idempotent; dropping the generator closes it.
    ///
    /// ```
    /// use polyflake::{ErrorKind, Generator, ManualClock};
    /// let clock = ManualClock::new(1_704_067_200_005);
    /// let g = Generator::builder(3).clock(clock.clone()).build().unwrap();
    /// g.next_id().unwrap();
    /// g.close();
    /// assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::GeneratorClosed);
    /// assert_eq!(g.health().status, polyflake::HealthStatus::Closed);
    /// ```
    pub fn close(&self) {
        self.release(true);
    }

    /// Drop a lease-backed generator the way a crash would: its renewal stops and its slot is
    /// freed, but the slot's high-water mark stays at its last renewal (a successor waits past
    /// it). For simulations and tests of the restart guard; otherwise like [`Generator::close`].
    pub fn abandon(self) {
        self.release(false);
    }

    fn release(&self, clean: bool) {
        // Shut the window first: no new call passes the window check after this.
        self.lease_state.close();
        // Then take the state word: a call in flight fails its compare-and-swap and finds the
        // window shut, so no ID is issued after the last state is known.
        let p = self.state.0.swap(CLOSED_STATE, Ordering::AcqRel);
        if p == CLOSED_STATE {
            return; // closed already
        }
        self.closed_state.store(p, Ordering::Relaxed);
        if let Some(lease) = &self.lease {
            let how = if clean {
                Release::Clean {
                    last_ms: (p >= 0).then(|| self.epoch_ms + (p >> self.seq_bits)),
                    last_state: p,
                }
            } else {
                Release::Crash
            };
            lease.close(fork::current_fork_generation(), how);
        }
        if let Some(c) = &self.claim {
            c.release(p);
        }
    }

    /// True once [`Generator::close`] has been called.
    pub fn is_closed(&self) -> bool {
        self.lease_state.is_closed()
    }

    /// Wait, up to `timeout`, while the restart guard holds (a lease's previous holder may have
    /// issued up to a time this clock has not reached). Returns at once when nothing needs
    /// waiting for; with the guard still holding at the deadline, returns its
    /// [`Error::LeaseNotReady`]. A closed generator or a lost lease returns its error at once.
    /// Like every wait, it can be cut short ([`crate::interruptible`],
    /// [`Generator::interrupt_waits`]): then [`Error::Interrupted`].
    ///
    /// ```
    /// use std::time::Duration;
    /// let g = polyflake::Generator::strict(904).unwrap();
    /// g.wait_ready(Duration::from_secs(1)).unwrap(); // no lease: nothing to wait for
    /// ```
    pub fn wait_ready(&self, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let mut wait = self.new_wait();
        loop {
            self.check_fork()?;
            let state = &*self.lease_state;
            if state.is_closed() || state.is_lost() {
                return Err(state.refusal(self.node_id(), 0, None, None));
            }
            let now = self.clock.now_ms()?;
            let now = self.forward.trusted_now(now, || self.clock.boot_ms());
            let Some(guard) = state.guard_until_ms().filter(|g| now <= *g) else {
                return Ok(());
            };
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(state.refusal(self.node_id(), now, None, self.last_issued_unix_ms()));
            }
            // The system clock is slept on in one go; an injected one is looked at often,
            // since another thread moves it.
            let step = match self.clock {
                TimeSource::System => Duration::from_millis((guard - now + 1) as u64),
                TimeSource::Injected(_) => Duration::from_millis(1),
            };
            // Sliced, and cut short by the binding's hook or `interrupt_waits`.
            self.sleep(&mut wait, step.min(left))?;
        }
    }

    /// Renew the lease now, as its background thread does every `reserve / 5`: check that the
    /// slot is still ours, then write and publish `R = max(now + reserve, R)`. For simulations
    /// on injected clocks, whose time does not follow the thread's real-time schedule. File
    /// leases only.
    pub fn renew_lease(&self) -> Result<()> {
        self.check_fork()?;
        match &self.lease {
            Some(lease) => lease.renew_now(),
            None => Err(Error::InvalidArgument {
                name: "renew_lease",
                reason: "this generator's node id does not come from a lease".to_string(),
            }),
        }
    }
}

/// Why a generator is or is not healthy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HealthStatus {
    /// Issuing normally.
    Ok,
    /// Strict mode: the wall clock is behind the last issued millisecond, so calls wait for it
    /// (at most the wait budget) or, past the budget, are refused.
    ClockBehind,
    /// The wall clock is before the epoch or past the layout's window.
    ClockOutsideWindow,
    /// An injected clock failed to give a reading.
    ClockFailed,
    /// Strict mode: a call gave up because the clock did not advance past a spent millisecond,
    /// and it still has not.
    ClockStuck,
    /// Monotonic mode: the next ID would run further ahead of the wall clock than
    /// `max_lead_ms`, so calls are being refused.
    LeadTooLarge,
    /// This is a forked child and the generator was made in the parent.
    UsedAfterFork,
    /// Lease: the restart guard waits until the clock passes the previous holder's high-water
    /// mark (`Health::lease` says how long).
    RestartGuard,
    /// Lease: the high-water mark R was reached without a renewal (the store is unreachable);
    /// calls are refused until the store is back.
    LeaseExpired,
    /// Lease: the lease was lost (etcd lease revoked or expired, the slot file deleted or
    /// replaced); the generator has stopped for good.
    LeaseLost,
    /// Strict mode: the wall clock has stepped ahead of elapsed time by more than
    /// `max_forward_step_ms` (`Health::clock_ahead_ms` says how far); calls are refused until it
    /// comes back or the new offset has held for `forward_confirm_ms`.
    ClockAhead,
    /// The generator was closed.
    Closed,
    /// Lease: the store went back in time under this holder (restored from an older backup:
    /// a lower revision or mark version than it had seen, or another cluster); the lease is
    /// lost and the generator has stopped for good (calls fail with `LeaseLost`). Fence the
    /// store (`polyflake lease fence`) before new holders start.
    StoreRolledBack,
}

impl HealthStatus {
    /// A stable snake_case name (`"ok"`, `"clock_behind"`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            HealthStatus::Ok => "ok",
            HealthStatus::ClockBehind => "clock_behind",
            HealthStatus::ClockOutsideWindow => "clock_outside_window",
            HealthStatus::ClockFailed => "clock_failed",
            HealthStatus::ClockStuck => "clock_stuck",
            HealthStatus::LeadTooLarge => "lead_too_large",
            HealthStatus::UsedAfterFork => "used_after_fork",
            HealthStatus::RestartGuard => "restart_guard",
            HealthStatus::LeaseExpired => "lease_expired",
            HealthStatus::LeaseLost => "lease_lost",
            HealthStatus::ClockAhead => "clock_ahead",
            HealthStatus::Closed => "closed",
            HealthStatus::StoreRolledBack => "store_rolled_back",
        }
    }

    /// Every status, in a fixed order (for tables and tests).
    pub const ALL: [HealthStatus; 13] = [
        HealthStatus::Ok,
        HealthStatus::ClockBehind,
        HealthStatus::ClockOutsideWindow,
        HealthStatus::ClockFailed,
        HealthStatus::ClockStuck,
        HealthStatus::LeadTooLarge,
        HealthStatus::UsedAfterFork,
        HealthStatus::RestartGuard,
        HealthStatus::LeaseExpired,
        HealthStatus::LeaseLost,
        HealthStatus::ClockAhead,
        HealthStatus::Closed,
        HealthStatus::StoreRolledBack,
    ];
}

/// A snapshot from [`Generator::health`]: ok or not and why, the clocks, and the counters.
#[derive(Debug, Clone, PartialEq)]
pub struct Health {
    /// True when the generator can issue now.
    pub ok: bool,
    /// Why it is or is not healthy.
    pub status: HealthStatus,
    /// A human-readable reason; empty when ok.
    pub reason: String,
    /// The generator's node id.
    pub node_id: u32,
    /// Where the node id came from.
    pub source: NodeSourceKind,
    /// The generator's mode.
    pub mode: Mode,
    /// The millisecond (Unix) of the last issued ID, if any was issued.
    pub last_issued_ms: Option<i64>,
    /// The wall clock when the snapshot was taken, Unix ms (0 if the clock failed).
    pub wall_ms: i64,
    /// How far the last issued millisecond is ahead of the wall clock (0 when it is not).
    pub lead_ms: i64,
    /// IDs issued so far.
    pub ids_issued: u64,
    /// Calls that waited out a small rewind and then succeeded.
    pub rewinds_waited: u64,
    /// Calls refused because the clock was behind (or stuck) past the wait budget.
    pub rewinds_refused: u64,
    /// Times a strict call found the millisecond's sequence spent and had to wait.
    pub sequence_exhaustions: u64,
    /// Sleeps taken while waiting (strict mode never spins).
    pub wait_sleeps: u64,
    /// Milliseconds a monotonic generator moved into ahead of the wall clock.
    pub ms_borrowed: u64,
    /// Monotonic calls refused by `max_lead_ms`.
    pub lead_refused: u64,
    /// Lease renewals (0 unless the node id comes from a lease).
    pub lease_renewals: u64,
    /// Failed lease renewals (0 unless the node id comes from a lease).
    pub lease_failures: u64,
    /// How far the wall clock reads ahead of what elapsed time vouches for, while that is more
    /// than `max_forward_step_ms` and not yet believed (0 otherwise). Strict mode reports
    /// `clock_ahead` then; monotonic mode stays ok, issuing from the trusted time.
    pub clock_ahead_ms: i64,
    /// Strict calls refused because the clock had stepped ahead.
    pub forward_refused: u64,
    /// The clock reading in use (coarse only when asked for and fine enough).
    pub clock_source: ClockSource,
    /// The resolution of the system clock in use, from `clock_getres`, in ns: the coarse
    /// clock's tick (4,000,000 at HZ=250) or the precise clock's; 0 for an injected clock.
    pub clock_tick_ns: u64,
    /// Why a requested coarse source is not in use (no coarse clock, or a tick over 10 ms);
    /// empty otherwise.
    pub clock_note: String,
    /// The lease's state (slot, high-water mark, restart guard), if the node id is leased.
    pub lease: Option<LeaseHealth>,
}

impl Health {
    /// Every field by name, in declaration order (enums by their stable names, the lease as a
    /// nested record or `Null`): how bindings copy a snapshot without listing its fields.
    ///
    /// ```
    /// use polyflake::{Generator, ManualClock, Value};
    /// let g = Generator::builder(7).clock(ManualClock::new(1_704_067_201_000)).build().unwrap();
    /// g.next_id().unwrap();
    /// let fields = g.health().fields();
    /// assert_eq!(fields[0], ("ok", Value::Bool(true)));
    /// assert!(fields.contains(&("ids_issued", Value::Int(1))));
    /// assert!(fields.contains(&("lease", Value::Null)));
    /// ```
    pub fn fields(&self) -> Vec<(&'static str, Value)> {
        use Value::{Bool, Int, Text};
        vec![
            ("ok", Bool(self.ok)),
            ("status", Text(self.status.name().to_string())),
            ("reason", Text(self.reason.clone())),
            ("node_id", Int(self.node_id.into())),
            ("source", Text(self.source.name().to_string())),
            ("mode", Text(self.mode.name().to_string())),
            ("last_issued_ms", Value::opt_int(self.last_issued_ms)),
            ("wall_ms", Int(self.wall_ms.into())),
            ("lead_ms", Int(self.lead_ms.into())),
            ("ids_issued", Int(self.ids_issued.into())),
            ("rewinds_waited", Int(self.rewinds_waited.into())),
            ("rewinds_refused", Int(self.rewinds_refused.into())),
            (
                "sequence_exhaustions",
                Int(self.sequence_exhaustions.into()),
            ),
            ("wait_sleeps", Int(self.wait_sleeps.into())),
            ("ms_borrowed", Int(self.ms_borrowed.into())),
            ("lead_refused", Int(self.lead_refused.into())),
            ("lease_renewals", Int(self.lease_renewals.into())),
            ("lease_failures", Int(self.lease_failures.into())),
            ("clock_ahead_ms", Int(self.clock_ahead_ms.into())),
            ("forward_refused", Int(self.forward_refused.into())),
            ("clock_source", Text(self.clock_source.name().to_string())),
            ("clock_tick_ns", Int(self.clock_tick_ns.into())),
            ("clock_note", Text(self.clock_note.clone())),
            (
                "lease",
                self.lease
                    .as_ref()
                    .map_or(Value::Null, |l| Value::Fields(l.fields())),
            ),
        ]
    }
}

impl Drop for Generator {
    /// Dropping closes (see [`Generator::close`]).
    fn drop(&mut self) {
        self.release(true);
    }
}

/// Decode an ID with the default layout and epoch.
///
/// ```
/// let d = polyflake::decode(141264821508263936).unwrap();
/// assert_eq!((d.timestamp_ms, d.node_id, d.sequence), (1_737_747_358_021, 37, 0));
/// ```
pub fn decode(id: u64) -> Result<Decoded> {
    Layout::DEFAULT.decode(id, DEFAULT_EPOCH_MS)
}

/// Check a batch size a binding received: 0 to [`MAX_BATCH`].
///
/// ```
/// assert_eq!(polyflake::batch_len(4096).unwrap(), 4096);
/// assert!(polyflake::batch_len(-1).is_err());
/// assert!(polyflake::batch_len(1 << 40).is_err());
/// ```
pub fn batch_len(n: i128) -> Result<usize> {
    batch_len_checked(n)
}

/// A zeroed buffer of `n` items for a batch, reserved fallibly: when memory cannot be had, a
/// clear error echoing the count, never an abort. Bindings fill their batches through it.
///
/// ```
/// assert_eq!(polyflake::batch_buffer::<u64>(3).unwrap(), [0, 0, 0]);
/// let e = polyflake::batch_buffer::<u128>(usize::MAX / 2).unwrap_err();
/// assert!(e.to_string().contains(&(usize::MAX / 2).to_string()));
/// ```
pub fn batch_buffer<T: Default + Clone>(n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    reserve_batch(&mut v, n, n)?;
    v.resize(n, T::default());
    Ok(v)
}

/// Reserve room for `items` more in `v`, for a batch of `count` IDs: the error echoes the count.
pub(crate) fn reserve_batch<T>(v: &mut Vec<T>, items: usize, count: usize) -> Result<()> {
    v.try_reserve_exact(items)
        .map_err(|_| Error::InvalidArgument {
            name: "count",
            reason: format!(
            "a batch of {count} IDs needs more memory than can be had ({items} items of {} bytes)",
            std::mem::size_of::<T>()
        ),
        })
}

fn batch_len_checked(n: i128) -> Result<usize> {
    if n < 0 || n > MAX_BATCH as i128 {
        return Err(Error::InvalidArgument {
            name: "count",
            reason: format!("{n} is out of range [0, {MAX_BATCH}]"),
        });
    }
    Ok(n as usize)
}
