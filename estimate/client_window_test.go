package estimate

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/store"
)

// A window the session's client configuration gives (the importer marks
// it, RecordedWindowSourceKey) budgets a custom model and is reported as
// client_config; with none, the hint names the client's key.
func TestClientConfigWindow(t *testing.T) {
	meta := store.Meta{Model: "fake-model", Extra: map[string]json.RawMessage{
		"imported_from":         json.RawMessage(`{"format":"droid","files":["x.jsonl"]}`),
		RecordedWindowKey:       json.RawMessage("200000"),
		RecordedWindowSourceKey: json.RawMessage(`"client_config"`),
	}}
	b, err := Budget(Options{}.ForSession(meta, ""))
	if err != nil {
		t.Fatal(err)
	}
	if b.Window != 200000 || b.WindowSource != WindowFromClientConfig {
		t.Fatalf("window %d from %q, want 200000 from client_config", b.Window, b.WindowSource)
	}
	delete(meta.Extra, RecordedWindowSourceKey)
	if b, _ := Budget(Options{}.ForSession(meta, "")); b.WindowSource != WindowFromSession {
		t.Fatalf("a window the session records: from %q, want session", b.WindowSource)
	}
	delete(meta.Extra, RecordedWindowKey)
	_, err = Budget(Options{}.ForSession(meta, ""))
	var um *UnknownModelError
	if !errors.As(err, &um) {
		t.Fatalf("no window: %v, want an unknown model", err)
	}
	if !strings.Contains(um.Hint(), "customModels[].maxContextLimit") {
		t.Fatalf("no window: hint %q; want Droid's key named", um.Hint())
	}
	if h := (&UnknownModelError{Model: "m"}).Hint(); strings.Contains(h, "customModels") {
		t.Fatalf("no client: hint %q names a client's key", h)
	}
}
