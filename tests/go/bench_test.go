package cgotest

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"syscall"
	"testing"
	"time"

	polyflake "example.invalid/polyflake/go"
	"github.com/bwmarrin/snowflake"
)

// Per-call cost of polyflake's Go package (one cgo call per ID) beside bwmarrin/snowflake's
// Generate() and time.Now() in the same run: the Benchmark functions feed make bench-go's table
// (tests/go/bench.py), the check mode (-check, see TestMain) make bench-check's rows.
//
// Both capped setups issue at most 4,096 IDs per ms and then wait for the next ms, so a tight
// loop on them measures the cap (~244 ns per ID), not the call. The per-call comparison is
// made where neither can exhaust its millisecond: bwmarrin with its own settings widened to
// NodeBits 1, StepBits 21 (2,097,152 IDs per ms), polyflake on the layout 41/1/21 (the same
// split), strict, on the precise and on the coarse clock source.
//
// Every generator here runs without a lead limit (a flat-out monotonic loop runs past the default
// 5,000 ms within a second, then refuses), keeps no restart-guard mark (a mark's R, one reserve
// ahead, bounds the lead too, and a closed generator's mark would make the next benchmark's
// generator on the same node id wait), and claims its node ids in a host scope of this process's
// own, so it never meets another program's generators on this host.

var benchScope = fmt.Sprintf("bench-go-%d", os.Getpid())

func newGenerator(opts ...polyflake.Option) (*polyflake.Generator, error) {
	return polyflake.New(append([]polyflake.Option{polyflake.WithoutLeadLimit(),
		polyflake.WithRestartGuard(polyflake.RestartGuardOff), polyflake.WithHostScope(benchScope)},
		opts...)...)
}

func benchGenerator(b *testing.B, opts ...polyflake.Option) *polyflake.Generator {
	g, err := newGenerator(opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Close() })
	return g
}

var (
	wide   = polyflake.Layout{TimestampBits: 41, NodeBits: 1, SequenceBits: 21}
	wide20 = polyflake.Layout{TimestampBits: 41, NodeBits: 2, SequenceBits: 20}
)

// bwmarrinNode is a bwmarrin/snowflake node with nodeBits and stepBits: its settings are package
// variables, read by NewNode: set, make, restore.
func bwmarrinNode(nodeBits, stepBits uint8) (*snowflake.Node, error) {
	oldNode, oldStep := snowflake.NodeBits, snowflake.StepBits
	snowflake.NodeBits, snowflake.StepBits = nodeBits, stepBits
	defer func() { snowflake.NodeBits, snowflake.StepBits = oldNode, oldStep }()
	return snowflake.NewNode(1)
}

// The loops: n calls each, what they return summed into sink so that none is dropped.
var sink int64

func loopTimeNow(n int) {
	var s int64
	for i := 0; i < n; i++ {
		s += time.Now().UnixNano()
	}
	sink += s
}

func loopBwmarrin(node *snowflake.Node) func(int) {
	return func(n int) {
		var s int64
		for i := 0; i < n; i++ {
			s += int64(node.Generate())
		}
		sink += s
	}
}

func loopNextID(g *polyflake.Generator) func(int) {
	return func(n int) {
		var s int64
		for i := 0; i < n; i++ {
			id, err := g.NextID()
			if err != nil {
				panic(err)
			}
			s += id
		}
		sink += s
	}
}

// loopNextIDs makes n IDs in batches of 4,096 (the last one shorter).
func loopNextIDs(g *polyflake.Generator) func(int) {
	buf := make([]int64, 4096)
	return func(n int) {
		for done := 0; done < n; done += len(buf) {
			k := len(buf)
			if n-done < k {
				k = n - done
			}
			if err := g.NextIDs(buf[:k]); err != nil {
				panic(err)
			}
		}
		sink += buf[0]
	}
}

func loopNextUUID(g *polyflake.UUIDv7Generator) func(int) {
	return func(n int) {
		for i := 0; i < n; i++ {
			u, err := g.NextUUID()
			if err != nil {
				panic(err)
			}
			sink += int64(u[15])
		}
	}
}

func loopNextULID(g *polyflake.ULIDGenerator) func(int) {
	return func(n int) {
		for i := 0; i < n; i++ {
			u, err := g.NextULID()
			if err != nil {
				panic(err)
			}
			sink += int64(u[15])
		}
	}
}

// The floor (floor.go): an empty cgo call, and polyflake_next_id through cgo with no wrapper.
func loopEmptyCgo(g *RawGenerator) func(int) {
	return func(n int) { sink += int64(g.EmptyCalls(n)) }
}

func loopRawNextID(g *RawGenerator) func(int) {
	return func(n int) { sink += int64(g.NextIDs(n)) }
}

func run(b *testing.B, loop func(int)) {
	b.ResetTimer()
	loop(b.N)
}

func BenchmarkTimeNow(b *testing.B) { run(b, loopTimeNow) }

func benchBwmarrin(b *testing.B, nodeBits, stepBits uint8) {
	n, err := bwmarrinNode(nodeBits, stepBits)
	if err != nil {
		b.Fatal(err)
	}
	run(b, loopBwmarrin(n))
}

func BenchmarkBwmarrinGenerate(b *testing.B) { benchBwmarrin(b, 10, 12) }

func BenchmarkBwmarrinGenerateWide(b *testing.B) { benchBwmarrin(b, 1, 21) }

func BenchmarkPolyflakeNextIDStrictDefault(b *testing.B) {
	run(b, loopNextID(benchGenerator(b, polyflake.NodeID(11))))
}

func BenchmarkPolyflakeNextIDStrictWide(b *testing.B) {
	run(b, loopNextID(benchGenerator(b, polyflake.NodeID(1), polyflake.WithLayout(wide))))
}

func BenchmarkPolyflakeNextIDStrictWideCoarse(b *testing.B) {
	run(b, loopNextID(benchGenerator(b, polyflake.NodeID(0), polyflake.WithLayout(wide),
		polyflake.WithClockSource(polyflake.Coarse))))
}

func BenchmarkPolyflakeNextIDMonotonic(b *testing.B) {
	run(b, loopNextID(benchGenerator(b, polyflake.NodeID(12), polyflake.WithMode(polyflake.Monotonic))))
}

func BenchmarkPolyflakeNextIDMonotonicCoarse(b *testing.B) {
	run(b, loopNextID(benchGenerator(b, polyflake.NodeID(15), polyflake.WithMode(polyflake.Monotonic),
		polyflake.WithClockSource(polyflake.Coarse))))
}

// Reported per ID: b.N IDs in batches of 4,096.
func BenchmarkPolyflakeNextIDsMonotonicPerID(b *testing.B) {
	run(b, loopNextIDs(benchGenerator(b, polyflake.NodeID(13), polyflake.WithMode(polyflake.Monotonic))))
}

func BenchmarkPolyflakeNextIDsStrictWidePerID(b *testing.B) {
	run(b, loopNextIDs(benchGenerator(b, polyflake.NodeID(0), polyflake.WithLayout(wide20))))
}

func BenchmarkPolyflakeNextIDsStrictDefaultPerID(b *testing.B) {
	run(b, loopNextIDs(benchGenerator(b, polyflake.NodeID(14))))
}

func benchUUIDv7(b *testing.B, settings ...polyflake.Setting) {
	g, err := polyflake.NewUUIDv7(settings...)
	if err != nil {
		b.Fatal(err)
	}
	run(b, loopNextUUID(g))
}

func BenchmarkPolyflakeNextUUIDv7(b *testing.B) { benchUUIDv7(b) }

func BenchmarkPolyflakeNextUUIDv7Coarse(b *testing.B) {
	benchUUIDv7(b, polyflake.WithClockSource(polyflake.Coarse))
}

func BenchmarkPolyflakeNextULID(b *testing.B) {
	g, err := polyflake.NewULID()
	if err != nil {
		b.Fatal(err)
	}
	run(b, loopNextULID(g))
}

func benchRaw(b *testing.B, coarse bool) *RawGenerator {
	g, err := NewRawGenerator(false, coarse, [3]uint32{41, 1, 21}, 0, benchScope+"-raw")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(g.Free)
	return g
}

// The floor: one cgo call to a C function that does nothing, through the mechanism go/ uses.
func BenchmarkFloorEmptyCgoCall(b *testing.B) { run(b, loopEmptyCgo(benchRaw(b, false))) }

// The same with the handle as a pointer argument, which cgo checks for Go pointers per call.
func BenchmarkFloorEmptyCgoCallPointerArg(b *testing.B) {
	g := benchRaw(b, false)
	run(b, func(n int) { sink += int64(g.EmptyCallsPointerArg(n)) })
}

// The floor: polyflake_next_id through cgo with no Go wrapper (strict 41/1/21, precise).
func BenchmarkFloorRawNextIDStrictWide(b *testing.B) { run(b, loopRawNextID(benchRaw(b, false))) }

// ---------------------------------------------------------------------------------------------
// Check mode: make bench-check's Go rows.

var checkMode = flag.Bool("check", false,
	"print make bench-check's Go rows (one JSON object a line on stdout) instead of testing")
var checkRounds = flag.Int("check.rounds", 201, "check mode: rounds per row")
var checkRoundMs = flag.Float64("check.ms", 1, "check mode: ms per timing")
var ceilingTime = flag.Duration("ceiling", 0,
	"print the CPU time per wall-clock second of a strict loop at 41/10/12's ceiling, each loop this long, instead of testing")
var ceilingRounds = flag.Int("ceiling.rounds", 3, "ceiling mode: rounds (polyflake then bwmarrin in each)")

func TestMain(m *testing.M) {
	flag.Parse()
	if *ceilingTime > 0 {
		if err := runCeiling(*ceilingTime, *ceilingRounds); err != nil {
			fmt.Fprintln(os.Stderr, "bench ceiling:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if *checkMode {
		if err := runCheck(*checkRounds, *checkRoundMs); err != nil {
			fmt.Fprintln(os.Stderr, "bench check:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// timed is the wall time of loop(n) in ns per call.
func timed(loop func(int), n int) float64 {
	t := time.Now()
	loop(n)
	return float64(time.Since(t).Nanoseconds()) / float64(n)
}

// calibrate is how many calls of loop take about ms milliseconds: from the fastest of three
// timings of a count that takes over 2 ms (a timing the scheduler cut into would make it too few;
// a capped loop, bwmarrin's default, must run long enough to meet its cap).
func calibrate(loop func(int), ms float64) int {
	n := 100
	for timed(loop, n)*float64(n) < 2e6 && n < 1<<30 {
		n *= 4
	}
	ns := timed(loop, n)
	for i := 0; i < 2; i++ {
		if t := timed(loop, n); t < ns {
			ns = t
		}
	}
	if k := int(ms * 1e6 / ns); k > 100 {
		return k
	}
	return 100
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

type checkRow struct {
	Row         string  `json:"row"`
	Ns          float64 `json:"ns"`
	Reference   string  `json:"reference"`
	ReferenceNs float64 `json:"reference_ns"`
	Ratio       float64 `json:"ratio"`
}

// measure times reference and subject back to back in each of rounds rounds (which goes first
// alternates), each timing about ms milliseconds; the medians and the median of the rounds'
// ratios (a batch's loop counts IDs, so its figure is per ID).
func measure(row, refName string, reference, subject func(int), rounds int, ms float64) checkRow {
	nr, ns := calibrate(reference, ms), calibrate(subject, ms)
	timed(reference, nr)
	timed(subject, ns)
	r, s, ratio := make([]float64, rounds), make([]float64, rounds), make([]float64, rounds)
	for i := 0; i < rounds; i++ {
		if i%2 == 0 {
			r[i] = timed(reference, nr)
			s[i] = timed(subject, ns)
		} else {
			s[i] = timed(subject, ns)
			r[i] = timed(reference, nr)
		}
		ratio[i] = s[i] / r[i]
	}
	round := func(x float64, places float64) float64 {
		p := math.Pow(10, places)
		return math.Round(x*p) / p
	}
	return checkRow{Row: row, Ns: round(median(s), 3), Reference: refName,
		ReferenceNs: round(median(r), 3), Ratio: round(median(ratio), 4)}
}

func runCheck(rounds int, ms float64) error {
	// The generators, each on a node id of its own in this process's scope; closed at the end.
	var gens []*polyflake.Generator
	defer func() {
		for _, g := range gens {
			g.Close()
		}
	}()
	mk := func(opts ...polyflake.Option) (*polyflake.Generator, error) {
		g, err := newGenerator(opts...)
		if err == nil {
			gens = append(gens, g)
		}
		return g, err
	}
	strict, err := mk(polyflake.NodeID(0), polyflake.WithLayout(wide))
	if err != nil {
		return err
	}
	strictCoarse, err := mk(polyflake.NodeID(1), polyflake.WithLayout(wide),
		polyflake.WithClockSource(polyflake.Coarse))
	if err != nil {
		return err
	}
	mono, err := mk(polyflake.NodeID(2), polyflake.WithMode(polyflake.Monotonic))
	if err != nil {
		return err
	}
	monoCoarse, err := mk(polyflake.NodeID(3), polyflake.WithMode(polyflake.Monotonic),
		polyflake.WithClockSource(polyflake.Coarse))
	if err != nil {
		return err
	}
	batch, err := mk(polyflake.NodeID(4), polyflake.WithMode(polyflake.Monotonic))
	if err != nil {
		return err
	}
	strictDefault, err := mk(polyflake.NodeID(5))
	if err != nil {
		return err
	}
	uuid7, err := polyflake.NewUUIDv7()
	if err != nil {
		return err
	}
	ulid, err := polyflake.NewULID()
	if err != nil {
		return err
	}
	raw, err := NewRawGenerator(false, false, [3]uint32{41, 1, 21}, 0, benchScope+"-raw")
	if err != nil {
		return err
	}
	defer raw.Free()
	bwWide, err := bwmarrinNode(1, 21)
	if err != nil {
		return err
	}
	bwDefault, err := bwmarrinNode(10, 12)
	if err != nil {
		return err
	}

	const now, bwW, bwD = "time.Now", "bwmarrin/snowflake Generate 41/1/21", "bwmarrin/snowflake Generate"
	const rawRef = "polyflake_next_id via cgo"
	type spec struct {
		row, refName string
		ref, subject func(int)
		// capped: bwmarrin on its default layout spins after 4,096 IDs in a millisecond, so its
		// timings must span many milliseconds (a 1 ms timing after the other case's would find
		// a fresh millisecond and never meet the cap)
		capped bool
	}
	specs := []spec{
		{"go NextID strict 41/1/21", now, loopTimeNow, loopNextID(strict), false},
		{"go NextID strict coarse 41/1/21", now, loopTimeNow, loopNextID(strictCoarse), false},
		{"go NextID monotonic 41/10/12", now, loopTimeNow, loopNextID(mono), false},
		{"go NextID monotonic coarse 41/10/12", now, loopTimeNow, loopNextID(monoCoarse), false},
		{"go NextIDs(4096) per id", now, loopTimeNow, loopNextIDs(batch), false},
		{"go NextUUID uuidv7", now, loopTimeNow, loopNextUUID(uuid7), false},
		{"go NextULID ulid", now, loopTimeNow, loopNextULID(ulid), false},
		// The peer where neither can exhaust its millisecond (bwmarrin widened to 41/1/21): the
		// floors' rows (strict <= 1.5x, strict coarse <= 1.0x).
		{"go NextID strict 41/1/21 vs bwmarrin", bwW, loopBwmarrin(bwWide), loopNextID(strict), false},
		{"go NextID strict coarse 41/1/21 vs bwmarrin", bwW, loopBwmarrin(bwWide), loopNextID(strictCoarse), false},
		{"go NextID monotonic coarse 41/10/12 vs bwmarrin", bwW, loopBwmarrin(bwWide), loopNextID(monoCoarse), false},
		// The default layouts as a user gets them: both strict loops meet the cap of 4,096 IDs a
		// millisecond (polyflake sleeps to the next one, bwmarrin spins); monotonic never waits.
		{"go NextID strict 41/10/12 vs bwmarrin default", bwD, loopBwmarrin(bwDefault), loopNextID(strictDefault), true},
		{"go NextID monotonic 41/10/12 vs bwmarrin default", bwD, loopBwmarrin(bwDefault), loopNextID(mono), true},
		// The floor under NextID: the wrapper's own share (NextID over polyflake_next_id called
		// through cgo with nothing around it), that raw call and an empty cgo call (the same
		// mechanism, floor.go) against the peer and the clock read.
		{"go NextID strict 41/1/21 vs raw cgo polyflake_next_id", rawRef, loopRawNextID(raw), loopNextID(strict), false},
		{"go floor raw cgo polyflake_next_id strict 41/1/21 vs bwmarrin", bwW, loopBwmarrin(bwWide), loopRawNextID(raw), false},
		{"go floor empty cgo call vs bwmarrin", bwW, loopBwmarrin(bwWide), loopEmptyCgo(raw), false},
		{"go floor empty cgo call", now, loopTimeNow, loopEmptyCgo(raw), false},
	}
	enc := json.NewEncoder(os.Stdout)
	for _, s := range specs {
		r, m := rounds, ms
		if s.capped {
			r, m = 21, 20*ms
		}
		if err := enc.Encode(measure(s.row, s.refName, s.ref, s.subject, r, m)); err != nil {
			return err
		}
	}
	return nil
}

// ---------------------------------------------------------------------------------------------
// Ceiling mode: a strict loop on the default layout, 41/10/12, may issue 4,096 IDs a millisecond
// (4,096,000 a second) and then waits for the next millisecond. What does that rate cost in CPU?
// polyflake's core sleeps to the millisecond's boundary; bwmarrin's Generate spins, reading the
// clock until the millisecond turns. The CPU time is the process's (getrusage: user and system,
// every thread: the loop's, and the runtime's that take over its P while the loop sleeps in C).

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// atCeiling runs loop in slices of 1,024 calls for d; IDs per second and CPU-s per wall-s.
func atCeiling(loop func(int), d time.Duration) (rate, cpu float64) {
	t0, c0, n := time.Now(), cpuTime(), 0
	for time.Since(t0) < d {
		loop(1024)
		n += 1024
	}
	wall := time.Since(t0)
	return float64(n) / wall.Seconds(), (cpuTime() - c0).Seconds() / wall.Seconds()
}

func runCeiling(d time.Duration, rounds int) error {
	g, err := newGenerator(polyflake.NodeID(6))
	if err != nil {
		return err
	}
	defer g.Close()
	bw, err := bwmarrinNode(10, 12)
	if err != nil {
		return err
	}
	type result struct{ rate, cpu []float64 }
	var pf, bm result
	for i := 0; i < rounds; i++ {
		r, c := atCeiling(loopNextID(g), d)
		pf.rate, pf.cpu = append(pf.rate, r), append(pf.cpu, c)
		r, c = atCeiling(loopBwmarrin(bw), d)
		bm.rate, bm.cpu = append(bm.rate, r), append(bm.cpu, c)
	}
	for _, x := range []struct {
		name string
		r    result
	}{{"polyflake NextID, strict 41/10/12", pf}, {"bwmarrin/snowflake Generate, 10/12", bm}} {
		fmt.Printf("Go %-36s at the ceiling (median of %d rounds of %s): %.0f IDs/s = %.2f%% of 4096000/s, %.3f CPU-s per wall-s\n",
			x.name, rounds, d, median(x.r.rate), 100*median(x.r.rate)/4096000, median(x.r.cpu))
	}
	return nil
}
