package cgotest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	polyflake "example.invalid/polyflake/go"
)

// id128 is an ID of any format as 16 big-endian bytes (a Snowflake ID in the low 8), so one
// comparison orders, and one map dedups, IDs of every format.
type id128 = [16]byte

func of64(id int64) (b id128) {
	for i := 0; i < 8; i++ {
		b[15-i] = byte(uint64(id) >> (8 * i))
	}
	return b
}

func to64(b id128) (id int64) {
	for i := 8; i < 16; i++ {
		id = id<<8 | int64(b[i])
	}
	return id
}

// ids is what the runner needs of a generator of any format.
type ids interface {
	next() (id128, error)
	batch(n int) ([]id128, error) // checks that the buffer is untouched on an error
	health() polyflake.Health
	close() error
	timestampMs(id id128) (int64, error)
	snowflake() *polyflake.Generator // nil for UUIDv7 and ULID
}

type flakeIDs struct{ g *polyflake.Generator }

func (f flakeIDs) next() (id128, error) {
	id, err := f.g.NextID()
	return of64(id), err
}

func (f flakeIDs) batch(n int) ([]id128, error) {
	buf := make([]int64, n)
	for i := range buf {
		buf[i] = -1
	}
	if err := f.g.NextIDs(buf); err != nil {
		for _, v := range buf {
			if v != -1 {
				return nil, fmt.Errorf("buffer written on error %v", err)
			}
		}
		return nil, err
	}
	out := make([]id128, n)
	for i, v := range buf {
		out[i] = of64(v)
	}
	return out, nil
}

func (f flakeIDs) health() polyflake.Health { return f.g.Health() }
func (f flakeIDs) close() error             { return f.g.Close() }
func (f flakeIDs) timestampMs(id id128) (int64, error) {
	d, err := f.g.Decode(to64(id))
	return d.TimestampMs, err
}
func (f flakeIDs) snowflake() *polyflake.Generator { return f.g }

// untouched fills a batch buffer with a sentinel and says whether an error left it so.
func untouched[T ~[16]byte](buf []T, fill bool) bool {
	for i := range buf {
		if fill {
			for k := range buf[i] {
				buf[i][k] = 0xee
			}
		} else if buf[i] != (T{0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee}) {
			return false
		}
	}
	return true
}

func batchOf[T ~[16]byte](n int, fill func([]T) error) ([]id128, error) {
	buf := make([]T, n)
	untouched(buf, true)
	if err := fill(buf); err != nil {
		if !untouched(buf, false) {
			return nil, fmt.Errorf("buffer written on error %v", err)
		}
		return nil, err
	}
	out := make([]id128, n)
	for i, v := range buf {
		out[i] = id128(v)
	}
	return out, nil
}

type uuidIDs struct{ g *polyflake.UUIDv7Generator }

func (u uuidIDs) next() (id128, error) {
	id, err := u.g.NextUUID()
	return id128(id), err
}
func (u uuidIDs) batch(n int) ([]id128, error) { return batchOf(n, u.g.NextUUIDs) }
func (u uuidIDs) health() polyflake.Health     { return u.g.Health() }
func (u uuidIDs) close() error                 { return u.g.Close() }
func (u uuidIDs) timestampMs(id id128) (int64, error) {
	return polyflake.UUID(id).TimestampMs()
}
func (u uuidIDs) snowflake() *polyflake.Generator { return nil }

type ulidIDs struct{ g *polyflake.ULIDGenerator }

func (u ulidIDs) next() (id128, error) {
	id, err := u.g.NextULID()
	return id128(id), err
}
func (u ulidIDs) batch(n int) ([]id128, error) { return batchOf(n, u.g.NextULIDs) }
func (u ulidIDs) health() polyflake.Health     { return u.g.Health() }
func (u ulidIDs) close() error                 { return u.g.Close() }
func (u ulidIDs) timestampMs(id id128) (int64, error) {
	return polyflake.ULID(id).TimestampMs(), nil
}
func (u ulidIDs) snowflake() *polyflake.Generator { return nil }

type gen struct {
	g       ids              // nil: deferred and not yet created (a closed one stays, refusing)
	clock   *polyflake.Clock // nil: the system clock
	manual  bool             // clock_set, clock_advance and clock_elapse need a manual clock
	last    id128
	hasLast bool
	spec    obj // kept for a `deferred` generator, made by a `create` step
}

// leaseDir is a scenario file's ONE lease directory, made on first use.
type leaseDir struct {
	t    *testing.T
	path string
}

func (d *leaseDir) get() string {
	if d.path == "" {
		p, err := os.MkdirTemp("", "polyflake-scenario-")
		if err != nil {
			d.t.Fatal(err)
		}
		d.path = p
	}
	return d.path
}

func (d *leaseDir) remove() {
	if d.path != "" {
		if err := os.RemoveAll(d.path); err != nil {
			d.t.Error(err)
		}
	}
}

func expand(values []any) []int64 {
	var out []int64
	for _, v := range values {
		if n, ok := v.(json.Number); ok {
			out = append(out, i64(n))
			continue
		}
		run := v.(obj)
		start, count, step, each := i64(run["start"]), i64(run["count"]), int64(0), int64(1)
		if s, ok := run["step"]; ok {
			step = i64(s)
		}
		if e, ok := run["each"]; ok {
			each = i64(e)
		}
		for i := int64(0); i < count; i++ {
			out = append(out, start+step*(i/each))
		}
	}
	return out
}

// settings are the settings every generator takes, from a spec, on the scenario's clock source.
func settings(t *testing.T, spec obj, where string, source polyflake.ClockSource, built *gen) []polyflake.Setting {
	s := []polyflake.Setting{polyflake.WithClockSource(source)}
	switch spec["mode"] {
	case "strict":
		s = append(s, polyflake.WithMode(polyflake.Strict))
	case "monotonic":
		s = append(s, polyflake.WithMode(polyflake.Monotonic))
	default:
		t.Fatalf("%s: mode %v", where, spec["mode"])
	}
	if v, ok := spec["max_wait_ms"]; ok {
		s = append(s, polyflake.WithMaxWaitMs(f64(v)))
	}
	if v, ok := spec["max_lead_ms"]; ok {
		s = append(s, polyflake.WithMaxLeadMs(i64(v)))
	}
	if v, ok := spec["max_forward_step_ms"]; ok { // null turns the check off
		if v == nil {
			s = append(s, polyflake.WithoutForwardStepCheck())
		} else {
			s = append(s, polyflake.WithMaxForwardStepMs(uint64(i64(v))))
		}
	}
	if v, ok := spec["forward_confirm_ms"]; ok {
		s = append(s, polyflake.WithForwardConfirmMs(uint64(i64(v))))
	}
	if clock, ok := spec["clock"].(obj); ok {
		onlyKeys(t, clock, where, "kind", "start_ms", "values")
		switch clock["kind"] {
		case "manual":
			built.clock = polyflake.NewManualClock(i64(clock["start_ms"]))
			built.manual = true
		case "scripted":
			built.clock = polyflake.NewScriptedClock(expand(clock["values"].([]any)))
		default:
			t.Fatalf("%s: clock kind %v", where, clock["kind"])
		}
		s = append(s, polyflake.WithClock(built.clock))
	}
	return s
}

func build(t *testing.T, spec obj, where string, dir *leaseDir, source polyflake.ClockSource) (*gen, error) {
	built := &gen{}
	shared := settings(t, spec, where, source, built)
	if format, ok := spec["format"]; ok {
		onlyKeys(t, spec, where, "mode", "format", "deferred", "max_wait_ms", "max_lead_ms", "max_forward_step_ms", "forward_confirm_ms", "clock")
		switch format {
		case "uuidv7":
			g, err := polyflake.NewUUIDv7(shared...)
			if err != nil {
				return nil, err
			}
			built.g = uuidIDs{g}
		case "ulid":
			g, err := polyflake.NewULID(shared...)
			if err != nil {
				return nil, err
			}
			built.g = ulidIDs{g}
		default:
			t.Fatalf("%s: format %v", where, format)
		}
		return built, nil
	}
	onlyKeys(t, spec, where, "mode", "node_id", "layout", "epoch_ms", "max_wait_ms", "max_lead_ms", "clock", "source", "deferred", "max_forward_step_ms", "forward_confirm_ms")
	opts := make([]polyflake.Option, 0, len(shared)+3)
	for _, s := range shared {
		opts = append(opts, s)
	}
	if src, ok := spec["source"].(obj); ok {
		onlyKeys(t, src, where, "kind", "slots", "reserve_ms")
		if src["kind"] != "file_lease" {
			t.Fatalf("%s: source kind %v", where, src["kind"])
		}
		var lease []polyflake.LeaseOption
		if v, ok := src["slots"]; ok {
			lease = append(lease, polyflake.Slots(uint32(i64(v))))
		}
		if v, ok := src["reserve_ms"]; ok {
			lease = append(lease, polyflake.ReserveMs(uint64(i64(v))))
		}
		opts = append(opts, polyflake.FileLease(dir.get(), lease...))
	} else {
		opts = append(opts, polyflake.NodeID(i64(spec["node_id"])))
	}
	switch l := spec["layout"].(type) {
	case nil:
	case string:
		layout, err := polyflake.LayoutFromName(l)
		if err != nil {
			return nil, err
		}
		opts = append(opts, polyflake.WithLayout(layout))
	case []any:
		opts = append(opts, polyflake.WithLayout(polyflake.Layout{TimestampBits: uint32(i64(l[0])), NodeBits: uint32(i64(l[1])), SequenceBits: uint32(i64(l[2]))}))
	default:
		t.Fatalf("%s: layout %v", where, l)
	}
	if v, ok := spec["epoch_ms"]; ok {
		opts = append(opts, polyflake.WithEpochMs(i64(v)))
	}
	g, err := polyflake.New(opts...)
	if err != nil {
		return nil, err
	}
	built.g = flakeIDs{g}
	return built, nil
}

// checkID checks a `first`/`last` expectation: all three fields of a Snowflake ID, only the Unix
// ms of a UUIDv7 or ULID.
func checkID(t *testing.T, g ids, id id128, want obj, what string) {
	t.Helper()
	if f := g.snowflake(); f != nil {
		onlyKeys(t, want, what, "timestamp_ms", "node_id", "sequence")
		d, err := f.Decode(to64(id))
		if err != nil || d != (polyflake.Decoded{TimestampMs: i64(want["timestamp_ms"]), NodeID: i64(want["node_id"]), Sequence: uint32(i64(want["sequence"]))}) {
			t.Errorf("%s: decoded %+v (%v), want %v", what, d, err, want)
		}
		return
	}
	onlyKeys(t, want, what, "timestamp_ms")
	if ms, err := g.timestampMs(id); err != nil || ms != i64(want["timestamp_ms"]) {
		t.Errorf("%s: timestamp %d (%v), want %v", what, ms, err, want["timestamp_ms"])
	}
}

// flake is the Snowflake generator behind an expectation only Snowflake IDs have.
func flake(t *testing.T, g ids, what string) *polyflake.Generator {
	f := g.snowflake()
	if f == nil {
		t.Fatalf("%s: a Snowflake-only expectation on a UUIDv7/ULID generator", what)
	}
	return f
}

// What Go cannot offer (see `needs` in the scenario schema), and why.
var notApplicable = map[string]string{
	"fork": "no fork() in Go (the runtime is multithreaded; syscall.ForkExec only)",
}

func healthNumber(h polyflake.Health, k string) (float64, bool) {
	v, ok := map[string]float64{
		"lead_ms": float64(h.LeadMs), "clock_ahead_ms": float64(h.ClockAheadMs),
		"ids_issued": float64(h.IDsIssued), "rewinds_waited": float64(h.RewindsWaited),
		"rewinds_refused": float64(h.RewindsRefused), "sequence_exhaustions": float64(h.SequenceExhaustions),
		"wait_sleeps": float64(h.WaitSleeps), "ms_borrowed": float64(h.MsBorrowed),
		"lead_refused": float64(h.LeadRefused), "forward_refused": float64(h.ForwardRefused),
	}[k]
	return v, ok
}

// runScenario returns the number of steps run, or 0 and the reason the file is not applicable.
func runScenario(t *testing.T, path string, source polyflake.ClockSource) (int, string) {
	doc := load(t, path)
	name := doc["name"].(string)
	onlyKeys(t, doc, name, "name", "description", "source", "needs", "generators", "steps")
	skip := ""
	needs, _ := doc["needs"].([]any)
	for _, n := range needs {
		reason, ok := notApplicable[n.(string)]
		if !ok {
			t.Fatalf("%s: unknown need %v", name, n)
		}
		skip = reason
	}
	if skip != "" {
		return 0, skip
	}
	dir := &leaseDir{t: t}
	defer dir.remove() // deferred first: runs after every generator is closed
	gens := map[string]*gen{}
	defer func() {
		for _, g := range gens {
			if g.g != nil {
				g.g.close()
			}
		}
	}()
	for key, rawSpec := range doc["generators"].(obj) {
		spec := rawSpec.(obj)
		if d, ok := spec["deferred"]; ok {
			if _, isBool := d.(bool); !isBool {
				t.Fatalf("%s: %s: deferred is not a boolean", name, key)
			}
			if d.(bool) {
				gens[key] = &gen{spec: spec}
				continue
			}
		}
		g, err := build(t, spec, name, dir, source)
		if err != nil {
			t.Fatalf("%s: building %s: %v", name, key, err)
		}
		g.spec = spec
		gens[key] = g
	}
	seen := map[id128]bool{}
	steps := 0
	for i, rs := range doc["steps"].([]any) {
		step := rs.(obj)
		op := step["op"].(string)
		what := fmt.Sprintf("%s step %d (%s, %s clock)", name, i, op, source)
		onlyKeys(t, step, what, "op", "gen", "count", "expect", "id", "ms", "config", "within_ms")
		expect, _ := step["expect"].(obj)
		started := time.Now()
		var g *gen
		if key, ok := step["gen"].(string); ok {
			if g = gens[key]; g == nil {
				t.Fatalf("%s: unknown generator %s", what, key)
			}
			// Every op but `create` needs the generator made (a closed one stays, refusing).
			if (op == "create") != (g.g == nil) {
				t.Fatalf("%s: %s is created already, or not created", what, key)
			}
		}
		switch op {
		case "create":
			onlyKeys(t, expect, what, "error")
			if d, _ := g.spec["deferred"].(bool); !d {
				t.Fatalf("%s: not a deferred generator", what)
			}
			built, err := build(t, g.spec, what, dir, source)
			want, ok := expect["error"].(string)
			if !ok {
				want = "OK"
			}
			if code(err) != want {
				t.Errorf("%s: got %q want %q", what, code(err), want)
			}
			if err == nil {
				g.g, g.clock, g.manual = built.g, built.clock, built.manual
			}
		case "close":
			if _, ok := step["expect"]; ok {
				t.Fatalf("%s: close expects nothing", what)
			}
			// The generator stays: every later call on it fails with GENERATOR_CLOSED.
			if err := g.g.close(); err != nil {
				t.Errorf("%s: %v", what, err)
			}
		case "construct":
			onlyKeys(t, expect, what, "error", "ok")
			built, err := build(t, step["config"].(obj), what, dir, source)
			if want, ok := expect["error"]; ok {
				if code(err) != want {
					t.Errorf("%s: got %v want %v", what, code(err), want)
				}
			} else if err != nil {
				t.Errorf("%s: %v", what, err)
			}
			if err == nil {
				built.g.close()
			}
		case "clock_set", "clock_advance", "clock_elapse":
			if !g.manual {
				t.Fatalf("%s: not a manual clock", what)
			}
			ms := i64(step["ms"])
			var err error
			switch op {
			case "clock_set":
				err = g.clock.Set(ms)
			case "clock_advance":
				err = g.clock.Advance(ms)
			default:
				if ms < 0 {
					t.Fatalf("%s: clock_elapse with a negative ms", what)
				}
				err = g.clock.Elapse(uint64(ms))
			}
			if err != nil {
				t.Errorf("%s: %v", what, err)
			}
		case "decode":
			onlyKeys(t, expect, what, "decoded")
			flake(t, g.g, what)
			checkID(t, g.g, of64(id64(step["id"].(string))), expect["decoded"].(obj), what)
		case "health":
			h := g.g.health()
			for k, want := range expect {
				var got float64
				switch k {
				case "ok":
					if h.OK != want.(bool) {
						t.Errorf("%s: ok %v (%s)", what, h.OK, h.Reason)
					}
					continue
				case "status":
					if h.Status != want.(string) {
						t.Errorf("%s: status %s want %s", what, h.Status, want)
					}
					continue
				default:
					var ok bool
					if got, ok = healthNumber(h, k); !ok {
						t.Errorf("%s: unknown health key %q", what, k)
						continue
					}
				}
				if bounds, ok := want.(obj); ok {
					onlyKeys(t, bounds, what, "min", "max")
					if m, ok := bounds["min"]; ok && got < f64(m) {
						t.Errorf("%s: %s = %v < %v", what, k, got, m)
					}
					if m, ok := bounds["max"]; ok && got > f64(m) {
						t.Errorf("%s: %s = %v > %v", what, k, got, m)
					}
				} else if got != f64(want) {
					t.Errorf("%s: %s = %v want %v", what, k, got, want)
				}
			}
		case "next_id", "next_ids":
			onlyKeys(t, expect, what, "error", "ids", "sequences", "max_sequence", "first", "last", "increasing")
			count := 1
			if c, ok := step["count"]; ok {
				count = int(i64(c))
			}
			var got []id128
			var failure error
			if op == "next_id" {
				for k := 0; k < count; k++ {
					id, err := g.g.next()
					if err != nil {
						failure = err
						break
					}
					got = append(got, id)
				}
			} else {
				got, failure = g.g.batch(count)
			}
			if want, ok := expect["error"]; ok {
				if code(failure) != want {
					t.Errorf("%s: got %s want %v", what, code(failure), want)
				}
				if op == "next_id" && len(got) != count-1 {
					t.Errorf("%s: failed early after %d", what, len(got))
				}
			} else if failure != nil {
				t.Errorf("%s: unexpected %v", what, failure)
			}
			if want, ok := expect["ids"]; ok {
				flake(t, g.g, what)
				ws := want.([]any)
				if len(ws) != len(got) {
					t.Errorf("%s: %d ids, want %d", what, len(got), len(ws))
				}
				for k := 0; k < len(ws) && k < len(got); k++ {
					if to64(got[k]) != id64(ws[k].(string)) {
						t.Errorf("%s: id %d = %d want %v", what, k, to64(got[k]), ws[k])
					}
				}
			}
			sequence := func(id id128) int64 {
				d, _ := flake(t, g.g, what).Decode(to64(id))
				return int64(d.Sequence)
			}
			if want, ok := expect["sequences"]; ok {
				ws := want.([]any)
				if len(ws) != len(got) {
					t.Errorf("%s: sequence count", what)
				}
				for k := 0; k < len(ws) && k < len(got); k++ {
					if s := sequence(got[k]); s != i64(ws[k]) {
						t.Errorf("%s: sequence %d = %d want %v", what, k, s, ws[k])
					}
				}
			}
			if want, ok := expect["max_sequence"]; ok {
				max := int64(-1)
				for _, id := range got {
					if s := sequence(id); s > max {
						max = s
					}
				}
				if max != i64(want) {
					t.Errorf("%s: max_sequence %d", what, max)
				}
			}
			for _, edge := range []string{"first", "last"} {
				if want, ok := expect[edge]; ok {
					if len(got) == 0 {
						t.Errorf("%s: no %s", what, edge)
					} else if edge == "first" {
						checkID(t, g.g, got[0], want.(obj), what+" first")
					} else {
						checkID(t, g.g, got[len(got)-1], want.(obj), what+" last")
					}
				}
			}
			for _, id := range got {
				if g.hasLast && bytes.Compare(id[:], g.last[:]) <= 0 {
					t.Errorf("%s: not increasing at %x", what, id)
				}
				if seen[id] {
					t.Errorf("%s: duplicate %x", what, id)
				}
				seen[id] = true
				g.last, g.hasLast = id, true
			}
		default:
			t.Errorf("%s: unknown op", what)
		}
		if bound, ok := step["within_ms"]; ok {
			if took := float64(time.Since(started).Microseconds()) / 1000; took >= f64(bound) {
				t.Errorf("%s: took %.1f ms, bound %v ms", what, took, bound)
			}
		}
		steps++
	}
	return steps, ""
}

func jsonFiles(t *testing.T, dir string) []string {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

// Every file of scenarios/ and of scenarios/formats/ (the UUIDv7 and ULID files, which wait
// there until every runner runs them), each on the precise and the coarse clock source. The
// coverage record lists the files of scenarios/ itself, as check_coverage.py expects.
func TestScenarios(t *testing.T) {
	files := jsonFiles(t, filepath.Join(vectors, "scenarios"))
	top := len(files)
	files = append(files, jsonFiles(t, filepath.Join(vectors, "scenarios", "formats"))...)
	if top < 15 || len(files)-top < 4 {
		t.Fatalf("scenario files missing: %d and %d", top, len(files)-top)
	}
	ran := 0
	var coverage strings.Builder
	for i, f := range files {
		stem := strings.TrimSuffix(filepath.Base(f), ".json")
		line := stem + " ok"
		passed := true
		for _, source := range []polyflake.ClockSource{polyflake.Precise, polyflake.Coarse} {
			passed = t.Run(filepath.Base(f)+"/"+source.String(), func(t *testing.T) {
				n, skip := runScenario(t, f, source)
				if skip != "" {
					line = stem + " not-applicable: " + skip
					t.Logf("not applicable: %s", skip)
				} else if n == 0 {
					t.Errorf("%s: no steps", f)
				}
			}) && passed
		}
		ran++
		if passed && i < top {
			coverage.WriteString(line + "\n")
		}
	}
	if ran != len(files) {
		t.Errorf("ran %d of %d scenario files", ran, len(files))
	}
	// The record `make test` checks (tests/vectors/check_coverage.py).
	target := os.Getenv("CARGO_TARGET_DIR")
	if target == "" {
		target = filepath.Join("..", "..", "target")
	}
	dir := filepath.Join(target, "scenario-coverage")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.txt"), []byte(coverage.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The conformance vectors of the 128-bit formats (tests/vectors/formats.json).
func TestFormatVectors(t *testing.T) {
	doc := load(t, filepath.Join(vectors, "formats.json"))
	cases := 0
	decimal := func(s string) (b id128) { // by hand: x = 10x + digit, on the bytes
		for _, c := range s {
			carry := uint(c - '0')
			for i := 15; i >= 0; i-- {
				carry += 10 * uint(b[i])
				b[i] = byte(carry)
				carry >>= 8
			}
		}
		return b
	}
	uuid := doc["uuid"].(obj)
	rfc := uuid["rfc9562_example"].(obj)
	u, err := polyflake.ParseUUID(rfc["text"].(string))
	if err != nil || id128(u) != decimal(rfc["value"].(string)) || u.String() != rfc["canonical"] {
		t.Errorf("RFC 9562 example: %s %v", u, err)
	}
	if ms, err := u.TimestampMs(); err != nil || ms != i64(rfc["unix_ts_ms"]) {
		t.Errorf("RFC 9562 unix_ts_ms %d %v", ms, err)
	}
	randB := uint64(u[8] & 0x3f)
	for _, b := range u[9:] {
		randB = randB<<8 | uint64(b)
	}
	if int64(u[6]>>4) != i64(rfc["version"]) || int64(u[8]>>6) != i64(rfc["variant"]) ||
		int64(u[6]&0xf)<<8|int64(u[7]) != i64(rfc["rand_a"]) || fmt.Sprint(randB) != rfc["rand_b"] {
		t.Errorf("RFC 9562 fields of %s", u)
	}
	cases++
	for _, rv := range uuid["limits"].([]any) {
		v := rv.(obj)
		u, err := polyflake.ParseUUID(v["text"].(string))
		ms, _ := u.TimestampMs()
		if err != nil || ms != i64(v["unix_ts_ms"]) || u.String() != v["text"] {
			t.Errorf("UUID limit %v: %v", v, err)
		}
		cases++
	}
	for _, rv := range uuid["bad_text"].([]any) {
		if _, err := polyflake.ParseUUID(rv.(string)); !errors.Is(err, polyflake.ErrInvalidID) {
			t.Errorf("bad UUID %q: %v", rv, err)
		}
		cases++
	}
	for _, rv := range uuid["not_v7"].([]any) {
		u, err := polyflake.ParseUUID(rv.(string))
		if _, terr := u.TimestampMs(); err != nil || !errors.Is(terr, polyflake.ErrInvalidID) {
			t.Errorf("not v7 %q: %v %v", rv, err, terr)
		}
		cases++
	}
	ulid := doc["ulid"].(obj)
	var good []any
	good = append(good, ulid["examples"].([]any)...)
	for _, rv := range append(good, ulid["limits"].([]any)...) {
		v := rv.(obj)
		u, err := polyflake.ParseULID(v["text"].(string))
		if err != nil || u.TimestampMs() != i64(v["unix_ts_ms"]) || u.String() != v["text"] {
			t.Errorf("ULID %v: %s %v", v, u, err)
		}
		if value, ok := v["value"]; ok && id128(u) != decimal(value.(string)) {
			t.Errorf("ULID value %v", v)
		}
		cases++
	}
	pair := ulid["monotonic_pair"].([]any)
	a, _ := polyflake.ParseULID(pair[0].(string))
	b, _ := polyflake.ParseULID(pair[1].(string))
	for i := 15; i >= 0; i-- {
		if a[i]++; a[i] != 0 {
			break
		}
	}
	if a != b {
		t.Errorf("ULID monotonic pair")
	}
	cases++
	for _, rv := range ulid["aliases"].([]any) {
		v := rv.(obj)
		if u, err := polyflake.ParseULID(v["text"].(string)); err != nil || u.String() != v["canonical"] {
			t.Errorf("alias %v: %s %v", v, u, err)
		}
		cases++
	}
	for _, rv := range ulid["bad_text"].([]any) {
		if _, err := polyflake.ParseULID(rv.(string)); !errors.Is(err, polyflake.ErrInvalidID) {
			t.Errorf("bad ULID %q: %v", rv, err)
		}
		cases++
	}
	if cases < 29 {
		t.Errorf("%d format vector cases", cases)
	}
}
