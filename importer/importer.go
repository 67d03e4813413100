// Package importer is the registry of vendor importers: it detects an
// export's format (--from auto), runs the vendor package over the files and
// writes each conversation it yields as a session directory through the
// store (store.Init, then store.Update with chunked tx.Append),
// and tallies the report: per input record type, how many were imported,
// merged and skipped, and why. It owns where sessions land: a new import
// is written into a temporary directory beside the target and renamed into
// place only when everything succeeded, so a failed import leaves no
// half-written session. It does not parse any vendor format itself.
package importer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ctxfold/ctxfold/format/aider"
	"github.com/ctxfold/ctxfold/format/anthropicbody"
	"github.com/ctxfold/ctxfold/format/chatgpt"
	"github.com/ctxfold/ctxfold/format/claudecode"
	"github.com/ctxfold/ctxfold/format/cline"
	"github.com/ctxfold/ctxfold/format/codex"
	"github.com/ctxfold/ctxfold/format/copilot"
	"github.com/ctxfold/ctxfold/format/crush"
	"github.com/ctxfold/ctxfold/format/droid"
	"github.com/ctxfold/ctxfold/format/gemini"
	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/format/openaibody"
	"github.com/ctxfold/ctxfold/format/openclaw"
	"github.com/ctxfold/ctxfold/format/opencode"
	"github.com/ctxfold/ctxfold/format/openhands"
	"github.com/ctxfold/ctxfold/format/pi"
	"github.com/ctxfold/ctxfold/format/qwen"
	"github.com/ctxfold/ctxfold/format/specstory"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// Format names.
const (
	Auto       = "auto"
	ClaudeCode = "claude-code"
	Codex      = "codex"
	Gemini     = "gemini"
	ChatGPT    = "chatgpt"
	OpenAI     = "openai"
	Anthropic  = "anthropic"
	Aider      = "aider"
	Cline      = "cline"
	OpenHands  = "openhands"
	OpenCode   = "opencode"
	Kilo       = "kilo"
	Pi         = "pi"
	OpenClaw   = "openclaw"
	Droid      = "droid"
	Crush      = "crush"
	QwenCode   = "qwen-code"
	Copilot    = "copilot"
)

// ImportFunc is the signature every vendor package exports as Import.
type ImportFunc func(ctx context.Context, files []string, opts input.Options, target transcript.ImportTarget) error

type vendor struct {
	name   string
	detect func(head []byte) bool
	run    ImportFunc
	// near, when set, says why an undetected input looks like this format
	// but is not quite it ("" when it does not), so the error can say more
	// than "cannot tell".
	near func(path string, head []byte) string
	// path, when set, recognises the format from the path itself (a file
	// name the format always uses, a directory layout); it is asked first.
	path func(path string) bool
	// find, when set, lists the client's sessions on this machine
	// (ctxfold sessions, ctxfold archive).
	find input.FindFunc
	// projects, when set, says where the client keeps the user's projects
	// (UserProjects).
	projects input.ProjectsFunc
}

// vendors in detection order: the most specific signatures first, and the
// Anthropic body before the OpenAI one (both hold "messages"). A new
// client is one line here.
var vendors = []vendor{
	// Before Claude Code and Gemini CLI: its records have their uuid/parentUuid and sessionId.
	{name: QwenCode, detect: qwen.Detect, run: qwen.Import, find: qwen.Find},
	{name: ClaudeCode, detect: claudecode.Detect, find: claudecode.Find, projects: claudecode.ProjectsOf, run: func(ctx context.Context, files []string, opts input.Options, t transcript.ImportTarget) error {
		return claudecode.Import(ctx, files, claudecode.Options{MaxLineBytes: opts.MaxLineBytes}, t)
	}},
	{name: Codex, detect: codex.Detect, run: codex.Import, find: codex.Find},
	{name: Droid, detect: droid.Detect, run: droid.Import, near: droid.Near, find: droid.Find},
	// Before Gemini: its session.start names a sessionId and a startTime too.
	{name: Copilot, detect: copilot.Detect, run: copilot.Import, find: copilot.Find, path: copilot.DetectPath},
	{name: Gemini, detect: gemini.Detect, run: gemini.Import, find: gemini.Find},
	{name: ChatGPT, detect: chatgpt.Detect, run: chatgpt.Import},
	// Before the bodies: a Cline history is also a messages array.
	{name: Cline, detect: cline.Detect, run: cline.Import, near: cline.Near, path: cline.DetectPath},
	{name: OpenHands, detect: openhands.Detect, run: openhands.Import, near: openhands.Near, path: openhands.DetectPath},
	{name: Pi, detect: pi.Detect, run: pi.Import, near: pi.Near, find: pi.Find, projects: pi.ProjectsOf},
	{name: OpenClaw, detect: openclaw.Detect, run: openclaw.Importer(func(s transcript.ImportSink, f string) openclaw.Decoder { return pi.NewDecoder(s, f) }), path: openclaw.DetectPath, find: openclaw.FindWith(pi.Describe)},
	{name: Crush, detect: crush.Detect, run: crush.Import, path: crush.DetectPath, find: crush.Find},
	{name: Kilo, detect: func([]byte) bool { return false }, run: opencode.Import, path: opencode.DetectKiloPath, find: opencode.FindKilo},
	{name: OpenCode, detect: opencode.Detect, run: opencode.Import, near: opencode.Near, path: opencode.DetectPath, find: opencode.Find},
	{name: Anthropic, detect: anthropicbody.Detect, run: anthropicbody.Import},
	{name: OpenAI, detect: openaibody.Detect, run: openaibody.Import},
	// Text, not JSON: last, so a JSON export quoting an aider header is
	// never taken for one.
	{name: Aider, detect: aider.Detect, run: aider.Import, near: func(_ string, head []byte) string { return aider.Near(head) }},
}

// UserProjects is where the client of format keeps the user's projects,
// when dir, a folder of its session files, is one of them
// (input.ProjectsFunc); ok false when the format keeps none so or dir is
// not such a folder.
func UserProjects(format, dir string) (root, sub string, ok bool) {
	for _, v := range vendors {
		if v.name == format && v.projects != nil {
			return v.projects(dir)
		}
	}
	return "", "", false
}

// Find lists the sessions of every client whose format knows where it
// keeps them (or of the one named; "" for all), newest first. A client
// whose folder is missing contributes nothing; a client whose files cannot
// be read is reported in errs and the others are still listed.
func Find(env input.Env, client string) (found []input.Found, errs []error) {
	for _, v := range vendors {
		if v.find == nil || (client != "" && client != v.name) {
			continue
		}
		got, err := v.find(env)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", title(v.name), err))
		}
		for _, f := range got {
			f.Client = v.name
			found = append(found, f)
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].Updated.After(found[j].Updated) })
	return found, errs
}

// Finders lists the formats that can find their client's sessions.
func Finders() []string {
	var out []string
	for _, v := range vendors {
		if v.find != nil {
			out = append(out, v.name)
		}
	}
	return out
}

// Formats lists the names --from accepts.
func Formats() []string {
	out := []string{Auto}
	for _, v := range vendors {
		out = append(out, v.name)
	}
	sort.Strings(out[1:])
	return out
}

func lookup(name string) (vendor, bool) {
	for _, v := range vendors {
		if v.name == name {
			return v, true
		}
	}
	return vendor{}, false
}

// DetectBytes names the format of an export from its first bytes, or "".
func DetectBytes(head []byte) string {
	for _, v := range vendors {
		if v.detect(head) {
			return v.name
		}
	}
	return ""
}

// headBytes is how much of the first file detection looks at, beyond its
// first line.
const headBytes = 64 << 10

// titles are the formats' names as their vendors write them, for messages;
// a format without one is named by its --from name.
var titles = map[string]string{
	ClaudeCode: "Claude Code", Codex: "Codex", Gemini: "Gemini CLI", ChatGPT: "ChatGPT",
	OpenAI: "an OpenAI request body", Anthropic: "an Anthropic request body",
	Droid:    "Factory Droid",
	Crush:    "Crush",
	QwenCode: "Qwen Code",
	Copilot:  copilot.Title,
}

func title(format string) string {
	if t, ok := titles[format]; ok {
		return t
	}
	return format
}

// FormatError says an input is not an export ctxfold reads, or not the one
// --from named; nothing was written.
type FormatError struct {
	Parse *transcript.ParseError
	hint  string
}

func (e *FormatError) Error() string { return e.Parse.Error() }

// Unwrap exposes the ParseError (file and line, exit status 2).
func (e *FormatError) Unwrap() error { return e.Parse }

// Hint says what would work instead.
func (e *FormatError) Hint() string { return e.hint }

// DetectFile names the format of a file from its name or its content, or
// of a directory from its layout.
func DetectFile(path string) (string, error) {
	return detectFile(path, input.Options{})
}

// detectFile tries the formats known by name or layout first; a file's
// content is then read: the first headBytes, then, if they do not decide,
// the first line whole (up to the line limit, so a long first record is
// still recognised) and headBytes after it.
func detectFile(path string, opts input.Options) (string, error) {
	for _, v := range vendors {
		if v.path != nil && v.path(path) {
			return v.name, nil
		}
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		for _, v := range vendors {
			if v.near != nil {
				if why := v.near(path, nil); why != "" {
					return "", &FormatError{Parse: &transcript.ParseError{File: path, Msg: why}, hint: "if it is one of these, name it with --from"}
				}
			}
		}
		return "", &FormatError{Parse: &transcript.ParseError{File: path, Msg: "is a directory, but not one whose layout names an export format (supported: " + supported() + ")"},
			hint: "give the transcript file itself (for Claude Code, a session's .jsonl; for Codex, a rollout-*.jsonl)"}
	}
	f, err := os.Open(path)
	if err != nil {
		return "", &transcript.ParseError{File: path, Msg: err.Error(), Err: err}
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return "", &FormatError{Parse: &transcript.ParseError{File: path, Msg: "is a directory, not an export file"},
			hint: "give the transcript file itself (for Claude Code, a session's .jsonl; for Codex, a rollout-*.jsonl)"}
	}
	br := bufio.NewReaderSize(f, headBytes)
	// The first headBytes decide most files, a JSON document written on
	// one line (longer than any line limit) included.
	peek, err := br.Peek(headBytes)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", &transcript.ParseError{File: path, Msg: err.Error(), Err: err}
	}
	if name := DetectBytes(bytes.TrimPrefix(peek, []byte{0xEF, 0xBB, 0xBF})); name != "" {
		return name, nil
	}
	first, err := readFirstLine(br, opts.Max())
	if err != nil {
		return "", &transcript.ParseError{File: path, Line: 1, Msg: err.Error()}
	}
	rest := make([]byte, headBytes)
	n, err := io.ReadFull(br, rest)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", &transcript.ParseError{File: path, Msg: err.Error(), Err: err}
	}
	head := append(first, rest[:n]...)
	head = bytes.TrimPrefix(head, []byte{0xEF, 0xBB, 0xBF})
	if name := DetectBytes(head); name != "" {
		return name, nil
	}
	// Known, and refused by name: a rendering of a transcript, not one.
	if specstory.Detect(head) {
		h := specstory.ReadHeader(head)
		return "", &FormatError{Parse: &transcript.ParseError{File: path, Line: 1, Msg: h.Refusal()}, hint: h.Original()}
	}
	for _, v := range vendors {
		if v.near == nil {
			continue
		}
		if why := v.near(path, head); why != "" {
			return "", &FormatError{Parse: &transcript.ParseError{File: path, Line: 1, Msg: why}, hint: "if it is one of these, name it with --from"}
		}
	}
	if len(bytes.TrimSpace(head)) == 0 {
		return "", &FormatError{Parse: &transcript.ParseError{File: path, Msg: "file is empty"}, hint: "nothing to import"}
	}
	return "", &FormatError{Parse: &transcript.ParseError{File: path, Line: 1, Msg: "not a supported export (supported: " + supported() + "; recognised but not imported: " + specstory.Title + "s, which render a transcript for people)"},
		hint: "if it is one of these, name it with --from; for a rendering (a SpecStory export), import the client's transcript it came from"}
}

// supported lists the formats for messages, from the registry, so a new
// importer appears in them by its row alone.
func supported() string {
	return strings.Join(Formats()[1:], ", ")
}

// readFirstLine returns the first line with its newline; a line longer
// than max is the line-limit error every reader gives. A document that is
// one long line (a JSON export without newlines) ends at EOF or at max.
func readFirstLine(br *bufio.Reader, max int) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > max+1 {
			return nil, fmt.Errorf("line is longer than the %d-byte limit (raise it with --max-line-bytes)", max)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == nil, errors.Is(err, io.EOF):
			return out, nil
		default:
			return nil, err
		}
	}
}

// DefaultChunk is how many nodes one tx.Append takes: large enough to
// amortise the fsync and meta commit, small enough to bound memory.
const DefaultChunk = 5000

// Options tune an import.
type Options struct {
	// From is a format name or Auto.
	From  string
	Files []string
	// Out is the session directory (one conversation) or the parent of one
	// session per conversation (several).
	Out string
	// Append adds to an existing session instead of refusing it.
	Append bool
	Store  store.WriteOptions
	Input  input.Options
	// Chunk is the number of nodes per append (DefaultChunk when 0).
	Chunk int
	// Resume, when set, makes a Claude Code or Codex import resumable
	// (input.Resume: live's incremental refresh); with a State,
	// Out is the session the earlier import wrote, Append must be set and
	// RewindTo name the checkpoint it is cut back to (without it the
	// import is refused: it would append after nodes the state does not
	// know). Other formats refuse it.
	Resume *input.Resume
	// RewindTo, with Append and Out a cache session, cuts the session back
	// to that earlier commit first, in the transaction that appends
	// (store.UpdateFrom): the resume point's checkpoint. A rewind the store
	// refuses, or an Out that is no session to cut, is an
	// input.ErrCannotResume.
	RewindTo *store.Meta
	// RefuseEmpty makes an auto-detected import that writes no node an
	// error naming the formats (ctxfold import: a file that only looked
	// like one); live reads a transcript that has no message yet.
	RefuseEmpty bool
	// Progress, when set, receives the number of nodes handed over so far
	// by the importer, every 1024 nodes (a progress reporter's Add).
	Progress func(n int)
}

// check refuses options no import can start from.
func (opts *Options) check() error {
	switch {
	case len(opts.Files) == 0:
		return errors.New("no input file")
	case opts.Out == "":
		return errors.New("no output directory (-o)")
	case opts.Resume != nil && opts.Resume.State != nil && (!opts.Append || opts.RewindTo == nil):
		return errors.New("import: a resumed import needs Append and RewindTo (the checkpoint the session is cut back to)")
	}
	return nil
}

// Import reads the files and writes the sessions; the report says what
// happened to every input record. On error nothing new is left in Out
// (with Append, chunks already committed to an existing session stay, and
// re-running the same --append skips the nodes already there).
func Import(ctx context.Context, opts Options) (*Report, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	// A pipe is copied beside the output first: detection reads its head,
	// and the importer must still see every byte of it.
	spoolDir := filepath.Dir(filepath.Clean(opts.Out))
	if st, err := os.Stat(spoolDir); err != nil || !st.IsDir() {
		spoolDir = ""
	}
	// What a killed import left here: its copies and its half-written
	// session directory (input/stale.go).
	input.RemoveStale(spoolDir, ".ctxfold-input-")
	if parent := filepath.Dir(filepath.Clean(opts.Out)); isDirPath(parent) {
		input.RemoveStale(parent, "."+filepath.Base(filepath.Clean(opts.Out))+".import-")
	}
	files, names, cleanup, err := input.SpoolLimit(opts.Files, spoolDir, opts.Input.MaxDecompressedBytes)
	defer cleanup()
	if err != nil {
		return nil, err
	}
	opts.Files = files
	format := opts.From
	if format == "" || format == Auto {
		if format, err = detectFile(opts.Files[0], opts.Input); err != nil {
			return nil, input.RenameError(err, names)
		}
	}
	v, ok := lookup(format)
	if !ok {
		return nil, fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats(), ", "))
	}
	if opts.Input.Session > 0 && format != Aider {
		return nil, fmt.Errorf("--session picks a session of an aider chat history; this input is %s", format)
	}
	if v.path == nil {
		// Only formats laid out as a directory take one.
		for _, f := range opts.Files {
			if st, err := os.Stat(f); err == nil && st.IsDir() {
				return nil, input.RenameError(&FormatError{Parse: &transcript.ParseError{File: f, Msg: "is a directory, not an export file"},
					hint: "give the transcript file itself (for Claude Code, a session's .jsonl; for Codex, a rollout-*.jsonl)"}, names)
			}
		}
	}
	if !opts.Append && isSession(opts.Out) {
		return nil, &ExistsError{Dir: opts.Out}
	}
	run, err := runner(v, format, opts.Resume)
	if err != nil {
		return nil, err
	}
	t := newTarget(ctx, opts)
	t.given = names
	t.report.Format = format
	err = input.RenameError(run(ctx, opts.Files, opts.Input, t), names)
	resumed := opts.Resume != nil && opts.Resume.State != nil
	if opts.From != "" && opts.From != Auto && !resumed && t.importedNothing() {
		if werr := wrongFormat(format, opts.Files[0], opts.Input, err); werr != nil {
			err = input.RenameError(werr, names)
		}
	}
	if err != nil {
		// Nothing more is written: the chunk in hand and the end of the
		// conversation (its HEAD) are dropped, not committed.
		t.abortCurrent()
	} else {
		err = t.finishCurrent()
	}
	if opts.RefuseEmpty && (opts.From == "" || opts.From == Auto) && err == nil && !resumed && !opts.Append && t.wroteNothing() {
		err = input.RenameError(emptyDetected(format, opts.Files[0]), names)
	}
	if err == nil {
		err = t.place()
	}
	t.cleanup()
	if err != nil {
		return nil, err
	}
	return renameReport(t.finalReport(), names), nil
}

// runner is the vendor's import, or its resumable one when resume is set
// (Claude Code and Codex only).
func runner(v vendor, format string, resume *input.Resume) (ImportFunc, error) {
	switch {
	case resume == nil:
		return v.run, nil
	case format == ClaudeCode:
		return func(ctx context.Context, files []string, in input.Options, t transcript.ImportTarget) error {
			return claudecode.Import(ctx, files, claudecode.Options{MaxLineBytes: in.MaxLineBytes, Resume: resume}, t)
		}, nil
	case format == Codex:
		return func(ctx context.Context, files []string, in input.Options, t transcript.ImportTarget) error {
			return codex.ImportResumable(ctx, files, in, resume, t)
		}, nil
	}
	return nil, fmt.Errorf("%s imports are not resumable", title(format))
}

// renameReport makes the report name the inputs the user gave, not the
// spooled or decompressed copies read in their place.
func renameReport(r *Report, names map[string]string) *Report {
	if len(names) == 0 {
		return r
	}
	for i, f := range r.Files {
		if name, ok := names[f]; ok {
			r.Files[i] = name
		}
	}
	for i, w := range r.Warnings {
		for tmp, name := range names {
			if rest, ok := strings.CutPrefix(w, tmp); ok {
				r.Warnings[i] = name + rest
				break
			}
		}
	}
	return r
}

// wrongFormat explains an import under --from that found not one record
// of its format: a success with nodes=0 would create an empty session that
// the right --from then refuses to overwrite.
// The same holds when the importer failed before a single record: its
// error would be about a format the file is not. runErr is the importer's
// error, kept (nil returned) when the file does not look like another
// format.
func wrongFormat(format, file string, opts input.Options, runErr error) error {
	pe := &transcript.ParseError{File: file, Msg: "no " + title(format) + " records found"}
	detected, _ := detectFile(file, opts)
	if detected != "" && detected != format {
		pe.Msg += "; the file looks like " + title(detected)
		return &FormatError{Parse: pe, hint: "import it with --from " + detected + " (or --from auto)"}
	}
	if runErr != nil {
		return nil
	}
	return &FormatError{Parse: pe, hint: "the supported formats are " + supported()}
}

// emptyDetected refuses an auto-detected import that took not one record:
// the file only looked like that format (a silent empty session is what a
// GitHub Copilot CLI log once became as Gemini CLI's).
func emptyDetected(format, file string) error {
	pe := &transcript.ParseError{File: file, Msg: "looks like " + title(format) + " but holds no message of it; nothing was imported (supported: " + supported() + ")"}
	return &FormatError{Parse: pe, hint: "if it is one of the others, name it with --from"}
}

// ExistsError refuses to overwrite a session.
type ExistsError struct{ Dir string }

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s: already a session; refusing to overwrite it", e.Dir)
}

// Hint says how to add to it instead.
func (e *ExistsError) Hint() string {
	return "add to it with --append, or choose another -o"
}

func isSession(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, store.MetaFile))
	return err == nil
}

// SafeName turns a conversation id into a directory name: only letters,
// digits, '.', '_' and '-', no "..", no leading dot, at most 80 bytes, so a crafted
// id can never name a path outside the output directory. "" when nothing
// usable is left.
func SafeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 80 {
			break
		}
	}
	out := b.String()
	for strings.Contains(out, "..") {
		out = strings.ReplaceAll(out, "..", "_")
	}
	out = strings.TrimLeft(out, ".")
	if strings.Trim(out, "_") == "" {
		return ""
	}
	return out
}

func isDirPath(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
