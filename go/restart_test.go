package polyflake

// A fixed node id keeps every promise a lease keeps, from Go, with real processes on one host
// (this test binary again, restartChild set); every case counts duplicates across its holders'
// IDs: zero. Go runs no C exit handlers (os.Exit, a return from main): Close is what leaves a
// clean mark, and a holder that ends without it makes its successor wait up to one reserve.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// restartChild names what a child run of this test binary does (TestMain): "mint", "lease",
// "sync".
const restartChild = "POLYFLAKE_GO_TEST_RESTART_CHILD"

// slack is what a loaded 2-core machine may add to a wait (spawning, scheduling).
const slack = 2 * time.Second

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// restartChildMain runs a child and returns its exit code.
func restartChildMain(kind string) int {
	switch kind {
	case "mint":
		return mintChild()
	case "lease":
		return leaseChild()
	case "sync":
		return syncChild()
	}
	fmt.Println("unknown child", kind)
	return 2
}

// mintChild is a holder. Environment: NODE, MODE (strict | monotonic), STATE, OUT (its IDs,
// little-endian), COUNT, BURST (a batch first), MS (mint this long after the first ID), RETRY
// (retry while the node id is in use), END: close (Close, then return) | exit (os.Exit with the
// generator open) | hang (say DONE, then wait to be killed). Says READY, then
// "DONE waits=W status=S first_ms=F [REFUSED CODE message]".
func mintChild() int {
	node, _ := strconv.ParseInt(os.Getenv("NODE"), 10, 64)
	opts := []Option{NodeID(node), WithRestartGuard(RestartGuardRequired), WithStateDir(os.Getenv("STATE"))}
	if os.Getenv("MODE") == "monotonic" {
		opts = append(opts, WithMode(Monotonic))
	}
	start := time.Now()
	var g *Generator
	var err error
	for {
		g, err = New(opts...)
		if !errors.Is(err, ErrNodeIDInUse) || os.Getenv("RETRY") == "" || time.Since(start) > 20*time.Second {
			break
		}
		time.Sleep(200 * time.Microsecond)
	}
	if err != nil {
		fmt.Println("READY failed", err)
		return 3
	}
	fmt.Println("READY", g.NodeID())
	ready := time.Now()
	f, err := os.Create(os.Getenv("OUT"))
	if err != nil {
		panic(err)
	}
	w := bufio.NewWriter(f)
	put := func(id int64) { binary.Write(w, binary.LittleEndian, id) }
	first := time.Duration(-1)
	refused := ""
	if burst, _ := strconv.Atoi(os.Getenv("BURST")); burst > 0 {
		buf := make([]int64, burst)
		if err := g.NextIDs(buf); err != nil {
			refused = "REFUSED " + err.Error()
		} else {
			first = time.Since(ready)
			for _, id := range buf {
				put(id)
			}
		}
	}
	count, _ := strconv.Atoi(os.Getenv("COUNT"))
	ms, _ := strconv.Atoi(os.Getenv("MS"))
	var until time.Time
	for n := 0; refused == "" && (n < count || (ms > 0 && (first < 0 || time.Now().Before(until)))); n++ {
		id, err := g.NextID()
		if err != nil {
			refused = "REFUSED " + err.Error()
			break
		}
		if first < 0 {
			first = time.Since(ready)
			until = time.Now().Add(time.Duration(ms) * time.Millisecond)
		}
		put(id)
	}
	w.Flush()
	f.Close()
	h := g.Health()
	fmt.Printf("DONE waits=%d status=%s first_ms=%d %s\n", h.RestartWaits, h.Status, first.Milliseconds(), refused)
	switch os.Getenv("END") {
	case "exit":
		os.Exit(0) // the generator open: Go runs no exit handler, the mark stays ahead
	case "hang":
		select {}
	}
	g.Close()
	return 0
}

// leaseChild holds a file lease (DIR, SLOTS, LAYOUT "T/N/S", STATE); says "HELD slot", then
// waits to be killed.
func leaseChild() int {
	layout, _ := LayoutFromName(envOr("LAYOUT", "default"))
	slots, _ := strconv.Atoi(os.Getenv("SLOTS"))
	g, err := New(FileLease(os.Getenv("DIR"), Slots(uint32(slots)), ReserveMs(50)), WithLayout(layout),
		WithStateDir(os.Getenv("STATE")))
	if err != nil {
		fmt.Println("HELD failed", err)
		return 3
	}
	fmt.Println("HELD", g.NodeID())
	select {}
}

// kid is a child process, killed by the test's cleanup: a failing test leaves no process
// holding a node id.
type kid struct {
	cmd *exec.Cmd
	out *bufio.Reader
}

// spawn runs this test binary as a child with vars ("NAME=value") set over this environment,
// under `faketime -f offset` (the wall clock only) when offset is not "", with preload as
// LD_PRELOAD when not "".
func spawn(t *testing.T, vars []string, offset, preload string) *kid {
	t.Helper()
	var cmd *exec.Cmd
	if offset != "" {
		cmd = exec.Command("faketime", "-f", offset, os.Args[0], "-test.run=^$")
	} else {
		cmd = exec.Command(os.Args[0], "-test.run=^$")
	}
	env := []string{}
	for _, e := range os.Environ() {
		name, _, _ := strings.Cut(e, "=")
		if !setsVar(vars, name) {
			env = append(env, e)
		}
	}
	env = append(env, vars...)
	if offset != "" {
		env = append(env, "FAKETIME_DONT_FAKE_MONOTONIC=1")
	}
	if preload != "" {
		env = append(env, "LD_PRELOAD="+preload)
	}
	cmd.Env = env
	cmd.Stderr = os.Stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	k := &kid{cmd: cmd, out: bufio.NewReader(pipe)}
	t.Cleanup(k.kill)
	return k
}

func setsVar(vars []string, name string) bool {
	for _, v := range vars {
		if strings.HasPrefix(v, name+"=") {
			return true
		}
	}
	return false
}

// line reads the child's lines until one contains prefix; that line from the prefix on ("" if
// the child ended first).
func (k *kid) line(prefix string) string {
	for {
		l, err := k.out.ReadString('\n')
		if i := strings.Index(l, prefix); i >= 0 {
			return strings.TrimSpace(l[i:])
		}
		if err != nil {
			return ""
		}
	}
}

// wait waits for the child to end (its output drained); its exit code (-1: killed).
func (k *kid) wait() int {
	io.Copy(io.Discard, k.out)
	k.cmd.Wait()
	if k.cmd.ProcessState == nil {
		return -1
	}
	return k.cmd.ProcessState.ExitCode()
}

func (k *kid) kill() {
	if k.cmd.ProcessState == nil {
		k.cmd.Process.Signal(syscall.SIGKILL)
		k.wait()
	}
}

func holderVars(node int, state, out string, extra ...string) []string {
	return append([]string{restartChild + "=mint", fmt.Sprintf("NODE=%d", node), "STATE=" + state, "OUT=" + out}, extra...)
}

// field is the number after " key=" in a DONE line (-1 if absent).
func field(line, key string) int64 {
	m := regexp.MustCompile(` ` + key + `=(-?\d+)`).FindStringSubmatch(line)
	if m == nil {
		return -1
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

func readIDs(t *testing.T, path string) []int64 {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	ids := make([]int64, len(raw)/8)
	for i := range ids {
		ids[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
	}
	return ids
}

// duplicates counts the IDs of sets that repeat one before them (0 is the promise), and all IDs.
func duplicates(sets ...[]int64) (dups, total int) {
	var all []int64
	for _, s := range sets {
		all = append(all, s...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			dups++
		}
	}
	return dups, len(all)
}

// A holder lets go: Close, os.Exit with its generator open, SIGKILL. A successor already waiting
// takes over at once after Close; after os.Exit or a kill (no exit handler ran) once the clock
// passes the mark, at most one reserve later.
func TestHandoverBetweenProcessesRepeatsNothing(t *testing.T) {
	dir := t.TempDir()
	var sets [][]int64
	for round, end := range []string{"close", "exit", "hang", "close", "exit", "hang"} {
		aOut, bOut := filepath.Join(dir, fmt.Sprint("a", round)), filepath.Join(dir, fmt.Sprint("b", round))
		a := spawn(t, holderVars(980, dir, aOut, "COUNT=3000", "END="+end), "", "")
		if got := a.line("READY"); got != "READY 980" {
			t.Fatalf("round %d: the holder: %q", round, got)
		}
		b := spawn(t, holderVars(980, dir, bOut, "COUNT=3000", "RETRY=1"), "", "")
		if done := a.line("DONE"); strings.Contains(done, "REFUSED") {
			t.Fatalf("round %d: the holder: %s", round, done)
		}
		if end == "hang" {
			a.kill()
		} else if code := a.wait(); code != 0 {
			t.Fatalf("round %d: the holder exited %d", round, code)
		}
		done := b.line("DONE")
		if done == "" || strings.Contains(done, "REFUSED") {
			t.Fatalf("round %d (%s): the successor: %q", round, end, done)
		}
		switch first := time.Duration(field(done, "first_ms")) * time.Millisecond; {
		case end == "close" && field(done, "waits") != 0:
			t.Errorf("round %d: after Close the successor waited: %s", round, done)
		case end != "close" && first > 5*time.Second+slack:
			t.Errorf("round %d: after %s the successor waited past one reserve: %s", round, end, done)
		}
		t.Logf("round %d, the holder's end %s: the successor %s", round, end, done)
		b.wait()
		ai, bi := readIDs(t, aOut), readIDs(t, bOut)
		if len(ai) != 3000 || len(bi) != 3000 {
			t.Fatalf("round %d: %d and %d IDs", round, len(ai), len(bi))
		}
		sets = append(sets, ai, bi)
	}
	dups, total := duplicates(sets...)
	if dups != 0 || total != 36000 {
		t.Fatalf("%d duplicates among %d IDs", dups, total)
	}
	t.Logf("handover: %d IDs, %d duplicates", total, dups)
}

// restartBehind: a holder mints 300 ms on the true clock and goes (end); its successor starts at
// once with its wall clock offset behind. The successor's DONE line and its IDs; duplicates
// counted.
func restartBehind(t *testing.T, offset, end string) (string, []int64) {
	t.Helper()
	dir := t.TempDir()
	aOut, bOut := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	a := spawn(t, holderVars(981, dir, aOut, "MS=300", "END="+end), "", "")
	a.line("DONE")
	if end == "hang" {
		a.kill()
	} else {
		a.wait()
	}
	b := spawn(t, holderVars(981, dir, bOut, "MS=300"), offset, "")
	done := b.line("DONE")
	b.wait()
	ai, bi := readIDs(t, aOut), readIDs(t, bOut)
	if len(ai) == 0 {
		t.Fatalf("the holder issued nothing")
	}
	if dups, total := duplicates(ai, bi); dups != 0 {
		t.Fatalf("%s behind after %s: %d duplicates among %d IDs", offset, end, dups, total)
	}
	return done, bi
}

// Run by the shared and the static build (.build/mk/go.mk): a restart with the clock stepped back waits
// and repeats nothing, or is refused when it is further behind than a call waits.
func TestRestartWithTheClockSteppedBack(t *testing.T) {
	if err := exec.Command("faketime", "-f", "-1s", "true").Run(); err != nil {
		t.Fatalf("faketime is missing (make deps-apt installs it): %v", err)
	}
	// Killed (the mark one reserve ahead), successor 3 s behind: it waits out the guard.
	done, ids := restartBehind(t, "-3s", "hang")
	if field(done, "waits") != 1 || strings.Contains(done, "REFUSED") || len(ids) == 0 {
		t.Errorf("killed, -3s: %s", done)
	}
	t.Logf("%s: killed, successor 3 s behind: %s; %d IDs, 0 repeated", Linkage, done, len(ids))
	// Closed, successor 1 s behind (an NTP step): it waits up to 1 s, less its own start.
	done, ids = restartBehind(t, "-1s", "close")
	if field(done, "waits") != 1 || strings.Contains(done, "REFUSED") || len(ids) == 0 ||
		time.Duration(field(done, "first_ms"))*time.Millisecond > time.Second+slack {
		t.Errorf("closed, -1s: %s", done)
	}
	t.Logf("%s: closed, successor 1 s behind: %s; %d IDs, 0 repeated", Linkage, done, len(ids))
	// Further behind than a call waits (10 s): refused with the reason, nothing issued.
	done, ids = restartBehind(t, "-30s", "hang")
	if !strings.Contains(done, "REFUSED LEASE_NOT_READY") || !strings.Contains(done, "longer than a call waits") || len(ids) != 0 {
		t.Errorf("killed, -30s: %s (%d IDs)", done, len(ids))
	}
	t.Logf("%s: killed, successor 30 s behind: %s", Linkage, done)
}

// 409,600 IDs at once put a monotonic holder 100 ms ahead; it closes, or is killed; a strict and
// a monotonic successor follow without a refusal, above its lead.
func TestAMonotonicHolderAheadHandsItsLeadOn(t *testing.T) {
	for _, end := range []string{"close", "hang"} {
		dir := t.TempDir()
		outs := []string{filepath.Join(dir, "o0"), filepath.Join(dir, "o1"), filepath.Join(dir, "o2")}
		a := spawn(t, holderVars(982, dir, outs[0], "MODE=monotonic", "BURST=409600", "END="+end), "", "")
		if done := a.line("DONE"); strings.Contains(done, "REFUSED") {
			t.Fatal(done)
		}
		if end == "hang" {
			a.kill()
		} else {
			a.wait()
		}
		for i, mode := range []string{"strict", "monotonic"} {
			b := spawn(t, holderVars(982, dir, outs[i+1], "MODE="+mode, "COUNT=20000"), "", "")
			done := b.line("DONE")
			if done == "" || strings.Contains(done, "REFUSED") {
				t.Fatalf("%s successor after %s: %q", mode, end, done)
			}
			t.Logf("the holder's end %s: the %s successor %s", end, mode, done)
			b.wait()
		}
		sets := [][]int64{readIDs(t, outs[0]), readIDs(t, outs[1]), readIDs(t, outs[2])}
		if len(sets[0]) != 409600 || len(sets[1]) != 20000 || len(sets[2]) != 20000 {
			t.Fatalf("%d %d %d IDs", len(sets[0]), len(sets[1]), len(sets[2]))
		}
		if sets[1][0] <= sets[0][len(sets[0])-1] {
			t.Errorf("the strict successor started under the holder's lead")
		}
		if dups, total := duplicates(sets...); dups != 0 {
			t.Fatalf("%d duplicates among %d IDs", dups, total)
		}
	}
}

func TestALeaseAndAStaticIDShareOneClaim(t *testing.T) {
	state, leases := t.TempDir(), t.TempDir()
	small := Layout{41, 3, 19}
	static := func(node int64, l Layout) (*Generator, error) {
		return New(NodeID(node), WithLayout(l), WithRestartGuard(RestartGuardRequired), WithStateDir(state))
	}
	s0, err := static(0, small)
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(FileLease(leases, Slots(8), ReserveMs(50)), WithLayout(small))
	if err != nil || l.NodeID() != 1 {
		t.Fatalf("the lease beside a static 0: %v, slot %d", err, l.NodeID())
	}
	if _, err := static(1, small); !errors.Is(err, ErrNodeIDInUse) || !strings.Contains(err.Error(), "in this process") {
		t.Fatalf("a static id a lease holds here: %v", err)
	}
	l.Close()
	s0.Close()
	// Another process holds a lease's slot: a static id of it is refused naming that process.
	k := spawn(t, []string{restartChild + "=lease", "DIR=" + leases, "SLOTS=1", "LAYOUT=41/3/19", "STATE=" + state}, "", "")
	if got := k.line("HELD"); got != "HELD 0" {
		t.Fatalf("the lease holder: %q", got)
	}
	_, err = static(0, small)
	if want := fmt.Sprintf("process %d ", k.cmd.Process.Pid); !errors.Is(err, ErrNodeIDInUse) || !strings.Contains(err.Error(), want) {
		t.Fatalf("a static id a lease holds in another process: %v (want %q)", err, want)
	}
	t.Logf("a static id another process's lease holds: %v", err)
	k.kill()
	// Another process holds static 0: a lease here skips slot 0.
	k = spawn(t, holderVars(0, state, filepath.Join(state, "ids"), "COUNT=10", "END=hang"), "", "")
	k.line("DONE")
	l, err = New(FileLease(t.TempDir(), Slots(8), ReserveMs(50)))
	if err != nil || l.NodeID() == 0 {
		t.Fatalf("a lease beside a static 0 in another process: %v, slot %d", err, l.NodeID())
	}
	l.Close()
}

// A user clock's times are not the host's: exempt from the host-wide claim, no mark; the rule
// holds in this process.
func TestAUserClockIsExemptFromTheHostClaim(t *testing.T) {
	state := t.TempDir()
	k := spawn(t, holderVars(983, state, filepath.Join(state, "ids"), "COUNT=10", "END=hang"), "", "")
	k.line("DONE")
	if _, err := New(NodeID(983)); !errors.Is(err, ErrNodeIDInUse) {
		t.Fatalf("the system clock beside a holder in another process: %v", err)
	}
	clock := NewUserClock(func() (int64, error) { return time.Now().UnixMilli(), nil })
	g, err := New(NodeID(983), WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.NextID(); err != nil {
		t.Fatal(err)
	}
	if h := g.Health(); !h.OK || h.Lease != nil || h.RestartGuardNote != "" {
		t.Fatalf("a user clock's health: %+v", h)
	}
	if _, err := New(NodeID(983), WithClock(clock)); !errors.Is(err, ErrNodeIDInUse) || !strings.Contains(err.Error(), "in this process") {
		t.Fatalf("a second one here: %v", err)
	}
	if _, err := New(NodeID(984), WithClock(clock), WithMaxClockErrorMs(100)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("max_clock_error_ms with a user clock: %v", err)
	}
	if _, err := New(NodeID(984), WithClock(clock), WithRestartGuard(RestartGuardRequired)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a required mark with a user clock: %v", err)
	}
	failing := NewUserClock(func() (int64, error) { return 0, errors.New("the PTP daemon is not running") })
	f, err := New(NodeID(984), WithClock(failing))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.NextID(); !errors.Is(err, ErrClockFailed) || !strings.Contains(err.Error(), "the PTP daemon is not running") {
		t.Fatalf("a failing user clock: %v", err)
	}
	if err := failing.Set(1); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Set on a user clock: %v", err)
	}
}

func TestTheRestartGuardsSettings(t *testing.T) {
	state := t.TempDir()
	file := filepath.Join(state, "not-a-directory")
	os.WriteFile(file, nil, 0o600)
	_, err := New(NodeID(985), WithRestartGuard(RestartGuardRequired), WithStateDir(file))
	if !errors.Is(err, ErrLeaseStore) || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "POLYFLAKE_STATE_DIR") {
		t.Fatalf("required, a file in its place: %v", err)
	}
	g, err := New(NodeID(985), WithRestartGuard(RestartGuardAuto), WithStateDir(file))
	if err != nil {
		t.Fatal(err)
	}
	if h := g.Health(); !h.OK || h.Lease != nil || !strings.Contains(h.RestartGuardNote, "no restart guard") {
		t.Fatalf("auto, a file in its place: %+v", h)
	}
	g.Close()
	g = MustNew(NodeID(985), WithRestartGuard(RestartGuardOff), WithStateDir(file))
	if h := g.Health(); !strings.HasPrefix(h.RestartGuardNote, "off") {
		t.Fatalf("off: %q", h.RestartGuardNote)
	}
	g.Close()
	if _, err := New(NodeID(985), WithRestartGuard(7)); !errors.Is(err, ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "7 is not a polyflake_restart_guard (0 default, 1 auto, 2 required, 3 off)") {
		t.Fatalf("a bad mode: %v", err)
	}
	// The mark in the state directory, kind "host"; a new generator in this process follows.
	g = MustNew(NodeID(985), WithMode(Monotonic), WithStateDir(state), WithHostScope("go-scope"))
	buf := make([]int64, 409600) // 100 ms ahead
	if err := g.NextIDs(buf); err != nil {
		t.Fatal(err)
	}
	h := g.Health()
	if h.Lease == nil || h.Lease.Kind != "host" || !strings.HasPrefix(h.Lease.Store, state) || !strings.HasSuffix(h.Lease.Store, "-go-scope") {
		t.Fatalf("the mark: %+v", h.Lease)
	}
	g.Close()
	g = MustNew(NodeID(985), WithStateDir(state), WithHostScope("go-scope"))
	defer g.Close()
	start := time.Now()
	id, err := g.NextID()
	if err != nil || id <= buf[len(buf)-1] {
		t.Fatalf("the next generator in this process: %d after %d: %v", id, buf[len(buf)-1], err)
	}
	t.Logf("a strict generator after a monotonic one 100 ms ahead: first ID after %v (restart waits %d)", time.Since(start), g.Health().RestartWaits)
	// Bad scopes echo what was sent; a NUL is refused before the library sees it.
	for _, scope := range []string{"two words", "billing\xff", "nul\x00byte"} {
		if _, err := New(NodeID(986), WithHostScope(scope)); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("scope %q: %v", scope, err)
		}
	}
	if _, err := New(NodeID(986), WithHostScope("two words")); !strings.Contains(fmt.Sprint(err), `"two words"`) {
		t.Errorf("the scope is not echoed: %v", err)
	}
	// Two scopes hold one node id on purpose.
	a := MustNew(NodeID(987), WithStateDir(state), WithHostScope("go-a"))
	b := MustNew(NodeID(987), WithStateDir(state), WithHostScope("go-b"))
	a.Close()
	b.Close()
}

// The kernel's word on the clock: this host's as it is, then a stand-in for adjtimex (the core's
// tests' LD_PRELOAD shim) moving it under a child process.
func TestTheKernelsWordOnTheClock(t *testing.T) {
	g := MustNew(NodeID(988), WithRestartGuard(RestartGuardOff))
	h := g.Health()
	g.Close()
	t.Logf("this host's kernel: %+v", h.ClockSync)
	if h.ClockSync.State == "" || h.ClockSync.MaxErrorUs < -1 {
		t.Fatalf("clock sync: %+v", h.ClockSync)
	}
	for _, bad := range []uint64{0, 16001} {
		if _, err := New(NodeID(988), WithMaxClockErrorMs(bad)); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), strconv.FormatUint(bad, 10)) {
			t.Errorf("max_clock_error_ms %d: %v", bad, err)
		}
	}
	if _, err := New(NodeID(988), WithClock(NewManualClock(1800000000000)), WithMaxClockErrorMs(100)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("max_clock_error_ms on a test clock: %v", err)
	}
	dir := t.TempDir()
	shim := filepath.Join(dir, "fake_adjtimex.so")
	src, _ := filepath.Abs("../core/tests/support/fake_adjtimex.c")
	if out, err := exec.Command("cc", "-shared", "-fPIC", "-O2", "-o", shim, src).CombinedOutput(); err != nil {
		t.Fatalf("building the adjtimex stand-in: %v\n%s", err, out)
	}
	k := spawn(t, []string{restartChild + "=sync", "PF_FAKE_ADJTIMEX=" + filepath.Join(dir, "state")}, "", shim)
	for {
		line := k.line("SYNC")
		if line == "" {
			break
		}
		t.Log(line)
		if strings.HasPrefix(line, "SYNC FAIL") {
			t.Error(line)
		}
	}
	if code := k.wait(); code != 0 {
		t.Fatalf("the child under the stand-in exited %d", code)
	}
}

// syncChild runs under the stand-in: a generator bound to 50 ms of error, one without a bound;
// the kernel's word moved under them. Says "SYNC ..." lines ("SYNC FAIL ..." for a failure);
// exit code: failures.
func syncChild() int {
	file := os.Getenv("PF_FAKE_ADJTIMEX")
	set := func(s string) { os.WriteFile(file, []byte(s), 0o600) }
	fails := 0
	fail := func(format string, args ...any) {
		fails++
		fmt.Printf("SYNC FAIL "+format+"\n", args...)
	}
	// Calls NextID every 20 ms until it gives want (nil: an ID), up to 2.5 s (the monitor looks
	// once a second); how long that took (-1: never).
	until := func(g *Generator, want *Error) (time.Duration, error) {
		start := time.Now()
		for time.Since(start) < 2500*time.Millisecond {
			_, err := g.NextID()
			if (want == nil && err == nil) || (want != nil && errors.Is(err, want)) {
				return time.Since(start), err
			}
			time.Sleep(20 * time.Millisecond)
		}
		return -1, nil
	}
	set("0 0 5000 1000") // synchronized, 5 ms of maximum error
	bound := MustNew(NodeID(970), WithRestartGuard(RestartGuardOff), WithMaxClockErrorMs(50))
	free := MustNew(NodeID(971), WithRestartGuard(RestartGuardOff))
	u, err := NewUUIDv7(WithMaxClockErrorMs(50))
	if err != nil {
		fail("a bound UUIDv7 generator: %v", err)
		return fails
	}
	if _, err := bound.NextID(); err != nil {
		fail("synchronized: %v", err)
	}
	if h := free.Health(); h.ClockSync != (ClockSync{"ok", true, 5000, 1000}) {
		fail("synchronized: %+v", h.ClockSync)
	}
	set("5 64 16000000 16000000")
	took, err := until(bound, ErrClockUnsynchronized)
	if took < 0 || !strings.Contains(fmt.Sprint(err), "not synchronized") {
		fail("unsynchronized: never refused (%v)", err)
	}
	fmt.Printf("SYNC unsynchronized: refused after %v: %v\n", took.Round(time.Millisecond), err)
	if _, err := u.NextUUID(); !errors.Is(err, ErrClockUnsynchronized) {
		fail("the bound UUIDv7 generator: %v", err)
	}
	if _, err := free.NextID(); err != nil {
		fail("the unbound generator: %v", err)
	}
	if h := bound.Health(); h.OK || h.Status != "clock_unsynchronized" || h.ClockSync.State != "unsynchronized" || h.ClockSync.Synchronized || h.ClockSync.MaxErrorUs != 16000000 {
		fail("unsynchronized health: %+v", h)
	}
	set("0 0 5000 1000")
	if took, _ = until(bound, nil); took < 0 {
		fail("never issued again once synchronized")
	}
	fmt.Printf("SYNC synchronized again: issuing after %v\n", took.Round(time.Millisecond))
	set("0 0 80000 1000") // synchronized, 80 ms of error over a 50 ms bound
	took, err = until(bound, ErrClockUnsynchronized)
	if took < 0 || !strings.Contains(fmt.Sprint(err), "over max_clock_error_ms = 50") {
		fail("over the bound: %v", err)
	}
	fmt.Printf("SYNC 80 ms of error over a 50 ms bound: refused after %v\n", took.Round(time.Millisecond))
	set("1 0 5000 1000") // a leap second due: said, not refused
	if took, _ = until(bound, nil); took < 0 || bound.Health().ClockSync.State != "insert_leap" {
		fail("a leap due: %+v", bound.Health().ClockSync)
	}
	bound.Close()
	free.Close()
	u.Close()
	fmt.Printf("SYNC done, %d failures\n", fails)
	return fails
}
