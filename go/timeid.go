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

// UUIDv7Generator issues UUIDs version 7 (RFC 9562) that strictly increase, with the Snowflake
// generator's rewind guard: strict mode never issues a timestamp above the wall clock, monotonic
// mode borrows ahead. It needs no node id (any number may live in a process) and is safe for
// concurrent use. Do not copy one (go vet reports it); a copy shares the handle, as a
// Generator's does.
type UUIDv7Generator struct {
	_ noCopy
	h *uuid7Cell
}

// uuid7Cell holds the C handle apart, shared by copies; its finalizer frees the handle.
type uuid7Cell struct {
	p    *C.polyflake_uuid7_generator
	intr interrupts
}

// ULIDGenerator issues ULIDs that strictly increase (each one more than the last within a
// millisecond), with the same guard; as UUIDv7Generator otherwise.
type ULIDGenerator struct {
	_ noCopy
	h *ulidCell
}

// ulidCell holds the C handle apart, shared by copies; its finalizer frees the handle.
type ulidCell struct {
	p    *C.polyflake_ulid_generator
	intr interrupts
}

// ptr is the handle (NULL for a zero value: ErrNullParameter); cell is what calls keep alive.
func (g *UUIDv7Generator) ptr() *C.polyflake_uuid7_generator {
	if g == nil || g.h == nil {
		return nil
	}
	return g.h.p
}

// intr is the generator's record of interrupts (a fresh one for a zero value).
func (g *UUIDv7Generator) intr() *interrupts {
	if g == nil || g.h == nil {
		return new(interrupts)
	}
	return &g.h.intr
}

func (g *UUIDv7Generator) cell() *uuid7Cell {
	if g == nil {
		return nil
	}
	return g.h
}

// ptr is the handle (NULL for a zero value: ErrNullParameter); cell is what calls keep alive.
func (g *ULIDGenerator) ptr() *C.polyflake_ulid_generator {
	if g == nil || g.h == nil {
		return nil
	}
	return g.h.p
}

// intr is the generator's record of interrupts (a fresh one for a zero value).
func (g *ULIDGenerator) intr() *interrupts {
	if g == nil || g.h == nil {
		return new(interrupts)
	}
	return &g.h.intr
}

func (g *ULIDGenerator) cell() *ulidCell {
	if g == nil {
		return nil
	}
	return g.h
}

// timeConfig is the C config of the settings given.
func timeConfig(settings []Setting) *options {
	o := defaults()
	for _, s := range settings {
		s.apply(o)
	}
	return o
}

// NewUUIDv7 makes a UUIDv7 generator with the settings given (WithMode, WithMaxWaitMs,
// WithMaxLeadMs, the forward-step settings, WithClockSource, WithClock, WithMaxClockErrorMs);
// every setting left out is the core's default. Errors: ErrInvalidArgument.
func NewUUIDv7(settings ...Setting) (*UUIDv7Generator, error) {
	o := timeConfig(settings)
	var p *C.polyflake_uuid7_generator
	err := check(C.pf_uuid7_generator_new(&o.shared, o.clock.ptr(), &p))
	runtime.KeepAlive(o.clock)
	if err != nil {
		return nil, err
	}
	h := &uuid7Cell{p: p}
	runtime.SetFinalizer(h, func(h *uuid7Cell) { C.polyflake_uuid7_generator_free(h.p) })
	return &UUIDv7Generator{h: h}, nil
}

// NewULID makes a ULID generator; as NewUUIDv7.
func NewULID(settings ...Setting) (*ULIDGenerator, error) {
	o := timeConfig(settings)
	var p *C.polyflake_ulid_generator
	err := check(C.pf_ulid_generator_new(&o.shared, o.clock.ptr(), &p))
	runtime.KeepAlive(o.clock)
	if err != nil {
		return nil, err
	}
	h := &ulidCell{p: p}
	runtime.SetFinalizer(h, func(h *ulidCell) { C.polyflake_ulid_generator_free(h.p) })
	return &ULIDGenerator{h: h}, nil
}

// NextUUID issues one UUIDv7. Errors as Generator.NextID (strict mode waits for the next
// millisecond after 32,768 UUIDs in one); ErrInterrupted when Interrupt cuts its wait.
func (g *UUIDv7Generator) NextUUID() (UUID, error) {
	o := C.pf_next_uuid7(handle(unsafe.Pointer(g.ptr())))
	runtime.KeepAlive(g.cell())
	if o.s.r != C.POLYFLAKE_RESULT_OK {
		return UUID{}, check(o.s)
	}
	return UUID(bytesOf(o.id)), nil
}

// NextUUIDContext is NextUUID whose wait ends with ctx; as Generator.NextIDsContext.
func (g *UUIDv7Generator) NextUUIDContext(ctx context.Context) (UUID, error) {
	var id UUID
	err := callContext(ctx, g.intr(), g.libInterrupt, func(timeoutMs uint64) error {
		o := C.pf_next_uuid7_within(g.ptr(), C.uint64_t(timeoutMs))
		runtime.KeepAlive(g.cell())
		id = UUID(bytesOf(o.id))
		return check(o.s)
	})
	if err != nil {
		return UUID{}, err
	}
	return id, nil
}

// NextUUIDsContext is NextUUIDs whose waits end with ctx; as Generator.NextIDsContext.
func (g *UUIDv7Generator) NextUUIDsContext(ctx context.Context, buf []UUID) error {
	var first *[16]byte
	if len(buf) > 0 {
		first = (*[16]byte)(&buf[0])
	}
	return callContext(ctx, g.intr(), g.libInterrupt, func(timeoutMs uint64) error {
		err := check(C.pf_next_uuid7s_within(g.ptr(), buf128(first, len(buf)), C.size_t(len(buf)), C.uint64_t(timeoutMs)))
		runtime.KeepAlive(g.cell())
		return err
	})
}

// Interrupt cuts short every call on this generator in flight now; as Generator.Interrupt.
func (g *UUIDv7Generator) Interrupt() {
	g.intr().hardInterrupt(g.libInterrupt)
}

// libInterrupt asks the library to cut the calls in flight.
func (g *UUIDv7Generator) libInterrupt() {
	C.polyflake_uuid7_generator_interrupt(g.ptr())
	runtime.KeepAlive(g.cell())
}

// buf128 is the first byte of a batch buffer (a dummy for an empty one: C refuses NULL).
func buf128(first *[16]byte, n int) *C.uint8_t {
	if n == 0 {
		return (*C.uint8_t)(unsafe.Pointer(&emptyIDs))
	}
	return (*C.uint8_t)(unsafe.Pointer(first))
}

// NextUUIDs fills buf with increasing UUIDv7s in one call (len(buf) at most MaxBatch); on any
// error buf is left untouched.
func (g *UUIDv7Generator) NextUUIDs(buf []UUID) error {
	var first *[16]byte
	if len(buf) > 0 {
		first = (*[16]byte)(&buf[0])
	}
	err := check(C.pf_next_uuid7s(g.ptr(), buf128(first, len(buf)), C.size_t(len(buf))))
	runtime.KeepAlive(g.cell())
	return err
}

// Health is a snapshot of the generator (NodeID 0, Source "static").
func (g *UUIDv7Generator) Health() Health {
	var h C.polyflake_health_snapshot
	r := C.polyflake_uuid7_health(g.ptr(), &h)
	runtime.KeepAlive(g.cell())
	return healthOf(&h, r)
}

// Close stops the generator: every later call fails with ErrGeneratorClosed.
func (g *UUIDv7Generator) Close() error {
	err := check(C.pf_status{r: C.polyflake_uuid7_generator_close(g.ptr())})
	runtime.KeepAlive(g.cell())
	return err
}

// NextULID issues one ULID. Errors as Generator.NextID.
func (g *ULIDGenerator) NextULID() (ULID, error) {
	o := C.pf_next_ulid(handle(unsafe.Pointer(g.ptr())))
	runtime.KeepAlive(g.cell())
	if o.s.r != C.POLYFLAKE_RESULT_OK {
		return ULID{}, check(o.s)
	}
	return ULID(bytesOf(o.id)), nil
}

// NextULIDContext is NextULID whose wait ends with ctx; as Generator.NextIDsContext.
func (g *ULIDGenerator) NextULIDContext(ctx context.Context) (ULID, error) {
	var id ULID
	err := callContext(ctx, g.intr(), g.libInterrupt, func(timeoutMs uint64) error {
		o := C.pf_next_ulid_within(g.ptr(), C.uint64_t(timeoutMs))
		runtime.KeepAlive(g.cell())
		id = ULID(bytesOf(o.id))
		return check(o.s)
	})
	if err != nil {
		return ULID{}, err
	}
	return id, nil
}

// NextULIDsContext is NextULIDs whose waits end with ctx; as Generator.NextIDsContext.
func (g *ULIDGenerator) NextULIDsContext(ctx context.Context, buf []ULID) error {
	var first *[16]byte
	if len(buf) > 0 {
		first = (*[16]byte)(&buf[0])
	}
	return callContext(ctx, g.intr(), g.libInterrupt, func(timeoutMs uint64) error {
		err := check(C.pf_next_ulids_within(g.ptr(), buf128(first, len(buf)), C.size_t(len(buf)), C.uint64_t(timeoutMs)))
		runtime.KeepAlive(g.cell())
		return err
	})
}

// Interrupt cuts short every call on this generator in flight now; as Generator.Interrupt.
func (g *ULIDGenerator) Interrupt() {
	g.intr().hardInterrupt(g.libInterrupt)
}

// libInterrupt asks the library to cut the calls in flight.
func (g *ULIDGenerator) libInterrupt() {
	C.polyflake_ulid_generator_interrupt(g.ptr())
	runtime.KeepAlive(g.cell())
}

// NextULIDs fills buf with increasing ULIDs in one call; on any error buf is left untouched.
func (g *ULIDGenerator) NextULIDs(buf []ULID) error {
	var first *[16]byte
	if len(buf) > 0 {
		first = (*[16]byte)(&buf[0])
	}
	err := check(C.pf_next_ulids(g.ptr(), buf128(first, len(buf)), C.size_t(len(buf))))
	runtime.KeepAlive(g.cell())
	return err
}

// Health is a snapshot of the generator.
func (g *ULIDGenerator) Health() Health {
	var h C.polyflake_health_snapshot
	r := C.polyflake_ulid_health(g.ptr(), &h)
	runtime.KeepAlive(g.cell())
	return healthOf(&h, r)
}

// Close stops the generator: every later call fails with ErrGeneratorClosed.
func (g *ULIDGenerator) Close() error {
	err := check(C.pf_status{r: C.polyflake_ulid_generator_close(g.ptr())})
	runtime.KeepAlive(g.cell())
	return err
}
