//! The scenarios: which faults a run injects, for how long, and on which layout.

use crate::clock::{LeapMode, US_PER_H};
use polyflake::Layout;

/// 2027-01-01T00:00:00Z, in Unix ms: the midnight of the (hypothetical) leap second the leap
/// scenarios insert at the end of 2026-12-31. (None is scheduled; the date only places it.)
pub const LEAP_UNIX_MS: i64 = 1_798_761_600_000;
/// 2026-06-01T00:00:00Z, in Unix ms: where the runs without a leap second start.
pub const PLAIN_START_UNIX_MS: i64 = 1_780_272_000_000;

/// How the fleet applies the leap second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeapFleet {
    /// Every node steps.
    Step,
    /// Every node smears.
    Smear,
    /// Even node indexes step, odd ones smear: a fleet with both kinds of NTP source.
    Mixed,
}

impl LeapFleet {
    /// What node `idx` does.
    pub fn mode_of(self, idx: usize) -> LeapMode {
        match self {
            LeapFleet::Step => LeapMode::Step,
            LeapFleet::Smear => LeapMode::Smear,
            LeapFleet::Mixed if idx % 2 == 0 => LeapMode::Step,
            LeapFleet::Mixed => LeapMode::Smear,
        }
    }
}

/// One scenario: a fleet, a span of simulated time, and the faults in it.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Short name (`ntp`, `leap-step`, ...).
    pub name: &'static str,
    /// One line on what it shows.
    pub about: &'static str,
    /// Unix ms at simulated time 0.
    pub start_unix_ms: i64,
    /// Simulated length, µs.
    pub length_us: i64,
    /// The leap second, if any.
    pub leap: Option<LeapFleet>,
    /// Clock excursions that NTP steps back (1 to 500 ms).
    pub steps: bool,
    /// VM freezes (0.1 to 30 s).
    pub freezes: bool,
    /// Crashes and restarts (file leases; needs `leases`).
    pub crashes: bool,
    /// Node ids from a file lease directory (otherwise static ids 0..n).
    pub leases: bool,
    /// A blue-green deploy: a second fleet of the same size for a window (needs `leases`).
    pub blue_green: bool,
    /// The layout.
    pub layout: Layout,
    /// Scale on the request and burst rates (the 26 h run carries a twentieth of the load).
    pub load_scale: f64,
}

/// Every scenario, for a run of `hours` simulated hours (the 24 h smear always spans 26 h).
pub fn all(hours: f64) -> Vec<Scenario> {
    let len = (hours * US_PER_H as f64) as i64;
    // The leap runs: half the run's length, centred on midnight.
    let around_leap = LEAP_UNIX_MS - len / 4 / 1000;
    let base = Scenario {
        name: "",
        about: "",
        start_unix_ms: PLAIN_START_UNIX_MS,
        length_us: len,
        leap: None,
        steps: false,
        freezes: false,
        crashes: false,
        leases: false,
        blue_green: false,
        layout: Layout::DEFAULT,
        load_scale: 1.0,
    };
    vec![
        Scenario {
            name: "ntp",
            about: "drift and NTP slew, excursions stepped back by 1-500 ms, VM freezes of 0.1-30 s",
            steps: true,
            freezes: true,
            ..base.clone()
        },
        Scenario {
            name: "leap-step",
            about: "a leap second applied as a 1 s step back on every node at midnight (half the run's length, centred on it)",
            start_unix_ms: around_leap,
            length_us: len / 2,
            leap: Some(LeapFleet::Step),
            ..base.clone()
        },
        Scenario {
            name: "leap-smear",
            about: "the same hour around midnight, every node on a 24 h leap smear",
            start_unix_ms: around_leap,
            length_us: len / 2,
            leap: Some(LeapFleet::Smear),
            ..base.clone()
        },
        Scenario {
            name: "leap-mixed",
            about: "half the fleet steps, half smears",
            start_unix_ms: around_leap,
            length_us: len / 2,
            leap: Some(LeapFleet::Mixed),
            ..base.clone()
        },
        Scenario {
            name: "smear-24h",
            about: "the whole 24 h smear and an hour either side, at a twentieth of the load",
            start_unix_ms: LEAP_UNIX_MS - 13 * US_PER_H / 1000,
            length_us: 26 * US_PER_H,
            leap: Some(LeapFleet::Smear),
            load_scale: 0.05,
            ..base.clone()
        },
        Scenario {
            name: "crash-restart",
            about: "crashes (no clean close) and restarts through the file lease and its restart guard, with the ntp faults (half the run's length: every lease is renewed once a simulated second, real file I/O)",
            length_us: len / 2,
            steps: true,
            freezes: true,
            crashes: true,
            leases: true,
            ..base.clone()
        },
        Scenario {
            name: "blue-green",
            about: "blue-green deploy on 41/10/12 (a quarter of the run's length): green starts at 1/6, traffic moves at 1/4, blue stops at 1/3",
            length_us: len / 4,
            leases: true,
            blue_green: true,
            ..base.clone()
        },
        Scenario {
            name: "blue-green-4096",
            about: "the same deploy on 41/12/10 (4,096 node ids)",
            length_us: len / 4,
            leases: true,
            blue_green: true,
            layout: Layout::BIG_FLEET,
            ..base
        },
    ]
}
