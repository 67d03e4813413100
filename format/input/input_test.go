package input_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

func TestLines(t *testing.T) {
	l := input.NewLines(strings.NewReader("{\"a\":1}\n\n  \n{\"b\":2}\n{\"c\""), "f.jsonl", input.Options{})
	var got []string
	for {
		line, err := l.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d:%s:%v", l.Line, line, l.Unterminated))
	}
	if strings.Join(got, " ") != `1:{"a":1}:false 4:{"b":2}:false 5:{"c":true` {
		t.Fatalf("%v", got)
	}
	l = input.NewLines(strings.NewReader("ok\n"+strings.Repeat("x", 300)+"\n"), "f.jsonl", input.Options{MaxLineBytes: 100})
	l.Next()
	_, err := l.Next()
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || pe.Line != 2 || !strings.Contains(pe.Msg, "100-byte limit") {
		t.Fatalf("err %v", err)
	}
	l = input.NewLines(strings.NewReader("\xff\xfe\n"), "f.jsonl", input.Options{})
	if _, err := l.Next(); !errors.As(err, &pe) || !strings.Contains(pe.Msg, "UTF-8") {
		t.Fatalf("err %v", err)
	}
}

func TestDocLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.json")
	os.WriteFile(path, []byte("\xef\xbb\xbf[\n {\"a\": 1},\n\n {\"a\": \"x\"}\n]\n"), 0o644)
	d, err := input.OpenDoc(path, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	err = d.Each("records", func(i int) error {
		var v struct {
			A int `json:"a"`
		}
		return d.Value(&v, "a record")
	})
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || pe.Line != 4 || !strings.Contains(pe.Msg, `field "a": got a JSON string, expected a number`) {
		t.Fatalf("err %v", err)
	}
}

func TestImageNeverHoldsBytes(t *testing.T) {
	b := input.Image("data:image/png;base64,iVBORw0KGgo=", "", "")
	if b.MediaType != "image/png" || !strings.HasPrefix(b.Source, "sha256:") || string(b.Extra["bytes"]) != "8" {
		t.Fatalf("%+v", b)
	}
	if b := input.Image("https://example.invalid/a.png", "", ""); b.Source != "https://example.invalid/a.png" {
		t.Fatalf("%+v", b)
	}
}

func ExampleLines() {
	l := input.NewLines(strings.NewReader("{\"type\":\"a\"}\n\n{\"type\":\"b\"}\n"), "x.jsonl", input.Options{MaxLineBytes: 1 << 20})
	for {
		line, err := l.Next()
		if err != nil {
			break
		}
		fmt.Printf("%s:%d %s\n", l.File, l.Line, line)
	}
	// Output:
	// x.jsonl:1 {"type":"a"}
	// x.jsonl:3 {"type":"b"}
}
