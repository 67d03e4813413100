package input_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

func compress(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	enc.Write(data)
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestSpoolDecompressesZstd(t *testing.T) {
	dir := t.TempDir()
	plain := []byte("{\"a\":1}\n{\"b\":2}\n")
	zst := filepath.Join(dir, "rollout-1.jsonl.zst")
	os.WriteFile(zst, compress(t, plain), 0o644)
	paths, names, cleanup, err := input.Spool([]string{zst}, dir)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(paths[0])
	// The importer sees the plain bytes under the plain name; errors name
	// the file the user gave.
	if !bytes.Equal(got, plain) || filepath.Base(paths[0]) != "rollout-1.jsonl" || names[paths[0]] != zst {
		t.Fatalf("read %q as %s (named %q)", got, paths[0], names[paths[0]])
	}
	cleanup()
	if _, err := os.Stat(filepath.Dir(paths[0])); !os.IsNotExist(err) {
		t.Errorf("temporary copy left behind: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left in %s: %v", dir, entries)
	}

	// A torn stream is a parse error naming the input, and leaves nothing.
	torn := filepath.Join(dir, "torn.jsonl.zst")
	full := compress(t, bytes.Repeat(plain, 1000))
	os.WriteFile(torn, full[:len(full)/2], 0o644)
	_, names, cleanup, err = input.Spool([]string{torn}, dir)
	err = input.RenameError(err, names)
	cleanup()
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || pe.File != torn || !strings.Contains(pe.Msg, "zstd") {
		t.Fatalf("torn stream: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("left in %s: %v", dir, entries)
	}
}

// FuzzZstd: any bytes after the zstd magic either decompress or fail with
// one *transcript.ParseError, never a panic.
func FuzzZstd(f *testing.F) {
	f.Add(compress(f, []byte("{\"a\":1}\n"))[4:])
	f.Add([]byte{0x28, 0xB5, 0x2F, 0xFD, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "f.jsonl.zst")
		os.WriteFile(path, append([]byte{0x28, 0xB5, 0x2F, 0xFD}, data...), 0o644)
		_, _, cleanup, err := input.Spool([]string{path}, dir)
		cleanup()
		var pe *transcript.ParseError
		if err != nil && (!errors.As(err, &pe) || strings.Contains(err.Error(), "\n")) {
			t.Fatalf("not one parse error line: %q", err)
		}
	})
}
