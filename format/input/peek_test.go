package input

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPeekHeadAndTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	body := `{"cwd":"/home/me/a","model":"m1"}` + "\n" + strings.Repeat(`{"x":1}`+"\n", 100) + `{"model":"<synthetic>"}` + "\n" + `{"model":"m\"2"}` + "\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	head, tail, fi, err := Peek(path, 64)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != int64(len(body)) || len(head) != 64 || len(tail) != 64 || !strings.HasSuffix(body, string(tail)) {
		t.Fatalf("head %q tail %q size %d", head, tail, fi.Size())
	}
	if got := FirstString(head, "cwd", nil); got != "/home/me/a" {
		t.Errorf("cwd = %q", got)
	}
	if got := LastString(tail, "model", nil); got != `m"2` {
		t.Errorf("last model = %q", got)
	}
	notSynthetic := func(s string) bool { return !strings.HasPrefix(s, "<") }
	if got := LastString([]byte(`{"model":"a"} {"model":"<synthetic>"}`), "model", notSynthetic); got != "a" {
		t.Errorf("filtered last model = %q", got)
	}
	if got := FirstString([]byte(`{"model": 3, "model" : "b"}`), "model", nil); got != "b" {
		t.Errorf("first string model = %q", got)
	}
	// A short file is its own head and tail.
	short := filepath.Join(t.TempDir(), "short")
	_ = os.WriteFile(short, []byte(`{"a":"b"}`), 0o600)
	if h, tl, _, _ := Peek(short, 64); string(h) != string(tl) || string(h) != `{"a":"b"}` {
		t.Errorf("short: %q %q", h, tl)
	}
}

// EachLineWith hands over only the lines holding a marker, in order, and
// reads nothing through a symlink; ReadHead reads at most n bytes, and
// nothing through a symlink either.
func TestEachLineWithAndReadHead(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(file, []byte("{\"k\":\"one\"}\n{\"x\":1}\n\n{\"k\":\"two\",\"m\":true}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	var got []string
	EachLineWith(file, []string{`"k"`, `"m"`}, func(line []byte) { got = append(got, string(line)) })
	if want := []string{`{"k":"one"}`, `{"k":"two","m":true}`}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines %q, want %q", got, want)
	}
	got = nil
	EachLineWith(link, []string{`"k"`}, func(line []byte) { got = append(got, string(line)) })
	if len(got) != 0 {
		t.Errorf("read %q through a symlink", got)
	}
	if head, err := ReadHead(file, 5); err != nil || string(head) != `{"k":` {
		t.Errorf("ReadHead: %q, %v", head, err)
	}
	if head, err := ReadHead(link, 5); err == nil {
		t.Errorf("ReadHead read %q through a symlink", head)
	}
}
