package polyflake

/*
#include "polyflake_cgo.h"
*/
import "C"

import "unsafe"

// Mode is how a generator treats the wall clock.
type Mode uint32

const (
	// Strict never issues a timestamp above the wall clock: a rewind up to the wait budget is
	// waited out, a larger one refused; a spent millisecond sleeps to the next (the default).
	Strict Mode = C.POLYFLAKE_MODE_STRICT
	// Monotonic never waits and never repeats: it borrows from the next millisecond on a rewind
	// or a burst (bounded by WithMaxLeadMs).
	Monotonic Mode = C.POLYFLAKE_MODE_MONOTONIC
)

// String is "strict" or "monotonic".
func (m Mode) String() string {
	if m == Monotonic {
		return "monotonic"
	}
	if m == Strict {
		return "strict"
	}
	return "unknown"
}

// ClockSource is which clock reading a generator takes per ID.
type ClockSource uint32

const (
	// Precise reads CLOCK_REALTIME for every ID (the default).
	Precise ClockSource = C.POLYFLAKE_CLOCK_SOURCE_PRECISE
	// Coarse reads CLOCK_REALTIME_COARSE (about a fifth of the cost) and the precise clock only
	// when a millisecond is spent or the coarse reading is behind the last one issued. Every
	// guarantee holds; an ID's timestamp may be up to one tick (4 ms at HZ=250) older than the
	// call. Health says which source is in effect, and why when the coarse one is not.
	Coarse ClockSource = C.POLYFLAKE_CLOCK_SOURCE_COARSE
)

// String is "precise" or "coarse".
func (s ClockSource) String() string {
	return C.GoString(C.polyflake_clock_source_name(C.uint32_t(s)))
}

// RestartGuard is whether a fixed node id (NodeID, FromEnv, FromHostname, FromIPv4) on the
// system clock keeps a mark on this host, so that its next holder here (a restart, a new
// generator in this process) starts above everything it could have issued.
type RestartGuard uint32

const (
	// RestartGuardDefault is the environment's choice: POLYFLAKE_RESTART_GUARD ("auto",
	// "required" or "off") when set, else RestartGuardAuto (the default).
	RestartGuardDefault RestartGuard = C.POLYFLAKE_RESTART_GUARD_DEFAULT
	// RestartGuardAuto keeps a mark where the state directory allows it; where it does not (a
	// read-only container, another user's directory) it issues without one, says so once on
	// stderr and in Health.RestartGuardNote.
	RestartGuardAuto RestartGuard = C.POLYFLAKE_RESTART_GUARD_AUTO
	// RestartGuardRequired keeps a mark or refuses to make the generator (ErrLeaseStore, naming
	// the directory and the fixes).
	RestartGuardRequired RestartGuard = C.POLYFLAKE_RESTART_GUARD_REQUIRED
	// RestartGuardOff keeps no mark: a successor after a clock stepped back can repeat IDs. For
	// hosts where the node id never outlives a process.
	RestartGuardOff RestartGuard = C.POLYFLAKE_RESTART_GUARD_OFF
)

// options is what New, NewUUIDv7 and NewULID are made from: the settings every generator takes
// (filled with the core's defaults), the Snowflake ones, and the node-id sources named.
type options struct {
	shared       C.polyflake_timeid_config
	clock        *Clock
	layout       *Layout
	epochMs      *int64
	restartGuard RestartGuard
	// the state directory and host scope when set (nil: the environment's, else the defaults)
	stateDir, hostScope *string
	sources             []source
}

func defaults() *options {
	o := &options{}
	C.polyflake_timeid_config_init(&o.shared)
	return o
}

// Option configures New: a node-id source (NodeID, FileLease, Etcd, ZooKeeper, FromEnv,
// FromHostname, FromIPv4), a Snowflake setting (WithLayout, WithEpochMs) or a Setting.
type Option interface {
	apply(*options)
}

// Setting is an Option every generator takes, NewUUIDv7 and NewULID too.
type Setting interface {
	Option
	setting()
}

type option func(*options)

func (f option) apply(o *options) { f(o) }

type setting func(*options)

func (f setting) apply(o *options) { f(o) }
func (setting) setting()           {}

// WithMode is Strict (the default) or Monotonic.
func WithMode(m Mode) Setting {
	return setting(func(o *options) { o.shared.mode = C.uint32_t(m) })
}

// WithMaxWaitMs is strict mode's wait budget (default 5.0): a rewind up to this many ms is
// waited out, a larger one refused; a spent millisecond waits at most max(this, 1) ms.
func WithMaxWaitMs(ms float64) Setting {
	return setting(func(o *options) { o.shared.max_wait_ms = C.double(ms) })
}

// WithMaxLeadMs bounds how far a monotonic generator may run ahead of the wall clock (default
// 5,000: one reserve, so a successor of this node id waits at most that long for its lead);
// past it, ErrLeadLimitExceeded.
func WithMaxLeadMs(ms int64) Setting {
	return setting(func(o *options) {
		o.shared.has_max_lead = 1
		o.shared.max_lead_ms = C.int64_t(ms)
	})
}

// WithoutLeadLimit lets a monotonic generator run ahead of the wall clock without bound (its
// successor on the node id then waits as long as it ran ahead).
func WithoutLeadLimit() Setting {
	return setting(func(o *options) {
		o.shared.has_max_lead = 0
		o.shared.max_lead_ms = 0
	})
}

// WithMaxClockErrorMs refuses to issue (ErrClockUnsynchronized, Health.Status
// "clock_unsynchronized") while the kernel says the system clock is not synchronized or its
// maximum error exceeds ms (1 to 16,000). Default: the kernel's word is reported in
// Health.ClockSync, never a reason to refuse. Checked once a second off the hot path; refused
// with a clock of WithClock (the kernel says nothing of it).
func WithMaxClockErrorMs(ms uint64) Setting {
	return setting(func(o *options) {
		o.shared.has_max_clock_error = 1
		o.shared.max_clock_error_ms = C.uint64_t(ms)
	})
}

// WithMaxForwardStepMs is how far the wall clock may read ahead of the time elapsed since it was
// last trusted before that is a forward STEP (default 60,000): strict mode refuses to issue from
// it (ErrClockJumpedAhead), monotonic mode keeps issuing from the trusted time.
func WithMaxForwardStepMs(ms uint64) Setting {
	return setting(func(o *options) { o.shared.max_forward_step_ms = C.uint64_t(ms) })
}

// WithoutForwardStepCheck turns the forward-step check off.
func WithoutForwardStepCheck() Setting {
	return setting(func(o *options) { o.shared.max_forward_step_ms = C.POLYFLAKE_FORWARD_STEP_OFF })
}

// WithForwardConfirmMs is how long a stepped-ahead clock must hold its new offset before it is
// believed, in ms of elapsed time (default 300,000).
func WithForwardConfirmMs(ms uint64) Setting {
	return setting(func(o *options) { o.shared.forward_confirm_ms = C.uint64_t(ms) })
}

// WithClockSource is Precise (the default) or Coarse.
func WithClockSource(s ClockSource) Setting {
	return setting(func(o *options) { o.shared.clock_source = C.uint32_t(s) })
}

// WithClock makes the generator read c (a test clock) instead of the system clock.
func WithClock(c *Clock) Setting {
	return setting(func(o *options) { o.clock = c })
}

// WithLayout is the Snowflake layout (default LayoutDefault).
func WithLayout(l Layout) Option {
	return option(func(o *options) { o.layout = &l })
}

// WithEpochMs is the epoch in Unix ms (default DefaultEpochMs, 2024-01-01T00:00:00Z).
func WithEpochMs(ms int64) Option {
	return option(func(o *options) { o.epochMs = &ms })
}

// WithRestartGuard is whether a fixed node id keeps its mark on this host (default
// RestartGuardDefault: POLYFLAKE_RESTART_GUARD, else RestartGuardAuto). Leases, and generators
// on a clock of WithClock, keep none (RestartGuardRequired with WithClock: ErrInvalidArgument).
func WithRestartGuard(g RestartGuard) Option {
	return option(func(o *options) { o.restartGuard = g })
}

// WithStateDir is the restart guard's state directory (default: POLYFLAKE_STATE_DIR when set,
// else the lease directory: POLYFLAKE_LEASE_DIR, else /var/tmp/polyflake-leases). Nothing there is followed, and only this
// user's own files are written or trusted: give each service user a directory of its own, and a
// writable volume in a read-only container.
func WithStateDir(dir string) Option {
	return option(func(o *options) { o.stateDir = &dir })
}

// WithHostScope is the host scope of the node id's claim and mark (default:
// POLYFLAKE_HOST_SCOPE when set, else the host's one scope): at most 40 ASCII letters, digits,
// '.', '_' and '-' (ErrInvalidArgument otherwise). Generators in different scopes may hold the
// same node id and layout on one host, on purpose (services writing to different tables).
func WithHostScope(scope string) Option {
	return option(func(o *options) { o.hostScope = &scope })
}

// source makes the generator with its node-id source, from the C config and clock.
type source func(cfg *C.polyflake_config, clock *C.polyflake_clock, out **C.polyflake_generator) error

func withSource(s source) Option {
	return option(func(o *options) { o.sources = append(o.sources, s) })
}

// NodeID is a fixed node id, 0 to 2^NodeBits - 1 (ErrInvalidNodeID otherwise). On this host a
// second live generator with the same node id and layout (any epoch, the same host scope) is
// refused (ErrNodeIDInUse, naming the holder): in this process share the first; give each
// process its own node id, or take one from a lease.
func NodeID(n int64) Option {
	return withSource(func(cfg *C.polyflake_config, k *C.polyflake_clock, out **C.polyflake_generator) error {
		cfg.node_id = C.int64_t(n)
		return check(C.pf_generator_new(cfg, k, out))
	})
}

// FromEnv is the node id in the environment variable name (ErrInvalidNodeSource when unset or
// not a decimal number).
func FromEnv(name string) Option {
	return withSource(func(cfg *C.polyflake_config, k *C.polyflake_clock, out **C.polyflake_generator) error {
		cs, err := cString(name, "the environment variable's name", ErrInvalidNodeSource)
		if err != nil {
			return err
		}
		defer C.free(unsafe.Pointer(cs))
		return check(C.pf_generator_new_from_env(cfg, cs, k, out))
	})
}

// FromHostname is the ordinal at the end of a StatefulSet-style hostname ("ids-7" is 7); ""
// means this host's name.
func FromHostname(hostname string) Option {
	return withSource(func(cfg *C.polyflake_config, k *C.polyflake_clock, out **C.polyflake_generator) error {
		var cs *C.char
		if hostname != "" {
			var err error
			if cs, err = cString(hostname, "the hostname", ErrInvalidNodeSource); err != nil {
				return err
			}
			defer C.free(unsafe.Pointer(cs))
		}
		return check(C.pf_generator_new_from_hostname(cfg, cs, k, out))
	})
}

// FromIPv4 is the low 32 - prefixLen bits of the IPv4 address addr ("10.1.7.9"), in the one
// subnet addr/prefixLen every generator of the fleet lives in: a /22 or narrower for 10 node bits
// (ErrInvalidNodeSource otherwise).
func FromIPv4(addr string, prefixLen int64) Option {
	return withSource(func(cfg *C.polyflake_config, k *C.polyflake_clock, out **C.polyflake_generator) error {
		cs, err := cString(addr, "the IPv4 address", ErrInvalidNodeSource)
		if err != nil {
			return err
		}
		defer C.free(unsafe.Pointer(cs))
		return check(C.pf_generator_new_from_ipv4(cfg, cs, C.int64_t(prefixLen), k, out))
	})
}

// leaseOptions are every lease's options, filled with the core's defaults: the settings every
// lease shares once (common, copied into the chosen kind's C options at the call), each kind's
// own fields in its C options.
type leaseOptions struct {
	common C.polyflake_lease_common
	file   C.polyflake_file_lease_options
	etcd   C.polyflake_etcd_options
	zk     C.polyflake_zookeeper_options
	// the remote store's connect timeout when set (nil: the store's default)
	connectTimeoutMs *uint64
	// strings to set, kept until the call (C copies of them are made then)
	identity, prefix                              *string
	caFile, certFile, keyFile, username, password *string
}

// LeaseOption is an option of every lease: FileLease, Etcd and ZooKeeper.
type LeaseOption interface {
	RemoteOption
	file(*leaseOptions)
}

// RemoteOption is an option of both remote stores' leases, Etcd and ZooKeeper.
type RemoteOption interface {
	EtcdOption
	ZooKeeperOption
}

// EtcdOption is an option of Etcd.
type EtcdOption interface {
	etcd(*leaseOptions)
}

// ZooKeeperOption is an option of ZooKeeper.
type ZooKeeperOption interface {
	zookeeper(*leaseOptions)
}

type leaseOption func(*leaseOptions)

func (f leaseOption) file(o *leaseOptions)      { f(o) }
func (f leaseOption) etcd(o *leaseOptions)      { f(o) }
func (f leaseOption) zookeeper(o *leaseOptions) { f(o) }

type remoteOption func(*leaseOptions)

func (f remoteOption) etcd(o *leaseOptions)      { f(o) }
func (f remoteOption) zookeeper(o *leaseOptions) { f(o) }

type etcdOption func(*leaseOptions)

func (f etcdOption) etcd(o *leaseOptions) { f(o) }

type zookeeperOption func(*leaseOptions)

func (f zookeeperOption) zookeeper(o *leaseOptions) { f(o) }

// Slots caps the slots (node ids) a lease uses, 1 to 2^NodeBits (default: every node id).
func Slots(n uint32) LeaseOption {
	return leaseOption(func(o *leaseOptions) { o.common.slots = C.uint32_t(n) })
}

// Identity is a stable name whose previous slot is tried first (default: this host's name).
func Identity(name string) LeaseOption {
	return leaseOption(func(o *leaseOptions) { o.identity = &name })
}

// ReserveMs is how far ahead of the clock the high-water mark R is kept (default 5,000): the
// longest a successor of a crashed holder, or a new slot, waits before its first ID.
func ReserveMs(ms uint64) LeaseOption {
	return leaseOption(func(o *leaseOptions) { o.common.reserve_ms = C.uint64_t(ms) })
}

// MaxGuardWaitMs: a free slot whose restart guard is longer than this (default 60,000) is taken
// only when no other slot is free.
func MaxGuardWaitMs(ms uint64) LeaseOption {
	return leaseOption(func(o *leaseOptions) { o.common.max_guard_wait_ms = C.uint64_t(ms) })
}

// Heal makes the generator heal a lost lease by itself (default false). When the store says the
// slot is no longer ours (an etcd lease revoked or expired, a ZooKeeper session expired, a slot
// file deleted or replaced, the store restored from an older backup), it takes a new slot in the
// background, behind that slot's restart guard, and goes on issuing from it as a restarted
// process would: NodeID then returns the new slot, the counters of Health go on, WaitReady waits
// through the heal, and calls meanwhile fail with ErrLeaseLost, then ErrLeaseNotReady while the
// new slot's guard waits (about one ReserveMs; Health.Status "restart_guard"). After a
// store rollback it takes the new slot only once the clock has passed the lost slot's R. Off by
// default because it changes the node id under its owner and makes calls wait a new restart
// guard: off, a lost lease is ErrLeaseLost for good, and code that makes a new generator then
// keeps working.
func Heal(on bool) LeaseOption {
	return leaseOption(func(o *leaseOptions) { o.common.heal = C.bool(on) })
}

// Prefix is the etcd key prefix or the ZooKeeper znode path (default "/polyflake"; for
// ZooKeeper an absolute path): one per ID space (epoch and layout).
func Prefix(p string) RemoteOption {
	return remoteOption(func(o *leaseOptions) { o.prefix = &p })
}

// TTLSeconds is the etcd lease's time to live (default 10): a crashed holder's slot frees after it.
func TTLSeconds(s int64) EtcdOption {
	return etcdOption(func(o *leaseOptions) { o.etcd.ttl_s = C.int64_t(s) })
}

// SessionTimeoutMs is the ZooKeeper session timeout asked of the ensemble (default 10,000): the
// lease's time to live, bounded by the ensemble (by default 2 to 20 ticks of its tickTime).
func SessionTimeoutMs(ms uint64) ZooKeeperOption {
	return zookeeperOption(func(o *leaseOptions) { o.zk.session_timeout_ms = C.uint64_t(ms) })
}

// ConnectTimeoutMs bounds connecting to the store and each request (default 2,000).
func ConnectTimeoutMs(ms uint64) RemoteOption {
	return remoteOption(func(o *leaseOptions) { o.connectTimeoutMs = &ms })
}

// CAFile is a PEM file of the CA certificate(s) the servers' certificates must chain to: it
// turns TLS on. Unset: POLYFLAKE_ETCD_CA_FILE or POLYFLAKE_ZOOKEEPER_CA_FILE, else plain TCP.
func CAFile(path string) RemoteOption {
	return remoteOption(func(o *leaseOptions) { o.caFile = &path })
}

// CertFile is a PEM file of this client's certificate (with KeyFile), for servers that require
// one. Unset: POLYFLAKE_{ETCD,ZOOKEEPER}_CERT_FILE.
func CertFile(path string) RemoteOption {
	return remoteOption(func(o *leaseOptions) { o.certFile = &path })
}

// KeyFile is a PEM file of the private key of CertFile. Unset: POLYFLAKE_{ETCD,ZOOKEEPER}_KEY_FILE.
func KeyFile(path string) RemoteOption {
	return remoteOption(func(o *leaseOptions) { o.keyFile = &path })
}

// Username is the user to authenticate as (etcd authentication; ZooKeeper digest, the znodes
// polyflake creates then writable by this user only). Unset: POLYFLAKE_{ETCD,ZOOKEEPER}_USERNAME.
func Username(name string) RemoteOption {
	return remoteOption(func(o *leaseOptions) { o.username = &name })
}

// Password is the password of Username. Unset: POLYFLAKE_{ETCD,ZOOKEEPER}_PASSWORD; prefer that
// variable (or a file you read) to a literal in code.
func Password(password string) RemoteOption {
	return remoteOption(func(o *leaseOptions) { o.password = &password })
}

func newLeaseOptions() *leaseOptions {
	o := &leaseOptions{}
	C.polyflake_file_lease_options_init(&o.file)
	C.polyflake_etcd_options_init(&o.etcd)
	C.polyflake_zookeeper_options_init(&o.zk)
	o.common = o.file.common
	return o
}

// cStrings holds the C strings of one constructor call until it returns.
type cStrings []*C.char

func (s *cStrings) add(text, what string) (*C.char, error) {
	cs, err := cString(text, what, ErrInvalidNodeSource)
	if err == nil {
		*s = append(*s, cs)
	}
	return cs, err
}

func (s cStrings) free() {
	for _, cs := range s {
		C.free(unsafe.Pointer(cs))
	}
}

// optional is the C string of an option that was set, nil for one left unset (the default).
func (s *cStrings) optional(text *string, what string) (*C.char, error) {
	return s.text(text, what, ErrInvalidNodeSource)
}

// text is optional with the error kind of a NUL byte in it.
func (s *cStrings) text(text *string, what string, kind *Error) (*C.char, error) {
	if text == nil {
		return nil, nil
	}
	cs, err := cString(*text, what, kind)
	if err == nil {
		*s = append(*s, cs)
	}
	return cs, err
}

// commonC is the C form of the settings every lease shares, the identity's string among s
// (nil: the default, this host's name).
func (o *leaseOptions) commonC(s *cStrings) (c C.polyflake_lease_common, err error) {
	c = o.common
	c.identity, err = s.optional(o.identity, "the lease identity")
	return c, err
}

// remoteC writes the connect timeout when set, the C prefix and the TLS and credential strings
// into a remote store's C options (nil: unset).
func (o *leaseOptions) remoteC(s *cStrings, store *C.polyflake_remote_store) (err error) {
	if o.connectTimeoutMs != nil {
		store.connect_timeout_ms = C.uint64_t(*o.connectTimeoutMs)
	}
	prefix, c := &store.prefix, &store.credentials
	fields := [6]struct {
		dst  **C.char
		v    *string
		what string
	}{
		{prefix, o.prefix, "the prefix"}, {&c.ca_file, o.caFile, "the CA file"},
		{&c.cert_file, o.certFile, "the certificate file"}, {&c.key_file, o.keyFile, "the key file"},
		{&c.username, o.username, "the user name"}, {&c.password, o.password, "the password"},
	}
	for _, f := range fields {
		if *f.dst, err = s.optional(f.v, f.what); err != nil {
			return err
		}
	}
	return nil
}

// FileLease leases the node id from a directory of slot files (one host, no server; the kernel
// frees a slot when its holder dies). Every process that shares node ids uses the same directory,
// on a local file system. A new slot, or one a crashed holder left, issues nothing until its
// restart guard has passed (ErrLeaseNotReady meanwhile): call WaitReady before the first ID.
// Close frees the slot. Errors: ErrNoFreeSlot, ErrIDSpaceMismatch, ErrLeaseStore,
// ErrInvalidNodeSource.
func FileLease(dir string, opts ...LeaseOption) Option {
	return withSource(func(cfg *C.polyflake_config, k *C.polyflake_clock, out **C.polyflake_generator) error {
		o := newLeaseOptions()
		for _, opt := range opts {
			opt.file(o)
		}
		var strs cStrings
		defer strs.free()
		var err error
		if o.file.dir, err = strs.add(dir, "the lease directory"); err != nil {
			return err
		}
		if o.file.common, err = o.commonC(&strs); err != nil {
			return err
		}
		return check(C.pf_generator_new_file_lease(cfg, &o.file, k, out))
	})
}

// Etcd leases the node id from an etcd v3 cluster (a fleet): endpoints are its client URLs such
// as "http://10.0.0.5:2379". Connecting blocks (each request up to ConnectTimeoutMs). An
// unreachable store lets the generator issue up to its high-water mark, then ErrLeaseExpired; a
// lost or revoked etcd lease stops it for good (ErrLeaseLost), or heals with Heal(true).
func Etcd(endpoints []string, opts ...EtcdOption) Option {
	return withSource(func(cfg *C.polyflake_config, k *C.polyflake_clock, out **C.polyflake_generator) error {
		o := newLeaseOptions()
		for _, opt := range opts {
			opt.etcd(o)
		}
		var strs cStrings
		defer strs.free()
		var err error
		if o.etcd.common, err = o.commonC(&strs); err != nil {
			return err
		}
		if err = o.remoteC(&strs, &o.etcd.store); err != nil {
			return err
		}
		// The array of endpoint pointers lives in C memory: the options passed to C may hold no
		// Go pointer.
		list := C.malloc(C.size_t(len(endpoints)+1) * C.size_t(unsafe.Sizeof(uintptr(0))))
		defer C.free(list)
		ptrs := unsafe.Slice((**C.char)(list), len(endpoints)+1)
		for i, e := range endpoints {
			if ptrs[i], err = strs.add(e, "an etcd endpoint"); err != nil {
				return err
			}
		}
		o.etcd.endpoints = (**C.char)(list)
		o.etcd.endpoint_count = C.size_t(len(endpoints))
		return check(C.pf_generator_new_etcd(cfg, &o.etcd, k, out))
	})
}

// ZooKeeper leases the node id from a ZooKeeper ensemble (3.5+): ensemble is its connect string,
// "host:port" or "host:port,host:port,...". The slot is an ephemeral znode {prefix}/slot/NNNN
// that lives as long as this process's session (SessionTimeoutMs is the lease's time to live),
// R a persistent znode {prefix}/hwm/NNNN. Connecting blocks (up to ConnectTimeoutMs). An
// unreachable ensemble lets the generator issue up to R, then ErrLeaseExpired; an expired
// session or a deleted slot znode stops it for good (ErrLeaseLost), or heals with Heal(true).
// Errors: ErrInvalidNodeSource (an empty ensemble, a prefix without a leading slash),
// ErrLeaseStore (unreachable, TLS or credentials refused, naming the cause), ErrNoFreeSlot,
// ErrIDSpaceMismatch.
func ZooKeeper(ensemble string, opts ...ZooKeeperOption) Option {
	return withSource(func(cfg *C.polyflake_config, k *C.polyflake_clock, out **C.polyflake_generator) error {
		o := newLeaseOptions()
		for _, opt := range opts {
			opt.zookeeper(o)
		}
		var strs cStrings
		defer strs.free()
		var err error
		if o.zk.ensemble, err = strs.add(ensemble, "the ZooKeeper ensemble"); err != nil {
			return err
		}
		if o.zk.common, err = o.commonC(&strs); err != nil {
			return err
		}
		if err = o.remoteC(&strs, &o.zk.store); err != nil {
			return err
		}
		return check(C.pf_generator_new_zookeeper(cfg, &o.zk, k, out))
	})
}
