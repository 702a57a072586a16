package cgotest

import (
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	polyflake "example.invalid/polyflake/go"
)

// File leases through the Go package: two holders get two slots, the third gets NO_FREE_SLOT, a
// freed slot is taken again behind the restart guard, goroutines share a lease generator, health
// carries the lease.
func TestFileLease(t *testing.T) {
	dir := t.TempDir()
	lease := func(identity string) polyflake.Option {
		return polyflake.FileLease(dir, polyflake.Slots(2), polyflake.Identity(identity), polyflake.ReserveMs(2000))
	}
	a, err := polyflake.New(lease("go-a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := polyflake.New(lease("go-b"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.NodeID() == b.NodeID() || a.NodeID() < 0 || a.NodeID() > 1 || b.NodeID() < 0 || b.NodeID() > 1 {
		t.Fatalf("slots %d and %d", a.NodeID(), b.NodeID())
	}
	// New slots: guarded for a full reserve (a holder nobody can see may have reached that far).
	if _, err := a.NextID(); !errors.Is(err, polyflake.ErrLeaseNotReady) {
		t.Fatalf("a new slot issues before its guard: %v", err)
	}
	if h := a.Health(); h.Lease == nil || h.Lease.Phase != "restart_guard" || !h.Lease.GuardWaiting || h.Status != "restart_guard" {
		t.Fatalf("a new slot's health: %+v", h.Lease)
	}
	if err := a.WaitReady(10000); err != nil {
		t.Fatal(err)
	}

	// 8 goroutines on one lease generator: no duplicate, every ID carries the slot.
	const perG = 5000
	ids := make([]int64, 8*perG)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(part []int64) {
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

	h := a.Health()
	if !h.OK || h.Source != "file_lease" || h.Lease == nil || h.Lease.Kind != "file" ||
		int64(h.Lease.Slot) != a.NodeID() || h.Lease.Lost || h.Lease.Expired || h.Lease.Phase != "held" ||
		h.Lease.GuardUntilMs == nil || h.Lease.GuardWaiting || h.Lease.GuardNote != "" ||
		!strings.Contains(h.Lease.Store, dir) {
		t.Fatalf("health %+v lease %+v", h, h.Lease)
	}
	if h.Lease.HighWaterMs < d.TimestampMs || h.Lease.HighWaterMs > h.WallMs+2000 {
		t.Fatalf("R %d, last ms %d, wall %d", h.Lease.HighWaterMs, d.TimestampMs, h.WallMs)
	}

	if _, err := polyflake.New(lease("go-c")); !errors.Is(err, polyflake.ErrNoFreeSlot) {
		t.Fatalf("third holder of two slots: %v", err)
	}
	slotA := a.NodeID()
	a.Close()
	c, err := polyflake.New(lease("go-c"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.NodeID() != slotA {
		t.Fatalf("freed slot %d, got %d", slotA, c.NodeID())
	}
	hc := c.Health()
	if hc.Lease == nil || hc.Lease.GuardUntilMs == nil || *hc.Lease.GuardUntilMs != d.TimestampMs {
		t.Fatalf("guard: %+v, previous holder's last ms %d", hc.Lease, d.TimestampMs)
	}
	deadline := time.Now().Add(15 * time.Second)
	var id int64
	for {
		id, err = c.NextID()
		if !errors.Is(err, polyflake.ErrLeaseNotReady) || time.Now().After(deadline) {
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

	if _, err := polyflake.New(polyflake.FileLease(dir, polyflake.Slots(4096))); !errors.Is(err, polyflake.ErrInvalidNodeSource) {
		t.Fatalf("4096 slots of 1024 node ids: %v", err)
	}
	etcd := polyflake.Etcd([]string{"http://127.0.0.1:1"}, polyflake.ConnectTimeoutMs(300))
	if _, err := polyflake.New(etcd); !errors.Is(err, polyflake.ErrLeaseStore) {
		t.Fatalf("unreachable etcd: %v", err)
	}
	if _, err := polyflake.New(polyflake.Etcd(nil)); !errors.Is(err, polyflake.ErrInvalidNodeSource) {
		t.Fatalf("no endpoint: %v", err)
	}
}
