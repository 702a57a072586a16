//! The kernel's word on the system clock: `adjtimex(2)` with no modes (read only, no privilege
//! needed), which says whether NTP (chrony, ntpd, systemd-timesyncd) keeps the clock
//! synchronized, how large its maximum and estimated errors are, and whether a leap second is
//! due. Read off the hot path: when a generator is built, in every `health()`, and once a second
//! by one monitor thread per process for the generators that refuse to issue while the clock is
//! unsynchronized or its maximum error exceeds a bound ([`crate::Settings::max_clock_error_ms`]).
//! The monitor shuts those generators' windows and opens them again (`Window::set_sync`), so a
//! generator pays nothing per ID for the check; a change takes effect within a second.
//!
//! What the kernel's figures mean: `maxerror` grows by 500 ppm (0.5 ms a second) from the last
//! time a daemon disciplined the clock, up to 16 s, when it also sets `STA_UNSYNC`; chrony and
//! ntpd reset it on each update (typically to tens of ms or less). A clock with no daemon is
//! unsynchronized at boot and stays so. Leap smearing (Google's, AWS's, chrony's `leapsecmode
//! slew`) stretches the seconds around a leap instead of stepping: the kernel then reports no
//! leap at all, and the smeared clock is what the IDs carry.

use crate::forklock::ForkLock;
use crate::window::Window;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// The kernel's clock state (the return value of `adjtimex`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClockSyncState {
    /// Synchronized, no leap second due (`TIME_OK`).
    Ok,
    /// A leap second will be inserted at the end of the UTC day (`TIME_INS`).
    InsertLeap,
    /// A leap second will be deleted at the end of the UTC day (`TIME_DEL`).
    DeleteLeap,
    /// A leap second is being inserted now (`TIME_OOP`).
    LeapInProgress,
    /// A leap second has just happened (`TIME_WAIT`).
    LeapDone,
    /// The clock is not synchronized (`TIME_ERROR`: `STA_UNSYNC` and friends).
    Unsynchronized,
    /// `adjtimex` could not be called (a sandbox without it).
    Unavailable,
}

impl ClockSyncState {
    /// A stable snake_case name: `ok`, `insert_leap`, `delete_leap`, `leap_in_progress`,
    /// `leap_done`, `unsynchronized`, `unavailable`.
    pub const fn name(self) -> &'static str {
        match self {
            ClockSyncState::Ok => "ok",
            ClockSyncState::InsertLeap => "insert_leap",
            ClockSyncState::DeleteLeap => "delete_leap",
            ClockSyncState::LeapInProgress => "leap_in_progress",
            ClockSyncState::LeapDone => "leap_done",
            ClockSyncState::Unsynchronized => "unsynchronized",
            ClockSyncState::Unavailable => "unavailable",
        }
    }

    /// Every state, in a fixed order.
    pub const ALL: [ClockSyncState; 7] = [
        ClockSyncState::Ok,
        ClockSyncState::InsertLeap,
        ClockSyncState::DeleteLeap,
        ClockSyncState::LeapInProgress,
        ClockSyncState::LeapDone,
        ClockSyncState::Unsynchronized,
        ClockSyncState::Unavailable,
    ];
}

/// One reading of the kernel's clock state ([`clock_sync`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockSync {
    /// What the kernel says of the clock.
    pub state: ClockSyncState,
    /// True when a time daemon keeps the clock synchronized (no `STA_UNSYNC`, no
    /// `TIME_ERROR`).
    pub synchronized: bool,
    /// The kernel's maximum error, in microseconds (16,000,000 when unsynchronized; -1 when
    /// unavailable).
    pub max_error_us: i64,
    /// The kernel's estimated error, in microseconds (-1 when unavailable).
    pub est_error_us: i64,
}

impl ClockSync {
    /// Every field by name (see [`crate::Health::fields`]).
    pub fn fields(&self) -> Vec<(&'static str, crate::Value)> {
        use crate::Value::{Bool, Int, Text};
        vec![
            ("state", Text(self.state.name().to_string())),
            ("synchronized", Bool(self.synchronized)),
            ("max_error_us", Int(self.max_error_us.into())),
            ("est_error_us", Int(self.est_error_us.into())),
        ]
    }

    /// Why a generator bound to `max_error_ms` may not issue on this reading (`None`: it may).
    /// An unavailable reading is not a reason: a sandbox without `adjtimex` is not a clock
    /// known to be wrong (health says `unavailable`).
    pub(crate) fn refusal(&self, max_error_ms: u64) -> Option<String> {
        match self.state {
            ClockSyncState::Unavailable => None,
            _ if !self.synchronized => Some(format!(
                "the kernel says the clock is not synchronized (no time daemon disciplines it: start chrony or ntpd, or wait for it to synchronize); its maximum error is {} ms",
                self.max_error_us / 1000
            )),
            _ if self.max_error_us > (max_error_ms as i64).saturating_mul(1000) => Some(format!(
                "the kernel's maximum error of the clock is {:.1} ms, over max_clock_error_ms = {max_error_ms} (the time daemon has not updated it lately)",
                self.max_error_us as f64 / 1000.0
            )),
            _ => None,
        }
    }
}

/// Read the kernel's clock state now (one system call).
///
/// ```
/// let s = polyflake::clock_sync();
/// assert!(s.max_error_us >= -1);
/// println!("{} (max error {} us)", s.state.name(), s.max_error_us);
/// ```
pub fn clock_sync() -> ClockSync {
    // SAFETY: a zeroed timex with modes 0 only reads the kernel's state.
    let mut t: libc::timex = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::adjtimex(&mut t) };
    if rc < 0 {
        return ClockSync {
            state: ClockSyncState::Unavailable,
            synchronized: false,
            max_error_us: -1,
            est_error_us: -1,
        };
    }
    let state = match rc {
        libc::TIME_OK => ClockSyncState::Ok,
        libc::TIME_INS => ClockSyncState::InsertLeap,
        libc::TIME_DEL => ClockSyncState::DeleteLeap,
        libc::TIME_OOP => ClockSyncState::LeapInProgress,
        libc::TIME_WAIT => ClockSyncState::LeapDone,
        _ => ClockSyncState::Unsynchronized,
    };
    let unsync = t.status & libc::STA_UNSYNC != 0 || state == ClockSyncState::Unsynchronized;
    ClockSync {
        state: if unsync {
            ClockSyncState::Unsynchronized
        } else {
            state
        },
        synchronized: !unsync,
        max_error_us: t.maxerror as i64,
        est_error_us: t.esterror as i64,
    }
}

/// How often the monitor reads the kernel's state.
const PERIOD: Duration = Duration::from_secs(1);

struct Watched {
    window: Weak<Window>,
    max_error_ms: u64,
    generation: u64,
}

struct Monitor {
    watched: Vec<Watched>,
    /// The fork generation whose monitor thread runs (`None`: none runs).
    running: Option<u64>,
}

static MONITOR: ForkLock<Monitor> = ForkLock::new(Monitor {
    watched: Vec::new(),
    running: None,
});

/// Bind a generator's window to `max_error_ms`: decided now from one reading, then once a
/// second by the monitor thread until the window is gone.
pub(crate) fn watch(window: &Arc<Window>, max_error_ms: u64) {
    apply(window, &clock_sync(), max_error_ms);
    let generation = crate::fork::fork_generation();
    let mut m = MONITOR.lock();
    m.watched.push(Watched {
        window: Arc::downgrade(window),
        max_error_ms,
        generation,
    });
    if m.running != Some(generation) {
        let started = std::thread::Builder::new()
            .name("polyflake-clock-sync".into())
            .spawn(move || monitor(generation));
        if started.is_ok() {
            m.running = Some(generation);
        }
    }
}

fn apply(window: &Window, reading: &ClockSync, max_error_ms: u64) {
    window.set_sync(reading.refusal(max_error_ms), reading.max_error_us);
}

fn monitor(generation: u64) {
    loop {
        std::thread::sleep(PERIOD);
        let reading = clock_sync();
        let mut m = MONITOR.lock();
        if crate::fork::current_fork_generation() != generation {
            return; // a forked child's copy of this thread does not exist; never here
        }
        m.watched
            .retain(|w| w.generation != generation || w.window.strong_count() > 0);
        let mut any = false;
        for w in m.watched.iter().filter(|w| w.generation == generation) {
            if let Some(window) = w.window.upgrade() {
                apply(&window, &reading, w.max_error_ms);
                any = true;
            }
        }
        if !any {
            m.running = None;
            return;
        }
    }
}
