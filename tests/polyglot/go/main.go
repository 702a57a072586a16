// The Go participant of the cross-language uniqueness run, on polyflake's Go package
// (the module at go/, which calls the C ABI through cgo; the library found with pkg-config).
//
// Usage: participant_go LEASE_DIR SECONDS OUT_PATH [uuidv7]
//
// A strict generator (default layout and epoch) whose node id is a slot of the file lease on
// LEASE_DIR (default slots, identity "go"), waiting out its restart guard with WaitReady (at most
// 15 s; a fresh directory's new slot is guarded for a full reserve). When LEASE_DIR is
// zk://HOST:PORT[,HOST:PORT...]/PREFIX the slot is leased from that ZooKeeper ensemble under that
// znode prefix instead (no /PREFIX: the default "/polyflake"). Then single NextID calls at
// full speed for SECONDS seconds (the time checked every 1,024 IDs) into a growable []int64.
// Writes OUT_PATH (raw little-endian uint64, in issue order) and OUT_PATH.json. Exit 0 on
// success; on any error one line on stderr and exit 1.
//
// With `uuidv7`: a strict UUIDv7 generator on the system clock instead (no lease: LEASE_DIR is
// ignored), single NextUUID calls; OUT_PATH holds 16 bytes per UUID, big-endian, and
// OUT_PATH.json "format": "uuidv7", node_id null, first and last as text.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	polyflake "example.invalid/polyflake/go"
)

const language = "go"

// mint calls next at full speed until the deadline (checked every 1,024 IDs; at least one call).
func mint[T any](seconds float64, next func() (T, error)) ([]T, float64, error) {
	ids := make([]T, 0, 1<<20)
	start := time.Now()
	deadline := start.Add(time.Duration(seconds * float64(time.Second)))
	for {
		if len(ids)&1023 == 0 && len(ids) > 0 && !time.Now().Before(deadline) {
			break
		}
		id, err := next()
		if err != nil {
			return nil, 0, err
		}
		ids = append(ids, id)
	}
	return ids, time.Since(start).Seconds(), nil
}

// writeOut writes the raw IDs (each by put) and the summary.
func writeOut[T any](outPath string, ids []T, size int, put func([]byte, T), summary any) error {
	f, err := os.Create(outPath)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	b := make([]byte, size)
	for _, v := range ids {
		put(b, v)
		w.Write(b)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	doc, err := json.Marshal(summary)
	if err != nil {
		return err
	}
	return os.WriteFile(outPath+".json", append(doc, '\n'), 0o644)
}

// leaseFrom is the node-id source of LEASE_DIR: a file lease, or a zk://ENSEMBLE/PREFIX lease.
func leaseFrom(dir string) (polyflake.Option, string) {
	rest, ok := strings.CutPrefix(dir, "zk://")
	if !ok {
		return polyflake.FileLease(dir, polyflake.Identity(language)), "file lease"
	}
	opts := []polyflake.ZooKeeperOption{polyflake.Identity(language)}
	ensemble, prefix, hasPrefix := strings.Cut(rest, "/")
	if hasPrefix {
		opts = append(opts, polyflake.Prefix("/"+prefix))
	}
	return polyflake.ZooKeeper(ensemble, opts...), "ZooKeeper lease"
}

func runSnowflake(dir string, seconds float64, outPath string) error {
	// Take a slot (system clock), wait out its restart guard, then mint.
	source, what := leaseFrom(dir)
	g, err := polyflake.New(source)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer g.Close()
	if err := g.WaitReady(15000); err != nil {
		return fmt.Errorf("wait_ready: %w", err)
	}
	ids, elapsed, err := mint(seconds, g.NextID)
	if err != nil {
		return fmt.Errorf("next_id: %w", err)
	}
	// Field order as the protocol lists it.
	summary := struct {
		Language string  `json:"language"`
		NodeID   int64   `json:"node_id"`
		Count    int     `json:"count"`
		Seconds  float64 `json:"seconds"`
		First    string  `json:"first"`
		Last     string  `json:"last"`
	}{language, g.NodeID(), len(ids), elapsed, strconv.FormatInt(ids[0], 10), strconv.FormatInt(ids[len(ids)-1], 10)}
	put := func(b []byte, id int64) { binary.LittleEndian.PutUint64(b, uint64(id)) }
	return writeOut(outPath, ids, 8, put, summary)
}

func runUUIDv7(seconds float64, outPath string) error {
	g, err := polyflake.NewUUIDv7()
	if err != nil {
		return fmt.Errorf("uuid7 generator: %w", err)
	}
	defer g.Close()
	ids, elapsed, err := mint(seconds, g.NextUUID)
	if err != nil {
		return fmt.Errorf("next_uuid7: %w", err)
	}
	summary := struct {
		Language string  `json:"language"`
		Format   string  `json:"format"`
		NodeID   *int64  `json:"node_id"`
		Count    int     `json:"count"`
		Seconds  float64 `json:"seconds"`
		First    string  `json:"first"`
		Last     string  `json:"last"`
	}{language, "uuidv7", nil, len(ids), elapsed, ids[0].String(), ids[len(ids)-1].String()}
	put := func(b []byte, id polyflake.UUID) { copy(b, id[:]) }
	return writeOut(outPath, ids, 16, put, summary)
}

func run(args []string) error {
	seconds, err := strconv.ParseFloat(args[1], 64)
	if err != nil || !(seconds > 0) || seconds > 3600 || math.IsNaN(seconds) {
		return fmt.Errorf("SECONDS must be a number in (0, 3600], not %q", args[1])
	}
	if len(args) == 4 {
		return runUUIDv7(seconds, args[2])
	}
	return runSnowflake(args[0], seconds, args[2])
}

func main() {
	args := os.Args[1:]
	if len(args) != 3 && !(len(args) == 4 && args[3] == "uuidv7") {
		fmt.Fprintf(os.Stderr, "usage: %s LEASE_DIR SECONDS OUT_PATH [uuidv7]\n", os.Args[0])
		os.Exit(1)
	}
	if err := run(args); err != nil {
		fmt.Fprintf(os.Stderr, "participant_go: %v\n", err)
		os.Exit(1)
	}
}
