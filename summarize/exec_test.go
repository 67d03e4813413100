package summarize

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

func TestExecSummarizer(t *testing.T) {
	req := Request{Nodes: sessiontest.Pointers(sessiontest.Generate(sessiontest.NewRand(), 2)), MaxTokens: 300}
	t.Run("success", func(t *testing.T) {
		promptFile := filepath.Join(t.TempDir(), "prompt.txt")
		e := &Exec{Command: `cat > "$PROMPT_FILE"; printf '## Objective\nfrom a child process\n'`, Env: []string{"PROMPT_FILE=" + promptFile}}
		got, err := e.Summarize(context.Background(), req)
		if err != nil || got != "## Objective\nfrom a child process" {
			t.Fatalf("%q %v", got, err)
		}
		prompt, err := os.ReadFile(promptFile)
		if err != nil || string(prompt) != Prompt(req) {
			t.Fatalf("the child did not get the prompt on stdin (%v)", err)
		}
	})
	t.Run("non-zero exit", func(t *testing.T) {
		e := &Exec{Command: `cat >/dev/null; echo "model not found" >&2; exit 3`}
		_, err := e.Summarize(context.Background(), req)
		if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "model not found") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("empty output", func(t *testing.T) {
		e := &Exec{Command: `cat >/dev/null; printf '  \n'`}
		_, err := e.Summarize(context.Background(), req)
		if err == nil || !strings.Contains(err.Error(), "printed no summary") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		e := &Exec{Command: `cat >/dev/null; sleep 30`}
		done := make(chan error, 1)
		go func() { _, err := e.Summarize(ctx, req); done <- err }()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("%v", err)
		}
	})
}
