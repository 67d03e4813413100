package importer_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/ctxfold/ctxfold/transcript"
	"github.com/ctxfold/ctxfold/transcript/importer"
)

// A Codex rollout compressed as .jsonl.zst imports exactly as the plain
// one: same format, same nodes, and errors name the compressed file.
func TestZstdRollout(t *testing.T) {
	plain, err := os.ReadFile(fixtures + "codex/rollout-compacted.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc, _ := zstd.NewWriter(&buf)
	enc.Write(plain)
	enc.Close()
	tmp := t.TempDir()
	zst := filepath.Join(tmp, "rollout-compacted.jsonl.zst")
	os.WriteFile(zst, buf.Bytes(), 0o644)

	a, b := filepath.Join(tmp, "plain"), filepath.Join(tmp, "zst")
	if _, err := run(t, importer.Auto, a, fixtures+"codex/rollout-compacted.jsonl"); err != nil {
		t.Fatal(err)
	}
	rep, err := run(t, importer.Auto, b, zst)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Format != importer.Codex || len(rep.Files) != 1 || rep.Files[0] != zst {
		t.Fatalf("format %q, files %v: the report names the file given", rep.Format, rep.Files)
	}
	for _, w := range rep.Warnings {
		if !strings.HasPrefix(w, zst) {
			t.Errorf("warning %q does not name %s", w, zst)
		}
	}
	check(t, b)
	if meta, _ := os.ReadFile(filepath.Join(b, transcript.MetaFile)); !strings.Contains(string(meta), `"rollout-compacted.jsonl.zst"`) {
		t.Errorf("imported_from names the decompressed copy: %s", meta)
	}
	na, _ := os.ReadFile(filepath.Join(a, transcript.NodesFile))
	nb, _ := os.ReadFile(filepath.Join(b, transcript.NodesFile))
	if len(na) == 0 || !bytes.Equal(na, nb) {
		t.Fatalf("nodes differ:\n%s\n%s", na, nb)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 3 {
		t.Errorf("temporary files left: %v", entries)
	}

	bad := filepath.Join(tmp, "bad.jsonl.zst")
	var bb bytes.Buffer
	enc, _ = zstd.NewWriter(&bb)
	enc.Write([]byte("{\"type\":\"session_meta\",\"payload\":{\"id\":\"x\"}}\nnot json\n"))
	enc.Close()
	os.WriteFile(bad, bb.Bytes(), 0o644)
	_, err = run(t, importer.Codex, filepath.Join(tmp, "bad"), bad)
	if err == nil || !strings.HasPrefix(err.Error(), bad+":2:") {
		t.Errorf("error %v, want one naming %s:2", err, bad)
	}
}
