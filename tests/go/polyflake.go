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
	"unsafe"
)

// Error is a polyflake_result other than OK; Code is its stable name ("CLOCK_MOVED_BACKWARDS").
type Error struct {
	Code   string
	Result uint32
}

func (e *Error) Error() string {
	return e.Code + ": " + C.GoString(C.polyflake_result_message(C.uint32_t(e.Result)))
}

func check(r C.polyflake_result) error {
	if r == C.POLYFLAKE_RESULT_OK {
		return nil
	}
	return &Error{Code: C.GoString(C.polyflake_result_name(C.uint32_t(r))), Result: uint32(r)}
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

// Config is polyflake_config; MaxLeadMs nil means no lead limit.
type Config struct {
	Layout    Layout
	EpochMs   int64
	NodeID    int64
	Mode      uint32
	MaxWaitMs float64
	MaxLeadMs *int64
}

// Modes.
const (
	Strict    = uint32(C.POLYFLAKE_MODE_STRICT)
	Monotonic = uint32(C.POLYFLAKE_MODE_MONOTONIC)
)

// DefaultConfig is polyflake_config_init.
func DefaultConfig() Config {
	var c C.polyflake_config
	C.polyflake_config_init(&c)
	return Config{Layout: layoutOf(c.layout), EpochMs: int64(c.epoch_ms), NodeID: int64(c.node_id), Mode: uint32(c.mode), MaxWaitMs: float64(c.max_wait_ms)}
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
	return c
}

// ManualClock is a polyflake_manual_clock handle.
type ManualClock struct{ p *C.polyflake_manual_clock }

// NewManualClock is polyflake_manual_clock_new.
func NewManualClock(startMs int64) (*ManualClock, error) {
	var p *C.polyflake_manual_clock
	if err := check(C.polyflake_manual_clock_new(C.int64_t(startMs), &p)); err != nil {
		return nil, err
	}
	return &ManualClock{p}, nil
}

// Set is polyflake_manual_clock_set.
func (m *ManualClock) Set(ms int64) error {
	return check(C.polyflake_manual_clock_set(m.p, C.int64_t(ms)))
}

// Advance is polyflake_manual_clock_advance.
func (m *ManualClock) Advance(ms int64) error {
	return check(C.polyflake_manual_clock_advance(m.p, C.int64_t(ms)))
}

// Close is polyflake_manual_clock_free.
func (m *ManualClock) Close() { C.polyflake_manual_clock_free(m.p); m.p = nil }

// Generator is a polyflake_generator handle, safe to share between goroutines.
type Generator struct{ p *C.polyflake_generator }

// New is polyflake_generator_new (system clock).
func New(cfg Config) (*Generator, error) {
	c := cfg.c()
	var p *C.polyflake_generator
	if err := check(C.polyflake_generator_new(&c, &p)); err != nil {
		return nil, err
	}
	return &Generator{p}, nil
}

// NewWithManualClock is polyflake_generator_new_with_manual_clock.
func NewWithManualClock(cfg Config, clock *ManualClock) (*Generator, error) {
	c := cfg.c()
	var p *C.polyflake_generator
	if err := check(C.polyflake_generator_new_with_manual_clock(&c, clock.p, &p)); err != nil {
		return nil, err
	}
	return &Generator{p}, nil
}

// NewWithScriptedClock makes a scripted clock from values and a generator on it (the
// generator keeps the clock; the handle is freed here).
func NewWithScriptedClock(cfg Config, values []int64) (*Generator, error) {
	var sc *C.polyflake_scripted_clock
	var first *C.int64_t
	if len(values) > 0 {
		first = (*C.int64_t)(unsafe.Pointer(&values[0]))
	}
	if err := check(C.polyflake_scripted_clock_new(first, C.size_t(len(values)), &sc)); err != nil {
		return nil, err
	}
	defer C.polyflake_scripted_clock_free(sc)
	c := cfg.c()
	var p *C.polyflake_generator
	if err := check(C.polyflake_generator_new_with_scripted_clock(&c, sc, &p)); err != nil {
		return nil, err
	}
	return &Generator{p}, nil
}

// FileLease is polyflake_file_lease_options; zero values mean the library's defaults.
type FileLease struct {
	Dir       string
	Slots     uint32
	Identity  string // "" means the hostname
	ReserveMs uint64
}

// withLeaseOptions fills polyflake_file_lease_options from lease (the C strings live until mk
// returns) and returns the generator mk builds with them.
func withLeaseOptions(lease FileLease, mk func(*C.polyflake_file_lease_options, **C.polyflake_generator) C.polyflake_result) (*Generator, error) {
	var o C.polyflake_file_lease_options
	C.polyflake_file_lease_options_init(&o)
	dir := C.CString(lease.Dir)
	defer C.free(unsafe.Pointer(dir))
	o.dir = dir
	o.slots = C.uint32_t(lease.Slots)
	if lease.Identity != "" {
		ident := C.CString(lease.Identity)
		defer C.free(unsafe.Pointer(ident))
		o.identity = ident
	}
	if lease.ReserveMs != 0 {
		o.reserve_ms = C.uint64_t(lease.ReserveMs)
	}
	var p *C.polyflake_generator
	if err := check(mk(&o, &p)); err != nil {
		return nil, err
	}
	return &Generator{p}, nil
}

// NewFileLease is polyflake_generator_new_file_lease (cfg.NodeID is not used).
func NewFileLease(cfg Config, lease FileLease) (*Generator, error) {
	c := cfg.c()
	return withLeaseOptions(lease, func(o *C.polyflake_file_lease_options, p **C.polyflake_generator) C.polyflake_result {
		return C.polyflake_generator_new_file_lease(&c, o, p)
	})
}

// NewFileLeaseWithManualClock is polyflake_generator_new_file_lease_with_manual_clock.
func NewFileLeaseWithManualClock(cfg Config, lease FileLease, clock *ManualClock) (*Generator, error) {
	c := cfg.c()
	return withLeaseOptions(lease, func(o *C.polyflake_file_lease_options, p **C.polyflake_generator) C.polyflake_result {
		return C.polyflake_generator_new_file_lease_with_manual_clock(&c, o, clock.p, p)
	})
}

// NewFileLeaseWithScriptedClock makes a scripted clock from values and a file-lease generator
// on it (polyflake_generator_new_file_lease_with_scripted_clock; the handle is freed here).
func NewFileLeaseWithScriptedClock(cfg Config, lease FileLease, values []int64) (*Generator, error) {
	var sc *C.polyflake_scripted_clock
	var first *C.int64_t
	if len(values) > 0 {
		first = (*C.int64_t)(unsafe.Pointer(&values[0]))
	}
	if err := check(C.polyflake_scripted_clock_new(first, C.size_t(len(values)), &sc)); err != nil {
		return nil, err
	}
	defer C.polyflake_scripted_clock_free(sc)
	c := cfg.c()
	return withLeaseOptions(lease, func(o *C.polyflake_file_lease_options, p **C.polyflake_generator) C.polyflake_result {
		return C.polyflake_generator_new_file_lease_with_scripted_clock(&c, o, sc, p)
	})
}

// NewEtcd is polyflake_generator_new_etcd with these endpoints and a connect timeout, every
// other option at its default.
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
	var p *C.polyflake_generator
	if err := check(C.polyflake_generator_new_etcd(&c, &o, &p)); err != nil {
		return nil, err
	}
	return &Generator{p}, nil
}

// NodeID is the node id the generator holds (for a lease: its slot).
func (g *Generator) NodeID() int64 {
	var c C.polyflake_config
	if C.polyflake_generator_config(g.p, &c) != C.POLYFLAKE_RESULT_OK {
		return -1
	}
	return int64(c.node_id)
}

// Close is polyflake_generator_free.
func (g *Generator) Close() { C.polyflake_generator_free(g.p); g.p = nil }

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
	OK       bool
	Status   string
	Reason   string
	LeadMs   int64
	WallMs   int64
	Counters map[string]uint64
	Source   string // "static", "file_lease", ...
	Lease    *LeaseHealth
}

// LeaseHealth is the lease part of polyflake_health_snapshot (nil when the node id is not leased).
type LeaseHealth struct {
	Kind             string // "file" or "etcd"
	Slot             uint32
	HighWaterMs      int64
	GuardUntilMs     *int64
	GuardWaiting     bool
	GuardRemainingMs uint64
	Lost             bool
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
			Lost: bool(h.lease_lost), Renewals: uint64(h.lease_renewals), Failures: uint64(h.lease_failures),
			Store: C.GoString(&h.lease_store[0]), LastError: C.GoString(&h.lease_last_error[0]),
		}
		if h.lease_has_guard {
			g := int64(h.lease_guard_until_ms)
			lease.GuardUntilMs = &g
		}
	}
	return Health{
		Source: C.GoString(C.polyflake_node_source_name(C.uint32_t(h.source))),
		Lease:  lease,
		WallMs: int64(h.wall_ms),
		OK:     bool(h.ok),
		Status: C.GoString(C.polyflake_health_status_name(C.uint32_t(h.status))),
		Reason: C.GoString(&h.reason[0]),
		LeadMs: int64(h.lead_ms),
		Counters: map[string]uint64{
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
	out["generator_new(NULL, &g)"] = name(C.polyflake_generator_new(nil, &g))
	out["generator_new(&c, NULL)"] = name(C.polyflake_generator_new(&c, nil))
	out["next_id(NULL, &id)"] = name(C.polyflake_next_id(nil, &id))
	out["next_ids(NULL, &id, 1)"] = name(C.polyflake_next_ids(nil, &id, 1))
	out["parse_id(NULL, &id)"] = name(C.polyflake_parse_id(nil, &id))
	out["manual_clock_new(0, NULL)"] = name(C.polyflake_manual_clock_new(0, nil))
	out["health(NULL, NULL)"] = name(C.polyflake_health(nil, nil))
	var fo C.polyflake_file_lease_options
	C.polyflake_file_lease_options_init(&fo)
	out["new_file_lease(&c, &o{dir: NULL}, &g)"] = name(C.polyflake_generator_new_file_lease(&c, &fo, &g))
	out["new_file_lease(&c, NULL, &g)"] = name(C.polyflake_generator_new_file_lease(&c, nil, &g))
	var eo C.polyflake_etcd_options
	C.polyflake_etcd_options_init(&eo)
	eo.endpoint_count = 1
	out["new_etcd(&c, &o{endpoints: NULL, count: 1}, &g)"] = name(C.polyflake_generator_new_etcd(&c, &eo, &g))
	out["new_from_env(&c, NULL, &g)"] = name(C.polyflake_generator_new_from_env(&c, nil, &g))
	return out
}
