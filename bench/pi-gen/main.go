// Command pi-gen writes a large pi session .jsonl by replicating the
// message entries of a recorded one, for the import benchmark
// (docs/BENCHMARKS.md): the header and the first entries once, then copies
// of the turns, each entry with a fresh id (the original's and the copy's
// number), tool-call ids renamed alike, chained after the previous copy, so
// the result imports as one long linear session.
//
//	go run ./bench/pi-gen -mb 100 -o /tmp/pi-100mb.jsonl
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
)

var callRe = regexp.MustCompile(`call_fake_[0-9]+`)

func main() {
	src := flag.String("src", "testdata/interop/pi/0.73.1/tool/session.jsonl", "a pi session whose message entries are replicated")
	mb := flag.Int("mb", 100, "size of the file to write, in MB (10^6 bytes)")
	out := flag.String("o", "", "the file to write")
	flag.Parse()
	if err := run(*src, *out, int64(*mb)*1000000); err != nil {
		fmt.Fprintln(os.Stderr, "pi-gen:", err)
		os.Exit(1)
	}
}

type entry struct {
	Type     string  `json:"type"`
	ID       string  `json:"id"`
	ParentID *string `json:"parentId"`
}

func run(src, out string, size int64) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if out == "" {
		return fmt.Errorf("-o is required")
	}
	var head, turns [][]byte
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var e entry
		if err := json.Unmarshal(line, &e); err != nil {
			return err
		}
		if e.Type == "message" || len(head) > 0 && len(turns) > 0 {
			turns = append(turns, line)
		} else {
			head = append(head, line)
		}
	}
	if len(turns) == 0 {
		return fmt.Errorf("%s: no message entries", src)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var written int64
	for _, line := range head {
		n, _ := w.Write(append(line, '\n'))
		written += int64(n)
	}
	var last string
	if len(head) > 0 {
		var e entry
		_ = json.Unmarshal(head[len(head)-1], &e)
		last = e.ID
	}
	for c := 0; written < size; c++ {
		for i, line := range turns {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(line, &m); err != nil {
				return err
			}
			id := fmt.Sprintf("%08x", c*len(turns)+i)
			m["id"], _ = json.Marshal(id)
			m["parentId"], _ = json.Marshal(last)
			if last == "" {
				m["parentId"] = json.RawMessage("null")
			}
			last = id
			b, err := json.Marshal(m)
			if err != nil {
				return err
			}
			b = callRe.ReplaceAll(b, []byte(fmt.Sprintf("call_%d_$0", c)))
			n, err := w.Write(append(b, '\n'))
			if err != nil {
				return err
			}
			written += int64(n)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}
