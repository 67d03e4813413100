// Command claudecode-gen writes a large Claude Code session .jsonl by
// replicating the turns of a real one, for the live-session benchmarks
// (docs/BENCHMARKS.md, "live sessions"). Every copy of a turn gets fresh
// uuids, message, request and tool-use ids (derived from the original and
// the copy's number, so runs are reproducible) and is chained after the
// previous turn, so the result imports as one long linear session.
//
//	go run ./bench/claudecode-gen -mb 100 -o /tmp/big.jsonl
//	go run ./bench/claudecode-gen -append 1 -o /tmp/big.jsonl   # one more turn
//	go run ./bench/claudecode-gen -mb 300 -compact-every 310000 -o /tmp/c.jsonl
//
// -compact-every N writes a compaction (a compact_boundary and its
// summary line, as Claude Code writes them) after the turn that brings the
// bytes since the last one to N: the long-running session of issue 44,
// whose summaries each cover every turn before them.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
)

var (
	uuidRe = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	idRe   = regexp.MustCompile(`\b(msg|req|toolu)_[A-Za-z0-9]+`)
)

func main() {
	src := flag.String("src", "", "a real Claude Code session whose turns are replicated (default: the shared d-kimuson transcript the benchmarks use, else a committed interop transcript)")
	mb := flag.Int("mb", 100, "size of the file to write, in MB (10^6 bytes)")
	out := flag.String("o", "", "the file to write (with -append: to extend)")
	appendN := flag.Int("append", 0, "append this many turns to -o instead of writing it anew")
	compactEvery := flag.Int64("compact-every", 0, "write a compaction after every this many bytes (0: none)")
	flag.Parse()
	if *src == "" {
		*src = defaultSource()
	}
	if err := run(*src, *out, *mb, *appendN, *compactEvery); err != nil {
		fmt.Fprintln(os.Stderr, "claudecode-gen:", err)
		os.Exit(1)
	}
}

type line struct {
	raw     []byte
	session string
}

// sharedSource is the real session docs/BENCHMARKS.md's figures replicate
// (/work/shared/fixtures/external, beside the repository); fallbackSource
// a committed interop transcript (testdata/interop), so the command runs
// in any clone (issue 44).
const (
	sharedSource   = "../shared/fixtures/external/claude-code/d-kimuson-claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
	fallbackSource = "testdata/interop/claude-code/2.1.332/parallel/transcript/00000000-0000-4000-8000-000000000001.jsonl"
)

// defaultSource is sharedSource when it exists, else fallbackSource (with
// a note: the figures of docs/BENCHMARKS.md were measured on the former),
// both relative to the repository root this file is in.
func defaultSource() string {
	root := "."
	if _, file, _, ok := runtime.Caller(0); ok {
		root = filepath.Join(filepath.Dir(file), "..", "..")
	}
	shared := filepath.Join(root, sharedSource)
	if _, err := os.Stat(shared); err == nil {
		return shared
	}
	fallback := filepath.Join(root, fallbackSource)
	fmt.Fprintf(os.Stderr, "claudecode-gen: the shared transcript %s is absent: replicating %s (give -src for another)\n", sharedSource, fallbackSource)
	return fallback
}

func run(src, out string, mb, appendN int, compactEvery int64) error {
	if out == "" {
		return errors.New("-o FILE is required")
	}
	turns, session, err := readTurns(src)
	if err != nil {
		return err
	}
	var f *os.File
	var parent string
	var k int
	if appendN > 0 {
		if parent, k, err = tail(out); err != nil {
			return err
		}
		f, err = os.OpenFile(out, os.O_WRONLY|os.O_APPEND, 0)
	} else {
		f, err = os.Create(out)
	}
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	written, since := int64(0), int64(0)
	for n := 0; ; n++ {
		if compactEvery > 0 && since >= compactEvery && parent != "" {
			b, last, err := compaction(session, parent, k+n)
			if err != nil {
				return err
			}
			nb, err := w.Write(b)
			written += int64(nb)
			if err != nil {
				return err
			}
			parent, since = last, 0
		}
		if appendN > 0 && n >= appendN {
			break
		}
		if appendN == 0 && written >= int64(mb)*1_000_000 {
			break
		}
		turn := turns[(k+n)%len(turns)]
		for i, l := range turn {
			b := rewrite(l.raw, session, k+n)
			if i == 0 {
				if b, err = setParent(b, parent); err != nil {
					return err
				}
			}
			if u := uuidOf(b); u != "" {
				parent = u
			}
			nb, err := w.Write(append(b, '\n'))
			written += int64(nb)
			since += int64(nb)
			if err != nil {
				return err
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// compaction is Claude Code's record of a compaction after parent: a
// compact_boundary that starts a new chain (parentUuid null, its
// logicalParentUuid naming parent) and the summary line after it. It
// returns the lines and the summary's uuid, which the next turn follows.
func compaction(session, parent string, k int) ([]byte, string, error) {
	h := derive([]byte("compaction/"+parent), k)
	uuid := func(h string) string {
		return fmt.Sprintf("%s-%s-4%s-8%s-%s", h[0:8], h[8:12], h[13:16], h[17:20], h[20:32])
	}
	boundary, summary := uuid(h), uuid(derive([]byte(h), k))
	base := func(typ, id string, parent any) map[string]any {
		return map[string]any{"parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": "/work/app",
			"sessionId": session, "version": "2.1.30", "type": typ, "uuid": id, "timestamp": "2026-11-30T12:00:00.000Z"}
	}
	b := base("system", boundary, nil)
	b["logicalParentUuid"], b["subtype"], b["content"], b["isMeta"], b["level"] = parent, "compact_boundary", "Conversation compacted", false, "info"
	b["compactMetadata"] = map[string]any{"trigger": "auto", "preTokens": 150000}
	sl := base("user", summary, boundary)
	sl["isVisibleInTranscriptOnly"], sl["isCompactSummary"] = true, true
	sl["message"] = map[string]any{"role": "user", "content": fmt.Sprintf("This session is being continued from a previous conversation (compaction %d). Summary: the work so far.", k)}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, m := range []map[string]any{b, sl} {
		if err := enc.Encode(m); err != nil {
			return nil, "", err
		}
	}
	return buf.Bytes(), summary, nil
}

// readTurns splits the source into turns: each starts at a main-chain
// user line whose content is the person's text (not a tool result).
func readTurns(path string) ([][]line, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var turns [][]line
	session := ""
	for sc.Scan() {
		b := bytes.Clone(sc.Bytes())
		var rec struct {
			Type        string `json:"type"`
			SessionID   string `json:"sessionId"`
			IsSidechain bool   `json:"isSidechain"`
			Message     struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(b, &rec) != nil {
			continue
		}
		if session == "" {
			session = rec.SessionID
		}
		// A sub-agent's prompt (isSidechain) belongs to the turn that
		// spawned it.
		start := rec.Type == "user" && !rec.IsSidechain && len(rec.Message.Content) > 0 && rec.Message.Content[0] == '"'
		if start || len(turns) == 0 {
			turns = append(turns, nil)
		}
		turns[len(turns)-1] = append(turns[len(turns)-1], line{raw: b})
	}
	if err := sc.Err(); err != nil {
		return nil, "", err
	}
	if len(turns) == 0 {
		return nil, "", fmt.Errorf("%s: no turns", path)
	}
	return turns, session, nil
}

// rewrite gives every id of b but the session's its copy-k variant.
func rewrite(b []byte, session string, k int) []byte {
	b = uuidRe.ReplaceAllFunc(b, func(id []byte) []byte {
		if string(id) == session {
			return id
		}
		h := derive(id, k)
		return []byte(fmt.Sprintf("%s-%s-4%s-8%s-%s", h[0:8], h[8:12], h[13:16], h[17:20], h[20:32]))
	})
	return idRe.ReplaceAllFunc(b, func(id []byte) []byte {
		p := bytes.IndexByte(id, '_')
		return []byte(string(id[:p+1]) + "gen" + derive(id, k)[:24])
	})
}

func derive(id []byte, k int) string {
	s := sha256.Sum256(fmt.Appendf(nil, "%s/%d", id, k))
	return hex.EncodeToString(s[:])
}

// setParent chains a turn's first line after parent ("" keeps it a root).
func setParent(b []byte, parent string) ([]byte, error) {
	if parent == "" {
		return b, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	p, _ := json.Marshal(parent)
	m["parentUuid"] = p
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func uuidOf(b []byte) string {
	var rec struct {
		UUID string `json:"uuid"`
	}
	_ = json.Unmarshal(b, &rec)
	return rec.UUID
}

// tail is the last uuid of the file and a copy number no earlier run used
// (its size: every run adds bytes).
func tail(path string) (string, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	off := max(0, st.Size()-8<<20)
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return "", 0, err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return "", 0, err
	}
	last := ""
	for _, l := range bytes.Split(b, []byte("\n")) {
		if u := uuidOf(l); u != "" {
			last = u
		}
	}
	if last == "" && st.Size() > 8<<20 {
		return "", 0, fmt.Errorf("%s: no uuid in its last 8 MB", path)
	}
	return last, int(st.Size()), nil
}
