package polyflake

// Healing a lost lease, from Go: a file lease whose slot file is deleted under it heals by itself
// with Heal(true) (a new slot behind its restart guard, the same Generator, its counters going
// on, no ID twice across the whole run), twice, the second time with WaitReady waiting through
// the heal; without it (the default) the same deletion leaves it lost for good.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// healSlots and healReserveMs: the brief's lease, two slots and a 500 ms reserve (renewed every
// 100 ms, so a deleted slot file is noticed within about 100 ms).
const (
	healSlots     = 2
	healReserveMs = 500
)

// mintInto issues n IDs into seen, failing the test on an error or an ID seen before.
func mintInto(t *testing.T, g *Generator, seen map[int64]bool, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		id, err := g.NextID()
		if err != nil {
			t.Fatalf("NextID: %v", err)
		}
		if seen[id] {
			t.Fatalf("ID %d issued twice", id)
		}
		seen[id] = true
	}
}

// deleteSlotFile removes the slot file of the slot g holds.
func deleteSlotFile(t *testing.T, g *Generator, dir string) {
	t.Helper()
	slot := filepath.Join(dir, fmt.Sprintf("slot-%04d", g.NodeID()))
	if err := os.Remove(slot); err != nil {
		t.Fatalf("remove the slot file: %v", err)
	}
}

func TestHealAfterTheSlotFileIsDeleted(t *testing.T) {
	dir := t.TempDir()
	g, err := New(FileLease(dir, Slots(healSlots), ReserveMs(healReserveMs), Heal(true)))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.WaitReady(10_000); err != nil {
		t.Fatalf("WaitReady: %v", err)
	}
	seen := map[int64]bool{}
	mintInto(t, g, seen, 1000)
	lost := g.NodeID()
	deleteSlotFile(t, g, dir)

	// Mint on through the loss and the heal: the IDs issued before the loss is noticed are the
	// old slot's, then refusals (noted), then the new slot's. Done once 1,000 more have come
	// after the last refusal.
	start := time.Now()
	refusals := map[string]int{}
	statuses := map[string]bool{}
	after, healedIn := 0, time.Duration(0)
	for after < 1000 {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("no heal within 10 s: refusals %v, statuses %v, health %+v", refusals, statuses,
				g.Health())
		}
		statuses[g.Health().Status] = true
		id, err := g.NextID()
		if err != nil {
			switch {
			case errors.Is(err, ErrLeaseLost):
				refusals["ErrLeaseLost"]++
			case errors.Is(err, ErrLeaseNotReady):
				refusals["ErrLeaseNotReady"]++
			default:
				t.Fatalf("NextID while healing: %v", err)
			}
			after, healedIn = 0, 0
			time.Sleep(time.Millisecond)
			continue
		}
		if seen[id] {
			t.Fatalf("ID %d issued twice (refusals %v)", id, refusals)
		}
		seen[id] = true
		if len(refusals) > 0 {
			if healedIn == 0 {
				healedIn = time.Since(start)
			}
			after++
		} else {
			// Not noticed yet: keep it short so the old slot's IDs stay few.
			time.Sleep(100 * time.Microsecond)
		}
	}
	if len(refusals) == 0 {
		t.Fatalf("the loss was never seen (statuses %v)", statuses)
	}
	if err := g.WaitReady(5_000); err != nil {
		t.Fatalf("WaitReady after the heal: %v", err)
	}
	h := g.Health()
	if !h.OK || h.Status != "ok" || h.Lease == nil || h.Lease.Lost || h.Lease.Phase != "held" {
		t.Fatalf("health after the heal: %+v %+v", h, h.Lease)
	}
	if h.NodeID != g.NodeID() || h.Lease.Slot != g.NodeID() {
		t.Fatalf("node id %d, health %d, slot %d", g.NodeID(), h.NodeID, h.Lease.Slot)
	}
	if h.IDsIssued < uint64(len(seen)) {
		t.Fatalf("ids_issued %d < %d minted: the counters did not go on", h.IDsIssued, len(seen))
	}
	id, err := g.NextID()
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := g.Decode(id); d.NodeID != g.NodeID() {
		t.Fatalf("an ID after the heal carries node %d, the generator holds %d", d.NodeID, g.NodeID())
	}
	if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("slot-%04d", g.NodeID()))); err != nil {
		t.Fatalf("the new slot's file: %v", err)
	}
	t.Logf("slot %d lost, slot %d taken; issuing again after %v; refusals %v; statuses %v; "+
		"%d IDs, 0 twice, ids_issued %d", lost, g.NodeID(), healedIn.Round(time.Millisecond),
		refusals, statuses, len(seen), h.IDsIssued)

	// Again, now waiting in WaitReady: once the loss is seen, it waits through the heal.
	deleteSlotFile(t, g, dir)
	start = time.Now()
	for g.Health().OK {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("the second deletion not seen within 5 s: %+v", g.Health())
		}
		time.Sleep(time.Millisecond)
	}
	seenAt := time.Since(start)
	if err := g.WaitReady(10_000); err != nil {
		t.Fatalf("WaitReady through the second heal: %v (health %+v)", err, g.Health())
	}
	waited := time.Since(start) - seenAt
	mintInto(t, g, seen, 1000)
	if h := g.Health(); !h.OK || h.IDsIssued < uint64(len(seen)) {
		t.Fatalf("after the second heal: %+v, %d minted", h, len(seen))
	}
	t.Logf("second deletion seen after %v; WaitReady returned nil after %v more; %d IDs, 0 twice",
		seenAt.Round(time.Millisecond), waited.Round(time.Millisecond), len(seen))
}

func TestNoHealByDefault(t *testing.T) {
	dir := t.TempDir()
	g, err := New(FileLease(dir, Slots(healSlots), ReserveMs(healReserveMs)))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.WaitReady(10_000); err != nil {
		t.Fatalf("WaitReady: %v", err)
	}
	seen := map[int64]bool{}
	mintInto(t, g, seen, 100)
	deleteSlotFile(t, g, dir)
	start := time.Now()
	for g.Health().Status != "lease_lost" {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("not lost 5 s after the deletion: %+v", g.Health())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Second)
	h := g.Health()
	if h.OK || h.Status != "lease_lost" || h.Lease == nil || !h.Lease.Lost {
		t.Fatalf("1 s later: %+v %+v", h, h.Lease)
	}
	if _, err := g.NextID(); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("NextID: %v, want ErrLeaseLost", err)
	}
	began := time.Now()
	if err := g.WaitReady(2_000); !errors.Is(err, ErrLeaseLost) || time.Since(began) > time.Second {
		t.Fatalf("WaitReady: %v after %v, want ErrLeaseLost at once", err, time.Since(began))
	}
}
