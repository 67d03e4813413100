// Command normalize writes one recorded Droid scenario as a committed
// fixture (docs/INTEROP-droid.md): the session file as Droid wrote it and
// the captured requests as requests.jsonl, with what differs from machine
// to machine made fixed the same way in both: the scenario's temporary
// path, the kernel name and the list of environment variable names Droid
// puts in its system information. A request keeps its messages; its
// system prompt and tool schemas, which the session does not record, are
// kept as their size and the tool names.
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
	"sort"
	"strings"
)

func main() {
	root := flag.String("root", "", "the scenario's directory (home/, requests/)")
	out := flag.String("out", "", "the fixture directory to write")
	flag.Parse()
	if err := run(*root, *out); err != nil {
		fmt.Fprintln(os.Stderr, "normalize:", err)
		os.Exit(1)
	}
}

var (
	envLine = regexp.MustCompile(`Env: [A-Za-z0-9_ ]*`)
	kernel  = regexp.MustCompile(`\(linux [^)]*\)`)
)

// titleCue is in the system prompt of Droid's request for a session's
// title (sent when it loads a session that has none): no turn of the
// conversation, so the oracle leaves it out.
const titleCue = "generates concise session titles"

func fix(root string, b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte(root), []byte("/tmp/ctxfold-droid"))
	b = envLine.ReplaceAll(b, []byte("Env: HOME PATH"))
	return kernel.ReplaceAll(b, []byte("(linux)"))
}

func run(root, out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	sessions, _ := filepath.Glob(filepath.Join(root, "home", ".factory", "sessions", "*", "*.jsonl"))
	if len(sessions) == 0 {
		return fmt.Errorf("no session file under %s", root)
	}
	for _, s := range sessions {
		data, err := os.ReadFile(s)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, filepath.Base(s)), fix(root, data), 0o644); err != nil {
			return err
		}
	}
	reqs, _ := filepath.Glob(filepath.Join(root, "requests", "request-*.json"))
	sort.Strings(reqs)
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	for i, r := range reqs {
		line, err := request(root, r, i+1)
		if err != nil {
			return err
		}
		w.Write(line)
		w.WriteByte('\n')
	}
	w.Flush()
	return os.WriteFile(filepath.Join(out, "requests.jsonl"), buf.Bytes(), 0o644)
}

// request is one captured body as a line: its messages without the system
// prompt, the prompt's size and the offered tools' names.
func request(root, path string, seq int) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var body struct {
		Model    string            `json:"model"`
		Messages []json.RawMessage `json:"messages"`
		Tools    []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(fix(root, data), &body); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	line := map[string]any{"seq": seq, "model": body.Model}
	var msgs []json.RawMessage
	for _, m := range body.Messages {
		var head struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		}
		if json.Unmarshal(m, &head) == nil && head.Role == "system" {
			line["system_chars"] = len(head.Content)
			if strings.Contains(head.Content, titleCue) {
				line["purpose"] = "title"
			}
			continue
		}
		msgs = append(msgs, m)
	}
	line["messages"] = msgs
	var tools []string
	for _, t := range body.Tools {
		tools = append(tools, t.Function.Name)
	}
	line["tools"] = tools
	return json.Marshal(line)
}
