//! The service's 64-bit generator, which heals: a generator whose lease is lost (the etcd lease
//! revoked or expired, the slot key or znode deleted, the store restored from a backup) stops
//! for good, so the service makes a new one from the same node source (a new slot, behind its
//! restart guard) and answers from it, instead of refusing until someone restarts it. Health is
//! 503 meanwhile (`lease_lost` or `store_rolled_back`, then `restart_guard`). After a rollback the
//! new slot is taken only once the clock has passed the old generator's R.

use polyflake::{Generator, Health, HealthStatus, Issuer, Mode, Result};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// How a new generator is made (the service's node source and settings).
pub type Rebuild = Box<dyn Fn() -> Result<Generator> + Send + Sync>;

/// The current generator, replaced when its lease is lost.
pub struct LiveGenerator {
    current: RwLock<Arc<Generator>>,
    rebuild: Option<Rebuild>,
    heals: AtomicU64,
}

impl LiveGenerator {
    /// `rebuild`: `None` for a generator that is never replaced (a static node id, embedding).
    pub fn new(gen: Generator, rebuild: Option<Rebuild>) -> LiveGenerator {
        LiveGenerator {
            current: RwLock::new(Arc::new(gen)),
            rebuild,
            heals: AtomicU64::new(0),
        }
    }

    /// The generator answering now.
    pub fn get(&self) -> Arc<Generator> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// How many times a lost lease was replaced.
    pub fn heals(&self) -> u64 {
        self.heals.load(Ordering::Relaxed)
    }

    /// When the current generator's lease is lost, make a new one and answer from it. Blocks
    /// (taking a slot talks to the store): run it on a blocking thread. `None`: nothing to do;
    /// `Some(Ok(what))`: replaced; `Some(Err(e))`: the new one could not be made (try again).
    pub fn heal(&self) -> Option<Result<String>> {
        let rebuild = self.rebuild.as_ref()?;
        let old = self.get();
        let h = old.health();
        match h.status {
            HealthStatus::LeaseLost => {}
            // The store went back in time: it may have forgotten the R this generator issued
            // up to, so a slot taken from it now could be guarded too briefly. Take none until
            // the clock has passed that R: nothing this process issued can repeat (an operator's
            // fence covers the other holders of the lost history).
            HealthStatus::StoreRolledBack
                if h.lease
                    .as_ref()
                    .map_or(true, |l| h.wall_ms > l.high_water_ms) => {}
            _ => return None,
        }
        Some(rebuild().map(|new| {
            let what = format!(
                "lease lost on node {} ({}: {}); took node {} from a new lease",
                old.node_id(),
                h.status.name(),
                h.reason,
                new.node_id()
            );
            *self.current.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(new);
            self.heals.fetch_add(1, Ordering::Relaxed);
            what
        }))
    }
}

impl std::fmt::Debug for LiveGenerator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveGenerator")
            .field("node_id", &self.get().node_id())
            .field("heals", &self.heals())
            .finish()
    }
}

/// The service issues through the generator answering now.
impl Issuer for LiveGenerator {
    type Id = u64;
    fn next_id(&self) -> Result<u64> {
        self.get().next_id()
    }
    fn try_next_id(&self) -> Result<Option<u64>> {
        self.get().try_next_id()
    }
    fn next_ids(&self, out: &mut [u64]) -> Result<()> {
        self.get().next_ids(out)
    }
    fn try_next_ids(&self, out: &mut [u64]) -> Result<bool> {
        self.get().try_next_ids(out)
    }
    fn health(&self) -> Health {
        self.get().health()
    }
    fn close(&self) {
        self.get().close()
    }
    fn mode(&self) -> Mode {
        self.get().mode()
    }
    fn interrupt_waits(&self) {
        self.get().interrupt_waits()
    }
    fn format_id(id: u64) -> String {
        Generator::format_id(id)
    }
    fn parse_id(text: &str) -> Result<u64> {
        Generator::parse_id(text)
    }
}
