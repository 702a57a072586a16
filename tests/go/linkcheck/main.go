// A small service on the polyflake Go package for tests/go/link.sh: it serves new IDs as JSON
// over HTTP on a loopback port, asks itself for a few, checks them, and prints how it was linked
// (-tags polyflake_static: the static archive; by default the shared library) and what it got.
package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	polyflake "example.invalid/polyflake/go"
)

type response struct {
	ID   polyflake.ID `json:"id"`
	Time time.Time    `json:"time"`
}

func main() {
	g, err := polyflake.New(polyflake.NodeID(901))
	if err != nil {
		fail(err)
	}
	defer g.Close()
	http.HandleFunc("/id", func(w http.ResponseWriter, r *http.Request) {
		id, err := g.Generate()
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		at, _ := g.Time(int64(id))
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(response{id, at})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	go http.Serve(ln, nil)

	var last polyflake.ID
	for i := 0; i < 100; i++ {
		resp, err := http.Get("http://" + ln.Addr().String() + "/id")
		if err != nil {
			fail(err)
		}
		var got response
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if err != nil || got.ID <= last || time.Since(got.Time) > time.Minute {
			fail(fmt.Errorf("response %d: %+v %v (last %d)", i, got, err, last))
		}
		last = got.ID
	}
	fmt.Printf("linkage %s: 100 IDs over HTTP, increasing, the last %s\n", polyflake.Linkage, last)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "linkcheck:", err)
	os.Exit(1)
}
