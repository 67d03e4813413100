// Command qwen-gen writes a large Qwen Code chat recording by replicating
// the records of a recorded one (the "turns" interop fixture by default),
// for the import benchmark (docs/BENCHMARKS.md). Every copy gets fresh
// uuids and call ids (the original's with the copy's number, so runs are
// reproducible) and its first record is chained after the previous copy's
// last, so the result imports as one long linear session.
//
//	go run ./bench/qwen-gen -mb 100 -o /tmp/qwen-big.jsonl
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

var (
	uuidRe = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	callRe = regexp.MustCompile(`call_fake_[0-9]+`)
)

func main() {
	src := flag.String("src", "", "a Qwen Code chat recording to replicate (default: the turns fixture)")
	mb := flag.Int("mb", 100, "size of the file to write, in MB (10^6 bytes)")
	out := flag.String("o", "", "the file to write")
	flag.Parse()
	if *src == "" {
		found, _ := filepath.Glob("testdata/interop/qwen-code/0.24.4/turns/chats/*.jsonl")
		if len(found) == 1 {
			*src = found[0]
		}
	}
	if err := run(*src, *out, int64(*mb)*1000*1000); err != nil {
		fmt.Fprintln(os.Stderr, "qwen-gen:", err)
		os.Exit(1)
	}
}

func run(src, out string, size int64) error {
	if src == "" || out == "" {
		return fmt.Errorf("-src (or the turns fixture under the working directory) and -o are required")
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	var first struct{ SessionID string }
	if err := json.Unmarshal(lines[0], &first); err != nil {
		return fmt.Errorf("%s: line 1: %v", src, err)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var written int64
	prev := ""
	for c := 0; written < size; c++ {
		rename := func(b []byte) []byte {
			if string(b) == first.SessionID {
				return b
			}
			return []byte(fmt.Sprintf("%s_%d", b, c))
		}
		for i, line := range lines {
			l := uuidRe.ReplaceAllFunc(line, rename)
			l = callRe.ReplaceAllFunc(l, func(b []byte) []byte { return []byte(fmt.Sprintf("%s_%d", b, c)) })
			if i == 0 && prev != "" {
				l = bytes.Replace(l, []byte(`"parentUuid":null`), []byte(`"parentUuid":"`+prev+`"`), 1)
			}
			n, _ := w.Write(l)
			w.WriteByte('\n')
			written += int64(n) + 1
		}
		var last struct{ UUID string }
		json.Unmarshal(uuidRe.ReplaceAllFunc(lines[len(lines)-1], rename), &last)
		prev = last.UUID
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}
