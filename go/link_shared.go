//go:build !polyflake_static

package polyflake

// The shared library (the default): pkg-config's polyflake.pc, whose Libs carry an absolute
// RUNPATH (-Wl,-rpath) to the directory the library was found in. A program built this way loads
// libpolyflake.so from that directory at start-up: it fails to start once the SDK is moved or
// deleted (unless LD_LIBRARY_PATH names the new place). Build with -tags polyflake_static for a
// program that does not need the SDK at run time (link_static.go).

/*
#cgo pkg-config: polyflake
*/
import "C"

// Linkage is how this build links libpolyflake: "shared" or "static" (-tags polyflake_static).
const Linkage = "shared"
