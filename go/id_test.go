package polyflake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// An ID's JSON is a decimal string both ways, also as a map key and in a slice.
func TestIDJSONIsADecimalString(t *testing.T) {
	type row struct {
		ID    ID            `json:"id"`
		Refs  []ID          `json:"refs"`
		ByID  map[ID]string `json:"by_id"`
		Maybe *ID           `json:"maybe"`
	}
	in := row{ID: 141264821508263936, Refs: []ID{0, 9223372036854775807}, ByID: map[ID]string{37: "x"}}
	b, err := json.Marshal(in)
	want := `{"id":"141264821508263936","refs":["0","9223372036854775807"],"by_id":{"37":"x"},"maybe":null}`
	if err != nil || string(b) != want {
		t.Fatalf("%s %v, want %s", b, err, want)
	}
	var out row
	if err := json.Unmarshal(b, &out); err != nil || out.ID != in.ID || len(out.Refs) != 2 ||
		out.Refs[1] != in.Refs[1] || out.ByID[37] != "x" || out.Maybe != nil {
		t.Fatalf("%+v %v", out, err)
	}
	// A JSON string with escapes is the same string; null leaves the ID as it is.
	id := ID(5)
	if err := json.Unmarshal([]byte(`"\u0031\u0032"`), &id); err != nil || id != 12 {
		t.Fatalf("%d %v", id, err)
	}
	if err := json.Unmarshal([]byte(`null`), &id); err != nil || id != 12 {
		t.Fatalf("null: %d %v", id, err)
	}
	if id.String() != "12" || id.Int64() != 12 {
		t.Fatalf("%q %d", id.String(), id.Int64())
	}
	var text ID
	if err := text.UnmarshalText([]byte("141264821508263936")); err != nil || text != 141264821508263936 {
		t.Fatalf("%d %v", text, err)
	}
}

// Anything but a string of decimal digits below 2^63 is refused with ErrInvalidID, the message
// echoing what was sent; the ID is left untouched.
func TestIDJSONRefusesGarbageEchoingIt(t *testing.T) {
	long := `"` + strings.Repeat("9", 200) + `"`
	for input, echoed := range map[string]string{
		`141264821508263936`:    "the JSON number 141264821508263936",
		`1.5e3`:                 "1.5e3",
		`-7`:                    "the JSON number -7",
		`true`:                  "not true",
		`{"id":"1"}`:            `{"id":"1"}`,
		`["1"]`:                 `["1"]`,
		`""`:                    `""`,
		`"12x"`:                 `"12x"`,
		`"-5"`:                  `"-5"`,
		`" 1"`:                  `" 1"`,
		`"+1"`:                  `"+1"`,
		`"0x10"`:                `"0x10"`,
		`"9223372036854775808"`: `"9223372036854775808"`,
		`"1\u0000"`:             `"1\x00"`,
		long:                    strings.Repeat("9", 20),
		`"1`:                    `"1`,
	} {
		id := ID(42)
		err := json.Unmarshal([]byte(input), &id)
		var pe *Error
		if input == `"1` {
			// Not JSON at all: encoding/json refuses it before UnmarshalJSON is called.
			if err == nil || id != 42 {
				t.Errorf("%s: %v", input, err)
			}
			err = id.UnmarshalJSON([]byte(input))
		}
		if !errors.Is(err, ErrInvalidID) || !errors.As(err, &pe) || !strings.Contains(pe.Message, echoed) || id != 42 {
			t.Errorf("%s: %v (id %d), want ErrInvalidID echoing %s", input, err, id, echoed)
		}
	}
	if _, err := json.Marshal(ID(-3)); !errors.Is(err, ErrInvalidID) || !strings.Contains(err.Error(), "-3") {
		t.Fatalf("a negative ID marshalled: %v", err)
	}
}

// Generate is NextID as an ID; Time and Decoded.Time decode with the generator's own layout and
// epoch: the same 64 bits read with the default layout give another time, which is why an ID has
// no Time method of its own.
func TestGenerateAndTimeUseTheGeneratorsLayout(t *testing.T) {
	g := MustNew(NodeID(37), WithClock(NewManualClock(1737747358021)))
	defer g.Close()
	id, err := g.Generate()
	if err != nil || id != 141264821508263936 {
		t.Fatalf("%d %v", id, err)
	}
	at, err := g.Time(int64(id))
	if err != nil || !at.Equal(time.UnixMilli(1737747358021)) || at.Location() != time.UTC {
		t.Fatalf("%v %v", at, err)
	}
	if at.Format(time.RFC3339Nano) != "2025-01-24T19:35:58.021Z" {
		t.Fatalf("%s", at.Format(time.RFC3339Nano))
	}
	d, _ := g.Decode(int64(id))
	if !d.Time().Equal(at) || d.NodeID != g.NodeID() {
		t.Fatalf("%+v", d)
	}
	if _, err := g.Time(-1); !errors.Is(err, ErrInvalidID) {
		t.Fatalf("Time(-1): %v", err)
	}

	other := MustNew(NodeID(3), WithLayout(LayoutBigFleet), WithEpochMs(0),
		WithClock(NewManualClock(1737747358021)), WithMode(Monotonic))
	defer other.Close()
	oid, err := other.Generate()
	if err != nil {
		t.Fatal(err)
	}
	if at, err := other.Time(int64(oid)); err != nil || at.UnixMilli() != 1737747358021 {
		t.Fatalf("%v %v", at, err)
	}
	if wrong, err := Decode(int64(oid)); err != nil || wrong.TimestampMs == 1737747358021 || wrong.NodeID == 3 {
		t.Fatalf("the default layout read %d as %+v %v", oid, wrong, err)
	}
}

// Every node id of the API is an int64: NodeID() goes back into NodeID and compares with
// Decoded.NodeID, Health.NodeID, LeaseHealth.Slot as it is; Compose refuses a negative one.
func TestNodeIDsAreInt64Everywhere(t *testing.T) {
	g := MustNew(NodeID(1<<32-1), WithLayout(Layout{TimestampBits: 30, NodeBits: 32, SequenceBits: 1}),
		WithClock(NewManualClock(DefaultEpochMs+1000)))
	defer g.Close()
	var n int64 = g.NodeID()
	id, err := g.NextID()
	d, _ := g.Decode(id)
	h := g.Health()
	if err != nil || n != 1<<32-1 || d.NodeID != n || h.NodeID != n {
		t.Fatalf("%d %+v %d %v", n, d, h.NodeID, err)
	}
	info, _ := g.Layout().Describe()
	if info.MaxNodeID != n {
		t.Fatalf("max node id %d", info.MaxNodeID)
	}
	if back, err := Compose(g.Layout(), g.EpochMs(), d.TimestampMs, d.NodeID, uint64(d.Sequence)); err != nil || back != id {
		t.Fatalf("%d %v", back, err)
	}
	_, err = Compose(LayoutDefault, DefaultEpochMs, DefaultEpochMs, -1, 0)
	var pe *Error
	if !errors.As(err, &pe) || !errors.Is(err, ErrInvalidNodeID) || pe.Message != "node id -1 is out of range: it must be in [0, 1023]" {
		t.Fatalf("%v", err)
	}
	_, err = Compose(LayoutDefault, DefaultEpochMs, DefaultEpochMs, 1024, 0)
	if !errors.As(err, &pe) || pe.Message != "node id 1024 is out of range: it must be in [0, 1023]" {
		t.Fatalf("the core's message differs from the Go one for a negative node id: %v", err)
	}
}

// healthFields are the core's health field names in its order (core/src/generator/health.rs,
// Health::fields; tests/go checks this list against that source), leaseFields the lease's
// (core/src/lease/health.rs, LeaseHealth::fields).
var healthFields = []string{"ok", "status", "reason", "node_id", "source", "mode", "last_issued_ms",
	"wall_ms", "lead_ms", "ids_issued", "rewinds_waited", "rewinds_refused", "sequence_exhaustions",
	"wait_sleeps", "ms_borrowed", "lead_refused", "lease_renewals", "lease_failures", "clock_ahead_ms",
	"forward_refused", "clock_source", "clock_tick_ns", "clock_note", "restart_waits",
	"restart_guard_note", "clock_sync", "lease"}

// clockSyncFields are the kernel's clock word's (core/src/clocksync.rs, ClockSync::fields).
var clockSyncFields = []string{"state", "synchronized", "max_error_us", "est_error_us"}
var leaseFields = []string{"kind", "store", "slot", "high_water_ms", "guard_until_ms", "guard_waiting",
	"guard_remaining_ms", "guard_note", "lost", "expired", "phase", "renewals", "failures", "last_error"}

// objectKeys is the keys of a JSON object in the order written, and the raw value of each.
func objectKeys(t *testing.T, raw []byte) ([]string, map[string]json.RawMessage) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", raw)
	}
	var keys []string
	values := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		values[tok.(string)] = v
	}
	return keys, values
}

func sameList(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// Health's JSON has the core's names in the core's order, null for an absent last_issued_ms and
// lease, and the lease's own names; it reads back into a Health equal to the one written.
func TestHealthJSONHasTheCoresFieldNames(t *testing.T) {
	g := MustNew(NodeID(29), WithClock(NewManualClock(1737747358021)))
	defer g.Close()
	b, err := json.Marshal(g.Health())
	if err != nil {
		t.Fatal(err)
	}
	keys, values := objectKeys(t, b)
	if !sameList(keys, healthFields) {
		t.Fatalf("health JSON fields\n%v\nwant the core's\n%v", keys, healthFields)
	}
	if string(values["last_issued_ms"]) != "null" || string(values["lease"]) != "null" || string(values["node_id"]) != "29" {
		t.Fatalf("%s", b)
	}
	if skeys, _ := objectKeys(t, values["clock_sync"]); !sameList(skeys, clockSyncFields) {
		t.Fatalf("clock_sync JSON fields\n%v\nwant the core's\n%v", skeys, clockSyncFields)
	}

	dir, err := os.MkdirTemp("", "polyflake-health-json-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	leased := MustNew(FileLease(dir, Slots(2), ReserveMs(200)))
	defer leased.Close()
	if err := leased.WaitReady(10000); err != nil {
		t.Fatal(err)
	}
	if _, err := leased.NextID(); err != nil {
		t.Fatal(err)
	}
	h := leased.Health()
	b, err = json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	_, values = objectKeys(t, b)
	lkeys, lvalues := objectKeys(t, values["lease"])
	if !sameList(lkeys, leaseFields) {
		t.Fatalf("lease JSON fields\n%v\nwant the core's\n%v", lkeys, leaseFields)
	}
	if string(lvalues["kind"]) != `"file"` || string(lvalues["phase"]) != `"held"` ||
		string(values["ids_issued"]) != fmt.Sprint(h.IDsIssued) || string(values["source"]) != `"file_lease"` {
		t.Fatalf("%s", b)
	}
	var back Health
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, h) {
		t.Fatalf("%+v %v", back, err)
	}
}
