//! One run: a fleet of real core generators on simulated clocks, driven by a seeded event
//! schedule, in simulated time (nothing ever sleeps).
//!
//! Events are processed in simulated-time order from one queue. Every node has its own random
//! streams (one for its load, one for its faults), drawn only from its own schedule, so a strict
//! and a monotonic run of the same scenario see exactly the same requests and faults.

use crate::clock::{LeapMode, NodeClock, US_PER_H, US_PER_MS, US_PER_S};
use crate::queue::Queue;
use crate::rng::Rng;
use crate::scenario::{Scenario, LEAP_UNIX_MS};
use crate::stats::RunStats;
use polyflake::{FileLeaseOptions, Generator, Health, HealthStatus, Mode, NodeSource};
use std::collections::VecDeque;
use std::path::Path;

/// Load and fault rates of a run (the command line's numbers).
#[derive(Debug, Clone)]
pub struct Load {
    /// Mean requests per second per lane (Poisson).
    pub rate_per_s: f64,
    /// Mean bursts per lane per hour.
    pub bursts_per_h: f64,
    /// A burst: this many ms ...
    pub burst_ms: (u64, u64),
    /// ... at this many requests per ms (above the 4,096 a node may issue in one).
    pub burst_per_ms: (u64, u64),
    /// Mean excursions (then NTP steps back) per node per hour.
    pub steps_per_h: f64,
    /// Mean VM freezes per node per hour.
    pub freezes_per_h: f64,
    /// Mean crashes per node per hour.
    pub crashes_per_h: f64,
}

/// NTP poll interval (chrony's and ntpd's minpoll 6).
const POLL_US: i64 = 64 * US_PER_S;
/// The file lease's reserve (the core's default) and the renewal period (a fifth of it, what
/// the core's background thread uses).
const RESERVE_MS: u64 = 5_000;
const RENEW_US: i64 = RESERVE_MS as i64 * US_PER_MS / 5;
/// A crashed process is restarted after this long (log-uniform), in µs.
const RESTART_US: (f64, f64) = (0.5e6, 30e6);
/// A pod that cannot start (no free slot) is retried with Kubernetes' crash-loop back-off.
const BACKOFF_US: (i64, i64) = (10 * US_PER_S, 300 * US_PER_S);
/// The fleet starts this long before the measured window: every node takes its slot then (a
/// slot without a complete record makes its taker wait a full reserve), so the window starts
/// with a fleet that has been running, not with a cold start.
const WARM_US: i64 = 10 * US_PER_S;
/// Green pods start spread over this long (a minute).
const ROLLOUT_US: i64 = 60 * US_PER_S;

#[derive(Debug, Clone, Copy)]
enum Ev {
    Request { lane: u32 },
    BurstStart { lane: u32 },
    BurstTick { lane: u32, left: u32, per_ms: u32 },
    Retry { node: u32, inc: u32 },
    Probe { node: u32, inc: u32 },
    Poll { node: u32 },
    Excursion { node: u32 },
    Freeze { node: u32 },
    Resume { node: u32, inc: u32 },
    Leap,
    Crash { node: u32 },
    Start { node: u32, inc: u32 },
    Renew { node: u32, inc: u32 },
    GreenStart,
    Cutover,
    BlueStop,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    /// Not started yet, or stopped for good.
    Off,
    Up,
    Frozen,
    /// Crashed, waiting to restart; or could not take a slot and waits to retry.
    Down,
}

struct Node {
    clock: NodeClock,
    gen: Option<Generator>,
    status: Status,
    /// Bumped whenever the node's process or VM changes state: stale events are dropped.
    inc: u32,
    identity: String,
    faults: Rng,
    pending: VecDeque<(i64, u64)>,
    pending_n: u64,
    retry_at: Option<i64>,
    refusing_since: Option<i64>,
    status_since: i64,
    present_since: Option<i64>,
    backoff_us: i64,
    refusing_us: i64,
    present_us: i64,
}

/// Where a lane's requests go.
fn lane_node(lane: usize, lanes: usize, on_green: &[bool]) -> usize {
    if on_green.get(lane).copied().unwrap_or(false) {
        lanes + lane
    } else {
        lane
    }
}

/// The simulation of one scenario in one mode.
pub struct Run<'a> {
    sc: &'a Scenario,
    mode: Mode,
    load: Load,
    lanes: usize,
    nodes: Vec<Node>,
    lane_rng: Vec<Rng>,
    on_green: Vec<bool>,
    blue_stopped: bool,
    queue: Queue<Ev>,
    now: i64,
    lease_dir: Option<&'a Path>,
    shift: u32,
    epoch_ms: i64,
    buf: Vec<u64>,
    slots_now: u64,
    /// What the run measures.
    pub stats: RunStats,
}

impl<'a> Run<'a> {
    /// Set up a run: `lanes` nodes (twice that many instances in a blue-green deploy).
    pub fn new(
        sc: &'a Scenario,
        mode: Mode,
        lanes: usize,
        load: Load,
        seed: u64,
        scenario_index: u64,
        lease_dir: Option<&'a Path>,
    ) -> Run<'a> {
        let instances = if sc.blue_green { 2 * lanes } else { lanes };
        let start_unix_us = sc.start_unix_ms * US_PER_MS - WARM_US;
        let nodes = (0..instances)
            .map(|i| {
                let mut faults = Rng::stream(seed, scenario_index, 2 * i as u64 + 1);
                let err_us = faults.uniform(-2_000.0, 2_000.0);
                let drift_ppm = faults.uniform(-20.0, 20.0);
                let leap = sc.leap.map_or(LeapMode::None, |l| l.mode_of(i % lanes));
                Node {
                    clock: NodeClock::new(
                        start_unix_us,
                        err_us,
                        drift_ppm,
                        leap,
                        LEAP_UNIX_MS * US_PER_MS,
                    ),
                    gen: None,
                    status: Status::Off,
                    inc: 0,
                    identity: format!(
                        "{}-{:04}",
                        if i < lanes { "blue" } else { "green" },
                        i % lanes
                    ),
                    faults,
                    pending: VecDeque::new(),
                    pending_n: 0,
                    retry_at: None,
                    refusing_since: None,
                    status_since: 0,
                    present_since: None,
                    backoff_us: BACKOFF_US.0,
                    refusing_us: 0,
                    present_us: 0,
                }
            })
            .collect();
        let lane_rng = (0..lanes)
            .map(|i| Rng::stream(seed, scenario_index, 2 * i as u64))
            .collect();
        let layout = sc.layout;
        let zoom = sc.leap.is_some().then(|| {
            let leap_t = (LEAP_UNIX_MS - sc.start_unix_ms) * US_PER_MS;
            (leap_t - 2 * US_PER_S, leap_t + 4 * US_PER_S)
        });
        Run {
            sc,
            mode,
            load,
            lanes,
            nodes,
            lane_rng,
            on_green: vec![false; lanes],
            blue_stopped: false,
            queue: Queue::new(),
            now: 0,
            lease_dir,
            shift: layout.node_bits() + layout.sequence_bits(),
            epoch_ms: polyflake::DEFAULT_EPOCH_MS,
            buf: vec![0; 1 << 16],
            slots_now: 0,
            stats: RunStats::new(WARM_US, sc.length_us, zoom, instances),
        }
    }

    fn push(&mut self, t: i64, ev: Ev) {
        self.queue.push(t, ev);
    }

    /// Run to the end of the scenario; the IDs are checked for duplicates by the caller.
    pub fn run(&mut self) {
        let len = self.sc.length_us;
        let end = WARM_US + len;
        // Nodes start (blue only in a blue-green deploy), with their NTP polls at random phases.
        for i in 0..self.lanes {
            self.start_node(i, 0);
        }
        for i in 0..self.nodes.len() {
            let phase = (self.nodes[i].faults.unit() * POLL_US as f64) as i64;
            self.push(phase, Ev::Poll { node: i as u32 });
            let (steps, freezes, crashes) = (self.sc.steps, self.sc.freezes, self.sc.crashes);
            if steps {
                let t = self.gap(i, self.load.steps_per_h);
                self.push(t, Ev::Excursion { node: i as u32 });
            }
            if freezes {
                let t = self.gap(i, self.load.freezes_per_h);
                self.push(t, Ev::Freeze { node: i as u32 });
            }
            if crashes {
                let t = self.gap(i, self.load.crashes_per_h);
                self.push(t, Ev::Crash { node: i as u32 });
            }
        }
        let rate = self.load.rate_per_s * self.sc.load_scale;
        let bursts = self.load.bursts_per_h * self.sc.load_scale;
        for lane in 0..self.lanes {
            let t = (self.lane_rng[lane].exp(1.0 / rate) * US_PER_S as f64) as i64;
            self.push(t, Ev::Request { lane: lane as u32 });
            let t = (self.lane_rng[lane].exp(1.0 / bursts) * US_PER_H as f64) as i64;
            self.push(t, Ev::BurstStart { lane: lane as u32 });
        }
        if self.sc.leap.is_some() {
            let t = WARM_US + (LEAP_UNIX_MS - self.sc.start_unix_ms) * US_PER_MS;
            self.push(t, Ev::Leap);
        }
        if self.sc.blue_green {
            self.push(WARM_US + len / 6, Ev::GreenStart);
            self.push(WARM_US + len / 4, Ev::Cutover);
            self.push(WARM_US + len / 3, Ev::BlueStop);
        }

        while let Some(item) = self.queue.pop() {
            if item.t >= end {
                break;
            }
            self.now = item.t;
            self.handle(item.t, item.ev);
        }
        self.finish(end);
    }

    /// The time to a node's next fault of a kind with this hourly rate.
    fn gap(&mut self, i: usize, per_h: f64) -> i64 {
        if per_h <= 0.0 {
            return i64::MAX;
        }
        self.now + (self.nodes[i].faults.exp(1.0 / per_h) * US_PER_H as f64) as i64 + 1
    }

    fn handle(&mut self, t: i64, ev: Ev) {
        match ev {
            Ev::Request { lane } => {
                let lane = lane as usize;
                self.serve(t, lane, 1);
                let rate = self.load.rate_per_s * self.sc.load_scale;
                let gap = (self.lane_rng[lane].exp(1.0 / rate) * US_PER_S as f64) as i64;
                self.push(t + gap.max(1), Ev::Request { lane: lane as u32 });
            }
            Ev::BurstStart { lane } => {
                let l = lane as usize;
                let r = &mut self.lane_rng[l];
                let ms = r.range(self.load.burst_ms.0, self.load.burst_ms.1) as u32;
                let per_ms = r.range(self.load.burst_per_ms.0, self.load.burst_per_ms.1) as u32;
                if self.stats.on(t) {
                    self.stats.bursts += 1;
                }
                self.push(
                    t,
                    Ev::BurstTick {
                        lane,
                        left: ms,
                        per_ms,
                    },
                );
                let bursts = self.load.bursts_per_h * self.sc.load_scale;
                let gap = (self.lane_rng[l].exp(1.0 / bursts) * US_PER_H as f64) as i64;
                self.push(t + gap.max(1), Ev::BurstStart { lane });
            }
            Ev::BurstTick { lane, left, per_ms } => {
                self.serve(t, lane as usize, per_ms as u64);
                if left > 1 {
                    self.push(
                        t + US_PER_MS,
                        Ev::BurstTick {
                            lane,
                            left: left - 1,
                            per_ms,
                        },
                    );
                }
            }
            Ev::Retry { node, inc } => {
                let i = node as usize;
                if self.nodes[i].inc == inc && self.nodes[i].status == Status::Up {
                    self.nodes[i].retry_at = None;
                    self.nodes[i].clock.move_to(t);
                    self.drain(i, t);
                }
            }
            Ev::Probe { node, inc } => {
                let i = node as usize;
                if self.nodes[i].inc == inc && self.nodes[i].status == Status::Up {
                    self.check_health(i, t);
                }
            }
            Ev::Poll { node } => {
                let i = node as usize;
                // The VM's NTP daemon runs whatever the process does, except while it is frozen.
                if self.nodes[i].status != Status::Frozen {
                    self.nodes[i].clock.move_to(t);
                    if let Some(stepped) = self.nodes[i].clock.ntp_poll(POLL_US) {
                        if self.stats.on(t) {
                            self.stats.ntp_steps += 1;
                            self.stats.ntp_step_max_ms =
                                self.stats.ntp_step_max_ms.max(stepped / 1000);
                        }
                        self.after_step(i, t);
                    }
                }
                self.push(t + POLL_US, Ev::Poll { node });
            }
            Ev::Excursion { node } => {
                let i = node as usize;
                let ahead = (self.nodes[i].faults.log_uniform(1.0, 500.0) * 1000.0) as i64;
                self.nodes[i].clock.excursion(ahead);
                self.nodes[i].clock.move_to(t);
                let next = self.gap(i, self.load.steps_per_h);
                self.push(next, Ev::Excursion { node });
            }
            Ev::Freeze { node } => {
                let i = node as usize;
                let dur = (self.nodes[i].faults.log_uniform(0.1, 30.0) * US_PER_S as f64) as i64;
                if self.nodes[i].status == Status::Up {
                    self.stats.freezes += u64::from(self.stats.on(t));
                    self.set_status(i, t, Status::Frozen);
                    let inc = self.nodes[i].inc;
                    self.push(t + dur, Ev::Resume { node, inc });
                }
                let next = self.gap(i, self.load.freezes_per_h) + dur;
                self.push(next, Ev::Freeze { node });
            }
            Ev::Resume { node, inc } => {
                let i = node as usize;
                if self.nodes[i].inc == inc && self.nodes[i].status == Status::Frozen {
                    // The guest's clocks jump over the pause (kvmclock): time passed.
                    self.nodes[i].clock.move_to(t);
                    self.set_status(i, t, Status::Up);
                    // The renewal thread's timed wait is long overdue: it renews at once.
                    self.renew(i);
                    self.schedule_renew(i, t);
                    self.check_health(i, t);
                }
            }
            Ev::Leap => {
                for i in 0..self.nodes.len() {
                    self.nodes[i].clock.leap_step();
                    if self.nodes[i].clock_leap_steps() {
                        self.after_step(i, t);
                    }
                }
            }
            Ev::Crash { node } => {
                let i = node as usize;
                if self.nodes[i].status == Status::Up && self.nodes[i].gen.is_some() {
                    self.stats.crashes += u64::from(self.stats.on(t));
                    self.set_status(i, t, Status::Down);
                    if let Some(g) = self.nodes[i].gen.take() {
                        crash(g);
                        self.slots_changed(-1);
                    }
                    let delay = self.nodes[i].faults.log_uniform(RESTART_US.0, RESTART_US.1) as i64;
                    let inc = self.nodes[i].inc;
                    self.push(t + delay, Ev::Start { node, inc });
                }
                let next = self.gap(i, self.load.crashes_per_h);
                self.push(next, Ev::Crash { node });
            }
            Ev::Start { node, inc } => {
                let i = node as usize;
                if self.nodes[i].inc == inc && self.nodes[i].status == Status::Down {
                    self.try_start(i, t);
                }
            }
            Ev::Renew { node, inc } => {
                let i = node as usize;
                if self.nodes[i].inc == inc && self.nodes[i].status == Status::Up {
                    self.nodes[i].clock.move_to(t);
                    self.renew(i);
                    self.schedule_renew(i, t);
                }
            }
            Ev::GreenStart => {
                for lane in 0..self.lanes {
                    let i = self.lanes + lane;
                    let at = t + (self.nodes[i].faults.unit() * ROLLOUT_US as f64) as i64;
                    self.start_node(i, at);
                }
            }
            Ev::Cutover => {
                for lane in 0..self.lanes {
                    if self.nodes[self.lanes + lane].status == Status::Up {
                        self.on_green[lane] = true;
                    }
                }
                self.stats.cutover_ready = self.on_green.iter().filter(|g| **g).count() as u64;
            }
            Ev::BlueStop => {
                self.blue_stopped = true;
                for lane in 0..self.lanes {
                    self.on_green[lane] = true;
                    self.stop_node(lane, t);
                }
            }
        }
    }

    /// A node comes into existence at `t` (its process starts then).
    fn start_node(&mut self, i: usize, t: i64) {
        let n = &mut self.nodes[i];
        n.present_since = Some(t);
        n.status = Status::Down;
        n.status_since = t;
        n.inc += 1;
        let inc = n.inc;
        self.push(
            t,
            Ev::Start {
                node: i as u32,
                inc,
            },
        );
    }

    /// A node is shut down cleanly (the generator is dropped: R lowered to what it issued, the
    /// slot freed) and leaves the fleet.
    fn stop_node(&mut self, i: usize, t: i64) {
        if self.nodes[i].present_since.is_none() {
            return;
        }
        self.set_status(i, t, Status::Off);
        if self.nodes[i].gen.take().is_some() {
            self.slots_changed(-1);
        }
        let n = &mut self.nodes[i];
        if let Some(since) = n.present_since.take() {
            n.present_us += t - since.max(WARM_US).min(t);
            self.stats.present.add(since, t);
        }
    }

    /// Build the node's generator: a static node id, or a slot of the lease directory.
    fn try_start(&mut self, i: usize, t: i64) {
        self.nodes[i].clock.move_to(t);
        let handle = self.nodes[i].clock.handle();
        let builder = match self.lease_dir {
            Some(dir) if self.sc.leases => {
                let mut o = FileLeaseOptions::new(dir);
                o.common.identity = Some(self.nodes[i].identity.clone());
                o.common.reserve_ms = RESERVE_MS;
                Generator::builder_from(NodeSource::FileLease(o))
            }
            _ => Generator::builder(i as u32),
        };
        let built = builder
            .mode(self.mode)
            .layout(self.sc.layout)
            .clock(handle)
            .build();
        match built {
            Ok(g) => {
                if let Some(h) = g.health().lease {
                    if h.guard_waiting && self.stats.on(t) {
                        self.stats.guard_waits += 1;
                        self.stats.guard_wait_max_ms =
                            self.stats.guard_wait_max_ms.max(h.guard_remaining_ms);
                    }
                }
                let leased = self.sc.leases;
                self.nodes[i].gen = Some(g);
                self.nodes[i].backoff_us = BACKOFF_US.0;
                self.set_status(i, t, Status::Up);
                if leased {
                    self.slots_changed(1);
                    self.stats.starts += u64::from(self.stats.on(t));
                    self.schedule_renew(i, t);
                }
                let lane = i % self.lanes;
                if i >= self.lanes && (self.blue_stopped || self.on_green[lane]) {
                    self.on_green[lane] = true;
                }
                self.check_health(i, t);
            }
            Err(e) => {
                *self
                    .stats
                    .start_failures
                    .entry(e.kind().code())
                    .or_default() += 1;
                let n = &mut self.nodes[i];
                let wait = n.backoff_us;
                n.backoff_us = (n.backoff_us * 2).min(BACKOFF_US.1);
                let inc = n.inc;
                self.push(
                    t + wait,
                    Ev::Start {
                        node: i as u32,
                        inc,
                    },
                );
            }
        }
    }

    fn schedule_renew(&mut self, i: usize, t: i64) {
        if self.sc.leases {
            let inc = self.nodes[i].inc;
            self.push(
                t + RENEW_US,
                Ev::Renew {
                    node: i as u32,
                    inc,
                },
            );
        }
    }

    fn renew(&mut self, i: usize) {
        if !self.sc.leases {
            return;
        }
        if let Some(g) = &self.nodes[i].gen {
            match renew_lease(g) {
                Ok(()) => self.stats.renewals += 1,
                Err(_) => self.stats.renew_failures += 1,
            }
        }
    }

    fn slots_changed(&mut self, delta: i64) {
        self.slots_now = (self.slots_now as i64 + delta) as u64;
        self.stats.note_slots(self.now, self.slots_now);
    }

    /// Change a node's status, closing the interval of the old one.
    fn set_status(&mut self, i: usize, t: i64, status: Status) {
        self.close_refusing(i, t);
        let n = &mut self.nodes[i];
        let since = n.status_since;
        match n.status {
            Status::Frozen => self.stats.frozen.add(since, t),
            Status::Down => self.stats.down.add(since, t),
            Status::Up | Status::Off => {}
        }
        if status != Status::Up {
            // Requests in flight are lost with the process or the frozen VM.
            self.stats.unserved(t, n.pending_n);
            n.pending.clear();
            n.pending_n = 0;
            n.retry_at = None;
        }
        n.status = status;
        n.status_since = t;
        n.inc += 1;
    }

    /// After a step of the node's wall clock: does it still issue?
    fn after_step(&mut self, i: usize, t: i64) {
        self.nodes[i].clock.move_to(t);
        if self.nodes[i].status == Status::Up {
            self.check_health(i, t);
        }
    }

    /// Ask the generator; open or close the node's refusing interval, and probe again when it
    /// should end.
    fn check_health(&mut self, i: usize, t: i64) {
        self.nodes[i].clock.move_to(t);
        let Some(g) = &self.nodes[i].gen else { return };
        let h = g.health();
        let max_wait_ms = g.max_wait_ms();
        if h.ok {
            self.close_refusing(i, t);
            return;
        }
        if self.nodes[i].refusing_since.is_none() {
            self.nodes[i].refusing_since = Some(t);
        }
        let wait_ms = probe_after_ms(&h, max_wait_ms);
        let inc = self.nodes[i].inc;
        self.push(
            t + wait_ms * US_PER_MS,
            Ev::Probe {
                node: i as u32,
                inc,
            },
        );
    }

    fn close_refusing(&mut self, i: usize, t: i64) {
        if let Some(since) = self.nodes[i].refusing_since.take() {
            self.nodes[i].refusing_us += t - since.max(WARM_US).min(t);
            self.stats.refusing.add(since, t);
        }
    }

    /// `count` requests arrive on a lane at `t`.
    fn serve(&mut self, t: i64, lane: usize, count: u64) {
        if self.stats.on(t) {
            self.stats.requests += count;
        }
        let i = lane_node(lane, self.lanes, &self.on_green);
        if self.nodes[i].status != Status::Up {
            self.stats.unserved(t, count);
            return;
        }
        self.nodes[i].clock.move_to(t);
        self.nodes[i].pending.push_back((t, count));
        self.nodes[i].pending_n += count;
        self.drain(i, t);
    }

    /// Issue IDs for the node's waiting requests until none is left, the generator would wait
    /// (strict: a small rewind or a spent millisecond; retried at the next ms) or it refuses.
    fn drain(&mut self, i: usize, t: i64) {
        let wall = self.nodes[i].clock.wall_ms();
        while self.nodes[i].pending_n > 0 {
            let n = &mut self.nodes[i];
            let Some(g) = &n.gen else { return };
            // Monotonic mode reserves a whole group with one call; strict issues one by one.
            let (arrived, count) = *n.pending.front().expect("pending_n > 0");
            let take = if self.mode == Mode::Monotonic {
                count.min(self.buf.len() as u64) as usize
            } else {
                1
            };
            let result = if take > 1 {
                g.next_ids(&mut self.buf[..take]).map(|()| Some(take))
            } else {
                g.try_next_id().map(|o| {
                    o.map(|id| {
                        self.buf[0] = id;
                        1
                    })
                })
            };
            match result {
                Ok(Some(k)) => {
                    let front = n.pending.front_mut().expect("pending_n > 0");
                    front.1 -= k as u64;
                    if front.1 == 0 {
                        n.pending.pop_front();
                    }
                    n.pending_n -= k as u64;
                    let waited = t - arrived;
                    let (shift, epoch) = (self.shift, self.epoch_ms);
                    for &id in &self.buf[..k] {
                        let lead = ((id >> shift) as i64 + epoch - wall).max(0);
                        self.stats.issued(t, id, lead, shift);
                    }
                    self.stats.waited(t, k as u64, waited);
                }
                Ok(None) => {
                    let next_ms = (t.div_euclid(US_PER_MS) + 1) * US_PER_MS;
                    if n.retry_at.is_none() {
                        n.retry_at = Some(next_ms);
                        let inc = n.inc;
                        self.push(
                            next_ms,
                            Ev::Retry {
                                node: i as u32,
                                inc,
                            },
                        );
                    }
                    return;
                }
                Err(e) => {
                    let refused = n.pending_n;
                    n.pending.clear();
                    n.pending_n = 0;
                    self.stats.refused(t, e.kind(), refused);
                    self.check_health(i, t);
                    return;
                }
            }
        }
    }

    fn finish(&mut self, end: i64) {
        for i in 0..self.nodes.len() {
            self.close_refusing(i, end);
            let n = &mut self.nodes[i];
            match n.status {
                Status::Frozen => self.stats.frozen.add(n.status_since, end),
                Status::Down => self.stats.down.add(n.status_since, end),
                _ => {}
            }
            if let Some(since) = n.present_since.take() {
                n.present_us += end - since.max(WARM_US);
                self.stats.present.add(since, end);
            }
            self.stats.unserved(end, n.pending_n);
            if let Some(g) = n.gen.take() {
                let h = g.health();
                self.stats.rewinds_waited += h.rewinds_waited;
                self.stats.exhaustions += h.sequence_exhaustions;
            }
            let share = if n.present_us > 0 {
                n.refusing_us as f64 / n.present_us as f64
            } else {
                0.0
            };
            self.stats.node_refusing_share.push(share);
        }
        self.stats.finish();
    }
}

impl Node {
    fn clock_leap_steps(&self) -> bool {
        self.clock.leap_mode() == LeapMode::Step
    }
}

/// When to look again at an unhealthy generator, in ms (at least 1).
fn probe_after_ms(h: &Health, max_wait_ms: f64) -> i64 {
    let ms = match h.status {
        HealthStatus::ClockBehind => h.lead_ms - max_wait_ms.floor() as i64,
        HealthStatus::RestartGuard => h.lease.as_ref().map_or(1, |l| l.guard_remaining_ms as i64),
        _ => 1,
    };
    ms.max(1)
}

/// A crash: the process dies with its lease held. No clean close: R stays at its last renewal
/// and the kernel frees the slot file's lock.
fn crash(g: Generator) {
    g.abandon();
}

/// One renewal of R, as the lease's background thread does every reserve / 5.
fn renew_lease(g: &Generator) -> polyflake::Result<()> {
    g.renew_lease()
}
