package polyflake

/*
#include "polyflake_cgo.h"
*/
import "C"

// Health is a snapshot of a generator's state and counters: the core's health fields, with the
// names the core gives them (ids_issued is IDsIssued). Status, Source, Mode, ClockSource and the
// lease's Kind and Phase are the core's stable names ("clock_behind", "file_lease", ...).
//
// Its JSON (encoding/json) has the core's field names, in the core's order (its Health::fields,
// the Python binding's attribute names): {"ok":true,"status":"ok",...,"ids_issued":3,...,
// "lease":null}; last_issued_ms is null before the first ID, lease null without a lease.
type Health struct {
	// OK is true when the generator can issue now.
	OK bool `json:"ok"`
	// Status says why it is or is not healthy: "ok", "clock_behind", "clock_stuck",
	// "clock_outside_window", "clock_failed", "lead_too_large", "used_after_fork",
	// "restart_guard" (a lease's or a fixed node id's guard waits), "lease_expired",
	// "lease_lost", "clock_ahead", "closed", "store_rolled_back" (the lease store went back in
	// time: the lease is lost), "clock_unsynchronized" (WithMaxClockErrorMs refuses).
	Status string `json:"status"`
	// Reason is a human-readable reason; empty when OK.
	Reason string `json:"reason"`
	// NodeID is the generator's node id (0 for UUIDv7 and ULID).
	NodeID int64 `json:"node_id"`
	// Source is where the node id came from: "static", "env", "hostname", "ipv4",
	// "file_lease", "etcd", "zookeeper".
	Source string `json:"source"`
	// Mode is "strict" or "monotonic".
	Mode string `json:"mode"`
	// LastIssuedMs is the Unix ms of the last ID issued (nil before the first).
	LastIssuedMs *int64 `json:"last_issued_ms"`
	// WallMs is the wall clock when the snapshot was taken (0 if the clock failed).
	WallMs int64 `json:"wall_ms"`
	// LeadMs is how far the last issued millisecond is ahead of the wall clock.
	LeadMs int64 `json:"lead_ms"`
	// IDsIssued counts the IDs issued.
	IDsIssued uint64 `json:"ids_issued"`
	// RewindsWaited counts calls that waited out a small rewind.
	RewindsWaited uint64 `json:"rewinds_waited"`
	// RewindsRefused counts calls refused because the clock was behind or stuck.
	RewindsRefused uint64 `json:"rewinds_refused"`
	// SequenceExhaustions counts strict calls that found their millisecond spent.
	SequenceExhaustions uint64 `json:"sequence_exhaustions"`
	// WaitSleeps counts the sleeps taken while waiting (strict mode never spins).
	WaitSleeps uint64 `json:"wait_sleeps"`
	// MsBorrowed counts the milliseconds a monotonic generator moved into ahead of the clock.
	MsBorrowed uint64 `json:"ms_borrowed"`
	// LeadRefused counts monotonic calls refused by the lead limit.
	LeadRefused uint64 `json:"lead_refused"`
	// LeaseRenewals counts lease renewals.
	LeaseRenewals uint64 `json:"lease_renewals"`
	// LeaseFailures counts failed lease renewals.
	LeaseFailures uint64 `json:"lease_failures"`
	// ClockAheadMs is how far the wall clock reads ahead of what elapsed time vouches for, while
	// that is a forward step not yet believed (0 otherwise).
	ClockAheadMs int64 `json:"clock_ahead_ms"`
	// ForwardRefused counts strict calls refused because the clock had stepped ahead.
	ForwardRefused uint64 `json:"forward_refused"`
	// ClockSource is the clock reading in effect: "precise" or "coarse".
	ClockSource string `json:"clock_source"`
	// ClockTickNs is the resolution of the system clock in use, from clock_getres (0 for a test
	// clock).
	ClockTickNs uint64 `json:"clock_tick_ns"`
	// ClockNote says why a requested coarse source is not in effect; empty otherwise.
	ClockNote string `json:"clock_note"`
	// RestartWaits counts the calls that waited for a fixed node id's restart guard (its
	// previous holder on this host may have issued up to a time the clock had not reached).
	RestartWaits uint64 `json:"restart_waits"`
	// RestartGuardNote says why a fixed node id on the system clock keeps no mark on this host
	// (the state directory cannot be written, or RestartGuardOff): a successor after a clock
	// stepped back could then repeat its IDs. Empty when it keeps one (Lease.Kind "host").
	RestartGuardNote string `json:"restart_guard_note"`
	// ClockSync is the kernel's word on the system clock when the snapshot was taken.
	ClockSync ClockSync `json:"clock_sync"`
	// Lease is the lease's state, or a fixed node id's mark on this host (Kind "host"), or nil.
	Lease *LeaseHealth `json:"lease"`
}

// ClockSync is what the kernel says of the system clock (adjtimex): whether a time daemon keeps
// it synchronized, its maximum and estimated error, a leap second due.
type ClockSync struct {
	// State is "ok", "insert_leap", "delete_leap", "leap_in_progress", "leap_done",
	// "unsynchronized" or "unavailable" (adjtimex could not be called).
	State string `json:"state"`
	// Synchronized is true when a time daemon keeps the clock synchronized.
	Synchronized bool `json:"synchronized"`
	// MaxErrorUs is the kernel's maximum error of the clock in µs (16,000,000 when
	// unsynchronized, -1 when unavailable): WithMaxClockErrorMs compares it with its bound.
	MaxErrorUs int64 `json:"max_error_us"`
	// EstErrorUs is the kernel's estimated error in µs (-1 when unavailable).
	EstErrorUs int64 `json:"est_error_us"`
}

// LeaseHealth is the lease part of Health.
type LeaseHealth struct {
	// Kind is "file", "etcd", "zookeeper", or "host": a fixed node id's mark on this host, its
	// restart guard (the library's polyflake_lease_kind_name).
	Kind string `json:"kind"`
	// Store is the directory, or the etcd endpoints or ZooKeeper ensemble and the prefix, or the
	// mark's path.
	Store string `json:"store"`
	// Slot is the slot held, which is the node id.
	Slot int64 `json:"slot"`
	// HighWaterMs is the high-water mark R: no ID carries a later timestamp until the store has
	// extended it.
	HighWaterMs int64 `json:"high_water_ms"`
	// GuardUntilMs is what the slot's previous holder may have reached (nil: no guard).
	GuardUntilMs *int64 `json:"guard_until_ms"`
	// GuardWaiting is true while the restart guard waits.
	GuardWaiting bool `json:"guard_waiting"`
	// GuardRemainingMs is how long the restart guard still waits.
	GuardRemainingMs uint64 `json:"guard_remaining_ms"`
	// GuardNote says why the guard is long; empty otherwise.
	GuardNote string `json:"guard_note"`
	// Lost is true once the lease is lost (the generator has stopped for good, or heals with Heal).
	Lost bool `json:"lost"`
	// Expired is true while the next ID would pass R.
	Expired bool `json:"expired"`
	// Phase is "held", "restart_guard", "expired" or "lost".
	Phase string `json:"phase"`
	// Renewals counts the lease's renewals (the same count as Health.LeaseRenewals).
	Renewals uint64 `json:"renewals"`
	// Failures counts its failed renewals (the same count as Health.LeaseFailures).
	Failures uint64 `json:"failures"`
	// LastError is the last store error, or why the lease was lost; empty if none.
	LastError string `json:"last_error"`
}

// healthOf converts the C snapshot; a failed call (a bug in the library) is an unhealthy
// snapshot saying so.
func healthOf(h *C.polyflake_health_snapshot, r C.polyflake_result) Health {
	if r != C.POLYFLAKE_RESULT_OK {
		return Health{Status: "unknown", Reason: sentinel(r).Error()}
	}
	out := Health{
		OK:                  bool(h.ok),
		Status:              C.GoString(C.polyflake_health_status_name(h.status)),
		Reason:              C.GoString(&h.reason[0]),
		NodeID:              int64(h.node_id),
		Source:              C.GoString(C.polyflake_node_source_name(h.source)),
		Mode:                Mode(h.mode).String(),
		WallMs:              int64(h.wall_ms),
		LeadMs:              int64(h.lead_ms),
		IDsIssued:           uint64(h.ids_issued),
		RewindsWaited:       uint64(h.rewinds_waited),
		RewindsRefused:      uint64(h.rewinds_refused),
		SequenceExhaustions: uint64(h.sequence_exhaustions),
		WaitSleeps:          uint64(h.wait_sleeps),
		MsBorrowed:          uint64(h.ms_borrowed),
		LeadRefused:         uint64(h.lead_refused),
		LeaseRenewals:       uint64(h.lease_renewals),
		LeaseFailures:       uint64(h.lease_failures),
		ClockAheadMs:        int64(h.clock_ahead_ms),
		ForwardRefused:      uint64(h.forward_refused),
		ClockSource:         ClockSource(h.clock_source).String(),
		ClockTickNs:         uint64(h.clock_tick_ns),
		ClockNote:           C.GoString(&h.clock_note[0]),
		RestartWaits:        uint64(h.restart_waits),
		RestartGuardNote:    C.GoString(&h.restart_guard_note[0]),
		ClockSync: ClockSync{
			State:        C.GoString(C.polyflake_clock_sync_state_name(h.clock_sync_state)),
			Synchronized: bool(h.clock_sync_synchronized),
			MaxErrorUs:   int64(h.clock_sync_max_error_us),
			EstErrorUs:   int64(h.clock_sync_est_error_us),
		},
	}
	if h.has_last_issued {
		ms := int64(h.last_issued_ms)
		out.LastIssuedMs = &ms
	}
	if h.lease_kind != C.POLYFLAKE_LEASE_KIND_NONE {
		out.Lease = &LeaseHealth{
			Kind:             C.GoString(C.polyflake_lease_kind_name(C.uint32_t(h.lease_kind))),
			Store:            C.GoString(&h.lease_store[0]),
			Slot:             int64(h.lease_slot),
			HighWaterMs:      int64(h.lease_high_water_ms),
			GuardWaiting:     bool(h.lease_guard_waiting),
			GuardRemainingMs: uint64(h.lease_guard_remaining_ms),
			GuardNote:        C.GoString(&h.lease_guard_note[0]),
			Lost:             bool(h.lease_lost),
			Expired:          bool(h.lease_expired),
			Phase:            C.GoString(C.polyflake_lease_phase_name(h.lease_phase)),
			Renewals:         uint64(h.lease_renewals),
			Failures:         uint64(h.lease_failures),
			LastError:        C.GoString(&h.lease_last_error[0]),
		}
		if h.lease_has_guard {
			ms := int64(h.lease_guard_until_ms)
			out.Lease.GuardUntilMs = &ms
		}
	}
	return out
}
