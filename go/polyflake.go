// Package polyflake mints unique, time-sortable IDs in-process: 64-bit Snowflake IDs (timestamp,
// node id, sequence), UUIDv7 (RFC 9562) and ULID, all from polyflake's one Rust core through its
// C ABI (include/polyflake.h, libpolyflake). Every rule that keeps IDs unique (the clock-rewind
// guard, sequence exhaustion, one node id per generator, leases, fork safety) lives in that core;
// this package converts arguments, results and errors, nothing more.
//
// The library is found with pkg-config: point PKG_CONFIG_PATH at the directory holding
// polyflake.pc (the SDK's lib/pkgconfig, or the release directory's pkgconfig after
// `make build-c`). By default the package links the shared library (`#cgo pkg-config:
// polyflake`), and the program finds it through the absolute RUNPATH that polyflake.pc puts in
// it: move or delete the SDK and the program no longer starts. Build with `-tags
// polyflake_static` to link the static archive instead (`#cgo pkg-config: polyflake-static`):
// the program then needs nothing of the SDK at run time. Go's build cache does not see a moved
// SDK: after moving it, build with `-a` (or run `go clean -cache`) so the new paths are used.
//
// A Generator is made once per node and shared between goroutines:
//
//	g, err := polyflake.New(polyflake.NodeID(37))
//	id, err := g.NextID() // int64, positive, increasing
//
// Strict mode (the default) never issues a timestamp above the wall clock: a small clock rewind
// (up to WithMaxWaitMs, 5 ms by default) is waited out, a larger one refused with
// ErrClockMovedBackwards. Monotonic mode (WithMode(Monotonic)) never waits and borrows from the
// next millisecond instead, up to WithMaxLeadMs (5,000 ms by default) ahead of the wall clock.
// The node id comes from exactly one source: NodeID, FileLease, Etcd, ZooKeeper, FromEnv,
// FromHostname or FromIPv4.
//
// A fixed node id (NodeID, FromEnv, FromHostname, FromIPv4) on the system clock is held
// host-wide while its generator lives, and keeps a mark in a state directory (WithRestartGuard,
// WithStateDir): whoever holds it next on this host starts above everything it could have
// issued, whatever the clock did in between. Close leaves a clean mark, so the next holder
// starts at once; a Go program that ends without Close (os.Exit, a return from main, a panic,
// a kill: Go runs no C exit handlers) leaves the mark one reserve (5 s) ahead, and the next
// holder's first call waits up to that long. Make the generator once and `defer g.Close()`.
//
// Strict waits can be bounded and cut: every call has a Context form (NextIDsContext, ...)
// whose deadline is the library's and whose cancellation interrupts the generator, and
// Interrupt cuts every call waiting on a generator (see NextIDsContext for what that means for
// the other calls waiting on it).
//
// Every error the library returns is an *Error carrying the core's stable code and message;
// compare it with errors.Is against the sentinels (ErrClockMovedBackwards, ErrLeaseNotReady, ...).
// Every number of milliseconds is named ...Ms and passed as written (a 0 is a 0, never "the
// default"): the defaults are the core's, taken from the library.
//
// # Decisions
//
// A module of its own at go/, import path example.invalid/polyflake/go (it follows the
// workspace's repository address), with no dependency beyond cgo and the library; tests/go and
// the polyglot participant require it through a replace, as a user's module does during
// development, so the benchmark's bwmarrin/snowflake stays out of this go.mod.
//
// Options, not a config struct: a Go struct's zero values would have made 0 mean "the
// default". A setting left out is never written, so its value is what the C _init functions
// report. The option interfaces (Setting, LeaseOption, RemoteOption, EtcdOption,
// ZooKeeperOption) each embed the narrower ones, so a misplaced option does not compile. Numbers
// are milliseconds named ...Ms, as in every binding (a time.Duration would need rounding rules
// of its own).
//
// Every call goes through a small C wrapper (polyflake_cgo.h) that returns the result and, on an
// error, a copy of the message read on the same OS thread, in one cgo call: the library keeps
// the message per thread, and a goroutine may change threads between two cgo calls. A Go string
// with a NUL byte is refused, never cut short. The IDs come back by value in a C struct:
// passing &id to C moves id to the heap (one allocation per call).
//
// Close closes and a finalizer frees: the handle stays valid after Close (a goroutine still
// calling gets ErrGeneratorClosed, never a freed handle), and every method keeps its receiver
// alive across its cgo call. UUIDs and ULIDs are [16]byte, big-endian like the C bytes, with
// String and MarshalText, so they are JSON strings.
package polyflake

/*
#include "polyflake_cgo.h"
*/
import "C"

import (
	"strings"
	"unsafe"
)

// Error is a refusal from polyflake: Code is the core's stable code ("CLOCK_MOVED_BACKWARDS", the
// same in every language), Message its full message with the numbers. Test for a kind with
// errors.Is(err, ErrClockMovedBackwards).
type Error struct {
	// Code is the stable name of the error kind.
	Code string
	// Message is the core's message for this error.
	Message string
	result  C.polyflake_result
}

// Error returns "CODE: message".
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Is reports whether target is the sentinel of this error's kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.result == e.result
}

// sentinel is the error of result r with its static message.
func sentinel(r C.polyflake_result) *Error {
	return &Error{
		Code:    C.GoString(C.polyflake_result_name(C.uint32_t(r))),
		Message: C.GoString(C.polyflake_result_message(C.uint32_t(r))),
		result:  r,
	}
}

// The sentinels, one per result of the C ABI (the core's error kinds, then the boundary's own),
// for errors.Is. Their Message is the kind's general description.
var (
	ErrInvalidLayout       = sentinel(C.POLYFLAKE_RESULT_INVALID_LAYOUT)
	ErrUnknownLayout       = sentinel(C.POLYFLAKE_RESULT_UNKNOWN_LAYOUT)
	ErrInvalidNodeID       = sentinel(C.POLYFLAKE_RESULT_INVALID_NODE_ID)
	ErrInvalidEpoch        = sentinel(C.POLYFLAKE_RESULT_INVALID_EPOCH)
	ErrInvalidArgument     = sentinel(C.POLYFLAKE_RESULT_INVALID_ARGUMENT)
	ErrInvalidID           = sentinel(C.POLYFLAKE_RESULT_INVALID_ID)
	ErrClockMovedBackwards = sentinel(C.POLYFLAKE_RESULT_CLOCK_MOVED_BACKWARDS)
	ErrTimestampOverflow   = sentinel(C.POLYFLAKE_RESULT_TIMESTAMP_OVERFLOW)
	ErrLeadLimitExceeded   = sentinel(C.POLYFLAKE_RESULT_LEAD_LIMIT_EXCEEDED)
	ErrNodeIDInUse         = sentinel(C.POLYFLAKE_RESULT_NODE_ID_IN_USE)
	ErrUsedAfterFork       = sentinel(C.POLYFLAKE_RESULT_USED_AFTER_FORK)
	ErrClockFailed         = sentinel(C.POLYFLAKE_RESULT_CLOCK_FAILED)
	ErrInvalidNodeSource   = sentinel(C.POLYFLAKE_RESULT_INVALID_NODE_SOURCE)
	ErrNoFreeSlot          = sentinel(C.POLYFLAKE_RESULT_NO_FREE_SLOT)
	ErrLeaseNotReady       = sentinel(C.POLYFLAKE_RESULT_LEASE_NOT_READY)
	ErrLeaseExpired        = sentinel(C.POLYFLAKE_RESULT_LEASE_EXPIRED)
	ErrLeaseLost           = sentinel(C.POLYFLAKE_RESULT_LEASE_LOST)
	ErrLeaseStore          = sentinel(C.POLYFLAKE_RESULT_LEASE_STORE)
	ErrClockJumpedAhead    = sentinel(C.POLYFLAKE_RESULT_CLOCK_JUMPED_AHEAD)
	ErrIDSpaceMismatch     = sentinel(C.POLYFLAKE_RESULT_ID_SPACE_MISMATCH)
	ErrGeneratorClosed     = sentinel(C.POLYFLAKE_RESULT_GENERATOR_CLOSED)
	ErrInterrupted         = sentinel(C.POLYFLAKE_RESULT_INTERRUPTED)
	ErrClockUnsynchronized = sentinel(C.POLYFLAKE_RESULT_CLOCK_UNSYNCHRONIZED)
	ErrNullParameter       = sentinel(C.POLYFLAKE_RESULT_NULL_PARAMETER)
	ErrPanic               = sentinel(C.POLYFLAKE_RESULT_PANIC)
	ErrBufferTooSmall      = sentinel(C.POLYFLAKE_RESULT_BUFFER_TOO_SMALL)
)

// check turns a status from the C side into nil or an *Error with the core's message (read on
// the thread that failed), freeing the message.
func check(s C.pf_status) error {
	if s.r == C.POLYFLAKE_RESULT_OK {
		return nil
	}
	e := sentinel(s.r)
	if s.msg != nil {
		if m := C.GoString(s.msg); m != "" {
			e.Message = m
		}
		C.free(unsafe.Pointer(s.msg))
	}
	return e
}

// refuse is an error of kind `kind` for input the package cannot hand to the library as it is.
func refuse(kind *Error, message string) error {
	return &Error{Code: kind.Code, Message: message, result: kind.result}
}

// cString is s as a C string (free it), or an error of kind `kind` when s holds a NUL byte, which
// C would silently cut the string at.
func cString(s, what string, kind *Error) (*C.char, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, refuse(kind, what+" contains a NUL byte")
	}
	return C.CString(s), nil
}

// resultName is the stable name of any result code (the tests walk every code with it).
func resultName(code uint32) string { return C.GoString(C.polyflake_result_name(C.uint32_t(code))) }

// ModuleVersion is this module's version: the workspace's, which the library it links reports
// too (a test fails when the two drift).
const ModuleVersion = "0.1.0"

// Version is the library's version, such as "0.1.0".
func Version() string { return C.GoString(C.polyflake_version()) }
