// Package copied copies polyflake's handle types by value on purpose: waits_test.go runs
// `go vet` on it and expects copylocks to report every copy (the noCopy field). It is never
// built into anything.
package copied

import polyflake "example.invalid/polyflake/go"

// Generator copies a Generator.
func Generator(g *polyflake.Generator) int64 {
	cp := *g
	return cp.NodeID()
}

// UUIDv7 copies a UUIDv7Generator.
func UUIDv7(g *polyflake.UUIDv7Generator) polyflake.UUIDv7Generator { return *g }

// ULID copies a ULIDGenerator.
func ULID(g *polyflake.ULIDGenerator) {
	var cp polyflake.ULIDGenerator
	cp = *g
	_ = cp.Health()
}

// Clock copies a Clock.
func Clock(c *polyflake.Clock) []polyflake.Clock { return []polyflake.Clock{*c} }
