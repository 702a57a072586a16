package polyflake

// Fuzz targets on everything this package parses: ID text, UUID and ULID text, layout names,
// and decode/compose. Each checks the library against an independent model written here in Go
// (what the text rules say), not just "no crash": an input accepted by one and refused by the
// other, or read as a different value, fails. `go test` runs the seeds below and every
// regression input in testdata/fuzz; `make test-go` adds a short run per target and
// `make fuzz-go` a long one (go test -fuzz).

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

// refusedAs fails unless err is a polyflake *Error of kind want.
func refusedAs(t *testing.T, err, want error, input string) {
	t.Helper()
	var pe *Error
	if !errors.As(err, &pe) || !errors.Is(err, want) || pe.Message == "" {
		t.Fatalf("%q: refused with %v, want %v with a message", input, err, want)
	}
}

// agrees fails unless the library and the model agree on text: both refuse it (the library with
// ErrInvalidID), or both read the same 16 bytes. It reports whether the text was accepted.
func agrees(t *testing.T, text string, got [16]byte, err error, want [16]byte, ok bool) bool {
	t.Helper()
	if !ok {
		if err == nil {
			t.Fatalf("%q accepted as %x", text, got)
		}
		refusedAs(t, err, ErrInvalidID, text)
		return false
	}
	if err != nil || got != want {
		t.Fatalf("%q: %x %v, want %x", text, got, err, want)
	}
	return true
}

// ms48 is the Unix ms in the first 48 bits of a UUIDv7 or a ULID.
func ms48(b [16]byte) int64 {
	var ms int64
	for _, x := range b[:6] {
		ms = ms<<8 | int64(x)
	}
	return ms
}

func FuzzParseID(f *testing.F) {
	for _, s := range []string{"0", "141264821508263936", "9223372036854775807", "9223372036854775808",
		"", "-1", "+1", " 1", "1 ", "00042", "1_000", "0x10", "18446744073709551616", "1\x00", "١"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		id, err := ParseID(text)
		// The model: ASCII decimal digits only, below 2^63 (ParseUint also takes no sign).
		want, werr := strconv.ParseUint(text, 10, 64)
		ok := werr == nil && want <= math.MaxInt64 && !strings.ContainsAny(text, "_+-")
		if !ok {
			if err == nil {
				t.Fatalf("%q accepted as %d", text, id)
			}
			refusedAs(t, err, ErrInvalidID, text)
			return
		}
		if err != nil || uint64(id) != want {
			t.Fatalf("%q: %d %v, want %d", text, id, err, want)
		}
		back, err := FormatID(id)
		if err != nil || back != strconv.FormatInt(id, 10) {
			t.Fatalf("format %d: %q %v", id, back, err)
		}
	})
}

// uuidModel reads a UUID's text as RFC 9562 writes it: 8-4-4-4-12 hex digits, any case.
func uuidModel(text string) ([16]byte, bool) {
	var out [16]byte
	if len(text) != 36 {
		return out, false
	}
	n := 0
	for i := 0; i < 36; i++ {
		c := text[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return out, false
			}
			continue
		}
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return out, false
		}
		out[n/2] |= d << (4 * (1 - n%2))
		n++
	}
	return out, true
}

func FuzzParseUUID(f *testing.F) {
	for _, s := range []string{"017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "017F22E2-79B0-7CC3-98C4-DC0C0C07398F",
		"00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
		"017f22e279b07cc398c4dc0c0c07398f", "017f22e2-79b0-7cc3-98c4-dc0c0c07398g", "{017f22e2-79b0-7cc3-98c4-dc0c0c07398}",
		"017f22e2_79b0-7cc3-98c4-dc0c0c07398f", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		u, err := ParseUUID(text)
		want, ok := uuidModel(text)
		if !agrees(t, text, u, err, want, ok) {
			return
		}
		if s := u.String(); s != strings.ToLower(text) {
			t.Fatalf("%q formats as %q", text, s)
		}
		var v UUID
		if err := v.UnmarshalText([]byte(text)); err != nil || v != u {
			t.Fatalf("UnmarshalText %q: %s %v", text, v, err)
		}
		if ms, err := u.TimestampMs(); err == nil && ms != ms48(want) {
			t.Fatalf("%q: timestamp %d", text, ms)
		} else if err == nil && (want[6]>>4 != 7 || want[8]>>6 != 2) {
			t.Fatalf("%q: a timestamp from a UUID that is not version 7", text)
		}
	})
}

// ulidModel reads a ULID's text: 26 digits of Crockford's base32 (I and L are 1, O is 0, U is
// none), any case, the first at most 7.
func ulidModel(text string) ([16]byte, bool) {
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	var out [16]byte
	if len(text) != 26 {
		return out, false
	}
	var hi, lo uint64 // 128 bits, shifted in 5 at a time
	for i := 0; i < 26; i++ {
		c := text[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		switch c {
		case 'I', 'L':
			c = '1'
		case 'O':
			c = '0'
		}
		d := strings.IndexByte(alphabet, c)
		if d < 0 || (i == 0 && d > 7) {
			return out, false
		}
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(d)
	}
	for i := 0; i < 8; i++ {
		out[i] = byte(hi >> (56 - 8*i))
		out[8+i] = byte(lo >> (56 - 8*i))
	}
	return out, true
}

func FuzzParseULID(f *testing.F) {
	for _, s := range []string{"01ARZ3NDEKTSV4RRFFQ69G5FAV", "01arz3ndektsv4rrffq69g5fav", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ",
		"8ZZZZZZZZZZZZZZZZZZZZZZZZZ", "00000000000000000000000000", "0LIO0000000000000000000000",
		"0U000000000000000000000000", "01ARZ3NDEKTSV4RRFFQ69G5FA", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		u, err := ParseULID(text)
		want, ok := ulidModel(text)
		if !agrees(t, text, u, err, want, ok) {
			return
		}
		back, err := ParseULID(u.String())
		if err != nil || back != u || len(u.String()) != 26 || u.String() != strings.ToUpper(u.String()) {
			t.Fatalf("%q formats as %q: %v", text, u.String(), err)
		}
		if u.TimestampMs() != ms48(want) {
			t.Fatalf("%q: timestamp %d", text, u.TimestampMs())
		}
	})
}

func FuzzLayoutFromName(f *testing.F) {
	for _, s := range []string{"default", "long_lived", "big_fleet", "short", "41/10/12", "40/11/12", "63/0/0",
		"1/31/31", "41/10/13", "41/10", "41/10/12/0", " 41/10/12", "041/010/012", "+41/10/12", "4294967337/10/12", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		l, err := LayoutFromName(name)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || !(errors.Is(err, ErrUnknownLayout) || errors.Is(err, ErrInvalidLayout)) {
				t.Fatalf("%q: refused with %v", name, err)
			}
			return
		}
		// Every accepted layout: fields of 1 bit or more adding up to 63, node and sequence at
		// most 32 bits, and its own "T/N/S" text names it again.
		if l.TimestampBits+l.NodeBits+l.SequenceBits != 63 || l.TimestampBits == 0 || l.NodeBits == 0 ||
			l.SequenceBits == 0 || l.NodeBits > 32 || l.SequenceBits > 32 {
			t.Fatalf("%q accepted as %s", name, l)
		}
		if again, err := LayoutFromName(l.String()); err != nil || again != l {
			t.Fatalf("%q is %s, which reads as %s %v", name, l, again, err)
		}
		if _, err := l.Describe(); err != nil {
			t.Fatalf("%s: describe: %v", l, err)
		}
	})
}

func FuzzDecodeCompose(f *testing.F) {
	f.Add(uint32(41), uint32(10), uint32(12), DefaultEpochMs, int64(141264821508263936))
	f.Add(uint32(39), uint32(12), uint32(12), int64(0), int64(math.MaxInt64))
	f.Add(uint32(42), uint32(8), uint32(13), int64(math.MaxInt64), int64(1))
	f.Add(uint32(41), uint32(10), uint32(12), int64(math.MinInt64), int64(-1))
	f.Fuzz(func(t *testing.T, tb, nb, sb uint32, epochMs, id int64) {
		l := Layout{tb, nb, sb}
		d, err := DecodeWith(l, epochMs, id)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("%s %d %d: %v", l, epochMs, id, err)
			}
			return
		}
		if id < 0 {
			t.Fatalf("negative id %d decoded", id)
		}
		back, err := Compose(l, epochMs, d.TimestampMs, d.NodeID, uint64(d.Sequence))
		if err != nil || back != id {
			t.Fatalf("%s epoch %d: %d decodes to %+v, composes to %d %v", l, epochMs, id, d, back, err)
		}
	})
}
