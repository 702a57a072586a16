// Package cgotest calls polyflake's C ABI from Go through include/polyflake.h, found with
// pkg-config like any cgo user would (`#cgo pkg-config: polyflake`). The wrappers only convert
// types; every rule lives in the Rust core behind the header. (cgo cannot be used in _test.go
// files, so the calls live here and the tests beside them.)
package cgotest

/*
#cgo pkg-config: polyflake
#include <stdlib.h>
#include "polyflake.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Error is a polyflake_result other than OK; Code is its stable name ("CLOCK_MOVED_BACKWARDS"),
// Message the core's full message where the call was made through withMessage ("" otherwise).
type Error struct {
	Code    string
	Result  uint32
	Message string
}

func (e *Error) Error() string {
	if e.Message != "" {
		return e.Code + ": " + e.Message
	}
	return e.Code + ": " + C.GoString(C.polyflake_result_message(C.uint32_t(e.Result)))
}

func check(r C.polyflake_result) error {
	if r == C.POLYFLAKE_RESULT_OK {
		return nil
	}
	return &Error{Code: C.GoString(C.polyflake_result_name(C.uint32_t(r))), Result: uint32(r)}
}

// withMessage runs f and, on an error, reads the core's message on the same OS thread (the
// message is per thread, and a goroutine may otherwise move between the two calls).
func withMessage(f func() C.polyflake_result) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err := check(f())
	if e, ok := err.(*Error); ok {
		e.Message = LastErrorMessage()
	}
	return err
}

// Layout is polyflake_layout.
type Layout struct{ TimestampBits, NodeBits, SequenceBits uint32 }

func (l Layout) c() C.polyflake_layout {
	return C.polyflake_layout{timestamp_bits: C.uint32_t(l.TimestampBits), node_bits: C.uint32_t(l.NodeBits), sequence_bits: C.uint32_t(l.SequenceBits)}
}

func layoutOf(c C.polyflake_layout) Layout {
	return Layout{uint32(c.timestamp_bits), uint32(c.node_bits), uint32(c.sequence_bits)}
}

// Presets, from the library.
func LayoutDefault() Layout   { return layoutOf(C.polyflake_layout_default()) }
func LayoutLongLived() Layout { return layoutOf(C.polyflake_layout_long_lived()) }
func LayoutBigFleet() Layout  { return layoutOf(C.polyflake_layout_big_fleet()) }
func LayoutShort() Layout     { return layoutOf(C.polyflake_layout_short()) }

// LayoutFromName is polyflake_layout_from_name.
func LayoutFromName(name string) (Layout, error) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var out C.polyflake_layout
	if err := check(C.polyflake_layout_from_name(cs, &out)); err != nil {
		return Layout{}, err
	}
	return layoutOf(out), nil
}

// LayoutInfo is polyflake_layout_info.
type LayoutInfo struct {
	MaxNodeID, MaxSequence, IDsPerMs, MaxElapsedMs uint64
	Years                                          float64
}

// Describe is polyflake_layout_describe.
func Describe(l Layout) (LayoutInfo, error) {
	var out C.polyflake_layout_info
	if err := check(C.polyflake_layout_describe(l.c(), &out)); err != nil {
		return LayoutInfo{}, err
	}
	return LayoutInfo{uint64(out.max_node_id), uint64(out.max_sequence), uint64(out.ids_per_ms), uint64(out.max_elapsed_ms), float64(out.years)}, nil
}

// Decoded is polyflake_decoded.
type Decoded struct {
	TimestampMs int64
	NodeID      uint32
	Sequence    uint32
}

func decodedOf(d C.polyflake_decoded) Decoded {
	return Decoded{int64(d.timestamp_ms), uint32(d.node_id), uint32(d.sequence)}
}

// Decode is polyflake_decode.
func Decode(l Layout, epochMs int64, id uint64) (Decoded, error) {
	var out C.polyflake_decoded
	if err := check(C.polyflake_decode(l.c(), C.int64_t(epochMs), C.uint64_t(id), &out)); err != nil {
		return Decoded{}, err
	}
	return decodedOf(out), nil
}

// Compose is polyflake_compose.
func Compose(l Layout, epochMs, unixMs int64, nodeID, sequence uint64) (uint64, error) {
	var out C.uint64_t
	err := check(C.polyflake_compose(l.c(), C.int64_t(epochMs), C.int64_t(unixMs), C.uint64_t(nodeID), C.uint64_t(sequence), &out))
	return uint64(out), err
}

// ParseID is polyflake_parse_id.
func ParseID(text string) (uint64, error) {
	cs := C.CString(text)
	defer C.free(unsafe.Pointer(cs))
	var out C.uint64_t
	err := check(C.polyflake_parse_id(cs, &out))
	return uint64(out), err
}

// FormatID is polyflake_format_id.
func FormatID(id uint64) (string, error) {
	var buf [C.POLYFLAKE_ID_TEXT_LEN]C.char
	var n C.size_t
	if err := check(C.polyflake_format_id(C.uint64_t(id), &buf[0], C.size_t(len(buf)), &n)); err != nil {
		return "", err
	}
	return C.GoStringN(&buf[0], C.int(n)), nil
}

// Config is polyflake_config; MaxLeadMs nil means no lead limit, MaxForwardStepMs nil turns the
// forward-step check off (DefaultConfig fills both from the library's defaults).
type Config struct {
	Layout           Layout
	EpochMs          int64
	NodeID           int64
	Mode             uint32
	MaxWaitMs        float64
	MaxLeadMs        *int64
	MaxForwardStepMs *uint64
	ForwardConfirmMs uint64
}

// Modes.
const (
	Strict    = uint32(C.POLYFLAKE_MODE_STRICT)
	Monotonic = uint32(C.POLYFLAKE_MODE_MONOTONIC)
)

func configOf(c C.polyflake_config) Config {
	cfg := Config{Layout: layoutOf(c.layout), EpochMs: int64(c.epoch_ms), NodeID: int64(c.node_id), Mode: uint32(c.mode), MaxWaitMs: float64(c.max_wait_ms), ForwardConfirmMs: uint64(c.forward_confirm_ms)}
	if c.has_max_lead != 0 {
		lead := int64(c.max_lead_ms)
		cfg.MaxLeadMs = &lead
	}
	if c.max_forward_step_ms != C.POLYFLAKE_FORWARD_STEP_OFF {
		step := uint64(c.max_forward_step_ms)
		cfg.MaxForwardStepMs = &step
	}
	return cfg
}

// DefaultConfig is polyflake_config_init.
func DefaultConfig() Config {
	var c C.polyflake_config
	C.polyflake_config_init(&c)
	return configOf(c)
}

func (cfg Config) c() C.polyflake_config {
	var c C.polyflake_config
	C.polyflake_config_init(&c)
	c.layout = cfg.Layout.c()
	c.epoch_ms = C.int64_t(cfg.EpochMs)
	c.node_id = C.int64_t(cfg.NodeID)
	c.mode = C.uint32_t(cfg.Mode)
	c.max_wait_ms = C.double(cfg.MaxWaitMs)
	if cfg.MaxLeadMs != nil {
		c.has_max_lead = 1
		c.max_lead_ms = C.int64_t(*cfg.MaxLeadMs)
	}
	c.max_forward_step_ms = C.POLYFLAKE_FORWARD_STEP_OFF
	if cfg.MaxForwardStepMs != nil {
		c.max_forward_step_ms = C.uint64_t(*cfg.MaxForwardStepMs)
	}
	c.forward_confirm_ms = C.uint64_t(cfg.ForwardConfirmMs)
	return c
}

// Clock is a polyflake_clock handle: a manual clock (Set, Advance, Elapse) or a scripted one.
// A nil *Clock is the system clock wherever a constructor takes one.
type Clock struct{ p *C.polyflake_clock }

// NewManualClock is polyflake_manual_clock_new.
func NewManualClock(startMs int64) (*Clock, error) {
	var p *C.polyflake_clock
	if err := check(C.polyflake_manual_clock_new(C.int64_t(startMs), &p)); err != nil {
		return nil, err
	}
	return &Clock{p}, nil
}

// NewScriptedClock is polyflake_scripted_clock_new (the values are copied).
func NewScriptedClock(values []int64) (*Clock, error) {
	var first *C.int64_t
	if len(values) > 0 {
		first = (*C.int64_t)(unsafe.Pointer(&values[0]))
	}
	var p *C.polyflake_clock
	if err := check(C.polyflake_scripted_clock_new(first, C.size_t(len(values)), &p)); err != nil {
		return nil, err
	}
	return &Clock{p}, nil
}

// Set is polyflake_manual_clock_set (a step of the wall reading).
func (m *Clock) Set(ms int64) error { return check(C.polyflake_manual_clock_set(m.p, C.int64_t(ms))) }

// Advance is polyflake_manual_clock_advance (a step of the wall reading).
func (m *Clock) Advance(ms int64) error {
	return check(C.polyflake_manual_clock_advance(m.p, C.int64_t(ms)))
}

// Elapse is polyflake_manual_clock_elapse (time passing: wall and elapsed time move).
func (m *Clock) Elapse(ms uint64) error {
	return check(C.polyflake_manual_clock_elapse(m.p, C.uint64_t(ms)))
}

// Close is polyflake_clock_free (generators made with the clock keep working).
func (m *Clock) Close() { C.polyflake_clock_free(m.p); m.p = nil }

// ptr is the clock handle, or NULL (the system clock) for a nil *Clock.
func (m *Clock) ptr() *C.polyflake_clock {
	if m == nil {
		return nil
	}
	return m.p
}

// Generator is a polyflake_generator handle, safe to share between goroutines.
type Generator struct{ p *C.polyflake_generator }

// generator runs one of the polyflake_generator_new* functions (each takes the config, its
// source's arguments, the optional clock and the out-param).
func generator(mk func(**C.polyflake_generator) C.polyflake_result) (*Generator, error) {
	var p *C.polyflake_generator
	if err := withMessage(func() C.polyflake_result { return mk(&p) }); err != nil {
		return nil, err
	}
	return &Generator{p}, nil
}

// New is polyflake_generator_new; clock nil is the system clock.
func New(cfg Config, clock *Clock) (*Generator, error) {
	c := cfg.c()
	return generator(func(p **C.polyflake_generator) C.polyflake_result {
		return C.polyflake_generator_new(&c, clock.ptr(), p)
	})
}

// FileLease is polyflake_file_lease_options. Start from DefaultFileLease (the library's
// defaults): a zero here is a zero the library judges (and refuses where it must).
type FileLease struct {
	Dir            string
	Slots          uint32  // AllSlots: every node id of the layout
	Identity       *string // nil means the hostname
	ReserveMs      uint64
	MaxGuardWaitMs uint64
}

// AllSlots is POLYFLAKE_ALL_SLOTS.
const AllSlots = uint32(C.POLYFLAKE_ALL_SLOTS)

// DefaultFileLease is polyflake_file_lease_options_init with dir set.
func DefaultFileLease(dir string) FileLease {
	var o C.polyflake_file_lease_options
	C.polyflake_file_lease_options_init(&o)
	return FileLease{Dir: dir, Slots: uint32(o.slots), ReserveMs: uint64(o.reserve_ms), MaxGuardWaitMs: uint64(o.max_guard_wait_ms)}
}

// NewFileLease is polyflake_generator_new_file_lease (cfg.NodeID is not used); clock nil is
// the system clock.
func NewFileLease(cfg Config, lease FileLease, clock *Clock) (*Generator, error) {
	c := cfg.c()
	var o C.polyflake_file_lease_options
	C.polyflake_file_lease_options_init(&o)
	dir := C.CString(lease.Dir)
	defer C.free(unsafe.Pointer(dir))
	o.dir = dir
	o.slots = C.uint32_t(lease.Slots)
	if lease.Identity != nil {
		ident := C.CString(*lease.Identity)
		defer C.free(unsafe.Pointer(ident))
		o.identity = ident
	}
	o.reserve_ms = C.uint64_t(lease.ReserveMs)
	o.max_guard_wait_ms = C.uint64_t(lease.MaxGuardWaitMs)
	return generator(func(p **C.polyflake_generator) C.polyflake_result {
		return C.polyflake_generator_new_file_lease(&c, &o, clock.ptr(), p)
	})
}

// NewFromIPv4 is polyflake_generator_new_from_ipv4 on the system clock.
func NewFromIPv4(cfg Config, addr string, prefixLen int64) (*Generator, error) {
	c := cfg.c()
	a := C.CString(addr)
	defer C.free(unsafe.Pointer(a))
	return generator(func(p **C.polyflake_generator) C.polyflake_result {
		return C.polyflake_generator_new_from_ipv4(&c, a, C.int64_t(prefixLen), nil, p)
	})
}

// NewEtcd is polyflake_generator_new_etcd with these endpoints and a connect timeout, every
// other option at its default, on the system clock.
func NewEtcd(cfg Config, endpoints []string, connectTimeoutMs uint64) (*Generator, error) {
	c := cfg.c()
	var o C.polyflake_etcd_options
	C.polyflake_etcd_options_init(&o)
	list := C.malloc(C.size_t(len(endpoints)+1) * C.size_t(unsafe.Sizeof(uintptr(0))))
	defer C.free(list)
	ptrs := unsafe.Slice((**C.char)(list), len(endpoints)+1)
	for i, e := range endpoints {
		ptrs[i] = C.CString(e)
		defer C.free(unsafe.Pointer(ptrs[i]))
	}
	o.endpoints = (**C.char)(list)
	o.endpoint_count = C.size_t(len(endpoints))
	o.connect_timeout_ms = C.uint64_t(connectTimeoutMs)
	return generator(func(p **C.polyflake_generator) C.polyflake_result {
		return C.polyflake_generator_new_etcd(&c, &o, nil, p)
	})
}

// LastErrorMessage is polyflake_last_error_message (this OS thread's last core error: call it
// on the goroutine that got the error, with the OS thread locked).
func LastErrorMessage() string {
	var buf [1024]C.char
	var n C.size_t
	if C.polyflake_last_error_message(&buf[0], C.size_t(len(buf)), &n) != C.POLYFLAKE_RESULT_OK {
		return ""
	}
	return C.GoStringN(&buf[0], C.int(n))
}

// NodeID is the node id the generator holds (for a lease: its slot).
func (g *Generator) NodeID() int64 {
	var c C.polyflake_config
	if C.polyflake_generator_config(g.p, &c) != C.POLYFLAKE_RESULT_OK {
		return -1
	}
	return int64(c.node_id)
}

// Close is polyflake_generator_close: the generator refuses every later call
// (GENERATOR_CLOSED); a lease frees its slot. The handle stays until Free.
func (g *Generator) Close() error { return check(C.polyflake_generator_close(g.p)) }

// Free is polyflake_generator_free (it closes too).
func (g *Generator) Free() { C.polyflake_generator_free(g.p); g.p = nil }

// WaitReady is polyflake_wait_ready: waits out a lease's restart guard, at most timeoutMs.
func (g *Generator) WaitReady(timeoutMs uint64) error {
	return check(C.polyflake_wait_ready(g.p, C.uint64_t(timeoutMs)))
}

// Config is polyflake_generator_config.
func (g *Generator) Config() (Config, error) {
	var c C.polyflake_config
	if err := check(C.polyflake_generator_config(g.p, &c)); err != nil {
		return Config{}, err
	}
	return configOf(c), nil
}

// NextID is polyflake_next_id.
func (g *Generator) NextID() (uint64, error) {
	var id C.uint64_t
	err := check(C.polyflake_next_id(g.p, &id))
	return uint64(id), err
}

// NextIDs is polyflake_next_ids into buf.
func (g *Generator) NextIDs(buf []uint64) error {
	var none C.uint64_t
	ptr := &none
	if len(buf) > 0 {
		ptr = (*C.uint64_t)(unsafe.Pointer(&buf[0]))
	}
	return check(C.polyflake_next_ids(g.p, ptr, C.size_t(len(buf))))
}

// Decode is polyflake_generator_decode.
func (g *Generator) Decode(id uint64) (Decoded, error) {
	var out C.polyflake_decoded
	if err := check(C.polyflake_generator_decode(g.p, C.uint64_t(id), &out)); err != nil {
		return Decoded{}, err
	}
	return decodedOf(out), nil
}

// Health is polyflake_health_snapshot.
type Health struct {
	OK           bool
	Status       string
	Reason       string
	LeadMs       int64
	WallMs       int64
	ClockAheadMs int64
	Counters     map[string]uint64
	Source       string // "static", "file_lease", ...
	Lease        *LeaseHealth
}

// LeaseHealth is the lease part of polyflake_health_snapshot (nil when the node id is not leased).
type LeaseHealth struct {
	Kind             string // "file" or "etcd"
	Slot             uint32
	HighWaterMs      int64
	GuardUntilMs     *int64
	GuardWaiting     bool
	GuardRemainingMs uint64
	GuardNote        string
	Lost             bool
	Expired          bool
	Phase            string // "held", "restart_guard", "expired", "lost"
	Renewals         uint64
	Failures         uint64
	Store            string
	LastError        string
}

// Health is polyflake_health.
func (g *Generator) Health() (Health, error) {
	var h C.polyflake_health_snapshot
	if err := check(C.polyflake_health(g.p, &h)); err != nil {
		return Health{}, err
	}
	var lease *LeaseHealth
	if h.lease_kind != C.POLYFLAKE_LEASE_KIND_NONE {
		kind := "file"
		if h.lease_kind == C.POLYFLAKE_LEASE_KIND_ETCD {
			kind = "etcd"
		}
		lease = &LeaseHealth{
			Kind: kind, Slot: uint32(h.lease_slot), HighWaterMs: int64(h.lease_high_water_ms),
			GuardWaiting: bool(h.lease_guard_waiting), GuardRemainingMs: uint64(h.lease_guard_remaining_ms),
			GuardNote: C.GoString(&h.lease_guard_note[0]), Lost: bool(h.lease_lost), Expired: bool(h.lease_expired),
			Phase:    C.GoString(C.polyflake_lease_phase_name(C.uint32_t(h.lease_phase))),
			Renewals: uint64(h.lease_renewals), Failures: uint64(h.lease_failures),
			Store: C.GoString(&h.lease_store[0]), LastError: C.GoString(&h.lease_last_error[0]),
		}
		if h.lease_has_guard {
			g := int64(h.lease_guard_until_ms)
			lease.GuardUntilMs = &g
		}
	}
	return Health{
		Source:       C.GoString(C.polyflake_node_source_name(C.uint32_t(h.source))),
		Lease:        lease,
		WallMs:       int64(h.wall_ms),
		OK:           bool(h.ok),
		Status:       C.GoString(C.polyflake_health_status_name(C.uint32_t(h.status))),
		Reason:       C.GoString(&h.reason[0]),
		LeadMs:       int64(h.lead_ms),
		ClockAheadMs: int64(h.clock_ahead_ms),
		Counters: map[string]uint64{
			"forward_refused":      uint64(h.forward_refused),
			"ids_issued":           uint64(h.ids_issued),
			"rewinds_waited":       uint64(h.rewinds_waited),
			"rewinds_refused":      uint64(h.rewinds_refused),
			"sequence_exhaustions": uint64(h.sequence_exhaustions),
			"wait_sleeps":          uint64(h.wait_sleeps),
			"ms_borrowed":          uint64(h.ms_borrowed),
			"lead_refused":         uint64(h.lead_refused),
		},
	}, nil
}

// Version is polyflake_version.
func Version() string { return C.GoString(C.polyflake_version()) }

// NullChecks calls each pointer-taking function with a NULL in each pointer position and
// returns the result names, keyed by a description (the Go side of the bad-input test).
func NullChecks() map[string]string {
	out := map[string]string{}
	name := func(r C.polyflake_result) string { return C.GoString(C.polyflake_result_name(C.uint32_t(r))) }
	var c C.polyflake_config
	C.polyflake_config_init(&c)
	var id C.uint64_t
	var g *C.polyflake_generator
	out["config_init(NULL)"] = name(C.polyflake_config_init(nil))
	out["generator_new(NULL, NULL, &g)"] = name(C.polyflake_generator_new(nil, nil, &g))
	out["generator_new(&c, NULL, NULL)"] = name(C.polyflake_generator_new(&c, nil, nil))
	out["generator_close(NULL)"] = name(C.polyflake_generator_close(nil))
	out["wait_ready(NULL, 0)"] = name(C.polyflake_wait_ready(nil, 0))
	out["manual_clock_elapse(NULL, 1)"] = name(C.polyflake_manual_clock_elapse(nil, 1))
	out["next_id(NULL, &id)"] = name(C.polyflake_next_id(nil, &id))
	out["next_ids(NULL, &id, 1)"] = name(C.polyflake_next_ids(nil, &id, 1))
	out["parse_id(NULL, &id)"] = name(C.polyflake_parse_id(nil, &id))
	out["manual_clock_new(0, NULL)"] = name(C.polyflake_manual_clock_new(0, nil))
	out["health(NULL, NULL)"] = name(C.polyflake_health(nil, nil))
	var fo C.polyflake_file_lease_options
	C.polyflake_file_lease_options_init(&fo)
	out["new_file_lease(&c, &o{dir: NULL}, NULL, &g)"] = name(C.polyflake_generator_new_file_lease(&c, &fo, nil, &g))
	out["new_file_lease(&c, NULL, NULL, &g)"] = name(C.polyflake_generator_new_file_lease(&c, nil, nil, &g))
	var eo C.polyflake_etcd_options
	C.polyflake_etcd_options_init(&eo)
	eo.endpoint_count = 1
	out["new_etcd(&c, &o{endpoints: NULL, count: 1}, NULL, &g)"] = name(C.polyflake_generator_new_etcd(&c, &eo, nil, &g))
	out["new_from_env(&c, NULL, NULL, &g)"] = name(C.polyflake_generator_new_from_env(&c, nil, nil, &g))
	return out
}
