//! What a run measures, and the uniqueness check.

use polyflake::ErrorKind;
use std::collections::BTreeMap;

/// Bins of the whole run in the time series.
pub const BINS: usize = 720;
/// Width of a zoom bin around the leap second, µs.
pub const ZOOM_BIN_US: i64 = 10_000;

/// Node-time (µs) spent in some state, binned over the run and (for leap runs) over a few
/// seconds around the leap at a finer grain.
#[derive(Debug, Clone)]
pub struct Coverage {
    /// Total node-µs.
    pub total: i64,
    /// Node-µs per run bin.
    pub bins: Vec<i64>,
    /// Node-µs per zoom bin.
    pub zoom: Vec<i64>,
    bin_us: i64,
    zoom_from: i64,
    /// Simulated time of the measured window's start (the warm-up before it is not counted).
    warm: i64,
}

impl Coverage {
    fn new(bin_us: i64, zoom: Option<(i64, i64)>, warm: i64) -> Coverage {
        let (zoom_from, zoom_n) = match zoom {
            Some((a, b)) => (a, ((b - a) / ZOOM_BIN_US) as usize),
            None => (0, 0),
        };
        Coverage {
            total: 0,
            bins: vec![0; BINS],
            zoom: vec![0; zoom_n],
            bin_us,
            zoom_from,
            warm,
        }
    }

    /// Add the interval [a, b) of simulated time (only its part in the measured window).
    pub fn add(&mut self, a: i64, b: i64) {
        let (a, b) = ((a - self.warm).max(0), b - self.warm);
        if b <= a {
            return;
        }
        self.total += b - a;
        spread(&mut self.bins, self.bin_us, 0, a, b);
        if !self.zoom.is_empty() {
            spread(&mut self.zoom, ZOOM_BIN_US, self.zoom_from, a, b);
        }
    }
}

fn spread(bins: &mut [i64], width: i64, from: i64, a: i64, b: i64) {
    let n = bins.len() as i64;
    let first = ((a - from).div_euclid(width)).max(0);
    let last = ((b - 1 - from).div_euclid(width)).min(n - 1);
    for k in first..=last {
        let lo = (from + k * width).max(a);
        let hi = (from + (k + 1) * width).min(b);
        if hi > lo {
            bins[k as usize] += hi - lo;
        }
    }
}

/// Per-bin counts of events and the lead of monotonic IDs.
#[derive(Debug, Clone, Default)]
pub struct Counts {
    /// IDs issued.
    pub ids: Vec<u64>,
    /// Calls refused by a generator.
    pub refused: Vec<u64>,
    /// Requests that found no running generator (frozen, crashed, not started).
    pub unserved: Vec<u64>,
    /// Largest lead of an ID over its node's wall clock, ms.
    pub lead_max: Vec<i64>,
    /// Sum of leads, ms (mean = sum / ids).
    pub lead_sum: Vec<i64>,
}

impl Counts {
    fn new(n: usize) -> Counts {
        Counts {
            ids: vec![0; n],
            refused: vec![0; n],
            unserved: vec![0; n],
            lead_max: vec![0; n],
            lead_sum: vec![0; n],
        }
    }
}

/// Everything one run counts.
#[derive(Debug)]
pub struct RunStats {
    /// Simulated time at which measuring starts: before it the fleet warms up (takes its
    /// slots); its IDs are still checked for duplicates.
    warm: i64,
    length_us: i64,
    bin_us: i64,
    zoom: Option<(i64, i64)>,
    /// Every ID issued, in issue order (sorted by the uniqueness check).
    pub ids: Vec<u64>,
    /// Requests that arrived.
    pub requests: u64,
    /// Requests with no running generator to take them.
    pub unserved_total: u64,
    /// Refused calls by error code.
    pub refused_by: BTreeMap<&'static str, u64>,
    /// Requests that waited (strict: a small rewind or a spent millisecond), and the longest
    /// wait in µs.
    pub waited_n: u64,
    /// See `waited_n`.
    pub waited_max_us: i64,
    /// Largest lead of any ID, ms; and the sum of all leads.
    pub lead_max_ms: i64,
    /// See `lead_max_ms`.
    pub lead_sum_ms: i128,
    /// IDs smaller than an ID issued earlier by another node; those a millisecond or more
    /// smaller; the largest gap in ms.
    pub inversions: u64,
    /// See `inversions`.
    pub inversions_ms: u64,
    /// See `inversions`.
    pub inversion_worst_ms: u64,
    /// Inversions of 10 ms or more, and of 100 ms or more.
    pub inversions_10ms: u64,
    /// See `inversions_10ms`.
    pub inversions_100ms: u64,
    running_max: u64,
    /// Lease slots held at the peak.
    pub slots_peak: u64,
    /// Per run bin: the peak and the value at the end, if slots changed in it.
    slots_bins: Vec<Option<(u64, u64)>>,
    /// Slots held per run bin (the most in each).
    pub slots_series: Vec<u64>,
    /// Node-time present, refusing, frozen and down (no generator).
    pub present: Coverage,
    /// See `present`.
    pub refusing: Coverage,
    /// See `present`.
    pub frozen: Coverage,
    /// See `present`.
    pub down: Coverage,
    /// Per run bin.
    pub counts: Counts,
    /// Per zoom bin.
    pub zoom_counts: Counts,
    /// Each node's share of its time refusing.
    pub node_refusing_share: Vec<f64>,
    /// Fault and lease counters.
    pub bursts: u64,
    /// See `bursts`.
    pub ntp_steps: u64,
    /// See `bursts`.
    pub ntp_step_max_ms: i64,
    /// See `bursts`.
    pub freezes: u64,
    /// See `bursts`.
    pub crashes: u64,
    /// Generators built from a lease.
    pub starts: u64,
    /// Failed generator builds by error code (no free slot, ...).
    pub start_failures: BTreeMap<&'static str, u64>,
    /// Leases taken behind a predecessor's R, and the longest wait.
    pub guard_waits: u64,
    /// See `guard_waits`.
    pub guard_wait_max_ms: u64,
    /// Renewals of R that succeeded and failed.
    pub renewals: u64,
    /// See `renewals`.
    pub renew_failures: u64,
    /// Green instances ready at the cutover.
    pub cutover_ready: u64,
    /// Rewinds waited out and sequence exhaustions, from the generators' own counters
    /// (generators alive at the end).
    pub rewinds_waited: u64,
    /// See `rewinds_waited`.
    pub exhaustions: u64,
}

impl RunStats {
    /// Empty counters for a run of `length_us` with `instances` nodes.
    pub fn new(warm: i64, length_us: i64, zoom: Option<(i64, i64)>, instances: usize) -> RunStats {
        let bin_us = (length_us / BINS as i64).max(1);
        let zoom_n = zoom.map_or(0, |(a, b)| ((b - a) / ZOOM_BIN_US) as usize);
        RunStats {
            warm,
            length_us,
            bin_us,
            zoom,
            ids: Vec::new(),
            requests: 0,
            unserved_total: 0,
            refused_by: BTreeMap::new(),
            waited_n: 0,
            waited_max_us: 0,
            lead_max_ms: 0,
            lead_sum_ms: 0,
            inversions: 0,
            inversions_ms: 0,
            inversion_worst_ms: 0,
            inversions_10ms: 0,
            inversions_100ms: 0,
            running_max: 0,
            slots_peak: 0,
            slots_bins: vec![None; BINS],
            slots_series: Vec::new(),
            present: Coverage::new(bin_us, zoom, warm),
            refusing: Coverage::new(bin_us, zoom, warm),
            frozen: Coverage::new(bin_us, zoom, warm),
            down: Coverage::new(bin_us, zoom, warm),
            counts: Counts::new(BINS),
            zoom_counts: Counts::new(zoom_n),
            node_refusing_share: Vec::with_capacity(instances),
            bursts: 0,
            ntp_steps: 0,
            ntp_step_max_ms: 0,
            freezes: 0,
            crashes: 0,
            starts: 0,
            start_failures: BTreeMap::new(),
            guard_waits: 0,
            guard_wait_max_ms: 0,
            renewals: 0,
            renew_failures: 0,
            cutover_ready: 0,
            rewinds_waited: 0,
            exhaustions: 0,
        }
    }

    /// Width of a run bin, µs.
    pub fn bin_us(&self) -> i64 {
        self.bin_us
    }

    /// True once `t` (simulated time) is in the measured window.
    pub fn on(&self, t: i64) -> bool {
        t >= self.warm
    }

    fn bin(&self, t: i64) -> usize {
        (((t - self.warm).max(0) / self.bin_us) as usize).min(BINS - 1)
    }

    fn zoom_bin(&self, t: i64) -> Option<usize> {
        let (a, b) = self.zoom?;
        let t = t - self.warm;
        (t >= a && t < b).then(|| ((t - a) / ZOOM_BIN_US) as usize)
    }

    /// One ID issued at `t`, `lead` ms ahead of its node's wall clock.
    #[inline]
    pub fn issued(&mut self, t: i64, id: u64, lead: i64, shift: u32) {
        self.ids.push(id);
        if t < self.warm {
            self.running_max = self.running_max.max(id);
            return;
        }
        if id < self.running_max {
            self.inversions += 1;
            let gap = (self.running_max >> shift) - (id >> shift);
            if gap >= 1 {
                self.inversions_ms += 1;
                self.inversion_worst_ms = self.inversion_worst_ms.max(gap);
                self.inversions_10ms += u64::from(gap >= 10);
                self.inversions_100ms += u64::from(gap >= 100);
            }
        } else {
            self.running_max = id;
        }
        self.lead_max_ms = self.lead_max_ms.max(lead);
        self.lead_sum_ms += lead as i128;
        let b = self.bin(t);
        self.counts.ids[b] += 1;
        self.counts.lead_sum[b] += lead;
        if lead > self.counts.lead_max[b] {
            self.counts.lead_max[b] = lead;
        }
        if let Some(z) = self.zoom_bin(t) {
            self.zoom_counts.ids[z] += 1;
            self.zoom_counts.lead_sum[z] += lead;
            if lead > self.zoom_counts.lead_max[z] {
                self.zoom_counts.lead_max[z] = lead;
            }
        }
    }

    /// `k` requests got their IDs `waited_us` after they arrived.
    pub fn waited(&mut self, t: i64, k: u64, waited_us: i64) {
        if waited_us > 0 && t >= self.warm {
            self.waited_n += k;
            self.waited_max_us = self.waited_max_us.max(waited_us);
        }
    }

    /// `n` calls refused at `t`.
    pub fn refused(&mut self, t: i64, kind: ErrorKind, n: u64) {
        if n == 0 || t < self.warm {
            return;
        }
        *self.refused_by.entry(kind.code()).or_default() += n;
        let b = self.bin(t);
        self.counts.refused[b] += n;
        if let Some(z) = self.zoom_bin(t) {
            self.zoom_counts.refused[z] += n;
        }
    }

    /// `n` requests found no running generator at `t`.
    pub fn unserved(&mut self, t: i64, n: u64) {
        if n == 0 || t < self.warm {
            return;
        }
        self.unserved_total += n;
        let b = self.bin(t);
        self.counts.unserved[b] += n;
        if let Some(z) = self.zoom_bin(t) {
            self.zoom_counts.unserved[z] += n;
        }
    }

    /// The fleet holds `slots` lease slots from `t` on.
    pub fn note_slots(&mut self, t: i64, slots: u64) {
        self.slots_peak = self.slots_peak.max(slots);
        let b = self.bin(t.min(self.warm + self.length_us - 1));
        let peak = self.slots_bins[b].map_or(slots, |(p, _)| p.max(slots));
        self.slots_bins[b] = Some((peak, slots));
    }

    /// Close the books: a bin without a change of slots holds what the last change left.
    pub fn finish(&mut self) {
        let mut carry = 0;
        self.slots_series = self
            .slots_bins
            .iter()
            .map(|b| match b {
                Some((peak, end)) => {
                    carry = *end;
                    *peak
                }
                None => carry,
            })
            .collect();
    }

    /// Total refused calls.
    pub fn refused_total(&self) -> u64 {
        self.refused_by.values().sum()
    }
}

/// Sort the IDs (LSD radix sort) and count the values that appear more than
/// once: the duplicates. Returns 0 for a run that kept its promise.
pub fn duplicates(ids: &mut Vec<u64>) -> u64 {
    radix_sort(ids);
    ids.windows(2).filter(|w| w[0] == w[1]).count() as u64
}

fn radix_sort(v: &mut Vec<u64>) {
    // 11-bit digits: 2,048 counters stay in the L1 cache; six passes cover 64 bits, and a pass
    // whose digit is the same for every value (the high bits of IDs from one hour) is skipped.
    const BITS: u32 = 11;
    const MASK: u64 = (1 << BITS) - 1;
    let mut tmp = vec![0u64; v.len()];
    for pass in 0..64u32.div_ceil(BITS) {
        let shift = BITS * pass;
        let mut count = [0usize; 1 << BITS];
        for &x in v.iter() {
            count[((x >> shift) & MASK) as usize] += 1;
        }
        if count.contains(&v.len()) {
            continue;
        }
        let mut sum = 0;
        for c in count.iter_mut() {
            let n = *c;
            *c = sum;
            sum += n;
        }
        for &x in v.iter() {
            let d = ((x >> shift) & MASK) as usize;
            tmp[count[d]] = x;
            count[d] += 1;
        }
        std::mem::swap(v, &mut tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix_sort_sorts_and_duplicates_are_counted() {
        let mut r = crate::rng::Rng::new(3);
        let mut v: Vec<u64> = (0..100_000).map(|_| r.next_u64() >> 1).collect();
        let mut expected = v.clone();
        expected.sort_unstable();
        assert_eq!(duplicates(&mut v), 0);
        assert_eq!(v, expected);
        let mut w = vec![5, 1, 5, 7, 1, 5];
        assert_eq!(duplicates(&mut w), 3);
    }

    #[test]
    fn coverage_spreads_over_bins() {
        let mut c = Coverage::new(10, Some((5, 5 + 2 * ZOOM_BIN_US)), 0);
        c.add(8, 32);
        assert_eq!(c.total, 24);
        assert_eq!(&c.bins[..4], &[2, 10, 10, 2]);
        assert_eq!(c.zoom, vec![24, 0]);
        c.add(ZOOM_BIN_US, 2 * ZOOM_BIN_US);
        assert_eq!(c.zoom, vec![24 + 5, ZOOM_BIN_US - 5]);
    }
}
