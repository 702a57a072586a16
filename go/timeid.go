package polyflake

/*
#include "polyflake_cgo.h"
*/
import "C"

import (
	"context"
	"runtime"
	"unsafe"
)

// UUID is a UUID's 16 bytes, big-endian (the byte order of its text and of PostgreSQL's uuid):
// comparing two with bytes.Compare orders them as their generator issued them.
type UUID [16]byte

// ULID is a ULID's 16 bytes, big-endian: 48 bits of Unix ms, then 80 that increase within a
// millisecond.
type ULID [16]byte

// id128 and bytesOf convert between the Go array and the C struct of 16 bytes (same layout).
func id128(b [16]byte) C.pf_id128 { return *(*C.pf_id128)(unsafe.Pointer(&b)) }

func bytesOf(c C.pf_id128) [16]byte { return *(*[16]byte)(unsafe.Pointer(&c)) }

// String is the UUID's canonical text: 36 lower-case characters, such as
// "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".
func (u UUID) String() string {
	t := C.pf_format_uuid(id128(u))
	return C.GoString(&t.text[0])
}

// TimestampMs is the Unix ms of a UUID version 7 (its first 48 bits). Errors: ErrInvalidID
// unless its version is 7 and its variant RFC 9562's.
func (u UUID) TimestampMs() (int64, error) {
	o := C.pf_uuid7_timestamp_ms(id128(u))
	if err := check(o.s); err != nil {
		return 0, err
	}
	return int64(o.ms), nil
}

// MarshalText is the canonical text (for encoding/json and friends).
func (u UUID) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalText reads a UUID's text as ParseUUID does.
func (u *UUID) UnmarshalText(text []byte) error {
	v, err := ParseUUID(string(text))
	if err == nil {
		*u = v
	}
	return err
}

// ParseUUID reads a UUID's text: 36 characters, hyphens after 8, 12, 16 and 20 hex digits, any
// case. Errors: ErrInvalidID.
func ParseUUID(text string) (UUID, error) {
	b, err := parse128(text, "the UUID text", func(cs *C.char) C.pf_id128_status { return C.pf_parse_uuid(cs) })
	return UUID(b), err
}

// String is the ULID's text: 26 upper-case characters of Crockford's base32.
func (u ULID) String() string {
	t := C.pf_format_ulid(id128(u))
	return C.GoString(&t.text[0])
}

// TimestampMs is the ULID's Unix ms (its first 48 bits).
func (u ULID) TimestampMs() int64 { return int64(C.pf_ulid_timestamp_ms(id128(u))) }

// MarshalText is the ULID's text.
func (u ULID) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalText reads a ULID's text as ParseULID does.
func (u *ULID) UnmarshalText(text []byte) error {
	v, err := ParseULID(string(text))
	if err == nil {
		*u = v
	}
	return err
}

// ParseULID reads a ULID's text: 26 characters of Crockford's base32, any case, I and L read as
// 1 and O as 0, the first at most 7. Errors: ErrInvalidID.
func ParseULID(text string) (ULID, error) {
	b, err := parse128(text, "the ULID text", func(cs *C.char) C.pf_id128_status { return C.pf_parse_ulid(cs) })
	return ULID(b), err
}

func parse128(text, what string, parse func(*C.char) C.pf_id128_status) ([16]byte, error) {
	cs, err := cString(text, what, ErrInvalidID)
	if err != nil {
		return [16]byte{}, err
	}
	defer C.free(unsafe.Pointer(cs))
	o := parse(cs)
	if err := check(o.s); err != nil {
		return [16]byte{}, err
	}
	return bytesOf(o.id), nil
}

// TimeIDGenerator issues 128-bit time-ordered IDs of one format, T: UUIDs version 7 (RFC 9562)
// or ULIDs, each one more than the last (a ULID by one within a millisecond), with the
// Snowflake generator's rewind guard: strict mode never issues a timestamp above the wall clock,
// monotonic mode borrows ahead. It needs no node id (any number may live in a process) and is
// safe for concurrent use. Do not copy one (go vet reports it); a copy shares the handle, as a
// Generator's does. UUIDv7Generator and ULIDGenerator are its two instances.
type TimeIDGenerator[T UUID | ULID] struct {
	_ noCopy
	h *timeCell
}

// UUIDv7Generator issues UUIDs version 7: a TimeIDGenerator of UUIDs.
type UUIDv7Generator = TimeIDGenerator[UUID]

// ULIDGenerator issues ULIDs: a TimeIDGenerator of ULIDs.
type ULIDGenerator = TimeIDGenerator[ULID]

// timeCell holds the C handle apart, shared by copies; its finalizer frees the handle.
type timeCell struct {
	p    *C.polyflake_timeid_generator
	intr interrupts
}

// ptr is the handle (NULL for a zero value: ErrNullParameter).
func (g *TimeIDGenerator[T]) ptr() *C.polyflake_timeid_generator {
	if g == nil || g.h == nil {
		return nil
	}
	return g.h.p
}

// intr is the generator's record of interrupts (a fresh one for a zero value).
func (g *TimeIDGenerator[T]) intr() *interrupts {
	if g == nil || g.h == nil {
		return new(interrupts)
	}
	return &g.h.intr
}

// cell is what calls keep alive until the library has returned.
func (g *TimeIDGenerator[T]) cell() *timeCell {
	if g == nil {
		return nil
	}
	return g.h
}

// timeFormat is T's polyflake_time_format.
func timeFormat[T UUID | ULID]() C.uint32_t {
	var id T
	if _, ulid := any(id).(ULID); ulid {
		return C.POLYFLAKE_TIME_FORMAT_ULID
	}
	return C.POLYFLAKE_TIME_FORMAT_UUID7
}

// NewTimeID makes a generator of T (UUID or ULID) with the settings given (WithMode,
// WithMaxWaitMs, WithMaxLeadMs, the forward-step settings, WithClockSource, WithClock,
// WithMaxClockErrorMs); every setting left out is the core's default. Errors:
// ErrInvalidArgument.
func NewTimeID[T UUID | ULID](settings ...Setting) (*TimeIDGenerator[T], error) {
	o := defaults()
	for _, s := range settings {
		s.apply(o)
	}
	var p *C.polyflake_timeid_generator
	err := check(C.pf_timeid_generator_new(timeFormat[T](), &o.shared, o.clock.ptr(), &p))
	runtime.KeepAlive(o.clock)
	if err != nil {
		return nil, err
	}
	h := &timeCell{p: p}
	runtime.SetFinalizer(h, func(h *timeCell) { C.polyflake_timeid_generator_free(h.p) })
	return &TimeIDGenerator[T]{h: h}, nil
}

// NewUUIDv7 makes a UUIDv7 generator: NewTimeID[UUID].
func NewUUIDv7(settings ...Setting) (*UUIDv7Generator, error) { return NewTimeID[UUID](settings...) }

// NewULID makes a ULID generator: NewTimeID[ULID].
func NewULID(settings ...Setting) (*ULIDGenerator, error) { return NewTimeID[ULID](settings...) }

// NextID issues one ID. Errors as Generator.NextID (strict mode waits for the next millisecond
// after 32,768 IDs in one); ErrInterrupted when Interrupt cuts its wait.
func (g *TimeIDGenerator[T]) NextID() (T, error) {
	o := C.pf_next_timeid(handle(unsafe.Pointer(g.ptr())))
	runtime.KeepAlive(g.cell())
	if o.s.r != C.POLYFLAKE_RESULT_OK {
		return T{}, check(o.s)
	}
	return T(bytesOf(o.id)), nil
}

// NextIDContext is NextID whose wait ends with ctx; as Generator.NextIDsContext.
func (g *TimeIDGenerator[T]) NextIDContext(ctx context.Context) (T, error) {
	var id T
	err := callContext(ctx, g.intr(), g.libInterrupt, func(timeoutMs uint64) error {
		o := C.pf_next_timeid_within(g.ptr(), C.uint64_t(timeoutMs))
		runtime.KeepAlive(g.cell())
		id = T(bytesOf(o.id))
		return check(o.s)
	})
	if err != nil {
		return T{}, err
	}
	return id, nil
}

// NextIDs fills buf with increasing IDs in one call (len(buf) at most MaxBatch); on any error
// buf is left untouched.
func (g *TimeIDGenerator[T]) NextIDs(buf []T) error {
	err := check(C.pf_next_timeids(g.ptr(), buf128(buf), C.size_t(len(buf))))
	runtime.KeepAlive(g.cell())
	return err
}

// NextIDsContext is NextIDs whose waits end with ctx; as Generator.NextIDsContext.
func (g *TimeIDGenerator[T]) NextIDsContext(ctx context.Context, buf []T) error {
	return callContext(ctx, g.intr(), g.libInterrupt, func(timeoutMs uint64) error {
		err := check(C.pf_next_timeids_within(g.ptr(), buf128(buf), C.size_t(len(buf)), C.uint64_t(timeoutMs)))
		runtime.KeepAlive(g.cell())
		return err
	})
}

// buf128 is the first byte of a batch buffer (a dummy for an empty one: C refuses NULL).
func buf128[T UUID | ULID](buf []T) *C.uint8_t {
	if len(buf) == 0 {
		return (*C.uint8_t)(unsafe.Pointer(&emptyIDs))
	}
	return (*C.uint8_t)(unsafe.Pointer(&buf[0]))
}

// Interrupt cuts short every call on this generator in flight now; as Generator.Interrupt.
func (g *TimeIDGenerator[T]) Interrupt() {
	g.intr().hardInterrupt(g.libInterrupt)
}

// libInterrupt asks the library to cut the calls in flight.
func (g *TimeIDGenerator[T]) libInterrupt() {
	C.polyflake_timeid_generator_interrupt(g.ptr())
	runtime.KeepAlive(g.cell())
}

// Health is a snapshot of the generator (NodeID 0, Source "static").
func (g *TimeIDGenerator[T]) Health() Health {
	var h C.polyflake_health_snapshot
	r := C.polyflake_timeid_health(g.ptr(), &h)
	runtime.KeepAlive(g.cell())
	return healthOf(&h, r)
}

// Close stops the generator: every later call fails with ErrGeneratorClosed.
func (g *TimeIDGenerator[T]) Close() error {
	err := check(C.pf_status{r: C.polyflake_timeid_generator_close(g.ptr())})
	runtime.KeepAlive(g.cell())
	return err
}

// The names each generator had for its calls when UUIDv7Generator and ULIDGenerator were two
// types: the same calls (on either instance, as Go methods are).

// NextUUID is NextID.
func (g *TimeIDGenerator[T]) NextUUID() (T, error) { return g.NextID() }

// NextUUIDContext is NextIDContext.
func (g *TimeIDGenerator[T]) NextUUIDContext(ctx context.Context) (T, error) {
	return g.NextIDContext(ctx)
}

// NextUUIDs is NextIDs.
func (g *TimeIDGenerator[T]) NextUUIDs(buf []T) error { return g.NextIDs(buf) }

// NextUUIDsContext is NextIDsContext.
func (g *TimeIDGenerator[T]) NextUUIDsContext(ctx context.Context, buf []T) error {
	return g.NextIDsContext(ctx, buf)
}

// NextULID is NextID.
func (g *TimeIDGenerator[T]) NextULID() (T, error) { return g.NextID() }

// NextULIDContext is NextIDContext.
func (g *TimeIDGenerator[T]) NextULIDContext(ctx context.Context) (T, error) {
	return g.NextIDContext(ctx)
}

// NextULIDs is NextIDs.
func (g *TimeIDGenerator[T]) NextULIDs(buf []T) error { return g.NextIDs(buf) }

// NextULIDsContext is NextIDsContext.
func (g *TimeIDGenerator[T]) NextULIDsContext(ctx context.Context, buf []T) error {
	return g.NextIDsContext(ctx, buf)
}
