package estimate

import (
	"encoding/json"
	"testing"

	"github.com/ctxfold/ctxfold/transcript"
)

// usage.input_tokens is the whole prompt by the format's definition;
// Anthropic's cache figures kept beside it must not be added a second time
// (the Claude Code importer folds them into input_tokens already).
func TestMeasuredInputIsInputTokens(t *testing.T) {
	u := &transcript.Usage{InputTokens: 15553, Extra: map[string]json.RawMessage{
		"cache_creation_input_tokens": json.RawMessage("10816"),
		"cache_read_input_tokens":     json.RawMessage("0"),
	}}
	if got := measuredInput(u); got != 15553 {
		t.Fatalf("measured %d, want input_tokens 15553", got)
	}
}
