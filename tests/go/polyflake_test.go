package cgotest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const vectors = "../vectors"

type obj = map[string]any

func load(t *testing.T, path string) obj {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v obj
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

func i64(v any) int64 {
	n, err := v.(json.Number).Int64()
	if err != nil {
		panic(fmt.Sprintf("not an int64: %v", v))
	}
	return n
}

func f64(v any) float64 {
	n, err := v.(json.Number).Float64()
	if err != nil {
		panic(err)
	}
	return n
}

func u64(s string) uint64 {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		panic(err)
	}
	return n
}

func code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err == nil {
		return "OK"
	}
	return err.Error()
}

// onlyKeys fails on any key it does not know: a runner must not skip what it cannot read.
func onlyKeys(t *testing.T, o obj, where string, allowed ...string) {
	t.Helper()
	for k := range o {
		ok := false
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			t.Errorf("%s: unknown key %q", where, k)
		}
	}
}

func TestLayoutVectors(t *testing.T) {
	doc := load(t, filepath.Join(vectors, "layouts.json"))
	def := DefaultConfig()
	if i64(doc["epoch_ms_default"]) != def.EpochMs {
		t.Fatalf("default epoch %d", def.EpochMs)
	}
	getters := map[string]func() Layout{"default": LayoutDefault, "long_lived": LayoutLongLived, "big_fleet": LayoutBigFleet, "short": LayoutShort}
	cases := 0
	for key, raw := range doc["layouts"].(obj) {
		entry := raw.(obj)
		// "long_lived_42_8_13" -> "long_lived"
		parts := strings.Split(key, "_")
		name := strings.Join(parts[:len(parts)-3], "_")
		l, err := LayoutFromName(name)
		if err != nil || l != getters[name]() {
			t.Fatalf("%s: %v %v", name, l, err)
		}
		if l.TimestampBits != uint32(i64(entry["timestamp_bits"])) || l.NodeBits != uint32(i64(entry["node_bits"])) || l.SequenceBits != uint32(i64(entry["sequence_bits"])) {
			t.Errorf("%s: bits %v", name, l)
		}
		info, err := Describe(l)
		if err != nil {
			t.Fatal(err)
		}
		if info.MaxNodeID != uint64(i64(entry["max_node_id"])) || info.MaxSequence != uint64(i64(entry["max_sequence"])) || info.MaxElapsedMs != uint64(i64(entry["max_elapsed_ms"])) {
			t.Errorf("%s: info %+v", name, info)
		}
		if fmt.Sprintf("%.2f", info.Years) != fmt.Sprintf("%.2f", f64(entry["years"])) {
			t.Errorf("%s: years %.2f", name, info.Years)
		}
		for _, rc := range entry["cases"].([]any) {
			c := rc.(obj)
			ts, node, seq, text := i64(c["epoch_ms"]), uint64(i64(c["node_id"])), uint64(i64(c["sequence"])), c["id"].(string)
			want := u64(text)
			if id, err := Compose(l, def.EpochMs, ts, node, seq); err != nil || id != want {
				t.Errorf("%s compose %s: %d %v", name, text, id, err)
			}
			if d, err := Decode(l, def.EpochMs, want); err != nil || d != (Decoded{ts, uint32(node), uint32(seq)}) {
				t.Errorf("%s decode %s: %+v %v", name, text, d, err)
			}
			if id, err := ParseID(text); err != nil || id != want {
				t.Errorf("%s parse %s", name, text)
			}
			if s, err := FormatID(want); err != nil || s != text {
				t.Errorf("%s format %s: %q", name, text, s)
			}
			if seq == 0 {
				clock, _ := NewManualClock(ts)
				cfg := DefaultConfig()
				cfg.Layout, cfg.NodeID = l, int64(node)
				g, err := New(cfg, clock)
				if err != nil {
					t.Fatal(err)
				}
				if id, err := g.NextID(); err != nil || id != want {
					t.Errorf("%s generator at %s: %d %v", name, text, id, err)
				}
				g.Free()
				clock.Close()
			}
			cases++
		}
	}
	if cases != 4*66 {
		t.Errorf("cases run: %d", cases)
	}
	for _, rl := range doc["literals"].([]any) {
		lit := rl.(obj)
		id, _ := ParseID(lit["id"].(string))
		d, err := Decode(LayoutDefault(), def.EpochMs, id)
		if err != nil || d != (Decoded{i64(lit["epoch_ms"]), uint32(i64(lit["node_id"])), uint32(i64(lit["sequence"]))}) {
			t.Errorf("literal %v: %+v", lit["id"], d)
		}
	}
	inv := doc["invalid"].(obj)
	for _, rn := range inv["node_id_default_layout"].([]any) {
		n, err := rn.(json.Number).Int64()
		if err != nil {
			t.Logf("node id %v: not representable as int64 node_id (refused by the type)", rn)
			continue
		}
		clock, _ := NewManualClock(def.EpochMs)
		cfg := DefaultConfig()
		cfg.NodeID = n
		if _, err := New(cfg, clock); code(err) != "INVALID_NODE_ID" {
			t.Errorf("node %d: %v", n, err)
		}
		clock.Close()
	}
	for _, rs := range inv["decode_default_layout"].([]any) {
		if _, err := ParseID(rs.(string)); code(err) != "INVALID_ID" {
			t.Errorf("parse %q: %v", rs, err)
		}
	}
	if _, err := Decode(LayoutDefault(), def.EpochMs, 1<<63); code(err) != "INVALID_ID" {
		t.Errorf("decode 2^63: %v", err)
	}
	for _, rb := range inv["layouts"].([]any) {
		b := rb.([]any)
		l := Layout{uint32(i64(b[0])), uint32(i64(b[1])), uint32(i64(b[2]))}
		if _, err := Describe(l); code(err) != "INVALID_LAYOUT" {
			t.Errorf("layout %v: %v", l, err)
		}
	}
}

type gen struct {
	g       *Generator // nil: deferred and not yet created (a closed one stays, refusing)
	clock   *Clock     // nil: the system clock
	manual  bool       // clock_set, clock_advance and clock_elapse need a manual clock
	last    uint64
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

func build(t *testing.T, spec obj, where string, dir *leaseDir) (*gen, error) {
	onlyKeys(t, spec, where, "mode", "node_id", "layout", "epoch_ms", "max_wait_ms", "max_lead_ms", "clock", "source", "deferred", "max_forward_step_ms", "forward_confirm_ms")
	var lease *FileLease
	if source, ok := spec["source"].(obj); ok {
		onlyKeys(t, source, where, "kind", "slots", "reserve_ms")
		if source["kind"] != "file_lease" {
			t.Fatalf("%s: source kind %v", where, source["kind"])
		}
		l := DefaultFileLease(dir.get())
		lease = &l
		if v, ok := source["slots"]; ok {
			lease.Slots = uint32(i64(v))
		}
		if v, ok := source["reserve_ms"]; ok {
			lease.ReserveMs = uint64(i64(v))
		}
	}
	cfg := DefaultConfig()
	switch spec["mode"] {
	case "strict":
		cfg.Mode = Strict
	case "monotonic":
		cfg.Mode = Monotonic
	default:
		t.Fatalf("%s: mode %v", where, spec["mode"])
	}
	if lease == nil {
		cfg.NodeID = i64(spec["node_id"])
	}
	switch l := spec["layout"].(type) {
	case nil:
	case string:
		layout, err := LayoutFromName(l)
		if err != nil {
			return nil, err
		}
		cfg.Layout = layout
	case []any:
		cfg.Layout = Layout{uint32(i64(l[0])), uint32(i64(l[1])), uint32(i64(l[2]))}
	default:
		t.Fatalf("%s: layout %v", where, l)
	}
	if v, ok := spec["epoch_ms"]; ok {
		cfg.EpochMs = i64(v)
	}
	if v, ok := spec["max_wait_ms"]; ok {
		cfg.MaxWaitMs = f64(v)
	}
	if v, ok := spec["max_lead_ms"]; ok {
		lead := i64(v)
		cfg.MaxLeadMs = &lead
	}
	if v, ok := spec["max_forward_step_ms"]; ok { // null turns the check off
		cfg.MaxForwardStepMs = nil
		if v != nil {
			step := uint64(i64(v))
			cfg.MaxForwardStepMs = &step
		}
	}
	if v, ok := spec["forward_confirm_ms"]; ok {
		cfg.ForwardConfirmMs = uint64(i64(v))
	}
	built := &gen{}
	if clock, ok := spec["clock"].(obj); ok {
		onlyKeys(t, clock, where, "kind", "start_ms", "values")
		var err error
		switch clock["kind"] {
		case "manual":
			built.clock, err = NewManualClock(i64(clock["start_ms"]))
			built.manual = true
		case "scripted":
			built.clock, err = NewScriptedClock(expand(clock["values"].([]any)))
		default:
			t.Fatalf("%s: clock kind %v", where, clock["kind"])
		}
		if err != nil {
			t.Fatalf("%s: clock: %v", where, err)
		}
	}
	// One constructor per source, each with the optional clock (nil: the system clock).
	var err error
	if lease != nil {
		built.g, err = NewFileLease(cfg, *lease, built.clock)
	} else {
		built.g, err = New(cfg, built.clock)
	}
	if err != nil {
		built.free()
		return nil, err
	}
	return built, nil
}

// free frees the generator and its clock (nothing if not created).
func (g *gen) free() {
	if g.g != nil {
		g.g.Free()
		g.g = nil
	}
	if g.clock != nil {
		g.clock.Close()
		g.clock = nil
	}
}

func checkDecoded(t *testing.T, g *Generator, id uint64, want obj, what string) {
	t.Helper()
	onlyKeys(t, want, what, "timestamp_ms", "node_id", "sequence")
	d, err := g.Decode(id)
	if err != nil || d != (Decoded{i64(want["timestamp_ms"]), uint32(i64(want["node_id"])), uint32(i64(want["sequence"]))}) {
		t.Errorf("%s: decoded %+v (%v), want %v", what, d, err, want)
	}
}

// What Go cannot offer (see `needs` in the scenario schema), and why.
var notApplicable = map[string]string{
	"fork": "no fork() in Go (the runtime is multithreaded; syscall.ForkExec only)",
}

// runScenario returns the number of steps run, or 0 and the reason the file is not applicable.
func runScenario(t *testing.T, path string) (int, string) {
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
			g.free()
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
		g, err := build(t, spec, name, dir)
		if err != nil {
			t.Fatalf("%s: building %s: %v", name, key, err)
		}
		g.spec = spec
		gens[key] = g
	}
	seen := map[uint64]bool{}
	steps := 0
	for i, rs := range doc["steps"].([]any) {
		step := rs.(obj)
		op := step["op"].(string)
		what := fmt.Sprintf("%s step %d (%s)", name, i, op)
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
			built, err := build(t, g.spec, what, dir)
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
			if err := g.g.Close(); err != nil {
				t.Errorf("%s: %v", what, err)
			}
		case "construct":
			onlyKeys(t, expect, what, "error", "ok")
			built, err := build(t, step["config"].(obj), what, dir)
			if want, ok := expect["error"]; ok {
				if code(err) != want {
					t.Errorf("%s: got %v want %v", what, code(err), want)
				}
			} else if err != nil {
				t.Errorf("%s: %v", what, err)
			}
			if err == nil {
				built.free()
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
			checkDecoded(t, g.g, u64(step["id"].(string)), expect["decoded"].(obj), what)
		case "health":
			h, err := g.g.Health()
			if err != nil {
				t.Fatal(err)
			}
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
				case "lead_ms":
					got = float64(h.LeadMs)
				case "clock_ahead_ms":
					got = float64(h.ClockAheadMs)
				default:
					c, ok := h.Counters[k]
					if !ok {
						t.Errorf("%s: unknown health key %q", what, k)
						continue
					}
					got = float64(c)
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
			var ids []uint64
			var failure error
			if op == "next_id" {
				for k := 0; k < count; k++ {
					id, err := g.g.NextID()
					if err != nil {
						failure = err
						break
					}
					ids = append(ids, id)
				}
			} else {
				buf := make([]uint64, count)
				if failure = g.g.NextIDs(buf); failure == nil {
					ids = buf
				}
			}
			if want, ok := expect["error"]; ok {
				if code(failure) != want {
					t.Errorf("%s: got %s want %v", what, code(failure), want)
				}
				if op == "next_id" && len(ids) != count-1 {
					t.Errorf("%s: failed early after %d", what, len(ids))
				}
			} else if failure != nil {
				t.Errorf("%s: unexpected %v", what, failure)
			}
			if want, ok := expect["ids"]; ok {
				ws := want.([]any)
				if len(ws) != len(ids) {
					t.Errorf("%s: %d ids, want %d", what, len(ids), len(ws))
				}
				for k := 0; k < len(ws) && k < len(ids); k++ {
					if ids[k] != u64(ws[k].(string)) {
						t.Errorf("%s: id %d = %d want %v", what, k, ids[k], ws[k])
					}
				}
			}
			if want, ok := expect["sequences"]; ok {
				ws := want.([]any)
				if len(ws) != len(ids) {
					t.Errorf("%s: sequence count", what)
				}
				for k := 0; k < len(ws) && k < len(ids); k++ {
					d, _ := g.g.Decode(ids[k])
					if int64(d.Sequence) != i64(ws[k]) {
						t.Errorf("%s: sequence %d = %d want %v", what, k, d.Sequence, ws[k])
					}
				}
			}
			if want, ok := expect["max_sequence"]; ok {
				max := int64(-1)
				for _, id := range ids {
					d, _ := g.g.Decode(id)
					if int64(d.Sequence) > max {
						max = int64(d.Sequence)
					}
				}
				if max != i64(want) {
					t.Errorf("%s: max_sequence %d", what, max)
				}
			}
			if want, ok := expect["first"]; ok {
				if len(ids) == 0 {
					t.Errorf("%s: no first", what)
				} else {
					checkDecoded(t, g.g, ids[0], want.(obj), what+" first")
				}
			}
			if want, ok := expect["last"]; ok {
				if len(ids) == 0 {
					t.Errorf("%s: no last", what)
				} else {
					checkDecoded(t, g.g, ids[len(ids)-1], want.(obj), what+" last")
				}
			}
			for _, id := range ids {
				if g.hasLast && id <= g.last {
					t.Errorf("%s: not increasing at %d", what, id)
				}
				if seen[id] {
					t.Errorf("%s: duplicate %d", what, id)
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

func TestScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(vectors, "scenarios", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if len(files) < 15 {
		t.Fatalf("scenario files missing: %d", len(files))
	}
	ran := 0
	var coverage strings.Builder
	for _, f := range files {
		f := f
		stem := strings.TrimSuffix(filepath.Base(f), ".json")
		line := stem + " ok"
		passed := t.Run(filepath.Base(f), func(t *testing.T) {
			n, skip := runScenario(t, f)
			if skip != "" {
				line = stem + " not-applicable: " + skip
				t.Logf("not applicable: %s", skip)
			} else if n == 0 {
				t.Errorf("%s: no steps", f)
			}
			ran++
		})
		if passed {
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

func TestEightGoroutinesOneHandle(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NodeID = 78
	g, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Free()
	const workers, per = 8, 20000
	out := make([][]uint64, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			ids := make([]uint64, 0, per)
			for i := 0; i < per; i++ {
				id, err := g.NextID()
				if err != nil {
					t.Error(err)
					return
				}
				if len(ids) > 0 && id <= ids[len(ids)-1] {
					t.Errorf("goroutine %d: not increasing", w)
				}
				ids = append(ids, id)
			}
			out[w] = ids
		}(w)
	}
	wg.Wait()
	seen := make(map[uint64]bool, workers*per)
	for _, ids := range out {
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("duplicate %d", id)
			}
			seen[id] = true
		}
	}
	if len(seen) != workers*per {
		t.Fatalf("%d IDs, want %d", len(seen), workers*per)
	}
}

func TestBadInput(t *testing.T) {
	for call, got := range NullChecks() {
		if got != "NULL_PARAMETER" {
			t.Errorf("%s: %s", call, got)
		}
	}
	cfg := DefaultConfig()
	cfg.NodeID = math.MaxInt64
	if _, err := New(cfg, nil); code(err) != "INVALID_NODE_ID" {
		t.Errorf("node max int64: %v", err)
	}
	cfg = DefaultConfig()
	cfg.Mode = 9
	if _, err := New(cfg, nil); code(err) != "INVALID_ARGUMENT" || !strings.Contains(err.Error(), "mode") {
		t.Errorf("mode 9: %v", err)
	}
	cfg = DefaultConfig()
	zero := uint64(0)
	cfg.MaxForwardStepMs = &zero
	if _, err := New(cfg, nil); code(err) != "INVALID_ARGUMENT" || !strings.Contains(err.Error(), "max_forward_step_ms") {
		t.Errorf("max_forward_step_ms 0: %v", err)
	}
	if _, err := FormatID(1 << 63); code(err) != "INVALID_ID" {
		t.Errorf("format 2^63: %v", err)
	}
	if Version() == "" {
		t.Error("no version")
	}
}

// The same bad node-source inputs as every binding: the same code and the same message (the
// core's) through the C ABI.
func TestBadNodeSources(t *testing.T) {
	doc := load(t, filepath.Join(vectors, "bad_node_sources.json"))
	cases := doc["cases"].([]any)
	for _, rc := range cases {
		c := rc.(obj)
		name := c["name"].(string)
		onlyKeys(t, c, name, "name", "source", "error", "message")
		src := c["source"].(obj)
		onlyKeys(t, src, name, "kind", "address", "prefix_len", "dir", "slots", "reserve_ms", "identity")
		var err error
		switch src["kind"] {
		case "ipv4":
			_, err = NewFromIPv4(DefaultConfig(), src["address"].(string), i64(src["prefix_len"]))
		case "file_lease":
			lease := DefaultFileLease(t.TempDir()) // the table's "TMP"
			if v, ok := src["slots"]; ok {
				lease.Slots = uint32(i64(v))
			}
			if v, ok := src["reserve_ms"]; ok {
				lease.ReserveMs = uint64(i64(v))
			}
			if v, ok := src["identity"]; ok {
				identity := v.(string)
				lease.Identity = &identity
			}
			_, err = NewFileLease(DefaultConfig(), lease, nil)
		default:
			t.Fatalf("%s: source kind %v", name, src["kind"])
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != c["error"] || e.Message != c["message"] {
			t.Errorf("%s: got %v, want %v: %v", name, err, c["error"], c["message"])
		}
	}
	if len(cases) < 6 {
		t.Errorf("%d cases", len(cases))
	}
}

func TestCloseKeepsTheHandleAndWaitReady(t *testing.T) {
	clock, _ := NewManualClock(DefaultConfig().EpochMs + 10)
	defer clock.Close()
	cfg := DefaultConfig()
	cfg.NodeID = 81
	g, err := New(cfg, clock)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Free()
	if err := g.WaitReady(0); err != nil {
		t.Fatalf("no lease, nothing to wait for: %v", err)
	}
	if _, err := g.NextID(); err != nil {
		t.Fatal(err)
	}
	if g.Close() != nil || g.Close() != nil {
		t.Fatal("close twice")
	}
	if _, err := g.NextID(); code(err) != "GENERATOR_CLOSED" {
		t.Fatalf("after close: %v", err)
	}
	if err := g.WaitReady(10); code(err) != "GENERATOR_CLOSED" {
		t.Fatalf("wait_ready after close: %v", err)
	}
	if h, _ := g.Health(); h.OK || h.Status != "closed" {
		t.Fatalf("health after close: %+v", h)
	}
	held, err := g.Config()
	if err != nil || held.NodeID != 81 || held.MaxForwardStepMs == nil || *held.MaxForwardStepMs != 60000 || held.ForwardConfirmMs != 300000 {
		t.Fatalf("config %+v %v", held, err)
	}
}
