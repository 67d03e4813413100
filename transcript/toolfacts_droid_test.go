package transcript

import (
	"encoding/json"
	"testing"
)

// TestShellCommandDroidExecute: Factory Droid's Execute runs a shell
// command (its "command" argument); its Read tool runs none.
func TestShellCommandDroidExecute(t *testing.T) {
	args := json.RawMessage(`{"command":"ls /nonexistent-ctxfold-dir","riskLevel":"low"}`)
	if got := (ToolCall{Name: "Execute", Arguments: args}).ShellCommand(); got != "ls /nonexistent-ctxfold-dir" {
		t.Errorf("Execute: %q", got)
	}
	if got := (ToolCall{Name: "Read", Arguments: args}).ShellCommand(); got != "" {
		t.Errorf("Read: %q", got)
	}
}
