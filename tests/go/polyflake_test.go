package cgotest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	polyflake "example.invalid/polyflake/go"
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

func id64(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		panic(err)
	}
	return n
}

// code is the stable code of a polyflake error ("OK" for nil).
func code(err error) string {
	var e *polyflake.Error
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
	if i64(doc["epoch_ms_default"]) != polyflake.DefaultEpochMs {
		t.Fatalf("default epoch %d", polyflake.DefaultEpochMs)
	}
	presets := map[string]polyflake.Layout{"default": polyflake.LayoutDefault, "long_lived": polyflake.LayoutLongLived,
		"big_fleet": polyflake.LayoutBigFleet, "short": polyflake.LayoutShort}
	cases := 0
	for key, raw := range doc["layouts"].(obj) {
		entry := raw.(obj)
		// "long_lived_42_8_13" -> "long_lived"
		parts := strings.Split(key, "_")
		name := strings.Join(parts[:len(parts)-3], "_")
		l, err := polyflake.LayoutFromName(name)
		if err != nil || l != presets[name] {
			t.Fatalf("%s: %v %v", name, l, err)
		}
		if l.TimestampBits != uint32(i64(entry["timestamp_bits"])) || l.NodeBits != uint32(i64(entry["node_bits"])) || l.SequenceBits != uint32(i64(entry["sequence_bits"])) {
			t.Errorf("%s: bits %v", name, l)
		}
		info, err := l.Describe()
		if err != nil {
			t.Fatal(err)
		}
		if info.MaxNodeID != i64(entry["max_node_id"]) || info.MaxSequence != uint64(i64(entry["max_sequence"])) || info.MaxElapsedMs != uint64(i64(entry["max_elapsed_ms"])) {
			t.Errorf("%s: info %+v", name, info)
		}
		if fmt.Sprintf("%.2f", info.Years) != fmt.Sprintf("%.2f", f64(entry["years"])) {
			t.Errorf("%s: years %.2f", name, info.Years)
		}
		for _, rc := range entry["cases"].([]any) {
			c := rc.(obj)
			ts, node, seq, text := i64(c["epoch_ms"]), i64(c["node_id"]), uint64(i64(c["sequence"])), c["id"].(string)
			want := id64(text)
			if id, err := polyflake.Compose(l, polyflake.DefaultEpochMs, ts, node, seq); err != nil || id != want {
				t.Errorf("%s compose %s: %d %v", name, text, id, err)
			}
			if d, err := polyflake.DecodeWith(l, polyflake.DefaultEpochMs, want); err != nil || d != (polyflake.Decoded{TimestampMs: ts, NodeID: node, Sequence: uint32(seq)}) {
				t.Errorf("%s decode %s: %+v %v", name, text, d, err)
			}
			if id, err := polyflake.ParseID(text); err != nil || id != want {
				t.Errorf("%s parse %s", name, text)
			}
			if s, err := polyflake.FormatID(want); err != nil || s != text {
				t.Errorf("%s format %s: %q", name, text, s)
			}
			if seq == 0 {
				clock := polyflake.NewManualClock(ts)
				g, err := polyflake.New(polyflake.NodeID(node), polyflake.WithLayout(l), polyflake.WithClock(clock))
				if err != nil {
					t.Fatal(err)
				}
				if id, err := g.NextID(); err != nil || id != want {
					t.Errorf("%s generator at %s: %d %v", name, text, id, err)
				}
				g.Close()
			}
			cases++
		}
	}
	if cases != 4*66 {
		t.Errorf("cases run: %d", cases)
	}
	for _, rl := range doc["literals"].([]any) {
		lit := rl.(obj)
		id, _ := polyflake.ParseID(lit["id"].(string))
		d, err := polyflake.Decode(id)
		if err != nil || d != (polyflake.Decoded{TimestampMs: i64(lit["epoch_ms"]), NodeID: i64(lit["node_id"]), Sequence: uint32(i64(lit["sequence"]))}) {
			t.Errorf("literal %v: %+v", lit["id"], d)
		}
	}
	inv := doc["invalid"].(obj)
	for _, rn := range inv["node_id_default_layout"].([]any) {
		n, err := rn.(json.Number).Int64()
		if err != nil {
			t.Logf("node id %v: not representable as an int64 node id (refused by the type)", rn)
			continue
		}
		clock := polyflake.NewManualClock(polyflake.DefaultEpochMs)
		if _, err := polyflake.New(polyflake.NodeID(n), polyflake.WithClock(clock)); !errors.Is(err, polyflake.ErrInvalidNodeID) {
			t.Errorf("node %d: %v", n, err)
		}
	}
	for _, rs := range inv["decode_default_layout"].([]any) {
		if _, err := polyflake.ParseID(rs.(string)); !errors.Is(err, polyflake.ErrInvalidID) {
			t.Errorf("parse %q: %v", rs, err)
		}
	}
	if _, err := polyflake.Decode(math.MinInt64); !errors.Is(err, polyflake.ErrInvalidID) {
		t.Errorf("decode 2^63: %v", err)
	}
	for _, rb := range inv["layouts"].([]any) {
		b := rb.([]any)
		l := polyflake.Layout{TimestampBits: uint32(i64(b[0])), NodeBits: uint32(i64(b[1])), SequenceBits: uint32(i64(b[2]))}
		if _, err := l.Describe(); !errors.Is(err, polyflake.ErrInvalidLayout) {
			t.Errorf("layout %v: %v", l, err)
		}
	}
}

func TestEightGoroutinesOneHandle(t *testing.T) {
	g, err := polyflake.New(polyflake.NodeID(78))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	const workers, per = 8, 20000
	out := make([][]int64, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			ids := make([]int64, 0, per)
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
	seen := make(map[int64]bool, workers*per)
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
	if h := g.Health(); h.IDsIssued != workers*per {
		t.Fatalf("ids_issued %d", h.IDsIssued)
	}
}

// The C ABI refuses a NULL in every pointer position, writing nothing.
func TestNullParameters(t *testing.T) {
	checks := NullChecks()
	for call, got := range checks {
		if got != "NULL_PARAMETER" {
			t.Errorf("%s: %s", call, got)
		}
	}
	if len(checks) < 20 {
		t.Errorf("%d NULL checks", len(checks))
	}
}

// The same bad node-source inputs as every binding: the same code and the same message (the
// core's) through the C ABI and the Go package.
func TestBadNodeSources(t *testing.T) {
	doc := load(t, filepath.Join(vectors, "bad_node_sources.json"))
	cases := doc["cases"].([]any)
	for _, rc := range cases {
		c := rc.(obj)
		name := c["name"].(string)
		onlyKeys(t, c, name, "name", "source", "error", "message")
		src := c["source"].(obj)
		onlyKeys(t, src, name, "kind", "address", "prefix_len", "dir", "slots", "reserve_ms", "identity")
		var source polyflake.Option
		switch src["kind"] {
		case "ipv4":
			source = polyflake.FromIPv4(src["address"].(string), i64(src["prefix_len"]))
		case "file_lease":
			var opts []polyflake.LeaseOption
			if v, ok := src["slots"]; ok {
				opts = append(opts, polyflake.Slots(uint32(i64(v))))
			}
			if v, ok := src["reserve_ms"]; ok {
				opts = append(opts, polyflake.ReserveMs(uint64(i64(v))))
			}
			if v, ok := src["identity"]; ok {
				opts = append(opts, polyflake.Identity(v.(string)))
			}
			source = polyflake.FileLease(t.TempDir(), opts...) // the table's "TMP"
		default:
			t.Fatalf("%s: source kind %v", name, src["kind"])
		}
		_, err := polyflake.New(source)
		var e *polyflake.Error
		if !errors.As(err, &e) || e.Code != c["error"] || e.Message != c["message"] {
			t.Errorf("%s: got %v, want %v: %v", name, err, c["error"], c["message"])
		}
	}
	if len(cases) < 6 {
		t.Errorf("%d cases", len(cases))
	}
}

func TestCloseKeepsTheHandleAndWaitReady(t *testing.T) {
	clock := polyflake.NewManualClock(polyflake.DefaultEpochMs + 10)
	g, err := polyflake.New(polyflake.NodeID(81), polyflake.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.WaitReady(0); err != nil {
		t.Fatalf("no lease, nothing to wait for: %v", err)
	}
	if _, err := g.NextID(); err != nil {
		t.Fatal(err)
	}
	if g.Close() != nil || g.Close() != nil {
		t.Fatal("close twice")
	}
	if _, err := g.NextID(); !errors.Is(err, polyflake.ErrGeneratorClosed) {
		t.Fatalf("after close: %v", err)
	}
	if err := g.WaitReady(10); !errors.Is(err, polyflake.ErrGeneratorClosed) {
		t.Fatalf("wait_ready after close: %v", err)
	}
	if h := g.Health(); h.OK || h.Status != "closed" {
		t.Fatalf("health after close: %+v", h)
	}
	if g.NodeID() != 81 || polyflake.Version() == "" {
		t.Fatalf("node %d", g.NodeID())
	}
}
