package importer_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/store"
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
	if meta, _ := os.ReadFile(filepath.Join(b, store.MetaFile)); !strings.Contains(string(meta), `"rollout-compacted.jsonl.zst"`) {
		t.Errorf("imported_from names the decompressed copy: %s", meta)
	}
	na, _ := os.ReadFile(filepath.Join(a, store.NodesFile))
	nb, _ := os.ReadFile(filepath.Join(b, store.NodesFile))
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

// Issue 30, item 8: a zstd bomb is refused once it decompressed past the
// limit (--max-decompressed-bytes), having written no more than that, and
// nothing is left behind. The bomb here is 64 MiB of valid Codex lines
// (a few KB compressed) against a 1 MiB limit.
func TestZstdBomb(t *testing.T) {
	line := []byte(`{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"agent_message","message":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}` + "\n")
	var buf bytes.Buffer
	enc, _ := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	enc.Write([]byte(`{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"00000000-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}}` + "\n"))
	for written := 0; written < 64<<20; written += len(line) {
		enc.Write(line)
	}
	enc.Close()
	tmp := t.TempDir()
	bomb := filepath.Join(tmp, "rollout-bomb.jsonl.zst")
	os.WriteFile(bomb, buf.Bytes(), 0o644)
	_, err := importer.Import(context.Background(), importer.Options{From: importer.Auto, Files: []string{bomb}, Out: filepath.Join(tmp, "s"),
		Input: input.Options{MaxDecompressedBytes: 1 << 20}})
	if err == nil || !strings.Contains(err.Error(), "decompresses to more than 1048576 bytes") || !strings.Contains(err.Error(), "--max-decompressed-bytes") {
		t.Fatalf("error %v, want the decompressed-size limit", err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

// Issue 30, item 8: what a killed import left beside -o (its copies of
// the inputs, its half-written session directory) is removed by the next
// import there — only ours (by name, not a symlink), only stale (older
// than input.StaleAfter and locked by no running import).
func TestStaleTemporariesRemoved(t *testing.T) {
	tmp := t.TempDir()
	old := time.Now().Add(-2 * input.StaleAfter)
	mk := func(name string, dir bool) string {
		p := filepath.Join(tmp, name)
		if dir {
			os.MkdirAll(filepath.Join(p, "0"), 0o755)
			os.WriteFile(filepath.Join(p, "0", "nodes.jsonl"), []byte("x\n"), 0o644)
		} else {
			os.WriteFile(p, []byte("x"), 0o644)
		}
		os.Chtimes(p, old, old)
		return p
	}
	killedCopy := mk(".ctxfold-input-123", false)
	killedZst := mk(".ctxfold-input-456", true)
	killedOut := mk(".s.import-789", true)
	running := mk(".s.import-999", true)
	lock := input.LockTemp(running)
	defer lock.Release()
	young := filepath.Join(tmp, ".ctxfold-input-new")
	os.WriteFile(young, []byte("x"), 0o644)
	other := mk(".t.import-1", true) // another output's, left to its own imports
	link := filepath.Join(tmp, ".ctxfold-input-link")
	os.Symlink(other, link)
	if _, err := run(t, importer.Auto, filepath.Join(tmp, "s"), fixtures+"codex/rollout-compacted.jsonl"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{killedCopy, killedZst, killedOut} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s: a killed import's temporary was left", filepath.Base(p))
		}
	}
	for _, p := range []string{running, young, other, link, filepath.Join(other, "0", "nodes.jsonl")} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: removed, but it is not a stale temporary of this output", filepath.Base(p))
		}
	}
}
