package cgotest

// The floor under the Go package's NextID: what one cgo call costs on its own, and what the
// library's polyflake_next_id costs when called through cgo with no Go wrapper around it (both
// through the mechanism go/ uses: a static inline C function returning a small struct by value).
// bench_test.go times them beside NextID, so the wrapper's own share is NextID minus the raw call,
// and the cgo transition's share is the empty call.
// (cgo cannot be used in _test.go files, so the calls live here.)

/*
#cgo pkg-config: polyflake
#include <stdlib.h>
#include "polyflake.h"

// The shape of go/polyflake_cgo.h's pf_id64: an ID, a result and a message pointer.
typedef struct {
  uint64_t id;
  polyflake_result r;
  char *msg;
} floor_id64;

// Nothing but the call and the struct coming back; the handle as an integer, as go/ passes it
// on the per-ID calls (go/polyflake_cgo.h).
static inline floor_id64 floor_empty(uintptr_t g) {
  floor_id64 o;
  o.id = (uint64_t)g;
  o.r = POLYFLAKE_RESULT_OK;
  o.msg = NULL;
  return o;
}

// The same with the handle as a pointer, as go/ passed it before: cgo checks a pointer argument
// for Go pointers on every call (runtime.cgoCheckPointer).
static inline floor_id64 floor_empty_ptr(const polyflake_generator *g) {
  floor_id64 o;
  o.id = (uint64_t)(uintptr_t)g;
  o.r = POLYFLAKE_RESULT_OK;
  o.msg = NULL;
  return o;
}

// polyflake_next_id and nothing else (no message read on an error: the caller fails on any).
static inline floor_id64 floor_next_id(uintptr_t g) {
  floor_id64 o;
  o.id = 0;
  o.msg = NULL;
  o.r = polyflake_next_id((const polyflake_generator *)g, &o.id);
  return o;
}

static inline polyflake_result floor_new(uint32_t mode, polyflake_layout layout, int64_t node,
                                         uint32_t source, const char *scope,
                                         polyflake_generator **out) {
  polyflake_config cfg;
  polyflake_config_init(&cfg);
  cfg.mode = mode;
  cfg.layout = layout;
  cfg.node_id = node;
  cfg.clock_source = source;
  cfg.has_max_lead = 0;
  cfg.restart_guard = POLYFLAKE_RESTART_GUARD_OFF;
  cfg.host_scope = scope;
  return polyflake_generator_new(&cfg, NULL, out);
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// RawGenerator is a generator made through the C ABI directly, for the floor's raw calls.
type RawGenerator struct{ p *C.polyflake_generator }

// NewRawGenerator makes a strict or monotonic generator on the system clock, no lead limit, no
// restart guard, in the host scope given.
func NewRawGenerator(monotonic, coarse bool, layout [3]uint32, node int64, scope string) (*RawGenerator, error) {
	mode, source := C.uint32_t(C.POLYFLAKE_MODE_STRICT), C.uint32_t(C.POLYFLAKE_CLOCK_SOURCE_PRECISE)
	if monotonic {
		mode = C.POLYFLAKE_MODE_MONOTONIC
	}
	if coarse {
		source = C.POLYFLAKE_CLOCK_SOURCE_COARSE
	}
	cs := C.CString(scope)
	defer C.free(unsafe.Pointer(cs))
	l := C.polyflake_layout{timestamp_bits: C.uint32_t(layout[0]), node_bits: C.uint32_t(layout[1]),
		sequence_bits: C.uint32_t(layout[2])}
	var p *C.polyflake_generator
	if r := C.floor_new(mode, l, C.int64_t(node), source, cs, &p); r != C.POLYFLAKE_RESULT_OK {
		return nil, fmt.Errorf("polyflake_generator_new: %s", C.GoString(C.polyflake_result_name(C.uint32_t(r))))
	}
	return &RawGenerator{p}, nil
}

// Free frees the generator.
func (g *RawGenerator) Free() { C.polyflake_generator_free(g.p) }

func (g *RawGenerator) handle() C.uintptr_t { return C.uintptr_t(uintptr(unsafe.Pointer(g.p))) }

// EmptyCalls makes n empty cgo calls; it returns the sum of what came back (so none is dropped).
func (g *RawGenerator) EmptyCalls(n int) uint64 {
	var sum uint64
	h := g.handle()
	for i := 0; i < n; i++ {
		o := C.floor_empty(h)
		if o.r != C.POLYFLAKE_RESULT_OK {
			panic("floor_empty")
		}
		sum += uint64(o.id)
	}
	return sum
}

// EmptyCallsPointerArg is EmptyCalls with the handle passed as a pointer.
func (g *RawGenerator) EmptyCallsPointerArg(n int) uint64 {
	var sum uint64
	for i := 0; i < n; i++ {
		o := C.floor_empty_ptr(g.p)
		if o.r != C.POLYFLAKE_RESULT_OK {
			panic("floor_empty_ptr")
		}
		sum += uint64(o.id)
	}
	return sum
}

// NextIDs makes n calls of polyflake_next_id through cgo, with no wrapper; it returns the last ID.
func (g *RawGenerator) NextIDs(n int) uint64 {
	var last uint64
	h := g.handle()
	for i := 0; i < n; i++ {
		o := C.floor_next_id(h)
		if o.r != C.POLYFLAKE_RESULT_OK {
			panic("polyflake_next_id: " + C.GoString(C.polyflake_result_name(C.uint32_t(o.r))))
		}
		last = uint64(o.id)
	}
	return last
}
