package polyflake_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	polyflake "example.invalid/polyflake/go"
)

// A strict generator on the system clock: one per node id per process, shared by goroutines.
func ExampleNew() {
	g, err := polyflake.New(polyflake.NodeID(37))
	if err != nil {
		panic(err)
	}
	defer g.Close()
	id, err := g.NextID()
	if err != nil {
		panic(err)
	}
	d, _ := g.Decode(id)
	fmt.Println(id > 0, d.NodeID)
	// Output: true 37
}

// The reference literal on a test clock, and a clock step back refused, never repeated.
func ExampleNewManualClock() {
	clock := polyflake.NewManualClock(1737747358021)
	g := polyflake.MustNew(polyflake.NodeID(37), polyflake.WithClock(clock))
	id, _ := g.NextID()
	fmt.Println(id)
	clock.Advance(-600) // an NTP step back
	_, err := g.NextID()
	fmt.Println(errors.Is(err, polyflake.ErrClockMovedBackwards))
	fmt.Println(g.Health().Status)
	// Output:
	// 141264821508263936
	// true
	// clock_behind
}

// A batch into your slice: one call, one reservation in monotonic mode.
func ExampleGenerator_NextIDs() {
	g := polyflake.MustNew(polyflake.NodeID(7), polyflake.WithMode(polyflake.Monotonic),
		polyflake.WithLayout(polyflake.LayoutBigFleet))
	defer g.Close()
	ids := make([]int64, 10000)
	if err := g.NextIDs(ids); err != nil {
		panic(err)
	}
	d, _ := g.Decode(ids[9999])
	fmt.Println(ids[0] < ids[9999], d.NodeID)
	// Output: true 7
}

// Decoding with the default layout and epoch.
func ExampleDecode() {
	d, err := polyflake.Decode(141264821508263936)
	fmt.Printf("%+v %v\n", d, err)
	_, err = polyflake.Decode(-1)
	fmt.Println(errors.Is(err, polyflake.ErrInvalidID))
	// Output:
	// {TimestampMs:1737747358021 NodeID:37 Sequence:0} <nil>
	// true
}

// A node id leased from a directory of slot files: the slot is the node id, and a new slot waits
// out its restart guard (one reserve) before the first ID.
func ExampleFileLease() {
	dir, _ := os.MkdirTemp("", "polyflake-example-")
	defer os.RemoveAll(dir)
	g, err := polyflake.New(polyflake.FileLease(dir, polyflake.Slots(4),
		polyflake.Identity("billing-worker"), polyflake.ReserveMs(200)))
	if err != nil {
		panic(err)
	}
	defer g.Close() // frees the slot
	if err := g.WaitReady(10000); err != nil {
		panic(err)
	}
	id, _ := g.NextID()
	d, _ := g.Decode(id)
	h := g.Health()
	fmt.Println(d.NodeID == g.NodeID(), h.Source, h.Lease.Kind, h.Lease.Phase,
		h.Lease.HighWaterMs >= d.TimestampMs)
	// Output: true file_lease file held true
}

// The coarse clock source: a fifth of the clock's cost per ID, every guarantee kept; a timestamp
// may be up to one tick older than the call.
func ExampleWithClockSource() {
	g := polyflake.MustNew(polyflake.NodeID(38), polyflake.WithClockSource(polyflake.Coarse))
	defer g.Close()
	_, err := g.NextID()
	h := g.Health()
	fmt.Println(err, h.ClockSource == "coarse" || h.ClockNote != "")
	// Output: <nil> true
}

// UUIDv7: no node id needed, the same rewind guard, 16 bytes big-endian with String().
func ExampleNewUUIDv7() {
	clock := polyflake.NewManualClock(1645557742000) // RFC 9562's example millisecond
	g, err := polyflake.NewUUIDv7(polyflake.WithClock(clock))
	if err != nil {
		panic(err)
	}
	u, _ := g.NextUUID()
	ms, _ := u.TimestampMs()
	fmt.Println(u.String()[:19], ms)
	batch := make([]polyflake.UUID, 1000)
	_ = g.NextUUIDs(batch)
	fmt.Println(batch[0].String() > u.String())
	// Output:
	// 017f22e2-79b0-7000- 1645557742000
	// true
}

// ULIDs, and their text in any case with Crockford's aliases.
func ExampleParseULID() {
	u, err := polyflake.ParseULID("01arz3ndektsv4rrffq69g5fav")
	fmt.Println(u, u.TimestampMs(), err)
	_, err = polyflake.ParseULID("81ARZ3NDEKTSV4RRFFQ69G5FAV") // more than 128 bits
	fmt.Println(errors.Is(err, polyflake.ErrInvalidID))
	// Output:
	// 01ARZ3NDEKTSV4RRFFQ69G5FAV 1469922850259 <nil>
	// true
}

// Every refusal is an *Error with the core's code and message; errors.Is tells the kind.
func ExampleError() {
	_, err := polyflake.New(polyflake.NodeID(1024))
	var e *polyflake.Error
	fmt.Println(errors.Is(err, polyflake.ErrInvalidNodeID), errors.As(err, &e))
	fmt.Println(e.Code)
	fmt.Println(e.Message)
	// Output:
	// true true
	// INVALID_NODE_ID
	// node id 1024 is out of range: it must be in [0, 1023]
}

// A ZooKeeper lease: the ensemble's connect string and options; TLS and credentials left out
// come from POLYFLAKE_ZOOKEEPER_* in the environment. Bad input is refused before connecting.
func ExampleZooKeeper() {
	source := polyflake.ZooKeeper("zk-0.zk:2181,zk-1.zk:2181,zk-2.zk:2181",
		polyflake.Prefix("ids"), // not an absolute znode path
		polyflake.SessionTimeoutMs(10000), polyflake.Username("billing"), polyflake.Password("s3cret"))
	_, err := polyflake.New(source)
	fmt.Println(errors.Is(err, polyflake.ErrInvalidNodeSource))
	// Output: true
}

// An ID's JSON is a decimal string (a JSON number above 2^53 is rounded by JavaScript); its time
// comes from the generator that made it, which knows the layout and the epoch.
func ExampleID() {
	g := polyflake.MustNew(polyflake.NodeID(37), polyflake.WithClock(polyflake.NewManualClock(1737747358021)))
	defer g.Close()
	id, _ := g.Generate()
	doc, _ := json.Marshal(map[string]polyflake.ID{"id": id})
	fmt.Println(string(doc))
	at, _ := g.Time(int64(id))
	fmt.Println(at.Format(time.RFC3339Nano))
	var back polyflake.ID
	fmt.Println(json.Unmarshal([]byte(`"141264821508263936"`), &back), back == id)
	fmt.Println(errors.Is(json.Unmarshal([]byte(`141264821508263936`), &back), polyflake.ErrInvalidID))
	// Output:
	// {"id":"141264821508263936"}
	// 2025-01-24T19:35:58.021Z
	// <nil> true
	// true
}
