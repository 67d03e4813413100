package input

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// utf8Reader passes multi-byte runes split by the underlying reads through
// untouched, and names line and byte of the first invalid one.
func TestUTF8Reader(t *testing.T) {
	valid := "{\"a\": \"→ naïve 日本語 🙂\",\n \"b\": \"ok\"}\n"
	u := &utf8Reader{r: iotest.OneByteReader(strings.NewReader(valid)), file: "f.json", line: 1}
	got, err := io.ReadAll(iotest.OneByteReader(u))
	if err != nil || string(got) != valid {
		t.Fatalf("valid input: %q, %v", got, err)
	}
	bad := "{\"a\": \"→\",\n \"b\": \"x\xffy\"}\n"
	u = &utf8Reader{r: iotest.HalfReader(strings.NewReader(bad)), file: "f.json", line: 1}
	_, err = io.ReadAll(u)
	if err == nil || err.Error() != "f.json:2: invalid UTF-8 at byte 9" {
		t.Fatalf("invalid input: %v", err)
	}
	// A rune cut by the end of the file is invalid too.
	u = &utf8Reader{r: strings.NewReader("\"\xe2\x86"), file: "f.json", line: 1}
	if _, err = io.ReadAll(u); err == nil || err.Error() != "f.json:1: invalid UTF-8 at byte 2" {
		t.Fatalf("cut rune: %v", err)
	}
}

// CheckUTF8 names the line and the byte within it.
func TestCheckUTF8(t *testing.T) {
	if err := CheckUTF8("f.json", []byte("{\"a\": \"→\"}\n")); err != nil {
		t.Fatal(err)
	}
	err := CheckUTF8("f.json", []byte("{\n \"a\": \"x\xffy\"}\n"))
	if err == nil || err.Error() != "f.json:2: invalid UTF-8 at byte 9" {
		t.Fatalf("got %v", err)
	}
}
