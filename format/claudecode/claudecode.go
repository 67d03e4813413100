package claudecode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// Options tune an import.
type Options struct {
	// MaxLineBytes bounds one input line; 0 means
	// transcript.DefaultMaxLineBytes. A longer line is a
	// *transcript.ParseError, never an out-of-memory.
	MaxLineBytes int
	// Resume, when set, makes the import resumable (resume.go).
	Resume *Resume
}

func (o Options) max() int {
	if o.MaxLineBytes <= 0 {
		return transcript.DefaultMaxLineBytes
	}
	return o.MaxLineBytes
}

// Detect reports whether head (the first bytes of a file; a cut last line
// is fine) looks like a Claude Code session or sub-agent file: one of its
// first complete lines is a JSON object with Claude Code's parentUuid
// field, or one of its bookkeeping records (file-history-snapshot and
// -delta, a summary with leafUuid, sessionRecords).
func Detect(head []byte) bool {
	lines := bytes.Split(head, []byte("\n"))
	if len(lines) == 1 && !json.Valid(bytes.TrimSpace(head)) {
		// A first line longer than head: Claude Code writes parentUuid
		// first in conversation records.
		h := bytes.TrimSpace(head)
		return bytes.HasPrefix(h, []byte(`{"parentUuid":`)) && bytes.Contains(h, []byte(`"sessionId":`))
	}
	for i, line := range lines {
		if i >= 50 {
			break
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(line, &m) != nil {
			continue // a line cut by the end of head
		}
		var typ string
		_ = json.Unmarshal(m["type"], &typ)
		_, hasParent := m["parentUuid"]
		_, hasUUID := m["uuid"]
		_, hasSession := m["sessionId"]
		switch {
		case hasParent && (hasUUID || hasSession):
			return true
		case typ == "file-history-snapshot" && m["snapshot"] != nil:
			return true
		case typ == "summary" && m["leafUuid"] != nil:
			return true
		case sessionRecords[typ] && hasSession:
			// Claude Code 2.1.3xx opens a forked or resumed session with
			// its mode and latch records, before any message; 2.1.2xx
			// leaves files of its title records alone.
			return true
		case typ == "file-history-delta":
			return true
		}
	}
	return false
}

// sessionRecords are the types of Claude Code's bookkeeping records that
// name their session (sessionId) and are no message: the first lines of a
// forked or resumed session, and the whole of a file Claude Code 2.1.2xx
// left with only a title (ai-title, agent-name).
var sessionRecords = map[string]bool{
	"queue-operation": true, "mode": true, "permission-mode": true, "atis-latch": true,
	"ai-title": true, "agent-name": true, "custom-title": true, "last-prompt": true,
	"bridge-session": true, "pr-link": true, "frame-link": true,
}

// conversation is one session file and the sidechain files that belong
// to it.
type conversation struct {
	name   string
	main   string   // "" when only sub-agent files were given
	agents []string // sub-agent files, in a stable order
}

// Import reads Claude Code files and hands each session to target: one
// conversation per session file, with the sub-agent files given beside it
// (agent-*.jsonl, <session>/subagents/*.jsonl) and those found in the
// same two places (and nowhere else) attached to it. Sub-agent files
// whose session is not among files form a conversation of their own.
func Import(ctx context.Context, files []string, opts Options, target transcript.ImportTarget) error {
	// The import reads each file twice (its first lines to group it, then
	// the plan and the nodes by offset), so a pipe is copied first.
	files, names, cleanup, err := input.Spool(files, "")
	defer cleanup()
	if err != nil {
		return err
	}
	convs, err := group(files, opts, names)
	if err != nil {
		return input.RenameError(err, names)
	}
	if opts.Resume != nil && opts.Resume.State != nil && (len(convs) != 1 || len(files) != 1) {
		return ErrCannotResume
	}
	for _, c := range convs {
		if err := ctx.Err(); err != nil {
			return err
		}
		sink, err := target.Conversation(c.name)
		if err != nil {
			return err
		}
		if opts.Resume != nil {
			err = runResumable(ctx, c, sink, opts, names)
		} else {
			p := newPlanner(ctx, sink, opts, names)
			err = p.run(c)
			p.close()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fileInfo is what the first lines of a file say about it.
type fileInfo struct {
	path      string
	sessionID string
	agent     bool
}

// peek reads the first lines of path for its session id and whether it
// is a sub-agent file (named agent-*.jsonl, or whose lines carry an
// agentId and isSidechain).
func peek(path string, opts Options) (fileInfo, error) {
	info := fileInfo{path: path, agent: strings.HasPrefix(filepath.Base(path), "agent-")}
	f, err := os.Open(path)
	if err != nil {
		return info, &transcript.ParseError{File: path, Msg: err.Error()}
	}
	defer f.Close()
	lr := newLineReader(f, path, opts.max())
	for i := 0; i < 20; i++ {
		body, _, _, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return info, err
		}
		var h struct {
			SessionID   string `json:"sessionId"`
			AgentID     string `json:"agentId"`
			IsSidechain bool   `json:"isSidechain"`
		}
		if json.Unmarshal(body, &h) != nil {
			continue // reported with its line by the import itself
		}
		if info.sessionID == "" {
			info.sessionID = h.SessionID
		}
		if h.AgentID != "" && h.IsSidechain {
			info.agent = true
		}
		if info.sessionID != "" {
			break
		}
	}
	return info, nil
}

// group sorts files into conversations and discovers sidechain files
// beside each session file (not beside a spooled copy of a pipe: it has
// no directory of its own).
func group(files []string, opts Options, spooled map[string]string) ([]*conversation, error) {
	var mains, agents []fileInfo
	seen := map[string]bool{}
	for _, path := range files {
		key := cleanKey(path)
		if seen[key] {
			continue
		}
		seen[key] = true
		info, err := peek(path, opts)
		if err != nil {
			return nil, err
		}
		if info.agent {
			agents = append(agents, info)
		} else {
			mains = append(mains, info)
		}
	}
	var convs []*conversation
	bySession := map[string]*conversation{}
	names := map[string]int{}
	newConv := func(id, path string) *conversation {
		name := Sanitize(id)
		if id == "" {
			name = Sanitize(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
		}
		names[name]++
		if k := names[name]; k > 1 {
			name = fmt.Sprintf("%s-%d", name, k)
		}
		c := &conversation{name: name}
		convs = append(convs, c)
		return c
	}
	for _, m := range mains {
		c := newConv(m.sessionID, m.path)
		c.main = m.path
		if m.sessionID != "" && bySession[m.sessionID] == nil {
			bySession[m.sessionID] = c
		}
		if spooled[m.path] != "" {
			continue
		}
		found, err := discover(m, opts)
		if err != nil {
			return nil, err
		}
		for _, a := range found {
			if key := cleanKey(a); !seen[key] {
				seen[key] = true
				c.agents = append(c.agents, a)
			}
		}
	}
	for _, a := range agents {
		c := bySession[a.sessionID]
		if c == nil || a.sessionID == "" {
			c = newConv(a.sessionID, a.path)
			if a.sessionID != "" {
				bySession[a.sessionID] = c
			}
		}
		c.agents = append(c.agents, a.path)
	}
	return convs, nil
}

// discover returns the sidechain files of a session file: agent-*.jsonl in
// its directory whose sessionId is the session's, and every
// agent-*.jsonl in <dir>/<session file name>/subagents/. Only regular
// files count (a symlink could point anywhere), and the folder name comes
// from the session file's own name, never from its content.
func discover(m fileInfo, opts Options) ([]string, error) {
	dir := filepath.Dir(m.path)
	var out []string
	if m.sessionID != "" {
		same, _ := filepath.Glob(filepath.Join(dir, "agent-*.jsonl"))
		sort.Strings(same)
		for _, p := range same {
			if !regular(p) {
				continue
			}
			info, err := peek(p, opts)
			if err != nil {
				return nil, err
			}
			if info.sessionID == m.sessionID {
				out = append(out, p)
			}
		}
	}
	base := strings.TrimSuffix(filepath.Base(m.path), ".jsonl")
	sub := filepath.Join(dir, base, "subagents")
	if st, err := os.Lstat(sub); err == nil && st.IsDir() && base != "" && base != "." && base != ".." {
		found, _ := filepath.Glob(filepath.Join(sub, "agent-*.jsonl"))
		sort.Strings(found)
		for _, p := range found {
			if regular(p) {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

func regular(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode().IsRegular()
}

func cleanKey(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}

// Sanitize turns a session id into a name safe for a directory: letters,
// digits, '-', '_' and '.' only, no leading dot and no "..", at most 100
// bytes, "session" when nothing is left.
func Sanitize(id string) string {
	var b strings.Builder
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 100 {
			break
		}
	}
	s := strings.TrimLeft(b.String(), ".")
	for strings.Contains(s, "..") {
		s = strings.ReplaceAll(s, "..", "._")
	}
	if len(s) > 100 {
		s = s[:100]
	}
	if strings.Trim(s, "_") == "" {
		return "session"
	}
	return s
}

// lineReader reads JSONL lines with their byte offsets, refusing a line
// longer than max before buffering more than max bytes of it.
type lineReader struct {
	br   *bufio.Reader
	file string
	max  int
	line int
	off  int64
}

func newLineReader(r io.Reader, file string, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 1<<16), file: file, max: max}
}

// next returns the next line without its newline (blank lines included,
// as empty bodies), the offset where it starts, and whether a newline
// ended it.
func (r *lineReader) next() (body []byte, off int64, complete bool, err error) {
	off = r.off
	var out []byte
	for {
		chunk, rerr := r.br.ReadSlice('\n')
		if len(out)+len(chunk) > r.max+1 {
			r.line++
			return nil, off, false, &transcript.ParseError{File: r.file, Line: r.line,
				Msg: fmt.Sprintf("line is longer than the %d-byte limit (raise it with --max-line-bytes)", r.max)}
		}
		out = append(out, chunk...)
		if rerr == bufio.ErrBufferFull {
			continue
		}
		if rerr != nil && rerr != io.EOF {
			return nil, off, false, &transcript.ParseError{File: r.file, Line: r.line + 1, Msg: "read: " + rerr.Error()}
		}
		if len(out) == 0 && rerr == io.EOF {
			return nil, off, false, io.EOF
		}
		r.line++
		r.off += int64(len(out))
		complete = len(out) > 0 && out[len(out)-1] == '\n'
		out = bytes.TrimSuffix(out, []byte("\n"))
		out = bytes.TrimSuffix(out, []byte("\r"))
		return out, off, complete, nil
	}
}
