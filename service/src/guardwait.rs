//! Saying so when a lease's restart guard makes a person wait: `next` sleeps through it and
//! `serve` answers 503 `restart_guard` during it, so a wait of more than half a second gets one
//! line on stderr: how long, why (the core's words, from its health snapshot), and how to avoid
//! it. A new slot (a new machine, a new lease directory) waits one whole reserve, 5 s by default.

use polyflake::{Generator, Health, HealthStatus, LeaseKind};

/// Waits of at most this many ms are not reported: too short to notice.
pub const NOTICE_OVER_MS: u64 = 500;

/// The line that reports the restart guard `g` waits on now, for `who` (`"next"`, `"serve"`),
/// or `None` when it waits half a second or less, or not at all. `reserve_ms` is the lease's
/// `--lease-reserve-ms`.
pub fn notice(g: &Generator, who: &str, reserve_ms: u64) -> Option<String> {
    notice_from(&g.health(), who, reserve_ms)
}

/// [`notice`] from a health snapshot already taken.
pub fn notice_from(h: &Health, who: &str, reserve_ms: u64) -> Option<String> {
    let l = h.lease.as_ref()?;
    if !l.guard_waiting || l.guard_remaining_ms <= NOTICE_OVER_MS {
        return None;
    }
    let ms = l.guard_remaining_ms;
    let effect = if who == "serve" {
        format!("64-bit IDs and GET /v1/health answer 503 (restart_guard) for {ms} ms")
    } else {
        format!("waiting {ms} ms before minting")
    };
    let reason = if h.status == HealthStatus::RestartGuard && !h.reason.is_empty() {
        h.reason.clone()
    } else {
        format!("the restart guard of node {} holds for {ms} ms", h.node_id)
    };
    let store = format!("{} lease {}, slot {}", l.kind.name(), l.store, l.slot);
    let mut line = format!("polyflake {who}: {effect} ({store}): {reason}.");
    // A generator that has issued and waits again: the clock stepped back under its slot (the
    // core's words say so); nothing about how the slot was taken applies.
    if h.last_issued_ms.is_some() {
        return Some(line);
    }
    if l.guard_note.is_empty() {
        // A slot with no R recorded is guarded for one reserve from now; a holder that stopped
        // without releasing its slot left an R up to one reserve ahead (renewed every fifth of
        // one).
        if ms.saturating_add(reserve_ms / 5) >= reserve_ms {
            line.push_str(&format!(
                " That is one whole reserve (--lease-reserve-ms {reserve_ms}): the slot had no record of an earlier holder's R (a new slot: a new machine or lease directory), or its holder stopped moments ago without releasing it."
            ));
        } else {
            line.push_str(
                " The slot's previous holder stopped without releasing it (a crash, a kill) while its R was ahead of the clock.",
            );
        }
    }
    let keep = match l.kind {
        LeaseKind::File => format!(
            "keep the lease directory ({}) between runs (a slot an earlier run released is taken at once), ",
            l.store
        ),
        LeaseKind::Host => {
            line.push_str(
                " Its previous holder on this host was killed within the last reserve, or this clock stepped back since: calls wait for it (health says restart_guard meanwhile). A holder that closes or exits normally leaves nothing to wait for.",
            );
            return Some(line);
        }
        LeaseKind::Etcd | LeaseKind::ZooKeeper => String::new(),
    };
    line.push_str(&format!(
        " To avoid the wait: {keep}give a static node id (--node-id N) where node ids are assigned, or lower --lease-reserve-ms (what a new slot waits)."
    ));
    Some(line)
}

/// Reports each restart-guard wait of a running service once: [`GuardWatch::check`] is called
/// when the generator is made or replaced and then periodically.
#[derive(Debug, Default)]
pub struct GuardWatch {
    /// The generator's `ids_issued` when the wait going on was reported. Nothing is issued
    /// during a wait, so more IDs since mean that wait ended and this is another, even when no
    /// look fell between the two.
    reported_at: Option<u64>,
}

impl GuardWatch {
    /// The line to print for the wait `g` is in now, once per wait: `None` when it does not
    /// wait (which ends a wait), when this wait was reported already, or when it is short.
    pub fn check(&mut self, g: &Generator, who: &str, reserve_ms: u64) -> Option<String> {
        let h = g.health();
        let waiting = h.lease.as_ref().is_some_and(|l| l.guard_waiting);
        if !waiting {
            self.reported_at = None;
            return None;
        }
        if self.reported_at == Some(h.ids_issued) {
            return None;
        }
        let line = notice_from(&h, who, reserve_ms)?;
        self.reported_at = Some(h.ids_issued);
        Some(line)
    }

    /// Forget the wait reported (the generator was replaced: its guard is a new wait).
    pub fn reset(&mut self) {
        self.reported_at = None;
    }
}
