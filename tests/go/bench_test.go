package cgotest

import (
	"testing"

	"github.com/bwmarrin/snowflake"
)

// Per-call cost of polyflake_next_id through cgo beside bwmarrin/snowflake's Generate(), in the
// same run (make bench-c). bwmarrin issues at most 4,096 IDs per ms (it waits for the next ms),
// and so does polyflake's strict mode on the default layout, so strict/default measures the
// same cap on both sides; monotonic mode and the 41/1/21 layout measure the call itself.

func benchGenerator(b *testing.B, node int64, mode uint32, layout Layout) *Generator {
	cfg := DefaultConfig()
	cfg.NodeID, cfg.Mode, cfg.Layout = node, mode, layout
	g, err := New(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	return g
}

func BenchmarkBwmarrinGenerate(b *testing.B) {
	n, err := snowflake.NewNode(1)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = n.Generate()
	}
}

func BenchmarkPolyflakeNextIDStrictDefault(b *testing.B) {
	g := benchGenerator(b, 11, Strict, LayoutDefault())
	defer g.Free()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := g.NextID(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPolyflakeNextIDStrictWide(b *testing.B) {
	g := benchGenerator(b, 1, Strict, Layout{41, 1, 21})
	defer g.Free()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := g.NextID(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPolyflakeNextIDMonotonic(b *testing.B) {
	g := benchGenerator(b, 12, Monotonic, LayoutDefault())
	defer g.Free()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := g.NextID(); err != nil {
			b.Fatal(err)
		}
	}
}

// Reported per ID: b.N IDs in batches of 4,096.
func benchBatch(b *testing.B, g *Generator) {
	buf := make([]uint64, 4096)
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
	g := benchGenerator(b, 13, Monotonic, LayoutDefault())
	defer g.Free()
	benchBatch(b, g)
}

func BenchmarkPolyflakeNextIDsStrictWidePerID(b *testing.B) {
	g := benchGenerator(b, 0, Strict, Layout{41, 1, 21})
	defer g.Free()
	benchBatch(b, g)
}

func BenchmarkPolyflakeNextIDsStrictDefaultPerID(b *testing.B) {
	g := benchGenerator(b, 14, Strict, LayoutDefault())
	defer g.Free()
	benchBatch(b, g)
}
