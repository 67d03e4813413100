package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/transcript"
)

// TestMisplacedInputMessages: each wrong thing in place of a session, or
// of a node, gets a message saying what it is, not the symptom it causes.
func TestMisplacedInputMessages(t *testing.T) {
	file := filepath.Join(t.TempDir(), "chat.jsonl")
	os.WriteFile(file, []byte(`{"type":"user"}`+"\n"), 0o644)
	_, err := Open(file, OpenOptions{})
	var fg *FileGivenError
	if !errors.As(err, &fg) || err.Error() != file+": is a file, not a session directory" || !strings.Contains(fg.Hint(), "ctxfold import "+file+" -o DIR") {
		t.Errorf("a file as the session: %v", err)
	}

	dir := writeSession(t, nil, 0)
	os.Remove(filepath.Join(dir, NodesFile))
	os.Mkdir(filepath.Join(dir, NodesFile), 0o755)
	if _, err := Open(dir, OpenOptions{}); err == nil || !strings.Contains(err.Error(), "nodes.jsonl: is a directory") || strings.Contains(err.Error(), "removed outside") {
		t.Errorf("nodes.jsonl a directory: %v", err)
	}

	dir = writeSession(t, []byte("null\n"), 5)
	if _, err := Open(dir, OpenOptions{}); err == nil || !strings.HasSuffix(err.Error(), "nodes.jsonl:1: expected a JSON object, got null") {
		t.Errorf("a null line in nodes.jsonl: %v", err)
	}
	var n transcript.Node
	if err := n.UnmarshalJSON([]byte(" null ")); err == nil || err.Error() != "expected a JSON object, got null" {
		t.Errorf("a null node: %v", err)
	}
}

// TestOpenStopsWhenInterrupted: indexing a large nodes.jsonl takes seconds;
// a cancelled OpenOptions.Context stops it (Ctrl-C within cmd's grace).
func TestOpenStopsWhenInterrupted(t *testing.T) {
	old := indexWorkersOverride
	indexWorkersOverride = 2
	defer func() { indexWorkersOverride = old }()
	var data []byte
	for i := 0; len(data) < 2<<20; i++ {
		data = fmt.Appendf(data, `{"id":"n%d","role":"user","content":"%s"}`+"\n", i, strings.Repeat("x", 200))
	}
	dir := writeSession(t, data, int64(len(data)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Open(dir, OpenOptions{Context: ctx}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled open: %v", err)
	}
	s, err := Open(dir, OpenOptions{Context: context.Background()})
	if err != nil || s.Len() < 1000 {
		t.Fatalf("open: %v", err)
	}
	s.Close()
}
