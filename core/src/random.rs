//! The random bits the 128-bit formats and the UUIDv7 engine's counter start need: a ChaCha12
//! generator per thread, seeded from the operating system and reseeded in a forked child.

use crate::fork;
use rand::rngs::{ChaCha12Rng, SysRng};
use rand::{Rng, SeedableRng, TryRng};
use std::cell::RefCell;

/// 32 bytes from the operating system's CSPRNG (with a last-resort mix of time, pid and an
/// address should the OS refuse: never a fixed seed).
pub(crate) fn os_seed() -> [u8; 32] {
    let mut seed = [0u8; 32];
    if SysRng.try_fill_bytes(&mut seed).is_err() {
        let t = crate::clock::SystemClock::read_ns() as u64;
        let mix = t ^ (u64::from(std::process::id()) << 32) ^ (&seed as *const _ as u64);
        for (i, chunk) in seed.chunks_mut(8).enumerate() {
            chunk.copy_from_slice(&(mix.rotate_left(i as u32 * 13) ^ i as u64).to_le_bytes());
        }
    }
    seed
}

thread_local! {
    /// This thread's generator of random bits, and the fork generation it was seeded in.
    static RNG: RefCell<Option<(u64, ChaCha12Rng)>> = const { RefCell::new(None) };
}

/// 64 random bits from this thread's ChaCha12 generator, reseeded from the OS after a fork (a
/// child must not repeat its parent's random bits).
pub(crate) fn random_u64() -> u64 {
    let generation = fork::current_fork_generation();
    RNG.with(|cell| {
        let mut cell = cell.borrow_mut();
        match &mut *cell {
            Some((g, rng)) if *g == generation => rng.next_u64(),
            _ => {
                let mut rng = ChaCha12Rng::from_seed(os_seed());
                let v = rng.next_u64();
                *cell = Some((generation, rng));
                v
            }
        }
    })
}
