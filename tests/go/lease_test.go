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
	lease := FileLease{Dir: dir, Slots: 2, Identity: "go-a", ReserveMs: 2000}
	a, err := NewFileLease(DefaultConfig(), lease)
	if err != nil {
		t.Fatal(err)
	}
	lease.Identity = "go-b"
	b, err := NewFileLease(DefaultConfig(), lease)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.NodeID() == b.NodeID() || a.NodeID() < 0 || a.NodeID() > 1 || b.NodeID() < 0 || b.NodeID() > 1 {
		t.Fatalf("slots %d and %d", a.NodeID(), b.NodeID())
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
		int64(h.Lease.Slot) != a.NodeID() || h.Lease.Lost || h.Lease.GuardUntilMs != nil ||
		!strings.Contains(h.Lease.Store, dir) {
		t.Fatalf("health %+v lease %+v", h, h.Lease)
	}
	if h.Lease.HighWaterMs < d.TimestampMs || h.Lease.HighWaterMs > h.WallMs+2000 {
		t.Fatalf("R %d, last ms %d, wall %d", h.Lease.HighWaterMs, d.TimestampMs, h.WallMs)
	}

	lease.Identity = "go-c"
	if _, err := NewFileLease(DefaultConfig(), lease); code(err) != "NO_FREE_SLOT" {
		t.Fatalf("third holder of two slots: %v", err)
	}
	slotA := a.NodeID()
	a.Close()
	c, err := NewFileLease(DefaultConfig(), lease)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
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

	if _, err := NewFileLease(DefaultConfig(), FileLease{Dir: dir, Slots: 4096}); code(err) != "INVALID_NODE_SOURCE" {
		t.Fatalf("4096 slots of 1024 node ids: %v", err)
	}
	if _, err := NewEtcd(DefaultConfig(), []string{"http://127.0.0.1:1"}, 300); code(err) != "LEASE_STORE" {
		t.Fatalf("unreachable etcd: %v", err)
	}
	if _, err := NewEtcd(DefaultConfig(), nil, 300); code(err) != "INVALID_NODE_SOURCE" {
		t.Fatalf("no endpoint: %v", err)
	}
}
