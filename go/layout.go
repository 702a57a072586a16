package polyflake

/*
#include "polyflake_cgo.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// DefaultEpochMs is the default epoch, 2024-01-01T00:00:00Z, in Unix milliseconds.
const DefaultEpochMs int64 = C.POLYFLAKE_DEFAULT_EPOCH_MS

// MaxBatch is the most IDs one NextIDs (or NextUUIDs, NextULIDs) call fills: 2^24.
const MaxBatch = C.POLYFLAKE_MAX_BATCH

// Layout is how the 63 usable bits of a Snowflake ID are split: every field at least 1 bit,
// adding up to 63 (the library refuses anything else with ErrInvalidLayout).
type Layout struct {
	TimestampBits, NodeBits, SequenceBits uint32
}

// The presets, from the library.
var (
	// LayoutDefault is 41/10/12: 69.68 years, 1,024 nodes, 4,096 IDs per ms per node.
	LayoutDefault = layoutOf(C.polyflake_layout_default())
	// LayoutLongLived is 42/8/13: 139.37 years, 256 nodes, 8,192 IDs per ms per node.
	LayoutLongLived = layoutOf(C.polyflake_layout_long_lived())
	// LayoutBigFleet is 41/12/10: 69.68 years, 4,096 nodes, 1,024 IDs per ms per node.
	LayoutBigFleet = layoutOf(C.polyflake_layout_big_fleet())
	// LayoutShort is 39/12/12: 17.42 years, 4,096 nodes, 4,096 IDs per ms per node.
	LayoutShort = layoutOf(C.polyflake_layout_short())
)

func layoutOf(l C.polyflake_layout) Layout {
	return Layout{uint32(l.timestamp_bits), uint32(l.node_bits), uint32(l.sequence_bits)}
}

func (l Layout) c() C.polyflake_layout {
	return C.polyflake_layout{
		timestamp_bits: C.uint32_t(l.TimestampBits),
		node_bits:      C.uint32_t(l.NodeBits),
		sequence_bits:  C.uint32_t(l.SequenceBits),
	}
}

// String is the layout as "T/N/S", such as "41/10/12".
func (l Layout) String() string {
	return fmt.Sprintf("%d/%d/%d", l.TimestampBits, l.NodeBits, l.SequenceBits)
}

// LayoutFromName is a preset by name ("default", "long_lived", "big_fleet", "short") or a
// "T/N/S" layout such as "40/11/12". Errors: ErrUnknownLayout, ErrInvalidLayout.
func LayoutFromName(name string) (Layout, error) {
	cs, err := cString(name, "the layout name", ErrUnknownLayout)
	if err != nil {
		return Layout{}, err
	}
	defer C.free(unsafe.Pointer(cs))
	var out C.polyflake_layout
	if err := check(C.pf_layout_from_name(cs, &out)); err != nil {
		return Layout{}, err
	}
	return layoutOf(out), nil
}

// LayoutInfo is what a layout holds, as the core computes it.
type LayoutInfo struct {
	// MaxNodeID is 2^NodeBits - 1.
	MaxNodeID int64
	// MaxSequence is 2^SequenceBits - 1.
	MaxSequence uint64
	// IDsPerMs is 2^SequenceBits: IDs one node issues in one millisecond.
	IDsPerMs uint64
	// MaxElapsedMs is 2^TimestampBits - 1: the window after the epoch.
	MaxElapsedMs uint64
	// Years is how many Julian years the window lasts.
	Years float64
}

// Describe checks the layout and says what it holds. Errors: ErrInvalidLayout.
func (l Layout) Describe() (LayoutInfo, error) {
	var i C.polyflake_layout_info
	if err := check(C.pf_layout_describe(l.c(), &i)); err != nil {
		return LayoutInfo{}, err
	}
	return LayoutInfo{int64(i.max_node_id), uint64(i.max_sequence), uint64(i.ids_per_ms),
		uint64(i.max_elapsed_ms), float64(i.years)}, nil
}

// Decoded is a Snowflake ID's three fields.
type Decoded struct {
	// TimestampMs is the Unix ms the ID was made at the latest (an upper bound: a monotonic
	// generator may run ahead of the wall clock, never behind it).
	TimestampMs int64
	// NodeID is the node that made it (an int64 like every node id of this package, though it
	// always fits 32 bits).
	NodeID int64
	// Sequence is its position in that node's millisecond.
	Sequence uint32
}

func decodedOf(d C.polyflake_decoded) Decoded {
	return Decoded{int64(d.timestamp_ms), int64(d.node_id), uint32(d.sequence)}
}

// Decode splits an ID of the default layout and epoch. Errors: ErrInvalidID for a negative id.
func Decode(id int64) (Decoded, error) {
	return DecodeWith(LayoutDefault, DefaultEpochMs, id)
}

// DecodeWith splits an ID of layout l and epoch epochMs. Errors: ErrInvalidLayout,
// ErrInvalidID.
func DecodeWith(l Layout, epochMs int64, id int64) (Decoded, error) {
	var d C.polyflake_decoded
	if err := check(C.pf_decode(l.c(), C.int64_t(epochMs), C.int64_t(id), &d)); err != nil {
		return Decoded{}, err
	}
	return decodedOf(d), nil
}

// Compose packs a Unix-ms timestamp, node id and sequence into an ID of layout l and epoch
// epochMs (the inverse of DecodeWith). Errors: ErrInvalidLayout, ErrTimestampOverflow (outside
// the window), ErrInvalidNodeID (negative or too large), ErrInvalidArgument (sequence too large).
func Compose(l Layout, epochMs, unixMs int64, nodeID int64, sequence uint64) (int64, error) {
	if nodeID < 0 {
		info, err := l.Describe()
		if err != nil {
			return 0, err
		}
		return 0, refuse(ErrInvalidNodeID, fmt.Sprintf("node id %d is out of range: it must be in [0, %d]",
			nodeID, info.MaxNodeID))
	}
	var id C.uint64_t
	err := check(C.pf_compose(l.c(), C.int64_t(epochMs), C.int64_t(unixMs), C.uint64_t(nodeID),
		C.uint64_t(sequence), &id))
	if err != nil {
		return 0, err
	}
	return int64(id), nil
}

// ParseID reads an ID's decimal text (ASCII digits only, below 2^63), as every polyflake binding
// does. Errors: ErrInvalidID.
func ParseID(text string) (int64, error) {
	cs, err := cString(text, "the ID text", ErrInvalidID)
	if err != nil {
		return 0, err
	}
	defer C.free(unsafe.Pointer(cs))
	var id C.uint64_t
	if err := check(C.pf_parse_id(cs, &id)); err != nil {
		return 0, err
	}
	return int64(id), nil
}

// FormatID writes an ID as decimal text. Errors: ErrInvalidID for a negative id.
func FormatID(id int64) (string, error) {
	o := C.pf_format_id(C.int64_t(id))
	if err := check(o.s); err != nil {
		return "", err
	}
	return C.GoString(&o.t.text[0]), nil
}
