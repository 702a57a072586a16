package polyflake

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"
)

// interruptEvery is how often a Context call whose context is done interrupts its generator
// again until the call returns: an interrupt that lands just before the library call begins
// would not cut it (the library's wait slice is 20 ms).
const interruptEvery = 20 * time.Millisecond

// ContextError is the error of a Context call cut by its context: errors.Is matches both
// ctx.Err() (context.Canceled or context.DeadlineExceeded) and ErrInterrupted, and errors.As
// finds the library's *Error with its message ("interrupted after waiting 100 ms ...").
type ContextError struct {
	// Cause is ctx.Err() when the call was cut.
	Cause error
	// Err is the library's refusal (kind ErrInterrupted).
	Err *Error
}

// Error returns the library's refusal and the context's reason.
func (e *ContextError) Error() string { return e.Err.Error() + " (" + e.Cause.Error() + ")" }

// Unwrap gives both errors to errors.Is and errors.As.
func (e *ContextError) Unwrap() []error { return []error{e.Cause, e.Err} }

// timeoutOf is the library's timeout for ctx's deadline, rounded up to whole milliseconds (so
// the library never gives up before the context does), or the largest value (no deadline).
func timeoutOf(ctx context.Context) uint64 {
	d, ok := ctx.Deadline()
	if !ok {
		return math.MaxUint64
	}
	left := time.Until(d)
	if left <= 0 {
		return 0
	}
	return uint64((left + time.Millisecond - 1) / time.Millisecond)
}

// interrupts orders a generator's interrupts against the Context calls they cut: each one
// (a cancelled Context call's, counted in cuts, or Interrupt's, counted in hard) moves its count
// and reaches the library under mu, and a call reads both counts under mu before it begins. A
// call cut while its context is live thus knows what cut it: Interrupt (it fails) or another
// call's cancellation (it starts again), never a stale count read between the two steps.
type interrupts struct {
	mu   sync.Mutex
	cuts uint64
	hard uint64
}

// counts reads both counts.
func (s *interrupts) counts() (cuts, hard uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cuts, s.hard
}

// hardInterrupt is Interrupt: it counts, then cuts every call in flight (libInterrupt).
func (s *interrupts) hardInterrupt(libInterrupt func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hard++
	libInterrupt()
}

// callContext runs call (a library call given its timeout in ms) under ctx: the deadline is the
// library's; cancellation interrupts the generator (libInterrupt) until call returns, and never
// after. A call cut while ctx is still live starts again when another Context call's
// cancellation cut it; when Interrupt did, it fails with ErrInterrupted.
func callContext(ctx context.Context, st *interrupts, libInterrupt func(), call func(timeoutMs uint64) error) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		seenCuts, seenHard := st.counts()
		var stop chan struct{}
		// finished (under st.mu) is set once call has returned: the watcher interrupts only
		// while it is false, so a late watcher never cuts a call begun after this one returned.
		finished := false
		if done := ctx.Done(); done != nil {
			stop = make(chan struct{})
			go func() {
				select {
				case <-stop:
					return
				case <-done:
				}
				tick := time.NewTicker(interruptEvery)
				defer tick.Stop()
				for {
					st.mu.Lock()
					if finished {
						st.mu.Unlock()
						return
					}
					st.cuts++
					libInterrupt()
					st.mu.Unlock()
					select {
					case <-stop:
						return
					case <-tick.C:
					}
				}
			}()
		}
		err := call(timeoutOf(ctx))
		if stop != nil {
			st.mu.Lock()
			finished = true
			st.mu.Unlock()
			close(stop)
		}
		var e *Error
		if err == nil || !errors.As(err, &e) || !errors.Is(e, ErrInterrupted) {
			return err
		}
		if cause := ctx.Err(); cause != nil {
			return &ContextError{Cause: cause, Err: e}
		}
		// The library's deadline (rounded up) passed before the context's timer fired.
		if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
			return &ContextError{Cause: context.DeadlineExceeded, Err: e}
		}
		if cuts, hard := st.counts(); hard != seenHard || cuts == seenCuts {
			return err // Interrupt: a stop for every call (or a cut from outside Go)
		}
	}
}
