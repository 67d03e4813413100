package importer_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/importer"
)

// Qwen Code's records carry Claude Code's uuid/parentUuid/sessionId and
// may name a startTime, which Gemini CLI's metadata line has: detection
// must tell the three apart both ways, on the real clients' recordings.
func TestDetectQwenCodeAgainstItsLookalikes(t *testing.T) {
	want := map[string]string{
		"../testdata/interop/qwen-code/*/*/chats/*.jsonl":        importer.QwenCode,
		"../testdata/interop/claude-code/*/*/transcript/*.jsonl": importer.ClaudeCode,
		"../testdata/interop/gemini-cli/*/*/chats/*.jsonl":       importer.Gemini,
	}
	for pattern, format := range want {
		files, _ := filepath.Glob(pattern)
		if len(files) == 0 {
			t.Fatalf("%s: no recordings", pattern)
		}
		for _, f := range files {
			if got, err := importer.DetectFile(f); err != nil || got != format {
				t.Errorf("%s: detected %q (%v), want %q", f, got, err, format)
			}
		}
	}
	// A Qwen Code record naming a startTime (a background task's) is still
	// Qwen Code's, not a Gemini CLI session's metadata.
	files, _ := filepath.Glob("../testdata/interop/qwen-code/*/tool/chats/*.jsonl")
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	task := `{"uuid":"x1","parentUuid":null,"sessionId":"s","type":"system","subtype":"notification","systemPayload":{"backgroundTask":{"taskId":"t","startTime":1}}}` + "\n"
	if got := importer.DetectBytes([]byte(task + string(data))); got != importer.QwenCode {
		t.Errorf("with a startTime: detected %q", got)
	}
	if !strings.Contains(strings.Join(importer.Finders(), " "), importer.QwenCode) {
		t.Errorf("qwen-code finds no sessions: %v", importer.Finders())
	}
}

// Named with the wrong --from, a Qwen Code file is refused by name, not
// taken for an empty Gemini CLI session (each record's sessionId reads as
// a metadata line there).
func TestQwenCodeFileUnderFromGemini(t *testing.T) {
	files, _ := filepath.Glob("../testdata/interop/qwen-code/*/tool/chats/*.jsonl")
	out := filepath.Join(t.TempDir(), "s")
	_, err := run(t, importer.Gemini, out, files[0])
	if err == nil || !strings.Contains(err.Error(), "looks like Qwen Code") || !strings.Contains(hint(err), "--from qwen-code") {
		t.Fatalf("--from gemini: %v (hint %q)", err, hint(err))
	}
	if _, serr := os.Lstat(out); serr == nil {
		t.Error("an output was created")
	}
}
