package polyflake

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// ID is a Snowflake ID as a type of its own: an int64 (so database/sql stores and scans it as a
// BIGINT, and int64(id) is the number) whose JSON is a string of decimal digits,
// "141264821508263936", never a JSON number. A JSON number above 2^53 is rounded by JavaScript
// (and by any reader that parses numbers as float64), which silently turns an ID into another
// one; a string goes through every reader unchanged. Generate issues one; ID(n) converts an int64
// from NextID or NextIDs.
//
// An ID has no Time, Node or Sequence method, on purpose: where those bits lie depends on the
// layout and the epoch of the generator that made it, and the 64 bits do not say which those
// were. Decoding with an assumed layout would give a plausible but wrong time and node for every
// ID made with another one, and no error. Decode with the layout it was made with instead: the
// generator's own (Generator.Decode, or Generator.Time for a log line) or DecodeWith(layout,
// epochMs, id), then Decoded.Time.
type ID int64

// String is the ID in decimal.
func (id ID) String() string { return strconv.FormatInt(int64(id), 10) }

// Int64 is the ID as an int64.
func (id ID) Int64() int64 { return int64(id) }

// MarshalText writes the ID in decimal (also what encoding/json uses for an ID as a map key).
// Errors: ErrInvalidID for a negative ID, which no generator issues and ParseID would refuse.
func (id ID) MarshalText() ([]byte, error) {
	if id < 0 {
		return nil, refuse(ErrInvalidID, fmt.Sprintf("%d is not an ID: an ID is never negative", int64(id)))
	}
	return strconv.AppendInt(nil, int64(id), 10), nil
}

// UnmarshalText reads an ID's decimal text with ParseID's rules (ASCII digits only, below 2^63).
// Errors: ErrInvalidID, echoing the text.
func (id *ID) UnmarshalText(text []byte) error {
	n, err := parseIDText(text)
	if err != nil {
		return err
	}
	*id = n
	return nil
}

// MarshalJSON writes the ID as a JSON string of decimal digits: "141264821508263936".
// Errors: ErrInvalidID for a negative ID.
func (id ID) MarshalJSON() ([]byte, error) {
	text, err := id.MarshalText()
	if err != nil {
		return nil, err
	}
	return append(append([]byte{'"'}, text...), '"'), nil
}

// UnmarshalJSON reads an ID from a JSON string of decimal digits. A JSON number is refused, even
// a whole one: whatever wrote it may have rounded it already (a JavaScript number holds 53 bits),
// and a rounded ID is another ID. JSON null leaves the ID as it is (encoding/json's convention).
// Errors: ErrInvalidID, echoing what was sent.
func (id *ID) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if string(data) == "null" {
		return nil
	}
	var text string
	if len(data) == 0 || data[0] != '"' || json.Unmarshal(data, &text) != nil {
		what := "not " + echoRaw(data)
		if len(data) > 0 && (data[0] == '-' || (data[0] >= '0' && data[0] <= '9')) {
			what = "not the JSON number " + echoRaw(data) +
				" (a number may have been rounded on its way: JavaScript keeps 53 bits)"
		}
		return refuse(ErrInvalidID, `an ID in JSON is a string of decimal digits such as "141264821508263936", `+what)
	}
	return id.UnmarshalText([]byte(text))
}

// parseIDText is ParseID on bytes. Its error echoes the text: the core's message quotes it, and
// text with a NUL byte (which ParseID refuses before the core sees it) is quoted here.
func parseIDText(text []byte) (ID, error) {
	n, err := ParseID(string(text))
	if err != nil {
		if bytes.IndexByte(text, 0) >= 0 {
			return 0, refuse(ErrInvalidID, fmt.Sprintf("invalid ID %s: it contains a NUL byte", echo(text)))
		}
		return 0, err
	}
	return ID(n), nil
}

// echoMax is how much of a refused input an error message quotes.
const echoMax = 64

// echo quotes b for an error message, cut to echoMax bytes ("..." and its length after a cut).
func echo(b []byte) string {
	if len(b) <= echoMax {
		return strconv.Quote(string(b))
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(string(b[:echoMax])), len(b))
}

// echoRaw is JSON input as it was sent, cut to echoMax bytes like echo.
func echoRaw(b []byte) string {
	if len(b) == 0 {
		return "empty input"
	}
	if len(b) <= echoMax {
		return string(b)
	}
	return fmt.Sprintf("%s... (%d bytes)", b[:echoMax], len(b))
}

// Time is the Unix-ms timestamp as a time.Time in UTC: for a log line, or to compare with other
// times. It is an upper bound on when the ID was made (see TimestampMs).
func (d Decoded) Time() time.Time { return time.UnixMilli(d.TimestampMs).UTC() }

// Generate issues one ID like NextID, as an ID (JSON: a decimal string) rather than an int64.
// The name is bwmarrin/snowflake's, whose ID type also writes JSON strings.
func (g *Generator) Generate() (ID, error) {
	n, err := g.NextID()
	return ID(n), err
}

// GenerateContext is Generate whose wait ends with ctx: see NextIDsContext.
func (g *Generator) GenerateContext(ctx context.Context) (ID, error) {
	n, err := g.NextIDContext(ctx)
	return ID(n), err
}

// Time is when the ID was made, decoded with this generator's layout and epoch, in UTC: one call
// for a log line. Errors: ErrInvalidID (a negative id).
func (g *Generator) Time(id int64) (time.Time, error) {
	d, err := g.Decode(id)
	if err != nil {
		return time.Time{}, err
	}
	return d.Time(), nil
}
