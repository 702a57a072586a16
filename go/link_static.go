//go:build polyflake_static

package polyflake

// The static archive, selected by `go build -tags polyflake_static`: pkg-config's
// polyflake-static.pc (libpolyflake.a and the system libraries it needs). The program carries
// the library: it runs with the SDK moved or deleted, and is larger (a few MB).

/*
#cgo pkg-config: polyflake-static
*/
import "C"

// Linkage is how this build links libpolyflake: "shared" or "static" (-tags polyflake_static).
const Linkage = "static"
