package polyflake

/*
#include "polyflake_cgo.h"
*/
import "C"

import (
	"context"
	"fmt"
	"runtime"
	"unsafe"
)

// Generator issues unique, time-sortable 64-bit IDs for one node id. It is safe for concurrent
// use: make one per node and share it between goroutines (as a *Generator). Close stops it (a
// lease frees its slot); the handle is freed when no Generator that refers to it is reachable.
//
// Do not copy a Generator: `go vet` reports a copy (copylocks). A copy made anyway shares the
// original's handle, so it is safe: it issues from the same generator, and after Close it fails
// with ErrGeneratorClosed like the original.
type Generator struct {
	_       noCopy
	h       *generatorCell
	nodeID  int64
	layout  Layout
	epochMs int64
	mode    Mode
}

// noCopy makes `go vet` (copylocks) report a copy of the struct that holds it: its Lock and
// Unlock do nothing.
type noCopy struct{}

// Lock is for go vet only.
func (*noCopy) Lock() {}

// Unlock is for go vet only.
func (*noCopy) Unlock() {}

// generatorCell holds the C handle apart from the Generator, allocated once: copies of a
// Generator share it, and its finalizer frees the handle once no copy can reach it.
type generatorCell struct {
	p *C.polyflake_generator
	// intr orders interrupts against the Context calls they cut (see callContext).
	intr interrupts
}

// ptr is the handle (NULL for a zero Generator: the library refuses it with ErrNullParameter).
func (g *Generator) ptr() *C.polyflake_generator {
	if g == nil || g.h == nil {
		return nil
	}
	return g.h.p
}

// handle is a library handle as the per-ID calls take it: an integer, so that cgo does not check
// it for Go pointers on every call (polyflake_cgo.h). The caller keeps the handle's owner alive
// (runtime.KeepAlive) until the call has returned, as for a pointer.
func handle(p unsafe.Pointer) C.uintptr_t { return C.uintptr_t(uintptr(p)) }

// intr is the generator's record of interrupts (a fresh one for a zero value).
func (g *Generator) intr() *interrupts {
	if g == nil || g.h == nil {
		return new(interrupts)
	}
	return &g.h.intr
}

// cell is what the calls keep alive (runtime.KeepAlive) until the library has returned.
func (g *Generator) cell() *generatorCell {
	if g == nil {
		return nil
	}
	return g.h
}

// New makes a generator whose node id comes from exactly one source (NodeID, FileLease, Etcd,
// ZooKeeper, FromEnv, FromHostname or FromIPv4), with the settings given; every setting left out
// is the core's default. Every check is the core's, made here and never later. Close it when
// done (`defer g.Close()`): a fixed node id's next holder on this host then starts at once.
//
//	g, err := polyflake.New(polyflake.NodeID(37), polyflake.WithMode(polyflake.Monotonic))
//	if err != nil { ... }
//	defer g.Close()
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
	cfg.has_max_clock_error = o.shared.has_max_clock_error
	cfg.max_clock_error_ms = o.shared.max_clock_error_ms
	cfg.restart_guard = C.uint32_t(o.restartGuard)
	if o.layout != nil {
		cfg.layout = o.layout.c()
	}
	if o.epochMs != nil {
		cfg.epoch_ms = C.int64_t(*o.epochMs)
	}
	var strs cStrings
	defer strs.free()
	var err error
	if cfg.state_dir, err = strs.text(o.stateDir, "the state directory", ErrInvalidArgument); err != nil {
		return nil, err
	}
	if cfg.host_scope, err = strs.text(o.hostScope, "the host scope", ErrInvalidArgument); err != nil {
		return nil, err
	}
	var p *C.polyflake_generator
	err = o.sources[0](&cfg, o.clock.ptr(), &p)
	runtime.KeepAlive(o.clock)
	if err != nil {
		return nil, err
	}
	var held C.polyflake_config
	C.polyflake_generator_config(p, &held)
	h := &generatorCell{p: p}
	runtime.SetFinalizer(h, func(h *generatorCell) { C.polyflake_generator_free(h.p) })
	g := &Generator{h: h, nodeID: int64(held.node_id), layout: layoutOf(held.layout),
		epochMs: int64(held.epoch_ms), mode: Mode(held.mode)}
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
// from a forward step; monotonic mode borrows ahead instead and refuses with
// ErrLeadLimitExceeded past its lead limit. A fixed node id's first call after its previous
// holder on this host ended without Close (or with the clock stepped back under what it issued)
// waits for the restart guard, up to 10 s (Health.Status "restart_guard" meanwhile), beyond that
// ErrLeaseNotReady. Also ErrTimestampOverflow, ErrGeneratorClosed, ErrClockUnsynchronized
// (WithMaxClockErrorMs), and a lease's ErrLeaseNotReady, ErrLeaseExpired, ErrLeaseLost;
// ErrInterrupted when Interrupt cuts its wait.
func (g *Generator) NextID() (int64, error) {
	o := C.pf_next_id(handle(unsafe.Pointer(g.ptr())))
	runtime.KeepAlive(g.cell())
	if o.s.r != C.POLYFLAKE_RESULT_OK {
		return 0, check(o.s)
	}
	return int64(o.id), nil
}

// NextIDContext is NextID whose wait ends with ctx: see NextIDsContext.
func (g *Generator) NextIDContext(ctx context.Context) (int64, error) {
	var id int64
	err := callContext(ctx, g.intr(), g.libInterrupt, func(timeoutMs uint64) error {
		o := C.pf_next_id_within(g.ptr(), C.uint64_t(timeoutMs))
		runtime.KeepAlive(g.cell())
		id = int64(o.id)
		return check(o.s)
	})
	return id, err
}

// idsPtr is where a batch of len(buf) IDs goes (a dummy for an empty one: C refuses NULL).
func idsPtr(buf []int64) *C.int64_t {
	if len(buf) > 0 {
		return (*C.int64_t)(unsafe.Pointer(&buf[0]))
	}
	return &emptyIDs
}

// NextIDs fills buf with increasing IDs in one call (len(buf) at most MaxBatch). Monotonic mode
// reserves the whole batch at once; strict mode fills the current millisecond and waits into the
// next ones (about len(buf) / 2^SequenceBits ms in all: bound it with NextIDsContext). On any
// error buf is left untouched.
func (g *Generator) NextIDs(buf []int64) error {
	err := check(C.pf_next_ids(g.ptr(), idsPtr(buf), C.size_t(len(buf))))
	runtime.KeepAlive(g.cell())
	return err
}

// NextIDsContext is NextIDs whose waits end with ctx. Its deadline bounds the call (checked
// between the library's wait slices, at most 20 ms apart); its cancellation cuts the call with
// Interrupt, which also cuts the other calls waiting on this generator at that moment: a plain
// call among them fails with ErrInterrupted; a Context call whose own context is still live
// starts again (safe: a cut call issued nothing, and what it had reserved is never issued). A
// call cut by its context fails with a *ContextError matching both ctx.Err() and ErrInterrupted
// (errors.Is), buf untouched; a context already done fails with ctx.Err() before anything is
// asked of the library. An explicit Interrupt stops Context calls too (ErrInterrupted).
func (g *Generator) NextIDsContext(ctx context.Context, buf []int64) error {
	return callContext(ctx, g.intr(), g.libInterrupt, func(timeoutMs uint64) error {
		err := check(C.pf_next_ids_within(g.ptr(), idsPtr(buf), C.size_t(len(buf)), C.uint64_t(timeoutMs)))
		runtime.KeepAlive(g.cell())
		return err
	})
}

// Interrupt cuts short every call on this generator that is in flight now, from any goroutine:
// each one that waits (a strict rewind, a spent millisecond, a batch spanning milliseconds) fails
// with ErrInterrupted within 20 ms, having issued nothing; calls begun afterwards are not
// affected. Context calls cut by it fail too (their context's cancellation restarts only the
// other Context calls it cut: see NextIDsContext).
func (g *Generator) Interrupt() {
	g.intr().hardInterrupt(g.libInterrupt)
}

// libInterrupt asks the library to cut the calls in flight.
func (g *Generator) libInterrupt() {
	C.polyflake_generator_interrupt(g.ptr())
	runtime.KeepAlive(g.cell())
}

// emptyIDs is where an empty batch points (C refuses NULL even for 0 IDs).
var emptyIDs C.int64_t

// Decode splits an ID with this generator's layout and epoch. Errors: ErrInvalidID.
func (g *Generator) Decode(id int64) (Decoded, error) {
	var d C.polyflake_decoded
	err := check(C.pf_generator_decode(g.ptr(), C.int64_t(id), &d))
	runtime.KeepAlive(g.cell())
	if err != nil {
		return Decoded{}, err
	}
	return decodedOf(d), nil
}

// WaitReady waits, up to timeoutMs, while a restart guard holds: a lease's, or a fixed node id's
// mark on this host (its previous holder may have issued up to a time the clock has not
// reached; NextID waits for that by itself too). nil at once when there is nothing to wait for
// (always on a clock of WithClock). ErrLeaseNotReady if the guard still holds at the deadline;
// ErrGeneratorClosed, ErrLeaseLost at once (a lease with Heal(true) waits through its heal).
func (g *Generator) WaitReady(timeoutMs uint64) error {
	err := check(C.pf_wait_ready(g.ptr(), C.uint64_t(timeoutMs)))
	runtime.KeepAlive(g.cell())
	return err
}

// Close stops the generator for good: every later call fails with ErrGeneratorClosed, Health
// says "closed", its node id is free for a new generator, a lease frees its slot, and a fixed
// node id leaves a clean mark (its next holder on this host starts at once). Closing twice is
// fine; a call in flight on another goroutine either issues before the close or fails. Go runs
// no C exit handlers (os.Exit, a return from main): only Close leaves the mark clean, so
// `defer g.Close()` where the generator is made.
func (g *Generator) Close() error {
	err := check(C.pf_status{r: C.polyflake_generator_close(g.ptr())})
	runtime.KeepAlive(g.cell())
	return err
}

// Health is a snapshot of the generator's state and counters (it reads the clock once).
func (g *Generator) Health() Health {
	var h C.polyflake_health_snapshot
	r := C.polyflake_health(g.ptr(), &h)
	runtime.KeepAlive(g.cell())
	return healthOf(&h, r)
}

// NodeID is the node id the generator holds (for a lease: its slot; after a heal, the new slot).
// Every node id of this package is an int64: this one, the NodeID option's, Decoded.NodeID,
// Health.NodeID, LeaseHealth.Slot, Compose's; one compares with another, or goes back into
// NodeID, as it is.
func (g *Generator) NodeID() int64 {
	var held C.polyflake_config
	r := C.polyflake_generator_config(g.ptr(), &held)
	runtime.KeepAlive(g.cell())
	if r != C.POLYFLAKE_RESULT_OK {
		return g.nodeID
	}
	return int64(held.node_id)
}

// Layout is the generator's layout.
func (g *Generator) Layout() Layout { return g.layout }

// EpochMs is the generator's epoch in Unix ms.
func (g *Generator) EpochMs() int64 { return g.epochMs }

// Mode is Strict or Monotonic.
func (g *Generator) Mode() Mode { return g.mode }
