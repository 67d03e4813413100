package opencode

// The JSON document `opencode export SESSION` prints (OpenCode 1.17 and
// later, and Kilo, which shares its code): {"info": the session object,
// "messages": [{"info": a message object, "parts": [part objects]}]},
// the same objects the database keeps in its data columns, with their ids.

import (
	"bytes"
	"context"
	"regexp"

	"github.com/ctxfold/ctxfold/format/input"
)

// exportHead matches the start of an export: the session object first,
// whose id OpenCode always prefixes "ses_".
var exportHead = regexp.MustCompile(`^\{\s*"info"\s*:\s*\{`)

var sessionIDKey = regexp.MustCompile(`"id"\s*:\s*"ses_`)

// exportLead is the status line `opencode export` prints before the
// document. It goes to stderr, but OpenCode 1.1 wrote it where the JSON
// went on Windows (anomalyco/opencode#12130, without a newline) and files
// saved with both streams keep it: a real 1.15.5 export committed to
// klan1/k1.lib-bootstrap (session-export.json) starts with it. The session
// id (or "latest") runs to the end of the line or to the document's '{'.
var exportLead = regexp.MustCompile(`^Exporting session: [^\r\n{]*\r?\n?`)

// detectExport reports whether head starts an `opencode export` document.
func detectExport(head []byte) bool {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	if m := exportLead.FindIndex(head); m != nil {
		head = head[m[1]:]
	}
	head = bytes.TrimLeft(head, " \t\r\n")
	if !exportHead.Match(head) {
		return false
	}
	return sessionIDKey.Match(head) || bytes.Contains(head, []byte(`"messages"`))
}

// exportFile reads one export document: one session.
type exportFile struct {
	path string
	opts Options
	info sessionInfo
	msgs []message
	read bool
}

func (e *exportFile) close() {}

type exportSession struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	ParentID  string `json:"parentID"`
	Directory string `json:"directory"`
	Time      struct {
		Created float64 `json:"created"`
		Updated float64 `json:"updated"`
	} `json:"time"`
}

type exportMessage struct {
	Info  *messageInfo `json:"info"`
	Parts []part       `json:"parts"`
}

// load reads the whole document once: a session's messages are sorted
// and grouped before any node is written, as the database's are.
func (e *exportFile) load() error {
	if e.read {
		return nil
	}
	e.read = true
	d, err := input.OpenDocAfter(e.path, e.opts, exportLead)
	if err != nil {
		return err
	}
	defer d.Close()
	if d.First != '{' {
		return d.Errorf("expected an OpenCode export (a JSON object with info and messages)")
	}
	var s exportSession
	sawInfo, sawMessages := false, false
	err = d.Fields("an OpenCode export", func(key string) error {
		switch key {
		case "info":
			sawInfo = true
			return d.Value(&s, "the session object (info)")
		case "messages":
			sawMessages = true
			return d.Each("messages", func(i int) error {
				var m exportMessage
				if err := d.Value(&m, "a message ({info, parts})"); err != nil {
					return err
				}
				if m.Info == nil {
					return d.Errorf("message %d: no info object; expected {\"info\": {...}, \"parts\": [...]}", i+1)
				}
				// No line: Doc.Line re-reads the file up to the value, which
				// is for errors only (once per message it is quadratic).
				msg := message{id: m.Info.ID, file: e.path, info: *m.Info, parts: m.Parts}
				if msg.id == "" {
					return d.Errorf("message %d: its info has no id", i+1)
				}
				for j := range msg.parts {
					msg.parts[j].file = e.path
				}
				e.msgs = append(e.msgs, msg)
				return nil
			})
		}
		return d.Skip(key)
	})
	if err != nil {
		return err
	}
	if err := d.End(); err != nil {
		return err
	}
	if !sawInfo || !sawMessages {
		return input.Errorf(e.path, 1, "expected an OpenCode export with both info and messages")
	}
	if s.ID == "" {
		return input.Errorf(e.path, 1, "the export's session object (info) has no id")
	}
	e.info = sessionInfo{id: s.ID, title: s.Title, parent: s.ParentID, file: e.path, updated: s.Time.Updated, directory: s.Directory}
	return nil
}

func (e *exportFile) sessions(ctx context.Context) ([]sessionInfo, error) {
	if err := e.load(); err != nil {
		return nil, err
	}
	return []sessionInfo{e.info}, nil
}

func (e *exportFile) messages(ctx context.Context, id string) ([]message, error) {
	if err := e.load(); err != nil {
		return nil, err
	}
	return e.msgs, nil
}
