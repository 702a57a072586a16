package dev.polyflake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * 10,000 virtual threads minting strict IDs on 2 carrier threads (the POM sets
 * jdk.virtualThreadScheduler.parallelism and maxPoolSize to 2), while another virtual thread's
 * loop keeps ticking: a strict call that must wait for the next millisecond parks in Java and
 * unmounts, so the carriers stay free. Needs JDK 21+ (the API is reached by reflection, the
 * bytecode being Java 11's); make test-java runs it on Temurin 25 and requires it there.
 */
class VirtualThreadsTest {
    static final int THREADS = 10_000;
    static final int PER_THREAD = 10;
    /** 64 IDs per millisecond: 100,000 IDs span 1.6 s of spent milliseconds, nearly every call waits. */
    static final Layout LAYOUT = Layout.of(41, 16, 6);

    @Test
    void tenThousandVirtualThreadsOnTwoCarriers() throws Exception {
        boolean required = Boolean.getBoolean("polyflake.require.virtual.threads");
        boolean available = Runtime.version().feature() >= 21;
        assertTrue(available || !required, "virtual threads required but the JVM is " + Runtime.version());
        assumeTrue(available, "virtual threads need JDK 21+ (this is " + Runtime.version() + ")");
        assertEquals("2", System.getProperty("jdk.virtualThreadScheduler.parallelism"));
        Method isVirtual = Thread.class.getMethod("isVirtual");
        Method perTask = Executors.class.getMethod("newVirtualThreadPerTaskExecutor");

        long[][] ids = new long[THREADS][PER_THREAD];
        Set<String> carriers = ConcurrentHashMap.newKeySet();
        AtomicBoolean done = new AtomicBoolean();
        AtomicLong ticks = new AtomicLong();
        AtomicLong maxGapNanos = new AtomicLong();
        CountDownLatch tickerUp = new CountDownLatch(1);
        try (Snowflake g = Snowflake.builder().nodeId(907).layout(LAYOUT).build()) {
            ExecutorService ex = (ExecutorService) perTask.invoke(null);
            try {
                Future<?> ticker = ex.submit(() -> {
                    assertTrue((Boolean) isVirtual.invoke(Thread.currentThread()));
                    tickerUp.countDown();
                    long last = System.nanoTime();
                    while (!done.get()) {
                        Thread.sleep(1);
                        long now = System.nanoTime();
                        maxGapNanos.accumulateAndGet(now - last, Math::max);
                        last = now;
                        ticks.incrementAndGet();
                    }
                    return null;
                });
                tickerUp.await();
                long parks0 = Waits.PARKS.sum();
                long handovers0 = Waits.HANDOVERS.sum();
                long t0 = System.nanoTime();
                long ticksBefore = ticks.get();
                Future<?>[] minters = new Future<?>[THREADS];
                for (int t = 0; t < THREADS; t++) {
                    long[] mine = ids[t];
                    minters[t] = ex.submit(() -> {
                        assertTrue((Boolean) isVirtual.invoke(Thread.currentThread()));
                        carriers.add(carrier(Thread.currentThread().toString()));
                        for (int k = 0; k < PER_THREAD; k++) {
                            mine[k] = g.nextId();
                        }
                        return null;
                    });
                }
                for (Future<?> f : minters) {
                    f.get(120, TimeUnit.SECONDS);
                }
                long mintingMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                long ticked = ticks.get() - ticksBefore;
                done.set(true);
                ticker.get(10, TimeUnit.SECONDS);
                long total = (long) THREADS * PER_THREAD;
                // Strict mode issues at most 64 per ms here: the run spans at least total/64 ms of
                // spent milliseconds, each waited out parked.
                assertTrue(mintingMs >= total / 64 - 1, "minting took " + mintingMs + " ms");
                assertTrue(carriers.size() <= 2, "carriers: " + carriers);
                // The ticker kept running beside 10,000 minters: its loop got a carrier again and
                // again. An honest margin for a loaded machine: at least one tick per 50 ms of
                // minting, and no gap of 2 s.
                long parks = Waits.PARKS.sum() - parks0;
                long handovers = Waits.HANDOVERS.sum() - handovers0;
                System.out.printf("virtual threads: %d IDs from %d threads on %s in %d ms; %d parks, %d handed to the core;"
                    + " ticker %d ticks, largest gap %.1f ms%n", total, THREADS, carriers, mintingMs, parks, handovers, ticked,
                    maxGapNanos.get() / 1e6);
                // The waits were parks (unmounting), not sleeps in native code: a call goes to the
                // core's waiting call only when the wall clock stops moving for the wait budget.
                assertTrue(parks > total, "calls parked " + parks + " times");
                assertEquals(0, handovers, "calls handed to the core's (native) wait");
                assertTrue(ticked >= 3, "ticker ticked " + ticked + " times in " + mintingMs + " ms");
                assertTrue(maxGapNanos.get() < TimeUnit.SECONDS.toNanos(5), "ticker stalled " + maxGapNanos.get() / 1e6 + " ms");
            } finally {
                ex.shutdown();
                assertTrue(ex.awaitTermination(30, TimeUnit.SECONDS));
            }
            assertEquals((long) THREADS * PER_THREAD, g.health().idsIssued());
        }
        long[] all = Arrays.stream(ids).flatMapToLong(Arrays::stream).toArray();
        Arrays.sort(all);
        for (int k = 1; k < all.length; k++) {
            assertTrue(all[k] != all[k - 1], "duplicate ID " + all[k]);
        }
        assertTrue(all[0] > 0);
    }

    /** The carrier of a virtual thread, from its toString ("VirtualThread[#22]/runnable@ForkJoinPool-1-worker-1"). */
    static String carrier(String virtualThread) {
        int at = virtualThread.lastIndexOf('@');
        return at < 0 ? virtualThread : virtualThread.substring(at + 1);
    }
}
