package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// SchemaVersion is stamped on every --json object. It changes only when a
// field is renamed or removed; new fields do not bump it.
const SchemaVersion = 1

// JSON writes v as one object on one line with schema_version added and
// every key sorted, so output is byte-for-byte deterministic. v must encode
// to a JSON object.
func JSON(w io.Writer, v any) error {
	line, err := JSONLine(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(line, '\n'))
	return err
}

// JSONLine is JSON without the newline.
func JSONLine(v any) ([]byte, error) {
	raw, err := marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("report: JSON output must be an object: %w", err)
	}
	obj["schema_version"] = SchemaVersion
	// encoding/json writes map keys sorted, at every level.
	return marshal(obj)
}

// SortedJSON is v's JSON with the keys of every object sorted, as JSON
// writes them, and no schema_version: for streaming the parts of a big
// document one at a time.
func SortedJSON(v any) ([]byte, error) {
	raw, err := marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj any
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	return marshal(obj)
}

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
