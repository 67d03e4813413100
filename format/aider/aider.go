// Package aider imports an aider chat history (.aider.chat.history.md), the
// Markdown log aider's InputOutput appends to: a "# aider chat started at
// …" line opens each session, "#### " lines are what the user typed, "> "
// lines are aider's own tool output (file adds, edits applied, lint and
// test output, the "Tokens: … sent, … received" report), and everything
// else is the assistant's reply. Lines are split into messages the way
// aider's own split_chat_history_markdown does, so a session imports as
// the chat aider itself would restore.
//
// Each session is one conversation (one session directory); Options.Session
// picks one. Tool output never reaches the model, so it is not a node: its
// lines are kept in the metadata of the turn they follow, and a Tokens line
// becomes the usage of the assistant turn before it. It only reads the
// file and hands nodes to a transcript.ImportSink.
package aider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// Options tune the import.
type Options = input.Options

// header opens a session (aider/io.py: "\n# aider chat started at
// {YYYY-mm-dd HH:MM:SS}\n\n").
const header = "# aider chat started at "

// Detect reports whether head is an aider chat history: a session header
// at the start of a line.
func Detect(head []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(head, "\r\n"), []byte(header)) || bytes.Contains(head, []byte("\n"+header))
}

// Near explains why head, which is not detected, looks like an aider chat
// history ("" when it does not): user lines without a session header.
func Near(head []byte) string {
	if Detect(head) {
		return ""
	}
	if bytes.HasPrefix(head, []byte("#### ")) || bytes.Contains(head, []byte("\n#### ")) {
		return `looks like an aider chat history ("#### " user lines) but has no "# aider chat started at" line; name it with --from aider to read it as one session`
	}
	return ""
}

var (
	tokensRe = regexp.MustCompile(`^Tokens: (.*?)\.?(?:\s+Cost:.*)?$`)
	countRe  = regexp.MustCompile(`^([0-9][0-9,]*(?:\.[0-9]+)?)(k?) (sent|cache write|cache hit|received)$`)
	modelRe  = regexp.MustCompile(`^(?:Main model|Models?): (\S+)`)
)

// Import reads each file; every session in it is one conversation.
func Import(ctx context.Context, files []string, opts Options, target transcript.ImportTarget) error {
	for _, file := range files {
		if err := importFile(ctx, file, opts, target); err != nil {
			return err
		}
	}
	return nil
}

// role of a run of lines, as split_chat_history_markdown assigns it.
type role int

const (
	none role = iota
	user
	assistant
	tool
)

type state struct {
	file   string
	opts   Options
	target transcript.ImportTarget
	// counter numbers sessions in file order; cur is the session being read.
	counter int
	cur     *session
	found   bool
	// last is the latest sink opened; deferred holds counts made before
	// any sink existed (a session of tool output only), handed to the
	// next sink opened, or to last at the end.
	last     transcript.ImportSink
	deferred [][3]string
	// run is the message being gathered, begun at line start.
	run   role
	lines []string
	start int
	// prevTool is true when the line before was tool output; cont while
	// the lines are the rest of a multi-line tool message.
	prevTool, cont bool
}

type session struct {
	num     int
	started string
	sink    transcript.ImportSink
	// pending is the last message, held back so the tool output and the
	// Tokens line after it can still be attached.
	pending *transcript.Node
	prev    string
	k       int
	// before is tool output ahead of the session's first message.
	before []string
}

func importFile(ctx context.Context, file string, opts Options, target transcript.ImportTarget) error {
	f, err := os.Open(file)
	if err != nil {
		return &transcript.ParseError{File: file, Msg: err.Error(), Err: err}
	}
	defer f.Close()
	st := &state{file: file, opts: opts, target: target}
	st.cur = &session{}
	lines := input.NewRawLines(f, file, opts)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := lines.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		line := string(b)
		wasTool := st.prevTool
		st.prevTool = false
		if st.cur.num == 0 && strings.TrimSpace(line) != "" && !strings.HasPrefix(line, header) {
			// Text ahead of the first header (a file without one, or one
			// whose start was cut) is a session of its own.
			st.counter++
			st.cur.num = st.counter
		}
		switch {
		case strings.HasPrefix(line, header):
			st.cont = false
			if err := st.endSession(); err != nil {
				return err
			}
			st.counter++
			st.cur = &session{num: st.counter, started: strings.TrimSpace(strings.TrimPrefix(line, header))}
		case strings.HasPrefix(line, "> "):
			if err := st.to(tool, lines.Line); err != nil {
				return err
			}
			st.lines = append(st.lines, strings.TrimRight(line[2:], " "))
			st.prevTool, st.cont = true, false
		case strings.HasPrefix(line, "#### "):
			st.cont = false
			if err := st.to(user, lines.Line); err != nil {
				return err
			}
			// A multi-line input is logged one "#### " line each, joined
			// by Markdown hard breaks (two trailing spaces).
			st.lines = append(st.lines, strings.TrimSuffix(line[5:], "  "))
		case st.run == tool && (st.cont || wasTool && strings.TrimSpace(line) != ""):
			// aider's tool_output prefixes only the first line of a
			// multi-line message: the lines right after it (no blank line
			// between, which an assistant reply always has) are its rest.
			st.lines = append(st.lines, strings.TrimRight(line, " "))
			st.cont, st.prevTool = true, true
		default:
			if err := st.to(assistant, lines.Line); err != nil {
				return err
			}
			st.lines = append(st.lines, line)
		}
	}
	if err := st.endSession(); err != nil {
		return err
	}
	if st.last != nil {
		for _, c := range st.deferred {
			st.last.Count(c[0], c[1], c[2])
		}
	}
	if opts.Session > st.counter {
		return input.Errorf(file, 0, "--session %d: the chat history holds %d session(s)", opts.Session, st.counter)
	}
	if !st.found && opts.Session == 0 {
		return input.Errorf(file, 1, "no chat message (\"#### \" user lines or assistant text) in the aider chat history")
	}
	return nil
}

// to ends the run in hand when the next line belongs to another role.
func (st *state) to(r role, line int) error {
	if st.run == r {
		return nil
	}
	err := st.endRun()
	st.run, st.start = r, line
	return err
}

func (st *state) endRun() error {
	r, lines, start := st.run, st.lines, st.start
	st.run, st.lines = none, nil
	if r == none || !st.wanted() {
		return nil
	}
	s := st.cur
	switch r {
	case tool:
		return st.toolOutput(lines)
	case user, assistant:
		text := strings.Join(lines, "\n")
		if r == assistant {
			text = strings.TrimSpace(text)
		} else {
			text = strings.TrimRight(text, " \n")
		}
		if r == assistant && text == "" {
			return nil // blank lines between blocks
		}
		if err := st.flushPending(); err != nil {
			return err
		}
		if s.sink == nil {
			if err := st.open(); err != nil {
				return err
			}
		}
		s.k++
		n := transcript.Node{ID: fmt.Sprintf("s%d-%d", s.num, s.k), Predecessor: s.prev, Content: transcript.TextContent(text)}
		kind := "user"
		if r == user {
			n.Role = transcript.RoleUser
		} else {
			n.Role = transcript.RoleAssistant
			kind = "assistant"
		}
		n.SetMeta("aider_line", start)
		if s.k == 1 {
			if s.started != "" {
				n.SetMeta("aider_chat_started", s.started)
			}
			if len(s.before) > 0 {
				n.SetMeta("aider_tool_output_before", strings.Join(s.before, "\n"))
				s.before = nil
			}
		}
		s.sink.Count(kind, transcript.OutcomeImported, "")
		s.pending = &n
	}
	return nil
}

// wanted reports whether the session in hand is imported (--session).
func (st *state) wanted() bool {
	return st.opts.Session == 0 || st.opts.Session == st.cur.num
}

func (st *state) open() error {
	s := st.cur
	name := fmt.Sprintf("aider-session-%d", s.num)
	if s.started != "" {
		name = "aider-" + strings.NewReplacer(" ", "T", ":", "-").Replace(s.started)
	}
	sink, err := st.target.Conversation(name)
	if err != nil {
		return err
	}
	s.sink = sink
	st.found = true
	st.last = sink
	for _, c := range st.deferred {
		sink.Count(c[0], c[1], c[2])
	}
	st.deferred = nil
	sink.Count("session", transcript.OutcomeImported, "")
	for _, l := range s.before {
		if m := modelRe.FindStringSubmatch(l); m != nil {
			sink.SetModel(m[1])
		}
		sink.Count("tool output", transcript.OutcomeMerged, "kept in the metadata of the session's first turn (aider shows it, never sends it to the model)")
	}
	return nil
}

// toolOutput attaches aider's tool output to the turn it follows: the
// Tokens report as that turn's usage, the rest kept in its metadata.
func (st *state) toolOutput(lines []string) error {
	s := st.cur
	if s.pending == nil {
		// Ahead of the session's first message (aider's banner): counted
		// once it is known whether a message follows.
		s.before = append(s.before, lines...)
		return nil
	}
	var kept []string
	for _, l := range lines {
		if m := modelRe.FindStringSubmatch(l); m != nil && s.sink != nil {
			s.sink.SetModel(m[1])
		}
		if u, ok := parseTokens(l); ok {
			if p := s.pending; p != nil && p.Role == transcript.RoleAssistant && p.Usage == nil {
				p.Usage = u
				st.count("tool output/tokens", transcript.OutcomeMerged, "usage of the assistant turn before it")
				kept = append(kept, l)
				continue
			}
			st.count("tool output/tokens", transcript.OutcomeMerged, "no assistant turn of its own before it: kept as tool output")
		} else {
			st.count("tool output", transcript.OutcomeMerged, "kept in the metadata of the turn before it (aider shows it, never sends it to the model)")
		}
		kept = append(kept, l)
	}
	var prior string
	if raw, ok := s.pending.Metadata["aider_tool_output"]; ok {
		prior = input.Text(raw) + "\n"
	}
	s.pending.SetMeta("aider_tool_output", prior+strings.Join(kept, "\n"))
	return nil
}

// count tallies a record that may come before any sink exists (tool
// output ahead of a session's first message).
func (st *state) count(record, outcome, reason string) {
	if s := st.cur; s.sink != nil {
		s.sink.Count(record, outcome, reason)
		return
	}
	st.deferred = append(st.deferred, [3]string{record, outcome, reason})
}

func (st *state) flushPending() error {
	s := st.cur
	if s.pending == nil {
		return nil
	}
	n := *s.pending
	s.pending = nil
	if err := s.sink.Node(n); err != nil {
		return err
	}
	s.prev = n.ID
	return nil
}

func (st *state) endSession() error {
	if err := st.endRun(); err != nil {
		return err
	}
	s := st.cur
	if s.sink != nil {
		return st.flushPending()
	}
	if s.num > 0 && st.wanted() {
		// aider started and quit: its banner is not a conversation.
		st.count("session", transcript.OutcomeSkipped, "no message, only aider's tool output (started and quit)")
		for range s.before {
			st.count("tool output", transcript.OutcomeSkipped, "in a session without a message")
		}
	}
	return nil
}

// parseTokens reads aider's usage report: "Tokens: 12k sent, 1.2k cache
// write, 3.4k cache hit, 512 received. Cost: …". aider rounds counts over
// a thousand to "1.2k" or "12k", so those are approximate (marked so).
func parseTokens(line string) (*transcript.Usage, bool) {
	m := tokensRe.FindStringSubmatch(line)
	if m == nil {
		return nil, false
	}
	u := &transcript.Usage{Extra: map[string]json.RawMessage{}}
	seen, rounded := 0, false
	for _, part := range strings.Split(m[1], ", ") {
		c := countRe.FindStringSubmatch(strings.TrimSpace(part))
		if c == nil {
			return nil, false
		}
		v, err := strconv.ParseFloat(strings.ReplaceAll(c[1], ",", ""), 64)
		if err != nil || v < 0 || v > 1e15 {
			return nil, false
		}
		if c[2] == "k" {
			v *= 1000
			rounded = true
		}
		n := int64(v + 0.5)
		switch c[3] {
		case "sent":
			u.InputTokens = n
		case "received":
			u.OutputTokens = n
		case "cache hit":
			u.CachedInputTokens = n
		case "cache write":
			u.Extra["cache_write_tokens"] = input.Raw(n)
		}
		seen++
	}
	if seen == 0 {
		return nil, false
	}
	if rounded {
		u.Extra["aider_rounded"] = json.RawMessage("true")
	}
	return u, true
}
