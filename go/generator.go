package polyflake

/*
#include "polyflake_cgo.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Generator issues unique, time-sortable 64-bit IDs for one node id. It is safe for concurrent
// use: make one per node and share it between goroutines. Close stops it (a lease frees its
// slot); the handle is freed when the Generator is no longer reachable.
type Generator struct {
	p       *C.polyflake_generator
	nodeID  int64
	layout  Layout
	epochMs int64
	mode    Mode
}

// New makes a generator whose node id comes from exactly one source (NodeID, FileLease, Etcd,
// FromEnv, FromHostname or FromIPv4), with the settings given; every setting left out is the
// core's default. Every check is the core's, made here and never later.
//
//	g, err := polyflake.New(polyflake.NodeID(37), polyflake.WithMode(polyflake.Monotonic))
func New(opts ...Option) (*Generator, error) {
	o := defaults()
	for _, opt := range opts {
		opt.apply(o)
	}
	if len(o.sources) != 1 {
		return nil, refuse(ErrInvalidNodeSource, fmt.Sprintf(
			"%d node-id sources given: give exactly one (NodeID, FileLease, Etcd, FromEnv, FromHostname, FromIPv4)",
			len(o.sources)))
	}
	var cfg C.polyflake_config
	C.polyflake_config_init(&cfg)
	cfg.mode = o.shared.mode
	cfg.max_wait_ms = o.shared.max_wait_ms
	cfg.has_max_lead = o.shared.has_max_lead
	cfg.max_lead_ms = o.shared.max_lead_ms
	cfg.max_forward_step_ms = o.shared.max_forward_step_ms
	cfg.forward_confirm_ms = o.shared.forward_confirm_ms
	cfg.clock_source = o.shared.clock_source
	if o.layout != nil {
		cfg.layout = o.layout.c()
	}
	if o.epochMs != nil {
		cfg.epoch_ms = C.int64_t(*o.epochMs)
	}
	var p *C.polyflake_generator
	err := o.sources[0](&cfg, o.clock.ptr(), &p)
	runtime.KeepAlive(o.clock)
	if err != nil {
		return nil, err
	}
	var held C.polyflake_config
	C.polyflake_generator_config(p, &held)
	g := &Generator{p, int64(held.node_id), layoutOf(held.layout), int64(held.epoch_ms), Mode(held.mode)}
	runtime.SetFinalizer(g, func(g *Generator) { C.polyflake_generator_free(g.p) })
	return g, nil
}

// MustNew is New that panics on an error: for a generator made once at start-up.
func MustNew(opts ...Option) *Generator {
	g, err := New(opts...)
	if err != nil {
		panic(err)
	}
	return g
}

// NextID issues one ID: positive, and larger than every ID this generator issued before.
//
// Strict mode may wait (at most the wait budget for a rewind, max(budget, 1) ms for a spent
// millisecond) and refuses with ErrClockMovedBackwards past that, and with ErrClockJumpedAhead
// from a forward step; monotonic mode never waits and refuses with ErrLeadLimitExceeded past its
// lead limit. Also ErrTimestampOverflow, ErrGeneratorClosed, and a lease's ErrLeaseNotReady,
// ErrLeaseExpired, ErrLeaseLost.
func (g *Generator) NextID() (int64, error) {
	o := C.pf_next_id(g.p)
	runtime.KeepAlive(g)
	if o.s.r != C.POLYFLAKE_RESULT_OK {
		return 0, check(o.s)
	}
	return int64(o.id), nil
}

// NextIDs fills buf with increasing IDs in one call (len(buf) at most MaxBatch). Monotonic mode
// reserves the whole batch at once; strict mode fills the current millisecond and waits into the
// next ones. On any error buf is left untouched.
func (g *Generator) NextIDs(buf []int64) error {
	var ptr *C.int64_t
	if len(buf) > 0 {
		ptr = (*C.int64_t)(unsafe.Pointer(&buf[0]))
	} else {
		ptr = &emptyIDs
	}
	err := check(C.pf_next_ids(g.p, ptr, C.size_t(len(buf))))
	runtime.KeepAlive(g)
	return err
}

// emptyIDs is where an empty batch points (C refuses NULL even for 0 IDs).
var emptyIDs C.int64_t

// Decode splits an ID with this generator's layout and epoch. Errors: ErrInvalidID.
func (g *Generator) Decode(id int64) (Decoded, error) {
	var d C.polyflake_decoded
	err := check(C.pf_generator_decode(g.p, C.int64_t(id), &d))
	runtime.KeepAlive(g)
	if err != nil {
		return Decoded{}, err
	}
	return decodedOf(d), nil
}

// WaitReady waits, up to timeoutMs, while a lease's restart guard holds; nil at once when there
// is nothing to wait for (always, without a lease). ErrLeaseNotReady if the guard still holds at
// the deadline; ErrGeneratorClosed, ErrLeaseLost at once.
func (g *Generator) WaitReady(timeoutMs uint64) error {
	err := check(C.pf_wait_ready(g.p, C.uint64_t(timeoutMs)))
	runtime.KeepAlive(g)
	return err
}

// Close stops the generator for good: every later call fails with ErrGeneratorClosed, Health
// says "closed", its node id is free for a new generator, and a lease frees its slot. Closing
// twice is fine; a call in flight on another goroutine either issues before the close or fails.
func (g *Generator) Close() error {
	err := check(C.pf_status{r: C.polyflake_generator_close(g.p)})
	runtime.KeepAlive(g)
	return err
}

// Health is a snapshot of the generator's state and counters (it reads the clock once).
func (g *Generator) Health() Health {
	var h C.polyflake_health_snapshot
	r := C.polyflake_health(g.p, &h)
	runtime.KeepAlive(g)
	return healthOf(&h, r)
}

// NodeID is the node id the generator holds (for a lease: its slot).
func (g *Generator) NodeID() int64 { return g.nodeID }

// Layout is the generator's layout.
func (g *Generator) Layout() Layout { return g.layout }

// EpochMs is the generator's epoch in Unix ms.
func (g *Generator) EpochMs() int64 { return g.epochMs }

// Mode is Strict or Monotonic.
func (g *Generator) Mode() Mode { return g.mode }
