package polyflake

import (
	"errors"
	"math/big"
	"testing"
)

// TestOneTimeIDType: UUIDv7Generator and ULIDGenerator are the two instances of TimeIDGenerator,
// whose NextID is their NextUUID and NextULID.
func TestOneTimeIDType(t *testing.T) {
	const ms = 1737747358021
	var u *UUIDv7Generator
	u, err := NewTimeID[UUID](WithClock(NewManualClock(ms)))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := u.NextID()
	b, _ := u.NextUUID()
	if v := a[6] >> 4; v != 7 || string(a[:]) >= string(b[:]) {
		t.Fatalf("version %d, %v then %v", v, a, b)
	}
	var l *ULIDGenerator
	l, err = NewTimeID[ULID](WithClock(NewManualClock(ms)))
	if err != nil {
		t.Fatal(err)
	}
	x, _ := l.NextID()
	buf := make([]ULID, 2)
	if err := l.NextIDs(buf); err != nil {
		t.Fatal(err)
	}
	// The ULID spec's +1 within the millisecond, across the single and the batch calls.
	for i, y := range buf {
		d := new(big.Int).Sub(new(big.Int).SetBytes(y[:]), new(big.Int).SetBytes(x[:]))
		if d.Int64() != 1 || y.TimestampMs() != ms {
			t.Fatalf("ULID %d: %v after %v", i, y, x)
		}
		x = y
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.NextULID(); !errors.Is(err, ErrGeneratorClosed) {
		t.Fatalf("closed: %v", err)
	}
}
