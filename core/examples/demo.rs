//! `make demo`: mint IDs on the system clock and decode them, then inject clock faults with a
//! manual clock: a refused rewind, a waited-out one, and a monotonic generator borrowing ahead.

use polyflake::{Generator, Layout, ManualClock, Mode, DEFAULT_EPOCH_MS};

fn iso(ms: i64) -> String {
    // Civil date from Unix days (proleptic Gregorian), enough for a demo's UTC timestamps.
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

fn show(g: &Generator, id: u64) {
    let d = g.decode(id).unwrap();
    println!(
        "  {id:>19}  {}  node {:>4}  seq {:>4}",
        iso(d.timestamp_ms),
        d.node_id,
        d.sequence
    );
}

fn main() {
    let l = Layout::DEFAULT;
    println!(
        "polyflake {}: layout {l} ({:.2} years, {} nodes, {} IDs/ms), epoch {}",
        polyflake::VERSION,
        l.years(),
        l.max_node_id() + 1,
        l.ids_per_ms(),
        iso(DEFAULT_EPOCH_MS)
    );

    println!("\nStrict generator, node 37, system clock:");
    let g = Generator::strict(37).unwrap();
    for _ in 0..5 {
        show(&g, g.next_id().unwrap());
    }
    let mut batch = vec![0u64; 100_000];
    let t = std::time::Instant::now();
    g.next_ids(&mut batch).unwrap();
    println!(
        "  a batch of 100,000 took {:.1} ms (4,096 per ms, then it waits for the next ms):",
        t.elapsed().as_secs_f64() * 1000.0
    );
    show(&g, batch[0]);
    show(&g, batch[99_999]);

    println!("\nThe reference literal, on a manual clock at 1737747358021:");
    let clock = ManualClock::new(1_737_747_358_021);
    let g = Generator::builder(37).clock(clock.clone()).build().unwrap();
    show(&g, g.next_id().unwrap());

    println!("\nAn NTP step back of 600 ms (budget 5 ms): refused at once");
    clock.advance(-600);
    match g.next_id() {
        Ok(id) => println!("  unexpected ID {id}"),
        Err(e) => println!("  {}: {e}", e.code()),
    }
    let h = g.health();
    println!(
        "  health: ok={} status={} ({})",
        h.ok,
        h.status.name(),
        h.reason
    );

    println!("\nA 2 ms rewind (inside the budget) on a clock that catches up in another thread: waited out");
    clock.advance(598); // now 2 ms behind the last issued millisecond
    let catch_up = clock.clone();
    let t = std::time::Instant::now();
    let helper = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(1));
        catch_up.advance(2);
    });
    let id = g.next_id().unwrap();
    helper.join().unwrap();
    show(&g, id);
    println!(
        "  waited {:.2} ms; rewinds waited out: {}",
        t.elapsed().as_secs_f64() * 1000.0,
        g.health().rewinds_waited
    );

    println!("\nMonotonic generator, node 9, same fault: it borrows ahead instead of refusing");
    let clock = ManualClock::new(1_737_747_358_021);
    let m = Generator::builder(9)
        .mode(Mode::Monotonic)
        .clock(clock.clone())
        .build()
        .unwrap();
    show(&m, m.next_id().unwrap());
    clock.advance(-600);
    show(&m, m.next_id().unwrap());
    let mut burst = vec![0u64; 10_000];
    m.next_ids(&mut burst).unwrap();
    println!("  then 10,000 more on the stopped clock:");
    show(&m, burst[9_999]);
    let h = m.health();
    println!(
        "  health: ok={} lead {} ms ahead of the wall clock, {} ms borrowed, {} IDs issued",
        h.ok, h.lead_ms, h.ms_borrowed, h.ids_issued
    );
}
