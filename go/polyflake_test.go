package polyflake

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

var allSentinels = []*Error{
	ErrInvalidLayout, ErrUnknownLayout, ErrInvalidNodeID, ErrInvalidEpoch, ErrInvalidArgument,
	ErrInvalidID, ErrClockMovedBackwards, ErrTimestampOverflow, ErrLeadLimitExceeded,
	ErrNodeIDInUse, ErrUsedAfterFork, ErrClockFailed, ErrInvalidNodeSource, ErrNoFreeSlot,
	ErrLeaseNotReady, ErrLeaseExpired, ErrLeaseLost, ErrLeaseStore, ErrClockJumpedAhead,
	ErrIDSpaceMismatch, ErrGeneratorClosed, ErrInterrupted, ErrClockUnsynchronized,
	ErrNullParameter, ErrPanic, ErrBufferTooSmall,
}

// Every result the C ABI names has exactly one sentinel, named by the library: a new core error
// kind fails this test until it has one.
func TestSentinelsCoverEveryResult(t *testing.T) {
	named := 0
	for code := uint32(1); code < 1000; code++ {
		name := resultName(code)
		if name == "unknown polyflake_result" {
			continue
		}
		named++
		found := 0
		for _, s := range allSentinels {
			if uint32(s.result) == code {
				found++
				if s.Code != name || s.Message == "" {
					t.Errorf("code %d: sentinel %q (%q), library %q", code, s.Code, s.Message, name)
				}
			}
		}
		if found != 1 {
			t.Errorf("code %d (%s): %d sentinels", code, name, found)
		}
	}
	if named != len(allSentinels) {
		t.Errorf("%d named results, %d sentinels", named, len(allSentinels))
	}
}

func TestModuleVersionIsTheLibrarys(t *testing.T) {
	if ModuleVersion != Version() {
		t.Fatalf("go/ says %s, libpolyflake %s", ModuleVersion, Version())
	}
}

func TestErrorsCarryTheCoresCodeAndMessage(t *testing.T) {
	clock := NewManualClock(1737747358021)
	g := MustNew(NodeID(5), WithClock(clock), WithMaxWaitMs(5))
	if _, err := g.NextID(); err != nil {
		t.Fatal(err)
	}
	clock.Advance(-600)
	_, err := g.NextID()
	var e *Error
	if !errors.Is(err, ErrClockMovedBackwards) || errors.Is(err, ErrLeaseLost) || !errors.As(err, &e) {
		t.Fatalf("%v", err)
	}
	if e.Code != "CLOCK_MOVED_BACKWARDS" || !strings.Contains(e.Message, "600") {
		t.Fatalf("code %q message %q", e.Code, e.Message)
	}
	if h := g.Health(); h.OK || h.Status != "clock_behind" || h.RewindsRefused != 1 {
		t.Fatalf("health %+v", h)
	}
	// Errors from many goroutines at once keep their own messages (read on the failing thread).
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for k := 0; k < 200; k++ {
				_, err := New(NodeID(2000 + int64(i)))
				if !errors.Is(err, ErrInvalidNodeID) || !strings.Contains(err.Error(), "20") {
					t.Errorf("%v", err)
					return
				}
				_, err = ParseID("12a")
				if !errors.Is(err, ErrInvalidID) || !strings.Contains(err.Error(), "12a") {
					t.Errorf("%v", err)
					return
				}
			}
		}(i)
	}
	wg.Wait()
}

func TestOneNodeIDSourceExactly(t *testing.T) {
	if _, err := New(); !errors.Is(err, ErrInvalidNodeSource) || !strings.Contains(err.Error(), "0 node-id sources") {
		t.Errorf("no source: %v", err)
	}
	if _, err := New(NodeID(1), FromEnv("X")); !errors.Is(err, ErrInvalidNodeSource) {
		t.Errorf("two sources: %v", err)
	}
	os.Setenv("POLYFLAKE_GO_TEST_NODE", "44")
	g, err := New(FromEnv("POLYFLAKE_GO_TEST_NODE"))
	if err != nil || g.NodeID() != 44 {
		t.Fatalf("env: %v", err)
	}
	g.Close()
	if _, err := New(FromEnv("POLYFLAKE_GO_TEST_UNSET")); !errors.Is(err, ErrInvalidNodeSource) {
		t.Errorf("unset env: %v", err)
	}
	g, err = New(FromHostname("ids-7.ids.default.svc"))
	if err != nil || g.NodeID() != 7 {
		t.Fatalf("hostname: %v", err)
	}
	g.Close()
	g, err = New(FromIPv4("10.1.7.9", 22))
	if err != nil || g.NodeID() != 777 {
		t.Fatalf("ipv4: %v", err)
	}
	g.Close()
	for _, prefix := range []int64{21, 33, -1, 300} {
		if _, err := New(FromIPv4("10.1.7.9", prefix)); !errors.Is(err, ErrInvalidNodeSource) {
			t.Errorf("/%d: %v", prefix, err)
		}
	}
	// A NUL byte would cut a C string short: refused, never truncated.
	for _, opt := range []Option{FromEnv("A\x00B"), FromHostname("ids-7\x00"), FromIPv4("10.1.7.9\x00", 22),
		FileLease("/tmp\x00x"), FileLease(t.TempDir(), Identity("a\x00b")),
		Etcd([]string{"http://127.0.0.1:1\x00"}), Etcd([]string{"http://127.0.0.1:1"}, Prefix("/x\x00"))} {
		if _, err := New(opt); !errors.Is(err, ErrInvalidNodeSource) || !strings.Contains(err.Error(), "NUL") {
			t.Errorf("NUL: %v", err)
		}
	}
	if _, err := New(Etcd(nil)); !errors.Is(err, ErrInvalidNodeSource) {
		t.Errorf("no endpoint: %v", err)
	}
	if _, err := New(Etcd([]string{"http://127.0.0.1:1"}, ConnectTimeoutMs(300), TTLSeconds(5))); !errors.Is(err, ErrLeaseStore) {
		t.Errorf("unreachable etcd: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	clock := NewManualClock(DefaultEpochMs + 10)
	cases := map[string]struct {
		opts []Option
		want *Error
	}{
		"node 1024":         {[]Option{NodeID(1024)}, ErrInvalidNodeID},
		"node -1":           {[]Option{NodeID(-1)}, ErrInvalidNodeID},
		"mode 9":            {[]Option{NodeID(1), WithMode(9)}, ErrInvalidArgument},
		"clock source 5":    {[]Option{NodeID(1), WithClockSource(5)}, ErrInvalidArgument},
		"wait -1":           {[]Option{NodeID(1), WithMaxWaitMs(-1)}, ErrInvalidArgument},
		"lead -1":           {[]Option{NodeID(1), WithMaxLeadMs(-1)}, ErrInvalidArgument},
		"forward step 0":    {[]Option{NodeID(1), WithMaxForwardStepMs(0)}, ErrInvalidArgument},
		"layout 1/1/1":      {[]Option{NodeID(1), WithLayout(Layout{1, 1, 1})}, ErrInvalidLayout},
		"epoch in future":   {[]Option{NodeID(1), WithEpochMs(1 << 62)}, ErrInvalidEpoch},
		"lease slots 0":     {[]Option{FileLease(t.TempDir(), Slots(0))}, ErrInvalidNodeSource},
		"lease reserve 0":   {[]Option{FileLease(t.TempDir(), ReserveMs(0))}, ErrInvalidNodeSource},
		"slots over 2^10":   {[]Option{FileLease(t.TempDir(), Slots(4096))}, ErrInvalidNodeSource},
		"test clock, bad n": {[]Option{NodeID(5000), WithClock(clock)}, ErrInvalidNodeID},
	}
	for name, c := range cases {
		if _, err := New(c.opts...); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %s", name, err, c.want.Code)
		}
	}
	for _, s := range []Setting{WithMode(2), WithClockSource(9), WithMaxWaitMs(-1), WithMaxForwardStepMs(0)} {
		if _, err := NewUUIDv7(s); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("UUIDv7 setting: %v", err)
		}
		if _, err := NewULID(s); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("ULID setting: %v", err)
		}
	}
	for _, text := range []string{"", "12a", "-1", "+1", "9223372036854775808", "1\x002", " 1"} {
		if _, err := ParseID(text); !errors.Is(err, ErrInvalidID) {
			t.Errorf("ParseID(%q): %v", text, err)
		}
	}
	if _, err := FormatID(-1); !errors.Is(err, ErrInvalidID) {
		t.Errorf("FormatID(-1): %v", err)
	}
	if s, err := FormatID(9223372036854775807); s != "9223372036854775807" || err != nil {
		t.Errorf("FormatID(max): %q %v", s, err)
	}
	if _, err := Decode(-5); !errors.Is(err, ErrInvalidID) {
		t.Errorf("Decode(-5): %v", err)
	}
	if _, err := LayoutFromName("nope"); !errors.Is(err, ErrUnknownLayout) {
		t.Errorf("layout nope: %v", err)
	}
	if _, err := LayoutFromName("default\x00"); !errors.Is(err, ErrUnknownLayout) {
		t.Errorf("layout NUL: %v", err)
	}
	if _, err := (Layout{41, 10, 13}).Describe(); !errors.Is(err, ErrInvalidLayout) {
		t.Errorf("describe: %v", err)
	}
	if _, err := Compose(LayoutDefault, DefaultEpochMs, DefaultEpochMs, 1024, 0); !errors.Is(err, ErrInvalidNodeID) {
		t.Errorf("compose: %v", err)
	}
	scripted := NewScriptedClock([]int64{1, 2})
	for _, err := range []error{scripted.Set(1), scripted.Advance(1), scripted.Elapse(1), scripted.SetTickMs(4)} {
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("scripted clock step: %v", err)
		}
	}
	if _, err := ParseUUID("017f22e2-79b0-7cc3-98c4-dc0c0c07398f\x00"); !errors.Is(err, ErrInvalidID) {
		t.Errorf("UUID NUL: %v", err)
	}
}

func TestCloseAndHealth(t *testing.T) {
	g := MustNew(NodeID(81), WithMaxForwardStepMs(1000), WithForwardConfirmMs(5000))
	if g.NodeID() != 81 || g.Layout() != LayoutDefault || g.EpochMs() != DefaultEpochMs || g.Mode() != Strict {
		t.Fatalf("settings %d %v %d %v", g.NodeID(), g.Layout(), g.EpochMs(), g.Mode())
	}
	if _, err := New(NodeID(81)); !errors.Is(err, ErrNodeIDInUse) {
		t.Fatalf("second generator: %v", err)
	}
	id, err := g.NextID()
	if err != nil {
		t.Fatal(err)
	}
	h := g.Health()
	if !h.OK || h.Status != "ok" || h.IDsIssued != 1 || h.LastIssuedMs == nil || h.Source != "static" ||
		h.Mode != "strict" || h.ClockSource != "precise" || h.ClockTickNs == 0 || h.RestartWaits != 0 {
		t.Fatalf("health %+v", h)
	}
	// A static node id on the system clock keeps its mark on this host (its restart guard).
	if h.Lease == nil || h.Lease.Kind != "host" || h.Lease.Slot != 81 || !strings.Contains(h.Lease.Store, "node-41-10-12-0081") {
		t.Fatalf("health's mark %+v", h.Lease)
	}
	if d, _ := g.Decode(id); d.TimestampMs != *h.LastIssuedMs {
		t.Fatalf("decoded %+v, last issued %d", d, *h.LastIssuedMs)
	}
	if err := g.WaitReady(0); err != nil {
		t.Fatal(err)
	}
	if g.Close() != nil || g.Close() != nil {
		t.Fatal("close twice")
	}
	if _, err := g.NextID(); !errors.Is(err, ErrGeneratorClosed) {
		t.Fatalf("after close: %v", err)
	}
	buf := []int64{42}
	if err := g.NextIDs(buf); !errors.Is(err, ErrGeneratorClosed) || buf[0] != 42 {
		t.Fatalf("batch after close: %v %v", err, buf)
	}
	if h := g.Health(); h.OK || h.Status != "closed" {
		t.Fatalf("closed health %+v", h)
	}
	// Closing freed the node id.
	g2 := MustNew(NodeID(81))
	g2.Close()
}

// A generator that is dropped without Close is freed (and closed) by its finalizer.
func TestFinalizerFreesTheNodeID(t *testing.T) {
	func() { MustNew(NodeID(900)) }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		g, err := New(NodeID(900))
		if err == nil {
			g.Close()
			return
		}
		if !errors.Is(err, ErrNodeIDInUse) || time.Now().After(deadline) {
			t.Fatalf("node id 900 never freed: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestBatches(t *testing.T) {
	g := MustNew(NodeID(82), WithMode(Monotonic))
	defer g.Close()
	if err := g.NextIDs(nil); err != nil {
		t.Fatalf("empty batch: %v", err)
	}
	ids := make([]int64, 100000)
	if err := g.NextIDs(ids); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("not increasing at %d", i)
		}
	}
	u, _ := NewUUIDv7()
	if err := u.NextUUIDs(nil); err != nil {
		t.Fatal(err)
	}
	l, _ := NewULID()
	if err := l.NextULIDs([]ULID{}); err != nil {
		t.Fatal(err)
	}
}

// The coarse source on a manual clock whose coarse reading lags by a 4 ms tick: issued at the
// tick (never ahead of the wall clock), the lag is no rewind, a real rewind is refused.
func TestCoarseSource(t *testing.T) {
	clock := NewManualClock(1737747358023)
	if err := clock.SetTickMs(4); err != nil {
		t.Fatal(err)
	}
	g := MustNew(NodeID(83), WithClock(clock), WithClockSource(Coarse))
	id, _ := g.NextID()
	if d, _ := g.Decode(id); d.TimestampMs != 1737747358020 {
		t.Fatalf("issued at %d", d.TimestampMs)
	}
	for i := 0; i < 3; i++ {
		clock.Elapse(1)
		if _, err := g.NextID(); err != nil {
			t.Fatal(err)
		}
	}
	if h := g.Health(); !h.OK || h.RewindsWaited != 0 || h.WaitSleeps != 0 || h.ClockSource != "coarse" {
		t.Fatalf("health %+v", h)
	}
	clock.Advance(-600)
	if _, err := g.NextID(); !errors.Is(err, ErrClockMovedBackwards) {
		t.Fatalf("rewind: %v", err)
	}
}

func TestUUIDAndULID(t *testing.T) {
	clock := NewManualClock(1645557742000)
	u, err := NewUUIDv7(WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := u.NextUUID()
	b, _ := u.NextUUID()
	if bytes.Compare(a[:], b[:]) >= 0 || !strings.HasPrefix(a.String(), "017f22e2-79b0-7000-") {
		t.Fatalf("%s %s", a, b)
	}
	back, err := ParseUUID(strings.ToUpper(a.String()))
	if err != nil || back != a {
		t.Fatalf("round trip %s %v", back, err)
	}
	doc, _ := json.Marshal(map[string]UUID{"id": a})
	var got map[string]UUID
	if err := json.Unmarshal(doc, &got); err != nil || got["id"] != a {
		t.Fatalf("JSON %s %v", doc, err)
	}
	if err := json.Unmarshal([]byte(`{"id": "nope"}`), &got); !errors.Is(err, ErrInvalidID) {
		t.Fatalf("bad JSON UUID: %v", err)
	}
	notV7, _ := ParseUUID("017f22e2-79b0-4cc3-98c4-dc0c0c07398f")
	if _, err := notV7.TimestampMs(); !errors.Is(err, ErrInvalidID) {
		t.Fatalf("v4 timestamp: %v", err)
	}
	clock.Advance(-600)
	buf := make([]UUID, 3)
	if err := u.NextUUIDs(buf); !errors.Is(err, ErrClockMovedBackwards) || buf[0] != (UUID{}) {
		t.Fatalf("rewind: %v", err)
	}
	if h := u.Health(); h.OK || h.Status != "clock_behind" || h.NodeID != 0 {
		t.Fatalf("health %+v", h)
	}
	u.Close()
	if _, err := u.NextUUID(); !errors.Is(err, ErrGeneratorClosed) {
		t.Fatalf("closed: %v", err)
	}

	l, _ := NewULID(WithClock(NewManualClock(1469922850259)), WithMode(Monotonic))
	x, _ := l.NextULID()
	y, _ := l.NextULID()
	for i := 15; i >= 0; i-- { // within a millisecond each ULID is the last plus one
		if x[i]++; x[i] != 0 {
			break
		}
	}
	if x != y {
		t.Fatalf("%s + 1 != %s", x, y)
	}
	if x.TimestampMs() != 1469922850259 || !strings.HasPrefix(y.String(), "01ARZ3NDEK") {
		t.Fatalf("ULID %s", y)
	}
	if back, err := ParseULID(y.String()); err != nil || back != y {
		t.Fatalf("round trip %v", err)
	}
	many := make([]ULID, 50000)
	if err := l.NextULIDs(many); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(many); i++ {
		if bytes.Compare(many[i-1][:], many[i][:]) >= 0 {
			t.Fatalf("not increasing at %d", i)
		}
	}
	if h := l.Health(); !h.OK || h.MsBorrowed != 1 || h.IDsIssued != 50002 {
		t.Fatalf("ULID health %+v", h)
	}
	l.Close()
}

// Goroutines share one UUIDv7 generator: no duplicate, each goroutine's UUIDs increasing.
func TestGoroutinesShareAUUIDv7Generator(t *testing.T) {
	g, _ := NewUUIDv7(WithClockSource(Coarse))
	const workers, per = 8, 20000
	out := make([][]UUID, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			ids := make([]UUID, per)
			for i := range ids {
				var err error
				if ids[i], err = g.NextUUID(); err != nil {
					t.Error(err)
					return
				}
				if i > 0 && bytes.Compare(ids[i-1][:], ids[i][:]) >= 0 {
					t.Errorf("goroutine %d: not increasing", w)
					return
				}
			}
			out[w] = ids
		}(w)
	}
	wg.Wait()
	seen := make(map[UUID]bool, workers*per)
	for _, ids := range out {
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("duplicate %s", id)
			}
			seen[id] = true
		}
	}
}
