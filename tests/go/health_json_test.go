package cgotest

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	polyflake "example.invalid/polyflake/go"
)

// coreFields is the field names, in order, of the `fn fields` in the core source file path (the
// names the core gives its health snapshot: Health::fields, LeaseHealth::fields).
func coreFields(t *testing.T, path string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.SplitN(string(src), "fn fields(&self)", 3)
	if len(parts) != 2 {
		t.Fatalf("%s: %d fn fields(&self), want one", path, len(parts)-1)
	}
	body := parts[1][:strings.Index(parts[1], "\n    }\n")]
	var names []string
	for _, m := range regexp.MustCompile(`\(\s*"([a-z_]+)",`).FindAllStringSubmatch(body, -1) {
		names = append(names, m[1])
	}
	if len(names) < 10 {
		t.Fatalf("%s: only %v read from fn fields", path, names)
	}
	return names
}

// jsonKeys is the keys of a JSON object in the order written.
func jsonKeys(t *testing.T, raw []byte) ([]string, map[string]json.RawMessage) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", raw)
	}
	var keys []string
	values := map[string]json.RawMessage{}
	for dec.More() {
		tok, _ := dec.Token()
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		values[tok.(string)] = v
	}
	return keys, values
}

// The Go Health's JSON names are the core's, read from the core's source (the C ABI has no list
// of them): a field the core adds or renames fails here until the Go struct follows.
func TestHealthJSONNamesAreTheCoresSource(t *testing.T) {
	health := coreFields(t, "../../core/src/generator/health.rs")
	lease := coreFields(t, "../../core/src/lease/health.rs")
	dir := t.TempDir()
	g, err := polyflake.New(polyflake.FileLease(dir, polyflake.Slots(1), polyflake.ReserveMs(100)))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	raw, err := json.Marshal(g.Health())
	if err != nil {
		t.Fatal(err)
	}
	keys, values := jsonKeys(t, raw)
	if strings.Join(keys, " ") != strings.Join(health, " ") {
		t.Fatalf("Go health JSON:\n%v\ncore (generator/health.rs Health::fields):\n%v", keys, health)
	}
	lkeys, _ := jsonKeys(t, values["lease"])
	if strings.Join(lkeys, " ") != strings.Join(lease, " ") {
		t.Fatalf("Go lease JSON:\n%v\ncore (lease/health.rs LeaseHealth::fields):\n%v", lkeys, lease)
	}
}
