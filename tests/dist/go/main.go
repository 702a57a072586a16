// A fresh Go program on the packed go/ module, set up by docs/go.md's install recipe (test_dist.sh:
// a replace to the unpacked polyflake-go-VERSION/, the library from the unpacked C SDK's .pc
// files), built shared and with -tags polyflake_static.
package main

import (
	"encoding/json"
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

	// An ID's JSON is a decimal string; node ids are int64 throughout.
	d, _ = fixed.Decode(literal)
	doc, err := json.Marshal(struct {
		ID     polyflake.ID `json:"id"`
		NodeID int64        `json:"node_id"`
	}{polyflake.ID(literal), d.NodeID})
	if err != nil {
		panic(err)
	}
	fmt.Println("json:", string(doc))
	fmt.Println("linkage:", polyflake.Linkage)
}
