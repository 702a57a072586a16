package polyflake

// Waits a caller can bound and cut, from Go: Context calls (the library's deadline, Interrupt on
// cancellation) timed on waits that would last seconds; a Generator copied by value shares its
// handle and go vet reports the copy; a second process asking for a held static node id is
// refused naming this process's pid; refusals echo the values sent.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// margin is what a loaded 2-core machine may add past a deadline or an interrupt: one 20 ms
// slice of the library's wait, then scheduling.
const margin = 150 * time.Millisecond

// claimEnv names the node id a child run of this test binary tries to take (TestMain).
const claimEnv = "POLYFLAKE_GO_TEST_CLAIM_NODE"

func TestMain(m *testing.M) {
	if kind := os.Getenv(restartChild); kind != "" {
		os.Exit(restartChildMain(kind))
	}
	if node := os.Getenv(claimEnv); node != "" {
		n, _ := strconv.ParseInt(node, 10, 64)
		g, err := New(NodeID(n))
		if err != nil {
			fmt.Println(err)
		} else {
			fmt.Println("OK")
			g.Close()
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// slow is a strict generator on layout 41/21/1: a batch of n waits about n / 2 ms.
func slow(t *testing.T, node int64) *Generator {
	t.Helper()
	g, err := New(NodeID(node), WithLayout(Layout{41, 21, 1}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

const batch = 20000
const poison = int64(-0x5A5A5A5A5A5A5A5B)

func poisoned(n int) []int64 {
	buf := make([]int64, n)
	for i := range buf {
		buf[i] = poison
	}
	return buf
}

func untouched(buf []int64) bool {
	for _, v := range buf {
		if v != poison {
			return false
		}
	}
	return true
}

func TestContextDeadlineCutsAStrictBatch(t *testing.T) {
	g := slow(t, 931)
	before, err := g.NextID()
	if err != nil {
		t.Fatal(err)
	}
	var took []time.Duration
	for run := 0; run < 3; run++ {
		buf := poisoned(batch)
		t0 := time.Now() // before the context: its 100 ms run from a moment after t0
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		err := g.NextIDsContext(ctx, buf)
		d := time.Since(t0)
		cancel()
		took = append(took, d)
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrInterrupted) {
			t.Fatalf("run %d: %v, want DeadlineExceeded and ErrInterrupted", run, err)
		}
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(e.Message, "interrupted after waiting") {
			t.Fatalf("run %d: the library's message is missing: %v", run, err)
		}
		if d < 100*time.Millisecond || d > 100*time.Millisecond+margin {
			t.Fatalf("run %d: cut after %v, want 100 ms to %v", run, d, 100*time.Millisecond+margin)
		}
		if !untouched(buf) {
			t.Fatalf("run %d: the buffer was written", run)
		}
	}
	after, err := g.NextID()
	if err != nil || after <= before {
		t.Fatalf("after the cuts: %d, %v (before %d)", after, err, before)
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	t.Logf("NextIDsContext(100 ms) on a strict batch of %d on 41/21/1: cut after %v, %v, %v (bound %v)",
		batch, took[0], took[1], took[2], 100*time.Millisecond+margin)
	// A deadline long enough: the batch completes.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	buf := make([]int64, 200)
	if err := g.NextIDsContext(ctx, buf); err != nil || buf[0] <= after || buf[199] <= buf[198] {
		t.Fatalf("a batch inside its deadline: %v", err)
	}
	// A context already done: nothing is asked of the library.
	done, cancelDone := context.WithCancel(context.Background())
	cancelDone()
	if _, err := g.NextIDContext(done); err != context.Canceled {
		t.Fatalf("a done context: %v", err)
	}
}

// blocked runs f in a goroutine and reports its error and when it returned.
type blocked struct {
	err   error
	ended time.Time
	done  chan struct{}
}

func start(f func() error) *blocked {
	b := &blocked{done: make(chan struct{})}
	go func() {
		b.err = f()
		b.ended = time.Now()
		close(b.done)
	}()
	return b
}

func TestCancelAndInterruptRelease(t *testing.T) {
	g := slow(t, 932)
	// A cancelled context releases its call; another Context call on the same generator, whose
	// context is live, starts again and ends at its own deadline; a plain call is cut too
	// (documented: Interrupt cuts every call waiting on the generator).
	ctxA, cancelA := context.WithCancel(context.Background())
	ctxB, cancelB := context.WithTimeout(context.Background(), 800*time.Millisecond)
	defer cancelB()
	bufA, bufB, bufC := poisoned(batch), poisoned(batch), poisoned(batch)
	t0 := time.Now()
	a := start(func() error { return g.NextIDsContext(ctxA, bufA) })
	b := start(func() error { return g.NextIDsContext(ctxB, bufB) })
	c := start(func() error { return g.NextIDs(bufC) })
	time.Sleep(300 * time.Millisecond)
	cut := time.Now()
	cancelA()
	<-a.done
	<-c.done
	if !errors.Is(a.err, context.Canceled) || !errors.Is(a.err, ErrInterrupted) || !untouched(bufA) {
		t.Fatalf("cancelled call: %v", a.err)
	}
	if a.ended.Sub(cut) > 20*time.Millisecond+margin {
		t.Fatalf("released %v after the cancel", a.ended.Sub(cut))
	}
	if !errors.Is(c.err, ErrInterrupted) || !untouched(bufC) {
		t.Fatalf("the plain call beside it: %v", c.err)
	}
	<-b.done
	if !errors.Is(b.err, context.DeadlineExceeded) || errors.Is(b.err, context.Canceled) || !untouched(bufB) {
		t.Fatalf("the other Context call: %v", b.err)
	}
	// Judged from the context's own deadline (set a moment before t0), never before it.
	deadlineB, _ := ctxB.Deadline()
	if late := b.ended.Sub(deadlineB); late < 0 || late > margin {
		t.Fatalf("the other Context call ended %v after its own 800 ms deadline (%v after t0)", late, b.ended.Sub(t0))
	}
	// Interrupt from another goroutine releases a plain call, and a Context call whose context
	// is live (Interrupt stops every call).
	bufD, bufE := poisoned(batch), poisoned(batch)
	d := start(func() error { return g.NextIDs(bufD) })
	e := start(func() error { return g.NextIDsContext(context.Background(), bufE) })
	time.Sleep(300 * time.Millisecond)
	cut2 := time.Now()
	g.Interrupt()
	<-d.done
	<-e.done
	if !errors.Is(d.err, ErrInterrupted) || !untouched(bufD) {
		t.Fatalf("interrupted call: %v", d.err)
	}
	if !errors.Is(e.err, ErrInterrupted) || errors.Is(e.err, context.Canceled) || !untouched(bufE) {
		t.Fatalf("interrupted Context call: %v", e.err)
	}
	if d.ended.Sub(cut2) > 20*time.Millisecond+margin || e.ended.Sub(cut2) > 20*time.Millisecond+margin {
		t.Fatalf("released %v and %v after Interrupt", d.ended.Sub(cut2), e.ended.Sub(cut2))
	}
	t.Logf("cancel released its call after %v (the plain call beside it %v; the other Context call "+
		"ran to its own 800 ms deadline: %v); Interrupt released a plain call after %v and a Context call after %v",
		a.ended.Sub(cut), c.ended.Sub(cut), b.ended.Sub(t0), d.ended.Sub(cut2), e.ended.Sub(cut2))
}

// TestALateWatcherCutsNothingAfter: a Context call must leave no interrupt behind for the next
// call. A context cancelled as its call returns woke the call's watcher after the return, and
// its interrupt cut the next call, begun after it, with a bare ErrInterrupted (found in CI: a
// batch cut 180 ms before its cancel).
func TestALateWatcherCutsNothingAfter(t *testing.T) {
	clock := NewManualClock(1735689600000)
	g, err := New(NodeID(931), WithClock(clock), WithMaxWaitMs(60000))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for run := 0; run < 150; run++ {
		ctx, cancel := context.WithCancel(context.Background())
		go cancel() // lands before, during or just after the call
		if _, err := g.NextIDContext(ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("run %d, first call: %v", run, err)
		}
		runtime.Gosched()
		if err := clock.Advance(-1000); err != nil { // the next call waits 1 s
			t.Fatal(err)
		}
		t0 := time.Now()
		ctx, cancel = context.WithTimeout(context.Background(), 15*time.Millisecond)
		_, err = g.NextIDContext(ctx)
		cancel()
		if took := time.Since(t0); !errors.Is(err, context.DeadlineExceeded) || took < 15*time.Millisecond {
			t.Fatalf("run %d, the call after it: %v after %v (want its own 15 ms deadline)", run, err, took)
		}
		if err := clock.Advance(1000); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTimeIDContext(t *testing.T) {
	for _, kind := range []string{"UUIDv7", "ULID"} {
		clock := NewManualClock(1735689600000)
		settings := []Setting{WithClock(clock), WithMaxWaitMs(60000)}
		var one func(context.Context) error
		var many func(context.Context) error
		var interrupt func()
		var plain func() error
		if kind == "UUIDv7" {
			g, err := NewUUIDv7(settings...)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			if _, err := g.NextUUID(); err != nil {
				t.Fatal(err)
			}
			one = func(ctx context.Context) error {
				id, err := g.NextUUIDContext(ctx)
				if err != nil && id != (UUID{}) {
					t.Fatalf("an ID with an error")
				}
				return err
			}
			many = func(ctx context.Context) error {
				buf := make([]UUID, 4)
				err := g.NextUUIDsContext(ctx, buf)
				if err != nil && buf[0] != (UUID{}) {
					t.Fatalf("a batch written with an error")
				}
				return err
			}
			interrupt = g.Interrupt
			plain = func() error { _, err := g.NextUUID(); return err }
		} else {
			g, err := NewULID(settings...)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			if _, err := g.NextULID(); err != nil {
				t.Fatal(err)
			}
			one = func(ctx context.Context) error {
				id, err := g.NextULIDContext(ctx)
				if err != nil && id != (ULID{}) {
					t.Fatalf("an ID with an error")
				}
				return err
			}
			many = func(ctx context.Context) error {
				buf := make([]ULID, 4)
				err := g.NextULIDsContext(ctx, buf)
				if err != nil && buf[0] != (ULID{}) {
					t.Fatalf("a batch written with an error")
				}
				return err
			}
			interrupt = g.Interrupt
			plain = func() error { _, err := g.NextULID(); return err }
		}
		if err := clock.Advance(-30000); err != nil { // a rewind: the next call waits 30 s
			t.Fatal(err)
		}
		t0 := time.Now() // before the context: its 100 ms run from a moment after t0
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		err := one(ctx)
		took := time.Since(t0)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || took < 100*time.Millisecond || took > 100*time.Millisecond+margin {
			t.Fatalf("%s: %v after %v", kind, err, took)
		}
		ctx, cancel = context.WithCancel(context.Background())
		b := start(func() error { return many(ctx) })
		time.Sleep(200 * time.Millisecond)
		cut := time.Now()
		cancel()
		<-b.done
		if !errors.Is(b.err, context.Canceled) || b.ended.Sub(cut) > 20*time.Millisecond+margin {
			t.Fatalf("%s batch: %v, %v after the cancel", kind, b.err, b.ended.Sub(cut))
		}
		p := start(plain)
		time.Sleep(200 * time.Millisecond)
		cut2 := time.Now()
		interrupt()
		<-p.done
		if !errors.Is(p.err, ErrInterrupted) || p.ended.Sub(cut2) > 20*time.Millisecond+margin {
			t.Fatalf("%s Interrupt: %v, %v after it", kind, p.err, p.ended.Sub(cut2))
		}
		t.Logf("%s: a 30 s rewind wait cut by a 100 ms deadline after %v, by a cancel %v after it, by Interrupt %v after it",
			kind, took, b.ended.Sub(cut), p.ended.Sub(cut2))
	}
}

// copyOf copies a Generator by value the way `cp := *g` does, out of go vet's sight (this
// package's own vet run must pass; testdata/copied is the copy vet must report).
func copyOf[T any](p *T) *T {
	cp := new(T)
	reflect.ValueOf(cp).Elem().Set(reflect.ValueOf(p).Elem())
	return cp
}

func TestACopySharesTheHandle(t *testing.T) {
	g := MustNew(NodeID(933))
	cp := copyOf(g)
	a, err1 := g.NextID()
	b, err2 := cp.NextID()
	if err1 != nil || err2 != nil || b <= a {
		t.Fatalf("a copy issues from the same generator: %d %v, %d %v", a, err1, b, err2)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := cp.NextID(); !errors.Is(err, ErrGeneratorClosed) {
		t.Fatalf("a copy of a closed generator: %v", err)
	}
	// The original unreachable and collected: the copy's handle is still there.
	g2 := MustNew(NodeID(934))
	cp2 := copyOf(g2)
	last, _ := g2.NextID()
	g2 = nil
	for i := 0; i < 3; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if id, err := cp2.NextID(); err != nil || id <= last {
		t.Fatalf("a copy after the original was collected: %d, %v", id, err)
	}
	// Every copy gone: the handle is freed (its node id is free again).
	cp2 = nil
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		g3, err := New(NodeID(934))
		if err == nil {
			g3.Close()
			break
		}
		if !errors.Is(err, ErrNodeIDInUse) || time.Now().After(deadline) {
			t.Fatalf("the handle was never freed: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The UUIDv7, ULID and clock handles the same.
	u := copyOf(mustUUID(t))
	l := copyOf(mustULID(t))
	c := copyOf(NewManualClock(1735689600000))
	runtime.GC()
	runtime.GC()
	if _, err := u.NextUUID(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.NextULID(); err != nil {
		t.Fatal(err)
	}
	if ms, err := c.Get(); err != nil || ms != 1735689600000 {
		t.Fatalf("a copied clock: %d, %v", ms, err)
	}
	// A zero Generator is refused, not a crash.
	var zero Generator
	if _, err := zero.NextID(); !errors.Is(err, ErrNullParameter) {
		t.Fatalf("a zero Generator: %v", err)
	}
}

func mustUUID(t *testing.T) *UUIDv7Generator {
	g, err := NewUUIDv7()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func mustULID(t *testing.T) *ULIDGenerator {
	g, err := NewULID()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// go vet reports a copy of every handle type: testdata/copied copies each on purpose.
func TestVetReportsACopy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go vet")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goTool, "vet", "./testdata/copied").CombinedOutput()
	if err == nil {
		t.Fatalf("go vet passed a copy of a Generator:\n%s", out)
	}
	for _, typ := range []string{"Generator", "UUIDv7Generator", "ULIDGenerator", "Clock"} {
		want := "polyflake/go." + typ + " contains example.invalid/polyflake/go.noCopy"
		if !strings.Contains(string(out), want) {
			t.Errorf("go vet did not report the copy of a %s:\n%s", typ, out)
		}
	}
}

// claim runs this test binary as a second process asking for node.
func claim(t *testing.T, node int64) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", claimEnv, node))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	line, _ := bufio.NewReader(strings.NewReader(string(out))).ReadString('\n')
	return strings.TrimSpace(line)
}

func TestStaticNodeIDHeldHostWide(t *testing.T) {
	g := MustNew(NodeID(935))
	got := claim(t, 935)
	want := fmt.Sprintf("process %d (", os.Getpid()) // "process 4242 (go.test) on this host"
	if !strings.HasPrefix(got, "NODE_ID_IN_USE: ") || !strings.Contains(got, want) || !strings.Contains(got, "on this host") || !strings.Contains(got, "lease") {
		t.Fatalf("a second process asking for node 935: %q (want NODE_ID_IN_USE naming %q)", got, want)
	}
	t.Logf("a second process: %s", got)
	if _, err := New(NodeID(935)); !errors.Is(err, ErrNodeIDInUse) || !strings.Contains(err.Error(), "in this process") {
		t.Fatalf("in this process: %v", err)
	}
	g.Close()
	if got := claim(t, 935); got != "OK" {
		t.Fatalf("after Close, a second process: %q", got)
	}
}

// Every refusal echoes the value the caller sent, never a clamped one.
func TestRefusalsEchoWhatWasSent(t *testing.T) {
	cases := []struct {
		opts []Option
		want string
		kind *Error
	}{
		{[]Option{NodeID(1 << 40)}, "1099511627776", ErrInvalidNodeID},
		{[]Option{NodeID(math.MaxInt64)}, "9223372036854775807", ErrInvalidNodeID},
		{[]Option{NodeID(math.MinInt64)}, "-9223372036854775808", ErrInvalidNodeID},
		{[]Option{NodeID(1), WithEpochMs(math.MaxInt64)}, "9223372036854775807", ErrInvalidEpoch},
		{[]Option{NodeID(1), WithEpochMs(math.MinInt64)}, "-9223372036854775808", ErrInvalidEpoch},
		{[]Option{NodeID(1), WithMode(math.MaxUint32)}, "4294967295", ErrInvalidArgument},
		{[]Option{NodeID(1), WithMode(Monotonic), WithMaxLeadMs(math.MinInt64)}, "-9223372036854775808", ErrInvalidArgument},
		{[]Option{NodeID(1), WithLayout(Layout{math.MaxUint32, 1, 1})}, "4294967295", ErrInvalidLayout},
	}
	for _, c := range cases {
		_, err := New(c.opts...)
		if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %s echoing %s: %v", c.kind.Code, c.want, err)
		}
	}
	g := MustNew(NodeID(936))
	defer g.Close()
	var one int64
	for _, n := range []int{MaxBatch + 1, 1 << 42} {
		// A slice header of n IDs over one: the library refuses the count before touching memory.
		buf := unsafe.Slice(&one, n)
		if err := g.NextIDs(buf); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), strconv.Itoa(n)) {
			t.Errorf("a batch of %d: %v", n, err)
		}
		if err := g.NextIDsContext(context.Background(), buf); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), strconv.Itoa(n)) {
			t.Errorf("a Context batch of %d: %v", n, err)
		}
	}
}

var _ sync.Locker = (*noCopy)(nil)
