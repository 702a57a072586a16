package cgotest

import (
	"testing"

	polyflake "example.invalid/polyflake/go"
	"github.com/bwmarrin/snowflake"
)

// Per-call cost of polyflake's Go package (one cgo call per ID) beside bwmarrin/snowflake's
// Generate() in the same run (make bench-c).
//
// Both capped setups issue at most 4,096 IDs per ms and then wait for the next ms, so a tight
// loop on them measures the cap (~244 ns per ID), not the call. The per-call comparison (issue
// 16) is made where neither can exhaust its millisecond: bwmarrin with its own settings widened to
// NodeBits 1, StepBits 21 (2,097,152 IDs per ms), polyflake on the layout 41/1/21 (the same
// split), strict, on the precise and on the coarse clock source.

func benchGenerator(b *testing.B, opts ...polyflake.Option) *polyflake.Generator {
	g, err := polyflake.New(opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Close() })
	return g
}

var wide = polyflake.Layout{TimestampBits: 41, NodeBits: 1, SequenceBits: 21}

func benchBwmarrin(b *testing.B, nodeBits, stepBits uint8) {
	// bwmarrin's settings are package variables, read by NewNode: set, make, restore.
	oldNode, oldStep := snowflake.NodeBits, snowflake.StepBits
	snowflake.NodeBits, snowflake.StepBits = nodeBits, stepBits
	n, err := snowflake.NewNode(1)
	snowflake.NodeBits, snowflake.StepBits = oldNode, oldStep
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = n.Generate()
	}
}

func BenchmarkBwmarrinGenerate(b *testing.B) { benchBwmarrin(b, 10, 12) }

func BenchmarkBwmarrinGenerateWide(b *testing.B) { benchBwmarrin(b, 1, 21) }

func benchNextID(b *testing.B, g *polyflake.Generator) {
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := g.NextID(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPolyflakeNextIDStrictDefault(b *testing.B) {
	benchNextID(b, benchGenerator(b, polyflake.NodeID(11)))
}

func BenchmarkPolyflakeNextIDStrictWide(b *testing.B) {
	benchNextID(b, benchGenerator(b, polyflake.NodeID(1), polyflake.WithLayout(wide)))
}

func BenchmarkPolyflakeNextIDStrictWideCoarse(b *testing.B) {
	benchNextID(b, benchGenerator(b, polyflake.NodeID(0), polyflake.WithLayout(wide),
		polyflake.WithClockSource(polyflake.Coarse)))
}

func BenchmarkPolyflakeNextIDMonotonic(b *testing.B) {
	benchNextID(b, benchGenerator(b, polyflake.NodeID(12), polyflake.WithMode(polyflake.Monotonic)))
}

func BenchmarkPolyflakeNextIDMonotonicCoarse(b *testing.B) {
	benchNextID(b, benchGenerator(b, polyflake.NodeID(15), polyflake.WithMode(polyflake.Monotonic),
		polyflake.WithClockSource(polyflake.Coarse)))
}

// Reported per ID: b.N IDs in batches of 4,096.
func benchBatch(b *testing.B, g *polyflake.Generator) {
	buf := make([]int64, 4096)
	b.ResetTimer()
	for done := 0; done < b.N; done += len(buf) {
		n := len(buf)
		if b.N-done < n {
			n = b.N - done
		}
		if err := g.NextIDs(buf[:n]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPolyflakeNextIDsMonotonicPerID(b *testing.B) {
	benchBatch(b, benchGenerator(b, polyflake.NodeID(13), polyflake.WithMode(polyflake.Monotonic)))
}

func BenchmarkPolyflakeNextIDsStrictWidePerID(b *testing.B) {
	benchBatch(b, benchGenerator(b, polyflake.NodeID(0), polyflake.WithLayout(polyflake.Layout{TimestampBits: 41, NodeBits: 2, SequenceBits: 20})))
}

func BenchmarkPolyflakeNextIDsStrictDefaultPerID(b *testing.B) {
	benchBatch(b, benchGenerator(b, polyflake.NodeID(14)))
}

func benchUUIDv7(b *testing.B, settings ...polyflake.Setting) {
	g, err := polyflake.NewUUIDv7(settings...)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := g.NextUUID(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPolyflakeNextUUIDv7(b *testing.B) { benchUUIDv7(b) }

func BenchmarkPolyflakeNextUUIDv7Coarse(b *testing.B) {
	benchUUIDv7(b, polyflake.WithClockSource(polyflake.Coarse))
}
