package polyflake

/*
#include "polyflake_cgo.h"
*/
import "C"

import (
	"runtime"
	"runtime/cgo"
	"unsafe"
)

// Clock is a clock instead of the system clock (a polyflake_clock handle), passed with
// WithClock: a test clock (a manual one that moves only when told to, or a scripted one that
// returns prepared readings), whose generators are exempt from the one-generator-per-node-id
// rule, or a user clock (NewUserClock). Generators on it keep their own reference. It is freed
// when no Clock that refers to it is reachable. Do not copy one (go vet reports it); a copy
// shares the handle.
type Clock struct {
	_ noCopy
	h *clockCell
}

// clockCell holds the C handle apart, shared by copies; its finalizer frees the handle.
type clockCell struct {
	p *C.polyflake_clock
}

func newClock(p *C.polyflake_clock, err error) *Clock {
	if err != nil {
		// Only a bug inside the library can refuse to make a clock (ErrPanic).
		panic(err)
	}
	h := &clockCell{p}
	runtime.SetFinalizer(h, func(h *clockCell) { C.polyflake_clock_free(h.p) })
	return &Clock{h: h}
}

// NewManualClock is a clock reading startMs (Unix ms) whose elapsed-time reading starts at 0.
func NewManualClock(startMs int64) *Clock {
	var p *C.polyflake_clock
	r := C.polyflake_manual_clock_new(C.int64_t(startMs), &p)
	return newClock(p, check(C.pf_status{r: r}))
}

// NewScriptedClock is a clock returning values in order, then the last plus 1, 2, ... (one ms
// per read, each read also one ms of elapsed time). The values are copied.
func NewScriptedClock(values []int64) *Clock {
	var first *C.int64_t
	if len(values) > 0 {
		first = (*C.int64_t)(unsafe.Pointer(&values[0]))
	}
	var p *C.polyflake_clock
	r := C.polyflake_scripted_clock_new(first, C.size_t(len(values)), &p)
	return newClock(p, check(C.pf_status{r: r}))
}

// NewUserClock is a clock that reads now, your own time source that follows real time (PTP, a
// GPS receiver, a clock read from another machine), in Unix ms. now is called from any
// goroutine or thread that calls a generator on it (and a lease's renewal thread): it must be
// safe for concurrent use. An error from it fails that call with ErrClockFailed carrying its
// text. Its times are not the host's: a generator on it holds its node id in this process only
// (a second one here is ErrNodeIDInUse) and keeps no restart-guard mark, so another process with
// the same node id on its own user clock runs; WithMaxClockErrorMs is refused with it. To drive
// time by hand in a test, use NewManualClock.
func NewUserClock(now func() (int64, error)) *Clock {
	h := cgo.NewHandle(userClockFunc(now))
	var p *C.polyflake_clock
	// The library deletes the handle (pfGoClockFree) when the clock and its generators are gone.
	err := check(C.pf_user_clock_new(C.uintptr_t(h), &p))
	return newClock(p, err)
}

// manual runs one of the manual-clock calls; another kind of clock refuses with
// ErrInvalidArgument.
func (c *Clock) manual(s C.pf_status) error {
	runtime.KeepAlive(c.h)
	return check(s)
}

// Set STEPS the wall reading to ms (backwards is a rewind; elapsed time does not move).
func (c *Clock) Set(ms int64) error { return c.manual(C.pf_manual_clock_set(c.ptr(), C.int64_t(ms))) }

// Advance STEPS the wall reading by ms (negative: back); elapsed time does not move.
func (c *Clock) Advance(ms int64) error {
	return c.manual(C.pf_manual_clock_advance(c.ptr(), C.int64_t(ms)))
}

// Elapse lets ms pass: the wall and the elapsed-time readings both move (never a forward step).
func (c *Clock) Elapse(ms uint64) error {
	return c.manual(C.pf_manual_clock_elapse(c.ptr(), C.uint64_t(ms)))
}

// SetTickMs models a coarse clock: from now on the clock's coarse reading (what
// WithClockSource(Coarse) reads) is the wall reading rounded down to a multiple of ms. Set it
// before making a generator on the clock.
func (c *Clock) SetTickMs(ms int64) error {
	return c.manual(C.pf_manual_clock_set_tick_ms(c.ptr(), C.int64_t(ms)))
}

// Get is the wall reading.
func (c *Clock) Get() (int64, error) {
	var ms C.int64_t
	err := c.manual(C.pf_manual_clock_get(c.ptr(), &ms))
	return int64(ms), err
}

// ptr is the handle, or NULL (the system clock) for a nil *Clock.
func (c *Clock) ptr() *C.polyflake_clock {
	if c == nil || c.h == nil {
		return nil
	}
	return c.h.p
}
