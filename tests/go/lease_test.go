package cgotest

import (
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// File leases through cgo: two holders get two slots, the third gets NO_FREE_SLOT, a freed slot
// is taken again behind the restart guard, goroutines share a lease generator, health carries
// the lease.
func TestFileLease(t *testing.T) {
	dir := t.TempDir()
	ident := func(s string) *string { return &s }
	lease := DefaultFileLease(dir)
	lease.Slots, lease.Identity, lease.ReserveMs = 2, ident("go-a"), 2000
	a, err := NewFileLease(DefaultConfig(), lease, nil)
	if err != nil {
		t.Fatal(err)
	}
	lease.Identity = ident("go-b")
	b, err := NewFileLease(DefaultConfig(), lease, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if a.NodeID() == b.NodeID() || a.NodeID() < 0 || a.NodeID() > 1 || b.NodeID() < 0 || b.NodeID() > 1 {
		t.Fatalf("slots %d and %d", a.NodeID(), b.NodeID())
	}
	// New slots: guarded for a full reserve (a holder nobody can see may have reached that far).
	if _, err := a.NextID(); code(err) != "LEASE_NOT_READY" {
		t.Fatalf("a new slot issues before its guard: %v", err)
	}
	if h, _ := a.Health(); h.Lease == nil || h.Lease.Phase != "restart_guard" || !h.Lease.GuardWaiting {
		t.Fatalf("a new slot's health: %+v", h.Lease)
	}
	if err := a.WaitReady(10000); err != nil {
		t.Fatal(err)
	}

	// 8 goroutines on one lease generator: no duplicate, every ID carries the slot.
	const perG = 5000
	ids := make([]uint64, 8*perG)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(part []uint64) {
			defer wg.Done()
			for i := range part {
				id, err := a.NextID()
				if err != nil {
					t.Error(err)
					return
				}
				part[i] = id
			}
		}(ids[w*perG : (w+1)*perG])
	}
	wg.Wait()
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			t.Fatalf("duplicate %d", ids[i])
		}
	}
	last := ids[len(ids)-1]
	d, err := a.Decode(last)
	if err != nil || int64(d.NodeID) != a.NodeID() {
		t.Fatalf("decode %d: %+v %v", last, d, err)
	}

	h, err := a.Health()
	if err != nil {
		t.Fatal(err)
	}
	if !h.OK || h.Source != "file_lease" || h.Lease == nil || h.Lease.Kind != "file" ||
		int64(h.Lease.Slot) != a.NodeID() || h.Lease.Lost || h.Lease.Expired || h.Lease.Phase != "held" ||
		h.Lease.GuardUntilMs == nil || h.Lease.GuardWaiting || h.Lease.GuardNote != "" ||
		!strings.Contains(h.Lease.Store, dir) {
		t.Fatalf("health %+v lease %+v", h, h.Lease)
	}
	if h.Lease.HighWaterMs < d.TimestampMs || h.Lease.HighWaterMs > h.WallMs+2000 {
		t.Fatalf("R %d, last ms %d, wall %d", h.Lease.HighWaterMs, d.TimestampMs, h.WallMs)
	}

	lease.Identity = ident("go-c")
	if _, err := NewFileLease(DefaultConfig(), lease, nil); code(err) != "NO_FREE_SLOT" {
		t.Fatalf("third holder of two slots: %v", err)
	}
	slotA := a.NodeID()
	a.Free()
	c, err := NewFileLease(DefaultConfig(), lease, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free()
	if c.NodeID() != slotA {
		t.Fatalf("freed slot %d, got %d", slotA, c.NodeID())
	}
	hc, _ := c.Health()
	if hc.Lease == nil || hc.Lease.GuardUntilMs == nil || *hc.Lease.GuardUntilMs != d.TimestampMs {
		t.Fatalf("guard: %+v, previous holder's last ms %d", hc.Lease, d.TimestampMs)
	}
	deadline := time.Now().Add(15 * time.Second)
	var id uint64
	for {
		id, err = c.NextID()
		if code(err) != "LEASE_NOT_READY" || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	if dc, _ := c.Decode(id); dc.TimestampMs <= d.TimestampMs {
		t.Fatalf("after the guard: %d <= %d", dc.TimestampMs, d.TimestampMs)
	}

	wide := DefaultFileLease(dir)
	wide.Slots = 4096
	if _, err := NewFileLease(DefaultConfig(), wide, nil); code(err) != "INVALID_NODE_SOURCE" {
		t.Fatalf("4096 slots of 1024 node ids: %v", err)
	}
	if _, err := NewEtcd(DefaultConfig(), []string{"http://127.0.0.1:1"}, 300); code(err) != "LEASE_STORE" {
		t.Fatalf("unreachable etcd: %v", err)
	}
	if _, err := NewEtcd(DefaultConfig(), nil, 300); code(err) != "INVALID_NODE_SOURCE" {
		t.Fatalf("no endpoint: %v", err)
	}
}
