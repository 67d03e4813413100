package cmd

import (
	"encoding/json"
	"testing"
)

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, s)
	}
	return m
}
