package polyflake

// The Go side of a user clock (NewUserClock): the functions the library calls through
// polyflake_cgo.h's pf_go_clock_read and pf_go_clock_free. In a file of their own: a file that
// exports to C may only declare in its preamble.

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

// userClockFunc is what a user clock's handle holds.
type userClockFunc = func() (int64, error)

//export pfGoClockRead
func pfGoClockRead(h C.uintptr_t, out *C.int64_t, why *C.char, whyLen C.size_t) C.int32_t {
	now := cgo.Handle(h).Value().(userClockFunc)
	ms, err := now()
	if err == nil {
		*out = C.int64_t(ms)
		return 0
	}
	// The reason, cut to the buffer (NUL included) for the library's ErrClockFailed message.
	if whyLen > 0 {
		buf := unsafe.Slice((*byte)(unsafe.Pointer(why)), int(whyLen))
		n := copy(buf[:len(buf)-1], err.Error())
		buf[n] = 0
	}
	return 1
}

//export pfGoClockFree
func pfGoClockFree(h C.uintptr_t) { cgo.Handle(h).Delete() }
