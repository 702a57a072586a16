package dev.polyflake;

import java.lang.ref.Reference;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A generator of 64-bit Snowflake IDs over the polyflake core: {@code new Snowflake(37)} is
 * strict mode on the system clock with node id 37; {@link #builder()} gives every other option
 * (node id sources and leases, mode, layout, epoch, wait budget, clock). Safe to share between
 * threads, platform or virtual.
 *
 * <p>A call that must wait (in strict mode a small rewind or a spent millisecond; in either mode
 * the restart guard of a node id whose previous holder may have issued up to a time the clock
 * has not reached) parks its thread in Java ({@code LockSupport.parkNanos}), never in native code, so a virtual thread
 * unmounts; only once the clock has stood still for the generator's own wait budget, parked,
 * does the last attempt go to the core's waiting call, which refuses past its own deadline. A
 * thread interrupted while it waits gets what needs no wait, or {@link InterruptedException}.
 * A generator on a test clock makes the core's waiting call directly, so its waits are the
 * core's exactly.
 *
 * <p>A node id is held host-wide: one live generator per node id and layout on this host,
 * whatever the epoch, whether it comes from a static id or a lease (a second is refused with
 * {@link NodeIdInUseException}), unless their {@link Builder#hostScope(String) host scopes}
 * differ. A fixed node id also keeps a mark in a state directory, kept one reserve ahead of its
 * IDs (see {@link RestartGuard}): its next holder on this host starts above everything it could
 * have issued. After a clean close or a normal JVM exit that holder starts at once; after a
 * crash (SIGKILL) its first call waits for the clock to pass the mark, up to the reserve
 * (5 s by default).
 *
 * <p>{@link #close()} stops issuing and frees a lease's slot at once; the native memory is
 * freed by a {@code Cleaner} once the object is unreachable (also when it was never closed).
 */
public final class Snowflake implements AutoCloseable {
    /** {@code snowflakeReady}'s questions: may it issue; throw the guard's refusal; for an interrupted thread. */
    private static final int READY_ASK = 0;
    private static final int READY_OR_THROW = 1;
    private static final int READY_OR_INTERRUPTED = 2;

    private final long handle;
    private final boolean injectedClock;
    private final long parkBudgetNanos;
    private final Map<String, Object> info;

    /**
     * A strict generator on the system clock with a static node id (held host-wide: a second
     * live generator with the same id and layout on this host is refused; its restart guard's
     * mark in the state directory, see {@link RestartGuard}).
     *
     * @param nodeId the node id, checked by the core against the default layout (0 to 1,023)
     * @throws InvalidNodeIdException if it does not fit
     * @throws NodeIdInUseException if a live generator already holds it
     * @throws LeaseStoreException if the restart guard is required and its mark cannot be kept
     */
    public Snowflake(long nodeId) {
        this(builder().nodeId(nodeId));
    }

    private Snowflake(Builder b) {
        Native.ensureLoaded();
        this.handle = Native.snowflakeNew(b.wire(), b.clockHandle());
        // The core shares the test clock (its own reference): the Java handle need only live
        // through this call.
        Reference.reachabilityFence(b.clock);
        Native.CLEANER.register(this, new Free(handle));
        this.info = Fields.parse(Native.snowflakeInfo(handle));
        this.injectedClock = (Boolean) info.get("injected_clock");
        this.parkBudgetNanos = Waits.budgetNanos(((Number) info.get("max_wait_ms")).doubleValue());
    }

    private static final class Free implements Runnable {
        private final long handle;

        Free(long handle) {
            this.handle = handle;
        }

        @Override
        public void run() {
            Native.snowflakeFree(handle);
        }
    }

    /**
     * A builder with every setting at the core's default; a node id source must be given.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * One ID. Strict mode may wait (parked) for a small rewind or the next millisecond, and
     * either mode for a fixed node id's restart guard (after its previous holder on this host
     * crashed, or with the clock stepped back under what it issued).
     *
     * @return the ID, a positive {@code long}
     * @throws ClockMovedBackwardsException past the wait budget (and the core's other errors)
     * @throws LeaseNotReadyException when the restart guard holds longer than a call waits for
     *     it ({@link Builder#maxRestartWaitMs(long)}; {@link #waitReady(Duration)} waits as long
     *     as asked)
     * @throws InterruptedException when the thread was interrupted and the call would wait
     */
    public long nextId() {
        try {
            if (injectedClock) {
                // A test clock: the core's own waits, read for read.
                return Native.snowflakeNext(handle, Thread.currentThread().isInterrupted());
            }
            long id = Native.snowflakeTryNext(handle);
            return id >= 0 ? id : slowNextId();
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    private long slowNextId() {
        long[] got = {-1};
        if (Waits.parkUntil(() -> (got[0] = Native.snowflakeTryNext(handle)) >= 0, parkBudgetNanos)) {
            return got[0];
        }
        return Native.snowflakeNext(handle, Thread.currentThread().isInterrupted());
    }

    /** True while a restart guard holds (a lease's, or a fixed node id's mark): never waits. */
    private boolean guarded() {
        return !Native.snowflakeReady(handle, READY_ASK);
    }

    /**
     * One ID if it needs no wait.
     *
     * @return the ID, or empty where {@link #nextId()} would wait
     */
    public OptionalLong tryNextId() {
        try {
            long id = Native.snowflakeTryNext(handle);
            return id >= 0 ? OptionalLong.of(id) : OptionalLong.empty();
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * A batch of {@code n} increasing IDs (all or nothing).
     *
     * @param n how many, 0 to the core's batch limit
     * @return the IDs
     * @throws InvalidArgumentException for a negative or too large {@code n}
     */
    public long[] nextIds(int n) {
        long[] buf = new long[Native.batchLen(n)];
        nextIds(buf);
        return buf;
    }

    /**
     * Fill {@code buf} with increasing IDs (all or nothing: on an error it is left as it was).
     *
     * @param buf where the IDs go
     */
    public void nextIds(long[] buf) {
        GeneratorBuilder.notNull(buf, "nextIds(buf): buf");
        Native.batchLen(buf.length);
        try {
            if (injectedClock) {
                Native.snowflakeNextIds(handle, buf, true, Thread.currentThread().isInterrupted());
            } else if (!Native.snowflakeNextIds(handle, buf, false, false)
                && !Waits.parkUntil(() -> Native.snowflakeNextIds(handle, buf, false, false), parkBudgetNanos, 2,
                    this::guarded)) {
                Native.snowflakeNextIds(handle, buf, true, Thread.currentThread().isInterrupted());
            }
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Take an ID apart with this generator's layout and epoch.
     *
     * @param id the ID
     * @return its millisecond, node id and sequence
     * @throws InvalidIdException for a negative ID
     */
    public Decoded decode(long id) {
        long[] out = new long[3];
        try {
            Native.decode(handle, id, out);
        } finally {
            Reference.reachabilityFence(this);
        }
        return new Decoded(out);
    }

    /**
     * Take an ID apart with the default layout and epoch.
     *
     * @param id the ID
     * @return its millisecond, node id and sequence
     */
    public static Decoded decodeDefault(long id) {
        Native.ensureLoaded();
        long[] out = new long[3];
        Native.decode(0, id, out);
        return new Decoded(out);
    }

    /** @return a health snapshot (reads the clock once) */
    public Health health() {
        try {
            return new Health(Native.snowflakeHealth(handle));
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Wait (parked) up to {@code timeout} while a restart guard holds (a lease's, or a fixed
     * node id's mark after its previous holder crashed); returns at once when nothing needs
     * waiting for. A lease that {@link Builder#heal(boolean) heals} is also waited for while it
     * takes a new slot after it was lost; without healing a lost lease throws at once.
     *
     * @param timeout how long at most
     * @throws LeaseNotReadyException with the guard still holding at the deadline
     * @throws LeaseLostException when the lease is lost (healing: still lost at the deadline)
     * @throws InterruptedException when the thread is interrupted while the guard holds
     */
    public void waitReady(Duration timeout) {
        GeneratorBuilder.notNull(timeout, "waitReady(timeout): timeout");
        long start = System.nanoTime();
        long budget = timeout.isNegative() ? 0 : timeout.toNanos();
        try {
            while (!Native.snowflakeReady(handle, READY_ASK)) {
                if (Thread.currentThread().isInterrupted()) {
                    Native.snowflakeReady(handle, READY_OR_INTERRUPTED);
                    return;
                }
                if (System.nanoTime() - start >= budget) {
                    Native.snowflakeReady(handle, READY_OR_THROW);
                    return;
                }
                LockSupport.parkNanos(Math.min(1_000_000L, budget - (System.nanoTime() - start)) + 1);
            }
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * The node id: static, or the one the source gave; for a lease that {@link Builder#heal(boolean)
     * heals}, the slot it holds now (a heal usually changes it).
     *
     * @return the node id
     */
    public long nodeId() {
        try {
            return Native.snowflakeNodeId(handle);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** @return the mode */
    public Mode mode() {
        return Mode.fromCore((String) info.get("mode"));
    }

    /** @return the layout */
    public Layout layout() {
        return Layout.of(((Number) info.get("timestamp_bits")).intValue(), ((Number) info.get("node_bits")).intValue(),
            ((Number) info.get("sequence_bits")).intValue());
    }

    /** @return the epoch, Unix ms */
    public long epochMs() {
        return ((Number) info.get("epoch_ms")).longValue();
    }

    /** @return the wait budget in ms */
    public double maxWaitMs() {
        return ((Number) info.get("max_wait_ms")).doubleValue();
    }

    /** @return monotonic mode's lead limit in ms (the core's default 5,000), empty when unbounded */
    public OptionalLong maxLeadMs() {
        Object v = info.get("max_lead_ms");
        return v == null ? OptionalLong.empty() : OptionalLong.of(((Number) v).longValue());
    }

    /** @return the clock reading in use (coarse only where asked for and fine enough) */
    public ClockSource clockSource() {
        return ClockSource.fromCore((String) info.get("clock_source"));
    }

    /** Stop issuing for good and free a lease's slot; later calls throw {@link GeneratorClosedException}. */
    @Override
    public void close() {
        try {
            Native.snowflakeClose(handle);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    @Override
    public String toString() {
        return "Snowflake{nodeId=" + nodeId() + ", mode=" + info.get("mode") + ", source=" + info.get("source") + "}";
    }

    /** The settings of a {@link Snowflake}: where the node id comes from, layout, epoch, and the shared ones. */
    public static final class Builder extends GeneratorBuilder<Builder> {
        Builder() {}

        private Builder source(String kind) {
            return set("source", kind);
        }

        /**
         * A static node id (checked by the core against the layout).
         *
         * @param nodeId the node id
         * @return this builder
         */
        public Builder nodeId(long nodeId) {
            return dropSource().set("node_id", nodeId);
        }

        private Builder dropSource() {
            for (int i = options.size() - 2; i >= 0; i -= 2) {
                if (options.get(i).equals("source")) {
                    options.remove(i + 1);
                    options.remove(i);
                }
            }
            return this;
        }

        /**
         * Lease a node id from a directory of slot files (one host).
         *
         * @param dir the lease directory
         * @return this builder
         */
        public Builder fileLease(Path dir) {
            return dropSource().source("file_lease").set("dir", notNull(dir, "fileLease(dir): dir"));
        }

        /**
         * Lease a node id from an etcd v3 cluster.
         *
         * @param endpoints the cluster's URLs
         * @return this builder
         */
        public Builder etcd(List<String> endpoints) {
            notNull(endpoints, "etcd(endpoints): endpoints");
            dropSource().source("etcd");
            for (String e : endpoints) {
                set("endpoint", notNull(e, "etcd(endpoints): an endpoint"));
            }
            return this;
        }

        /**
         * Lease a node id from a ZooKeeper ensemble.
         *
         * @param ensemble {@code "host:port,host:port"}
         * @return this builder
         */
        public Builder zooKeeper(String ensemble) {
            return dropSource().source("zookeeper").set("ensemble", notNull(ensemble, "zooKeeper(ensemble): ensemble"));
        }

        /**
         * The node id from an environment variable (a decimal integer).
         *
         * @param variable the variable's name
         * @return this builder
         */
        public Builder fromEnv(String variable) {
            return dropSource().source("env").set("var", notNull(variable, "fromEnv(variable): variable"));
        }

        /**
         * The node id from the ordinal of a StatefulSet-style hostname ({@code ids-7} is 7).
         *
         * @param hostname the hostname to read, or null for this host's
         * @return this builder
         */
        public Builder fromHostname(String hostname) {
            dropSource().source("hostname");
            return hostname == null ? this : set("hostname", hostname);
        }

        /**
         * The node id from the low bits of an IPv4 address in a stated subnet.
         *
         * @param address the address
         * @param prefixLength the subnet's prefix length
         * @return this builder
         */
        public Builder fromIpv4(String address, int prefixLength) {
            return dropSource().source("ipv4").set("addr", notNull(address, "fromIpv4(address, prefixLength): address"))
                .set("prefix_len", prefixLength);
        }

        /**
         * The bit layout (default 41/10/12).
         *
         * @param layout the layout
         * @return this builder
         */
        public Builder layout(Layout layout) {
            return set("layout", notNull(layout, "layout(layout): layout").wire());
        }

        /**
         * The epoch, Unix ms (default 2024-01-01T00:00:00Z).
         *
         * @param epochMs the epoch
         * @return this builder
         */
        public Builder epochMs(long epochMs) {
            return set("epoch_ms", epochMs);
        }

        /**
         * A lease's slot count (default: every node id of the layout).
         *
         * @param slots how many slots
         * @return this builder
         */
        public Builder slots(long slots) {
            return set("slots", slots);
        }

        /**
         * Who holds the lease, as written into the slot (default: the hostname).
         *
         * @param identity the holder's name
         * @return this builder
         */
        public Builder identity(String identity) {
            return set("identity", notNull(identity, "identity(identity): identity"));
        }

        /**
         * How far ahead the lease's high-water mark, or a fixed node id's mark, is kept, in ms
         * (the core's default 5,000): the longest a successor of a crashed holder waits.
         *
         * @param ms the reserve
         * @return this builder
         */
        public Builder reserveMs(long ms) {
            return set("reserve_ms", ms);
        }

        /**
         * A fixed node id's restart guard: keep a mark on the host ({@link RestartGuard#AUTO},
         * the default unless {@code POLYFLAKE_RESTART_GUARD} says otherwise), require one, or
         * keep none.
         *
         * @param guard the guard
         * @return this builder
         */
        public Builder restartGuard(RestartGuard guard) {
            return set("restart_guard", notNull(guard, "restartGuard(guard): guard").coreName());
        }

        /**
         * Where a fixed node id's mark is kept (default: {@code POLYFLAKE_STATE_DIR}, else the
         * lease directory {@code /var/tmp/polyflake-leases}). Under the lease directory's rules:
         * nothing there is followed, and only this user's own files are written or trusted.
         *
         * @param dir the state directory
         * @return this builder
         */
        public Builder stateDir(Path dir) {
            return set("state_dir", notNull(dir, "stateDir(dir): dir"));
        }

        /**
         * How long a call waits for a fixed node id's restart guard before it is refused with
         * {@link LeaseNotReadyException}, in ms (the core's default 10,000: two reserves).
         *
         * @param ms the longest wait
         * @return this builder
         */
        public Builder maxRestartWaitMs(long ms) {
            return set("max_restart_wait_ms", ms);
        }

        /**
         * The host scope of the node id's claim, static or leased (default:
         * {@code POLYFLAKE_HOST_SCOPE}, else the host's one scope): generators in different
         * scopes may hold the same node id and layout on one host, on purpose (services writing
         * to different tables). At most 40 ASCII letters, digits, {@code .}, {@code _} and
         * {@code -}.
         *
         * @param scope the scope's name
         * @return this builder
         */
        public Builder hostScope(String scope) {
            return set("host_scope", notNull(scope, "hostScope(scope): scope"));
        }

        /**
         * The longest restart guard the lease accepts waiting for, in ms.
         *
         * @param ms the limit
         * @return this builder
         */
        public Builder maxGuardWaitMs(long ms) {
            return set("max_guard_wait_ms", ms);
        }

        /**
         * Heal a lost lease (any store; default false). A lease is lost when its store stops
         * vouching for the slot: an etcd lease revoked or expired, a ZooKeeper session expired,
         * the slot file deleted or replaced, the store restored from an older backup. Healing,
         * the generator takes a new slot in the background (thread {@code polyflake-heal}) as a
         * restarted process would, waits for its restart guard (about one reserve; after a store
         * rollback, until the clock has passed what the lost slot could have issued up to) and
         * issues from it: {@link Snowflake#nodeId()} changes to the new slot, the counters of
         * {@link Snowflake#health()} go on. Meanwhile calls throw {@link LeaseLostException},
         * then wait for the new guard, and {@link Snowflake#waitReady(Duration)} waits through
         * it all. Without healing a lost lease refuses for good and the generator must be built
         * again. Off by default because it changes the node id under its owner and makes calls
         * wait a new restart guard mid-flight; code that reads {@code nodeId()} once, or handles
         * {@code LeaseLostException} by building a new generator, keeps working unchanged.
         * A lease option only: the other node id sources refuse it when built.
         *
         * @param heal whether a lost lease heals
         * @return this builder
         */
        public Builder heal(boolean heal) {
            return set("heal", heal);
        }

        /**
         * The key prefix in etcd or ZooKeeper.
         *
         * @param prefix the prefix
         * @return this builder
         */
        public Builder prefix(String prefix) {
            return set("prefix", notNull(prefix, "prefix(prefix): prefix"));
        }

        /**
         * The remote store's connect timeout, in ms.
         *
         * @param ms the timeout
         * @return this builder
         */
        public Builder connectTimeoutMs(long ms) {
            return set("connect_timeout_ms", ms);
        }

        /**
         * The etcd lease's TTL in seconds.
         *
         * @param seconds the TTL
         * @return this builder
         */
        public Builder ttlSeconds(long seconds) {
            return set("ttl_s", seconds);
        }

        /**
         * The ZooKeeper session timeout, in ms.
         *
         * @param ms the timeout
         * @return this builder
         */
        public Builder sessionTimeoutMs(long ms) {
            return set("session_timeout_ms", ms);
        }

        /**
         * A remote store's TLS or authentication setting by the core's name: {@code ca_file},
         * {@code cert_file}, {@code key_file}, {@code username}, {@code password}.
         *
         * @param name the setting
         * @param value its value
         * @return this builder
         */
        public Builder credential(String name, String value) {
            return set("credential", notNull(name, "credential(name, value): name") + "="
                + notNull(value, "credential(name, value): value"));
        }

        /**
         * Check every setting (in the core) and make the generator; a lease takes its slot here.
         *
         * @return the generator
         */
        public Snowflake build() {
            return new Snowflake(this);
        }
    }
}
