// Command normalize turns one recorded Gemini CLI scenario (its chats
// directory and the fake provider's request log) into the committed
// fixture: what changes from one recording to the next (the temporary
// directory, UUIDs, timestamps, call ids, process ids, today's date) is
// replaced by stable values, one mapping shared by every file of the
// scenario so an id means the same thing in the transcript and the
// requests; the system instruction and tool declarations, which the CLI
// sends with every request, are stored once under -blobs by content hash.
// The rules are listed in docs/INTEROP-gemini-cli.md.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

func main() {
	root := flag.String("root", "", "the recording's temporary directory (replaced by /tmp/ctxfold-interop)")
	chats := flag.String("chats", "", "the CLI's chats directory")
	reqs := flag.String("requests", "", "the fake provider's request log")
	out := flag.String("out", "", "the scenario's fixture directory")
	blobs := flag.String("blobs", "", "where shared system instructions and tool declarations go")
	checkpoints := flag.String("checkpoints", "", "the CLI's project directory, whose checkpoint-*.json (/chat save) are kept too")
	flag.StringVar(&clientDir, "client", "", "the CLI's installed package directory (replaced by "+clientPlaceholder+"): its built-in skills' paths are in the system prompt")
	flag.Parse()
	if err := run(*root, *chats, *reqs, *out, *blobs, *checkpoints); err != nil {
		fmt.Fprintln(os.Stderr, "normalize:", err)
		os.Exit(1)
	}
}

var (
	uuidRE  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timeRE  = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	hashRE  = regexp.MustCompile(`\b[0-9a-f]{64}\b`)
	msRE    = regexp.MustCompile(`_(1[7-9]\d{11})_`)
	pgidRE  = regexp.MustCompile(`PGID: \d+`)
	dateRE  = regexp.MustCompile(`Today's date is [^(\n]+\(`)
	fnameRE = regexp.MustCompile(`^session-\d{4}-\d\d-\d\dT\d\d-\d\d-([0-9a-f]{8})`)
)

type mapper struct {
	ids map[string]string
	n   int
}

func (m *mapper) id(kind, old string, format func(int) string) string {
	k := kind + old
	if v, ok := m.ids[k]; ok {
		return v
	}
	m.n++
	v := format(m.n)
	m.ids[k] = v
	return v
}

// clientDir is where the CLI is installed on this machine; the system
// prompt names its built-in skills by path, which the fixtures must not
// carry (docs/INTEROP-gemini-cli.md).
var clientDir string

const clientPlaceholder = "/interop/gemini-cli"

func (m *mapper) text(b []byte, root string) []byte {
	if clientDir != "" {
		b = bytes.ReplaceAll(b, []byte(clientDir), []byte(clientPlaceholder))
	}
	if root != "" {
		b = bytes.ReplaceAll(b, []byte(root), []byte("/tmp/ctxfold-interop"))
	}
	b = uuidRE.ReplaceAllFunc(b, func(u []byte) []byte {
		return []byte(m.id("uuid", string(u), func(n int) string { return fmt.Sprintf("%08d-0000-4000-8000-%012d", n, n) }))
	})
	b = hashRE.ReplaceAllFunc(b, func(h []byte) []byte {
		return []byte(m.id("hash", string(h), func(n int) string { return fmt.Sprintf("%064d", n) }))
	})
	b = msRE.ReplaceAllFunc(b, func(s []byte) []byte {
		return []byte("_" + m.id("ms", string(s), func(n int) string { return fmt.Sprintf("%013d", 1000000000000+n) }) + "_")
	})
	// One fixed time: records written in the same millisecond share a
	// timestamp in one recording and not in the next, so no mapping of
	// distinct values is stable.
	b = timeRE.ReplaceAll(b, []byte("2026-01-01T00:00:00.000Z"))
	b = pgidRE.ReplaceAll(b, []byte("PGID: 1000"))
	b = dateRE.ReplaceAll(b, []byte("Today's date is Thursday, January 1, 2026 ("))
	return b
}

func run(root, chats, reqs, out, blobs, checkpoints string) error {
	if chats == "" || out == "" {
		return fmt.Errorf("-chats and -out are required")
	}
	type file struct {
		rel  string
		data []byte
	}
	var files []file
	err := filepath.WalkDir(chats, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(chats, p)
		files = append(files, file{rel, data})
		return nil
	})
	if err != nil {
		return err
	}
	// Top-level files (the sessions) first, then sub-agent directories,
	// whose names are session ids and so sort differently every time:
	// UUIDs are numbered in this order.
	sort.Slice(files, func(i, j int) bool {
		di, dj := strings.Contains(files[i].rel, "/"), strings.Contains(files[j].rel, "/")
		if di != dj {
			return !di
		}
		return files[i].rel < files[j].rel
	})
	if checkpoints != "" {
		found, _ := filepath.Glob(filepath.Join(checkpoints, "checkpoint-*.json"))
		sort.Strings(found)
		for _, p := range found {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files = append(files, file{filepath.Join("..", "checkpoints", filepath.Base(p)), data})
		}
	}
	var reqData []byte
	if reqs != "" {
		if reqData, err = os.ReadFile(reqs); err != nil {
			return err
		}
	}
	m := &mapper{ids: map[string]string{}}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	sessions := 0
	for _, f := range files {
		data := m.text(f.data, root)
		dir, base := filepath.Split(f.rel)
		dir = string(m.text([]byte(dir), root))
		if sm := fnameRE.FindStringSubmatch(base); sm != nil {
			// The name holds the start minute and the session id's first
			// eight digits; two files of one session differ by minute only.
			full := ""
			for k, v := range m.ids {
				if strings.HasPrefix(k, "uuid"+sm[1]) {
					full = v
				}
			}
			if full == "" {
				full = m.id("uuid", sm[1], func(n int) string { return fmt.Sprintf("%08d", n) })
			}
			base = fmt.Sprintf("session-2026-01-01T00-%02d-%s%s", sessions, full[:8], base[len(sm[0]):])
			sessions++
		} else {
			base = string(m.text([]byte(base), root))
		}
		p := filepath.Join(out, "chats", dir, base)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	if reqs == "" {
		return nil
	}
	var buf bytes.Buffer
	for _, line := range bytes.Split(bytes.TrimSpace(m.text(reqData, root)), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r map[string]json.RawMessage
		if err := json.Unmarshal(line, &r); err != nil {
			return fmt.Errorf("%s: %v", reqs, err)
		}
		var body map[string]json.RawMessage
		if len(r["body"]) > 0 && json.Unmarshal(r["body"], &body) == nil {
			for _, key := range []string{"systemInstruction", "tools"} {
				if v, ok := body[key]; ok && blobs != "" {
					ref, err := blob(blobs, v)
					if err != nil {
						return err
					}
					body[key] = marshal(map[string]string{"$blob": ref})
				}
			}
			r["body"] = marshal(body)
		}
		buf.Write(marshal(r))
		buf.WriteByte('\n')
	}
	return os.WriteFile(filepath.Join(out, "requests.jsonl"), buf.Bytes(), 0o644)
}

// blob stores v (indented, so a new CLI version's change reads as a diff)
// under its content hash and returns the file's name.
func blob(dir string, v json.RawMessage) (string, error) {
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, v, "", " "); err != nil {
		return "", err
	}
	pretty.WriteByte('\n')
	sum := sha256.Sum256(pretty.Bytes())
	name := hex.EncodeToString(sum[:6]) + ".json"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return name, os.WriteFile(filepath.Join(dir, name), pretty.Bytes(), 0o644)
}

// marshal is json.Marshal without HTML escaping: the CLI's prompts are
// full of <tags> that should stay readable in a diff.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
