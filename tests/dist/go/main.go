// A fresh Go program on the packed go/ module (test_dist.sh writes its go.mod with a replace to
// the unpacked polyflake-go-VERSION/; the library comes from the unpacked C SDK's polyflake.pc).
package main

import (
	"errors"
	"fmt"
	"os"

	polyflake "example.invalid/polyflake/go"
)

func main() {
	if polyflake.Version() != polyflake.ModuleVersion {
		fmt.Println("library", polyflake.Version(), "is not module", polyflake.ModuleVersion)
		os.Exit(1)
	}
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
	fmt.Println("system clock:", id > 0, d.NodeID)

	// Node 37 at 1737747358021 ms is 141264821508263936; a step back is refused, never repeated.
	clock := polyflake.NewManualClock(1737747358021)
	fixed := polyflake.MustNew(polyflake.NodeID(37), polyflake.WithClock(clock))
	defer fixed.Close()
	literal, _ := fixed.NextID()
	fmt.Println("manual clock:", literal)
	clock.Advance(-600)
	_, err = fixed.NextID()
	fmt.Println("step back refused:", errors.Is(err, polyflake.ErrClockMovedBackwards))
}
