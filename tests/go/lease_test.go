package cgotest

import (
	"errors"
	"fmt"
	"os"
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
	if err != nil || d.NodeID != a.NodeID() {
		t.Fatalf("decode %d: %+v %v", last, d, err)
	}

	h := a.Health()
	if !h.OK || h.Source != "file_lease" || h.Lease == nil || h.Lease.Kind != "file" ||
		h.Lease.Slot != a.NodeID() || h.Lease.Lost || h.Lease.Expired || h.Lease.Phase != "held" ||
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

// zookeeperEnsemble is the real ZooKeeper tests/stores/with_zookeeper.sh started for this run
// (make test-go runs the tests beside one).
func zookeeperEnsemble(t *testing.T) string {
	ensemble := os.Getenv("POLYFLAKE_TEST_ZOOKEEPER")
	if ensemble == "" {
		t.Fatal("POLYFLAKE_TEST_ZOOKEEPER is unset: run under tests/stores/with_zookeeper.sh (make test-go)")
	}
	return ensemble
}

// ZooKeeper leases through the Go package, against a real ZooKeeper: two holders get two slots,
// a third ErrNoFreeSlot, IDs carry the slot, health names the ensemble and the prefix, a freed
// slot is taken again behind its guard; digest auth keeps a client without the password out.
func TestZooKeeperLease(t *testing.T) {
	ensemble := zookeeperEnsemble(t)
	prefix := fmt.Sprintf("/polyflake-go-test-%d", os.Getpid())
	lease := func(identity string, opts ...polyflake.ZooKeeperOption) polyflake.Option {
		all := append([]polyflake.ZooKeeperOption{polyflake.Prefix(prefix), polyflake.Slots(2),
			polyflake.Identity(identity), polyflake.ReserveMs(1000), polyflake.SessionTimeoutMs(4000),
			polyflake.ConnectTimeoutMs(3000)}, opts...)
		return polyflake.ZooKeeper(ensemble, all...)
	}
	a, err := polyflake.New(lease("go-zk-a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := polyflake.New(lease("go-zk-b"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.NodeID() == b.NodeID() || a.NodeID() > 1 || b.NodeID() > 1 {
		t.Fatalf("slots %d and %d", a.NodeID(), b.NodeID())
	}
	if err := a.WaitReady(10000); err != nil {
		t.Fatal(err)
	}
	id, err := a.NextID()
	if err != nil {
		t.Fatal(err)
	}
	d, _ := a.Decode(id)
	h := a.Health()
	if !h.OK || h.Source != "zookeeper" || h.Lease == nil || h.Lease.Kind != "zookeeper" ||
		h.Lease.Slot != a.NodeID() || d.NodeID != a.NodeID() || h.Lease.Lost ||
		!strings.Contains(h.Lease.Store, ensemble) || !strings.Contains(h.Lease.Store, prefix) ||
		h.Lease.HighWaterMs < d.TimestampMs {
		t.Fatalf("health %+v lease %+v", h, h.Lease)
	}
	if _, err := polyflake.New(lease("go-zk-c")); !errors.Is(err, polyflake.ErrNoFreeSlot) {
		t.Fatalf("third holder of two slots: %v", err)
	}
	slotA := a.NodeID()
	a.Close()
	c, err := polyflake.New(lease("go-zk-c"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.NodeID() != slotA {
		t.Fatalf("freed slot %d, got %d", slotA, c.NodeID())
	}
	if err := c.WaitReady(10000); err != nil {
		t.Fatal(err)
	}
	idc, err := c.NextID()
	if err != nil {
		t.Fatal(err)
	}
	if dc, _ := c.Decode(idc); dc.TimestampMs <= d.TimestampMs {
		t.Fatalf("after the guard: %d <= %d", dc.TimestampMs, d.TimestampMs)
	}

	// Digest auth: the holder's znodes are its user's. (b and c hold node ids 0 and 1 in this
	// process, which no other generator of the same ID space may hold: let them go first.)
	b.Close()
	c.Close()
	aclPrefix := polyflake.Prefix(prefix + "-acl")
	owner, err := polyflake.New(lease("go-zk-acl", aclPrefix, polyflake.Username("go-ids"), polyflake.Password("right")))
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	_, err = polyflake.New(lease("go-zk-acl-2", aclPrefix, polyflake.Username("go-ids"), polyflake.Password("go-bad-pw-3")))
	if !errors.Is(err, polyflake.ErrLeaseStore) || !strings.Contains(err.Error(), "not authorized") ||
		strings.Contains(err.Error(), "go-bad-pw-3") {
		t.Fatalf("wrong password: %v", err)
	}
	if _, err = polyflake.New(lease("go-zk-acl-3", aclPrefix)); !errors.Is(err, polyflake.ErrLeaseStore) ||
		!strings.Contains(err.Error(), "username and password") {
		t.Fatalf("no credentials: %v", err)
	}
}

// Bad ZooKeeper and TLS input needs no server: each is a clear error of the core's kind.
func TestZooKeeperAndTLSBadInput(t *testing.T) {
	cases := []struct {
		name   string
		source polyflake.Option
		want   error
		text   string
	}{
		{"empty ensemble", polyflake.ZooKeeper(""), polyflake.ErrInvalidNodeSource, "at least one server"},
		{"no port", polyflake.ZooKeeper("zk1"), polyflake.ErrInvalidNodeSource, "host:port"},
		{"relative prefix", polyflake.ZooKeeper("127.0.0.1:1", polyflake.Prefix("polyflake")), polyflake.ErrInvalidNodeSource, "must start with '/'"},
		{"NUL in the ensemble", polyflake.ZooKeeper("127.0.0.1:1\x00"), polyflake.ErrInvalidNodeSource, "NUL"},
		{"session timeout 0", polyflake.ZooKeeper("127.0.0.1:1", polyflake.SessionTimeoutMs(0)), polyflake.ErrInvalidNodeSource, "session_timeout_ms"},
		{"user without password", polyflake.ZooKeeper("127.0.0.1:1", polyflake.Username("ids")), polyflake.ErrInvalidNodeSource, "has no password"},
		{"missing CA", polyflake.ZooKeeper("127.0.0.1:1", polyflake.CAFile("/nonexistent/go-ca.pem")), polyflake.ErrInvalidNodeSource, "go-ca.pem: cannot read it"},
		{"etcd missing CA", polyflake.Etcd([]string{"https://127.0.0.1:1"}, polyflake.CAFile("/nonexistent/go-etcd-ca.pem")), polyflake.ErrInvalidNodeSource, "go-etcd-ca.pem"},
		{"etcd cert without key", polyflake.Etcd([]string{"https://127.0.0.1:1"}, polyflake.CertFile("/nonexistent/c.pem")), polyflake.ErrInvalidNodeSource, "key_file"},
		{"etcd password without user", polyflake.Etcd([]string{"http://127.0.0.1:1"}, polyflake.Password("go-secret-5")), polyflake.ErrInvalidNodeSource, "user name"},
		{"unreachable", polyflake.ZooKeeper("127.0.0.1:1", polyflake.ConnectTimeoutMs(500)), polyflake.ErrLeaseStore, "cannot reach ZooKeeper"},
	}
	for _, c := range cases {
		start := time.Now()
		_, err := polyflake.New(c.source)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) || strings.Contains(err.Error(), "go-secret-5") {
			t.Errorf("%s: %v, want %v with %q", c.name, err, c.want, c.text)
		}
		if time.Since(start) > 5*time.Second {
			t.Errorf("%s took %v", c.name, time.Since(start))
		}
	}
	// An unset option is the core's environment variable.
	t.Setenv("POLYFLAKE_ZOOKEEPER_CA_FILE", "/nonexistent/go-env-ca.pem")
	if _, err := polyflake.New(polyflake.ZooKeeper("127.0.0.1:1")); !errors.Is(err, polyflake.ErrInvalidNodeSource) ||
		!strings.Contains(err.Error(), "go-env-ca.pem") {
		t.Errorf("CA file from the environment: %v", err)
	}
}
