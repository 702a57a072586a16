//! One node's wall clock: a real [`polyflake::ManualClock`], moved only by [`NodeClock::move_to`].
//!
//! Simulated time `t` (µs since the run's start) is the continuous timeline. A node's wall clock
//! reads `start + t + error + steps + smear`:
//! - `error`: what NTP disciplines. The oscillator drifts (a few ppm, fixed per node); every NTP
//!   poll slews the measured error out (at most 500 ppm, ntpd's limit), so the clock never steps
//!   for drift.
//! - `steps`: discrete jumps. An *excursion* (a bad upstream sample, a VM resumed with a stale
//!   clock) puts the clock ahead by 1 to 500 ms; the next NTP poll steps it back by that much.
//!   A leap second applied as a step sets the clock back 1 s at midnight.
//! - `smear`: a leap second spread over 24 h (noon to noon), a slew of 1/86,400.
//!
//! Time passing moves the clock with `ManualClock::elapse` (wall and boot clocks together); every
//! correction of the wall clock (steps, and the sub-millisecond slews and smear once they add up to
//! a whole millisecond) moves it with `ManualClock::advance`, which is a step of the wall clock
//! alone. [`NodeClock::move_to`] is the one place that does either.

use polyflake::ManualClock;

/// µs in a millisecond.
pub const US_PER_MS: i64 = 1_000;
/// µs in a second.
pub const US_PER_S: i64 = 1_000_000;
/// µs in an hour.
pub const US_PER_H: i64 = 3_600 * US_PER_S;
/// ntpd's largest slew rate, in ppm.
pub const MAX_SLEW_PPM: f64 = 500.0;
/// The smear window: 24 h, centred on the leap second.
pub const SMEAR_US: i64 = 24 * US_PER_H;

/// How a node applies the leap second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LeapMode {
    /// No leap second in this run.
    None,
    /// The kernel repeats a second: the wall clock steps back 1 s at midnight.
    Step,
    /// The NTP source smears it: 1 s of slew over the 24 h around midnight.
    Smear,
}

/// A node's wall clock and the model that moves it.
#[derive(Debug)]
pub struct NodeClock {
    clock: ManualClock,
    /// Unix µs at simulated time 0.
    start_unix_us: i64,
    /// Simulated ms already handed to the clock as elapsed time.
    elapsed_ms: i64,
    /// Simulated time up to which `err_us` is integrated.
    t_us: i64,
    /// NTP-disciplined error, µs.
    err_us: f64,
    drift_ppm: f64,
    slew_ppm: f64,
    /// An uncorrected forward excursion, µs (the next NTP poll steps it back).
    excursion_us: i64,
    /// Steps already applied that stay (a leap second applied as a step), µs.
    steps_us: i64,
    leap: LeapMode,
    /// Unix µs of the leap second (midnight UTC after it).
    leap_unix_us: i64,
}

impl NodeClock {
    /// A node clock at simulated time 0, with this initial error and oscillator drift.
    pub fn new(
        start_unix_us: i64,
        err_us: f64,
        drift_ppm: f64,
        leap: LeapMode,
        leap_unix_us: i64,
    ) -> NodeClock {
        let c = NodeClock {
            clock: ManualClock::new(0),
            start_unix_us,
            elapsed_ms: 0,
            t_us: 0,
            err_us,
            drift_ppm,
            slew_ppm: 0.0,
            excursion_us: 0,
            steps_us: 0,
            leap,
            leap_unix_us,
        };
        c.clock.set(c.target_ms());
        c
    }

    /// A handle on the clock for a generator (clones share the reading).
    pub fn handle(&self) -> ManualClock {
        self.clock.clone()
    }

    /// How this node applies the leap second.
    pub fn leap_mode(&self) -> LeapMode {
        self.leap
    }

    /// The wall reading now, in Unix ms.
    pub fn wall_ms(&self) -> i64 {
        self.clock.get()
    }

    fn smear_us(&self, t_us: i64) -> f64 {
        if self.leap != LeapMode::Smear {
            return 0.0;
        }
        let into = (self.start_unix_us + t_us) - (self.leap_unix_us - SMEAR_US / 2);
        -(US_PER_S as f64) * (into as f64 / SMEAR_US as f64).clamp(0.0, 1.0)
    }

    fn target_ms(&self) -> i64 {
        let wall_us = (self.start_unix_us + self.t_us + self.excursion_us + self.steps_us) as f64
            + self.err_us
            + self.smear_us(self.t_us);
        (wall_us / US_PER_MS as f64).floor() as i64
    }

    /// THE clock helper: bring the node's clock to simulated time `t_us` (never backwards in
    /// simulated time). Whole elapsed milliseconds pass with `elapse`; whatever the model says on
    /// top of that (drift, slew, smear, steps) is a wall-clock step with `advance`.
    pub fn move_to(&mut self, t_us: i64) {
        debug_assert!(t_us >= self.t_us, "simulated time never goes back");
        let dt = (t_us - self.t_us) as f64;
        self.err_us += (self.drift_ppm + self.slew_ppm) * dt * 1e-6;
        self.t_us = t_us;
        let elapsed = t_us.div_euclid(US_PER_MS);
        if elapsed > self.elapsed_ms {
            self.clock.elapse((elapsed - self.elapsed_ms) as u64);
            self.elapsed_ms = elapsed;
        }
        let step = self.target_ms() - self.clock.get();
        if step != 0 {
            self.clock.advance(step);
        }
    }

    /// An excursion: the clock jumps `ahead_us` forward now (applied at the next `move_to`);
    /// the next NTP poll steps it back.
    pub fn excursion(&mut self, ahead_us: i64) {
        self.excursion_us += ahead_us;
    }

    /// An NTP poll at `t_us` (the clock must already be moved there): an excursion is stepped
    /// back at once (returned, µs); otherwise the measured error is slewed out over the next
    /// `poll_us`, at most [`MAX_SLEW_PPM`].
    pub fn ntp_poll(&mut self, poll_us: i64) -> Option<i64> {
        if self.excursion_us != 0 {
            let stepped = self.excursion_us;
            self.excursion_us = 0;
            return Some(stepped);
        }
        self.slew_ppm = (-self.err_us / poll_us as f64 * 1e6).clamp(-MAX_SLEW_PPM, MAX_SLEW_PPM);
        None
    }

    /// The leap second as a step: the wall clock goes back 1 s (applied at the next `move_to`).
    pub fn leap_step(&mut self) {
        if self.leap == LeapMode::Step {
            self.steps_us -= US_PER_S;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEAP: i64 = 1_798_761_600_000_000; // 2027-01-01T00:00:00Z in µs

    #[test]
    fn time_passing_moves_the_wall_clock_with_it() {
        let mut c = NodeClock::new(1_000_000_000, 0.0, 0.0, LeapMode::None, LEAP);
        assert_eq!(c.wall_ms(), 1_000_000);
        c.move_to(2_500);
        assert_eq!(c.wall_ms(), 1_000_002);
        c.move_to(3_600 * US_PER_S);
        assert_eq!(c.wall_ms(), 1_000_000 + 3_600_000);
    }

    #[test]
    fn drift_is_slewed_out_by_ntp() {
        let mut c = NodeClock::new(0, 3_000.0, 20.0, LeapMode::None, LEAP);
        let poll = 64 * US_PER_S;
        let mut t = 0;
        for _ in 0..40 {
            t += poll;
            c.move_to(t);
            assert_eq!(c.ntp_poll(poll), None);
        }
        // The error converges near the drift's share of one poll (20 ppm x 64 s = 1.3 ms).
        assert!(
            (c.wall_ms() - t / US_PER_MS).abs() <= 2,
            "{}",
            c.wall_ms() - t / 1000
        );
    }

    #[test]
    fn an_excursion_is_stepped_back_at_the_next_poll() {
        let mut c = NodeClock::new(0, 0.0, 0.0, LeapMode::None, LEAP);
        c.move_to(1_000 * US_PER_MS);
        c.excursion(300 * US_PER_MS);
        c.move_to(1_001 * US_PER_MS);
        assert_eq!(c.wall_ms(), 1_301);
        assert_eq!(c.ntp_poll(64 * US_PER_S), Some(300 * US_PER_MS));
        c.move_to(1_002 * US_PER_MS);
        assert_eq!(c.wall_ms(), 1_002);
    }

    #[test]
    fn a_stepped_leap_second_repeats_a_second_and_a_smeared_one_never_goes_back() {
        let start = LEAP - 13 * US_PER_H;
        let mut step = NodeClock::new(start, 0.0, 0.0, LeapMode::Step, LEAP);
        let mut smear = NodeClock::new(start, 0.0, 0.0, LeapMode::Smear, LEAP);
        let at_leap = 13 * US_PER_H;
        step.move_to(at_leap);
        step.leap_step();
        step.move_to(at_leap + US_PER_MS);
        assert_eq!(step.wall_ms(), LEAP / 1000 - 1_000 + 1);
        let mut last = smear.wall_ms();
        let mut t = 0;
        while t < 26 * US_PER_H {
            t += 10 * US_PER_S;
            smear.move_to(t);
            assert!(smear.wall_ms() > last);
            last = smear.wall_ms();
        }
        smear.move_to(at_leap + 13 * US_PER_H);
        // Halfway through, a smeared clock is 0.5 s behind; after the smear, the full second.
        assert_eq!(
            smear.wall_ms(),
            (start + at_leap + 13 * US_PER_H) / 1000 - 1_000
        );
    }
}
