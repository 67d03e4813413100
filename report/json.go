package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// SchemaVersion is stamped on every --json object. It changes only when a
// field is renamed or removed; new fields do not bump it. Version 2 names
// the session directory "session" in every object (init and repair said
// "dir", import's sessions "dir", append and checkout had none).
const SchemaVersion = 2

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
	generic, err := remarshal(v)
	if err != nil {
		return nil, err
	}
	obj, ok := generic.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("report: JSON output must be an object, got %T", generic)
	}
	obj["schema_version"] = SchemaVersion
	// encoding/json writes map keys sorted, at every level.
	return marshal(obj)
}

// SortedJSON is v's JSON with the keys of every object sorted, as JSON
// writes them, and no schema_version: for streaming the parts of a big
// document one at a time.
func SortedJSON(v any) ([]byte, error) {
	generic, err := remarshal(v)
	if err != nil {
		return nil, err
	}
	return marshal(generic)
}

// remarshal is v as generic JSON values (maps, slices, json.Number), which
// encoding/json writes with sorted keys and numbers as they were.
func remarshal(v any) (any, error) {
	raw, err := marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	return generic, nil
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
