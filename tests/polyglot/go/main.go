// The Go participant of the cross-language uniqueness run (issue 8), calling polyflake's C ABI
// through cgo (the header and library found with pkg-config, like any C library).
//
// Usage: participant_go LEASE_DIR SECONDS OUT_PATH
//
// A strict generator (default layout and epoch) whose node id is a slot of the file lease on
// LEASE_DIR (default slots, identity "go"), waiting out its restart guard with
// polyflake_wait_ready (at most 15 s; a fresh directory's new slot is guarded for a full
// reserve); then single polyflake_next_id calls at full speed for SECONDS seconds
// (the time checked every 1,024 IDs) into a growable []uint64. Writes OUT_PATH (raw
// little-endian uint64, in issue order) and OUT_PATH.json. Exit 0 on success; on any error one
// line on stderr and exit 1.
package main

/*
#cgo pkg-config: polyflake
#include <stdlib.h>
#include "polyflake.h"
*/
import "C"

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"time"
	"unsafe"
)

const language = "go"

// polyflakeError is a polyflake_result other than OK, with the core's message.
type polyflakeError struct {
	what, code, message string
}

func (e *polyflakeError) Error() string { return e.what + ": " + e.code + ": " + e.message }

func check(what string, r C.polyflake_result) error {
	if r == C.POLYFLAKE_RESULT_OK {
		return nil
	}
	msg := C.GoString(C.polyflake_result_message(C.uint32_t(r)))
	var buf [1024]C.char
	var n C.size_t
	if C.polyflake_last_error_message(&buf[0], C.size_t(len(buf)), &n) == C.POLYFLAKE_RESULT_OK && n > 0 {
		msg = C.GoStringN(&buf[0], C.int(n))
	}
	return &polyflakeError{what, C.GoString(C.polyflake_result_name(C.uint32_t(r))), msg}
}

func formatID(id uint64) (string, error) {
	var buf [C.POLYFLAKE_ID_TEXT_LEN]C.char
	var n C.size_t
	if err := check("format_id", C.polyflake_format_id(C.uint64_t(id), &buf[0], C.size_t(len(buf)), &n)); err != nil {
		return "", err
	}
	return C.GoStringN(&buf[0], C.int(n)), nil
}

func run(dir, secondsText, outPath string) error {
	seconds, err := strconv.ParseFloat(secondsText, 64)
	if err != nil || !(seconds > 0) || seconds > 3600 || math.IsNaN(seconds) {
		return fmt.Errorf("SECONDS must be a number in (0, 3600], not %q", secondsText)
	}

	var cfg C.polyflake_config
	C.polyflake_config_init(&cfg) // strict, layout 41/10/12, the default epoch
	var opts C.polyflake_file_lease_options
	C.polyflake_file_lease_options_init(&opts)
	cdir := C.CString(dir)
	defer C.free(unsafe.Pointer(cdir))
	cident := C.CString(language)
	defer C.free(unsafe.Pointer(cident))
	opts.dir = cdir
	opts.identity = cident

	// Take a slot (system clock: nil), wait out its restart guard (at most 15 s; a fresh
	// directory's new slot is guarded for a full reserve), then the first ID.
	var gen *C.polyflake_generator
	if err := check("file lease", C.polyflake_generator_new_file_lease(&cfg, &opts, nil, &gen)); err != nil {
		return err
	}
	defer C.polyflake_generator_free(gen)
	if err := check("wait_ready", C.polyflake_wait_ready(gen, 15000)); err != nil {
		return err
	}
	var id C.uint64_t
	if err := check("first ID", C.polyflake_next_id(gen, &id)); err != nil {
		return err
	}

	ids := make([]uint64, 1, 1<<20)
	ids[0] = uint64(id)
	start := time.Now()
	deadline := start.Add(time.Duration(seconds * float64(time.Second)))
	for {
		if len(ids)&1023 == 0 && !time.Now().Before(deadline) {
			break
		}
		if r := C.polyflake_next_id(gen, &id); r != C.POLYFLAKE_RESULT_OK {
			return check("next_id", r)
		}
		ids = append(ids, uint64(id))
	}
	elapsed := time.Since(start).Seconds()

	var held C.polyflake_config
	if err := check("config", C.polyflake_generator_config(gen, &held)); err != nil {
		return err
	}

	f, err := os.Create(outPath)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	var b [8]byte
	for _, v := range ids {
		binary.LittleEndian.PutUint64(b[:], v)
		w.Write(b[:])
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}

	first, err := formatID(ids[0])
	if err != nil {
		return err
	}
	last, err := formatID(ids[len(ids)-1])
	if err != nil {
		return err
	}
	// Field order as the protocol lists it.
	doc, err := json.Marshal(struct {
		Language string  `json:"language"`
		NodeID   int64   `json:"node_id"`
		Count    int     `json:"count"`
		Seconds  float64 `json:"seconds"`
		First    string  `json:"first"`
		Last     string  `json:"last"`
	}{language, int64(held.node_id), len(ids), elapsed, first, last})
	if err != nil {
		return err
	}
	return os.WriteFile(outPath+".json", append(doc, '\n'), 0o644)
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintf(os.Stderr, "usage: %s LEASE_DIR SECONDS OUT_PATH\n", os.Args[0])
		os.Exit(1)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintf(os.Stderr, "participant_go: %v\n", err)
		os.Exit(1)
	}
}
