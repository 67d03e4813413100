// Package openhands imports OpenHands event streams, as serialized by
// openhands/events/serialization/event.py (event_to_dict): the V0
// evaluation output.jsonl (one row per instance, its "history" a list of
// events, or of [action, observation] pairs in older runs, with "metrics"
// beside it), the file store's sessions/<sid>/events/<n>.json, and a
// trajectory exported as a JSON array of events.
//
// Messages become user and assistant nodes, the system action a system
// node; the agent's actions (run, run_ipython, read, write, edit, browse,
// think, recall, delegate, mcp, finish, …) become tool calls of one
// assistant node per LLM response, and the observations that answer them
// (by tool_call_id, or by cause) its tool results; an error observation is
// an error result. Usage comes from the response (model_response.usage) or
// llm_metrics.token_usages. A CondensationAction becomes a summary node
// covering the turns of the events it forgot. It only reads the files and
// hands nodes to a transcript.ImportSink.
package openhands

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// Options tune the import.
type Options = input.Options

// Detect reports whether head is an OpenHands evaluation or resolver
// output.jsonl (a row with "instance_id" or "issue_type", and "history")
// or a JSON array of events.
func Detect(head []byte) bool {
	h := bytes.TrimSpace(head)
	if len(h) == 0 {
		return false
	}
	first := h
	if i := bytes.IndexByte(h, '\n'); i >= 0 {
		first = h[:i]
	}
	if h[0] == '{' && (bytes.Contains(first, []byte(`"instance_id"`)) || bytes.Contains(first, []byte(`"issue_type"`))) && bytes.Contains(first, []byte(`"history"`)) {
		return true
	}
	return h[0] == '[' && bytes.Contains(h, []byte(`"source"`)) && (bytes.Contains(h, []byte(`"action"`)) || bytes.Contains(h, []byte(`"observation"`))) && bytes.Contains(h, []byte(`"timestamp"`))
}

// DetectPath reports whether path is an OpenHands file store by its
// layout: an events directory of <n>.json files, a session directory
// holding one, or a sessions directory whose subdirectories do.
func DetectPath(path string) bool {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return false
	}
	dirs, _ := eventDirs(path)
	return len(dirs) > 0
}

// Near explains why a row looks like OpenHands output but is not.
func Near(_ string, head []byte) string {
	first := bytes.TrimSpace(head)
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	if !bytes.HasPrefix(first, []byte("{")) {
		return ""
	}
	hasID, hasHistory := bytes.Contains(first, []byte(`"instance_id"`)), bytes.Contains(first, []byte(`"history"`))
	switch {
	case hasID && !hasHistory:
		return `looks like an OpenHands evaluation output.jsonl row ("instance_id") but has no "history" of events to import`
	}
	return ""
}

func isEventsDir(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if _, ok := eventFileNumber(e.Name()); ok && e.Type().IsRegular() {
			return true
		}
	}
	return false
}

func eventFileNumber(name string) (int, bool) {
	base, ok := strings.CutSuffix(name, ".json")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(base)
	return n, err == nil && n >= 0
}

// eventDirs lists the events directories path stands for, with the
// conversation name of each.
func eventDirs(path string) ([][2]string, error) {
	if filepath.Base(path) == "events" && isEventsDir(path) {
		return [][2]string{{path, filepath.Base(filepath.Dir(filepath.Clean(path)))}}, nil
	}
	if ev := filepath.Join(path, "events"); isEventsDir(ev) {
		return [][2]string{{ev, filepath.Base(filepath.Clean(path))}}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var out [][2]string
	for _, e := range entries {
		if ev := filepath.Join(path, e.Name(), "events"); e.IsDir() && isEventsDir(ev) {
			out = append(out, [2]string{ev, e.Name()})
		}
	}
	return out, nil
}

// Import reads each input: an output.jsonl, a JSON array of events, or a
// file store directory.
func Import(ctx context.Context, files []string, opts Options, target transcript.ImportTarget) error {
	for _, path := range files {
		st, err := os.Stat(path)
		if err != nil {
			return &transcript.ParseError{File: path, Msg: err.Error(), Err: err}
		}
		if st.IsDir() {
			dirs, err := eventDirs(path)
			if err != nil {
				return &transcript.ParseError{File: path, Msg: err.Error(), Err: err}
			}
			if len(dirs) == 0 {
				return input.Errorf(path, 0, "no events/<n>.json in the directory or its subdirectories: not an OpenHands file store")
			}
			for _, d := range dirs {
				if err := importEventsDir(ctx, d[0], d[1], opts, target); err != nil {
					return err
				}
			}
			continue
		}
		if err := importFile(ctx, path, opts, target); err != nil {
			return err
		}
	}
	return nil
}

func importEventsDir(ctx context.Context, dir, name string, opts Options, target transcript.ImportTarget) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return &transcript.ParseError{File: dir, Msg: err.Error(), Err: err}
	}
	type numbered struct {
		n    int
		name string
	}
	var files []numbered
	for _, e := range entries {
		if n, ok := eventFileNumber(e.Name()); ok && e.Type().IsRegular() {
			files = append(files, numbered{n, e.Name()})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].n < files[j].n })
	sink, err := target.Conversation(name)
	if err != nil {
		return err
	}
	c := newConv(sink)
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		path := filepath.Join(dir, f.name)
		data, err := readSmall(path, opts)
		if err != nil {
			return err
		}
		var ev event
		if err := json.Unmarshal(data, &ev); err != nil {
			return input.Errorf(path, 1, "expected an OpenHands event object: %s", input.JSONErrorText(err))
		}
		if err := c.event(&ev, path, 1); err != nil {
			return err
		}
	}
	return c.end(dir)
}

func readSmall(path string, opts Options) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &transcript.ParseError{File: path, Msg: err.Error(), Err: err}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(opts.Max())+1))
	if err != nil {
		return nil, &transcript.ParseError{File: path, Msg: err.Error(), Err: err}
	}
	if len(data) > opts.Max() {
		return nil, input.Errorf(path, 1, "event is longer than the %d-byte limit (raise it with --max-line-bytes)", opts.Max())
	}
	return data, input.CheckUTF8(path, data)
}

type row struct {
	InstanceID json.RawMessage `json:"instance_id"`
	// Issue names a resolver run's row (openhands/resolver).
	Issue *struct {
		Owner  string `json:"owner"`
		Repo   string `json:"repo"`
		Number int64  `json:"number"`
	} `json:"issue"`
	History  []json.RawMessage `json:"history"`
	Metadata *struct {
		LLMConfig *struct {
			Model string `json:"model"`
		} `json:"llm_config"`
	} `json:"metadata"`
	Metrics *metrics        `json:"metrics"`
	Error   json.RawMessage `json:"error"`
}

func importFile(ctx context.Context, file string, opts Options, target transcript.ImportTarget) error {
	f, err := os.Open(file)
	if err != nil {
		return &transcript.ParseError{File: file, Msg: err.Error(), Err: err}
	}
	head := make([]byte, 1)
	n, _ := io.ReadFull(f, head)
	f.Close()
	if n == 1 && head[0] == '[' {
		return importArray(ctx, file, opts, target)
	}
	f, err = os.Open(file)
	if err != nil {
		return &transcript.ParseError{File: file, Msg: err.Error(), Err: err}
	}
	defer f.Close()
	lines := input.NewLines(f, file, opts)
	seen := false
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := lines.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		var r row
		if err := lines.Unmarshal(line, &r, "an OpenHands output row {instance_id, history, metrics}"); err != nil {
			return err
		}
		if r.History == nil {
			return lines.Errorf(`expected an OpenHands output row with "history"`)
		}
		seen = true
		if err := importRow(&r, file, lines, target); err != nil {
			return err
		}
	}
	if !seen {
		return input.Errorf(file, 1, "no OpenHands output row")
	}
	return nil
}

// importRow imports one output row's history as its own conversation,
// named after the benchmark instance it ran.
func importRow(r *row, file string, lines *input.Lines, target transcript.ImportTarget) error {
	name := input.Text(r.InstanceID)
	if name == "" && r.Issue != nil {
		name = fmt.Sprintf("%s-%s-%d", r.Issue.Owner, r.Issue.Repo, r.Issue.Number)
	}
	if name == "" {
		name = fmt.Sprintf("instance-%d", lines.Line)
	}
	sink, err := target.Conversation(name)
	if err != nil {
		return err
	}
	c := newConv(sink)
	if r.Metadata != nil && r.Metadata.LLMConfig != nil && r.Metadata.LLMConfig.Model != "" {
		c.model = r.Metadata.LLMConfig.Model
	}
	if r.Metrics != nil {
		c.addUsages(r.Metrics.TokenUsages)
	}
	var flat flattened
	for _, raw := range r.History {
		evs, err := historyItem(raw)
		if err != nil {
			return lines.Errorf("history: %v", err)
		}
		for _, ev := range evs {
			flat.normalize(ev)
			if err := c.event(ev.event, file, lines.Line); err != nil {
				return err
			}
		}
	}
	if flat.n > 0 {
		sink.Warn(file, lines.Line, fmt.Sprintf("%d events in the older flattened form (no id, source or cause): ids are their order, sources and causes inferred", flat.n))
	}
	if len(bytes.TrimSpace(r.Error)) > 0 && string(bytes.TrimSpace(r.Error)) != "null" {
		sink.Warn(file, lines.Line, "the run ended with an error: "+input.Text(r.Error))
	}
	return c.end(file)
}

// historyItem reads one history entry: an event, or an [action,
// observation] pair of older runs.
func historyItem(raw json.RawMessage) ([]rawEvent, error) {
	raw = bytes.TrimSpace(raw)
	items := []json.RawMessage{raw}
	if len(raw) > 0 && raw[0] == '[' {
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("expected an [action, observation] pair: %s", input.JSONErrorText(err))
		}
	}
	var out []rawEvent
	for _, p := range items {
		var ev event
		if err := json.Unmarshal(p, &ev); err != nil {
			return nil, fmt.Errorf("expected an event object: %s", input.JSONErrorText(err))
		}
		out = append(out, rawEvent{&ev, p})
	}
	return out, nil
}

type rawEvent struct {
	*event
	raw json.RawMessage
}

// flattened rebuilds events of the older memory form (the resolver's
// output: {"action": "run", "command": …, "thought": …} with the fields
// inline, no id, source or cause) as serialized events: ids in order, the
// fields as args or extras, an observation caused by the action before it,
// and a message from the user unless it waits for a response (the agent
// asking).
type flattened struct {
	next, lastAction int64
	n                int
}

func (f *flattened) normalize(ev rawEvent) {
	if ev.ID != nil {
		f.next = *ev.ID + 1
	}
	if ev.Args != nil || ev.Extras != nil || ev.Source != "" || (ev.Action == "" && ev.Observation == "") {
		if ev.Action != "" && ev.ID != nil {
			f.lastAction = *ev.ID
		}
		return
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(ev.raw, &fields) != nil {
		return
	}
	f.n++
	id := f.next
	f.next++
	ev.ID = &id
	delete(fields, "action")
	delete(fields, "observation")
	delete(fields, "action_risk")
	if ev.Action != "" {
		delete(fields, "is_confirmed")
		ev.Args = fields
		ev.Source = "agent"
		if ev.Action == "message" {
			var wait bool
			_ = json.Unmarshal(fields["wait_for_response"], &wait)
			if !wait {
				ev.Source = "user"
			}
		}
		f.lastAction = id
		return
	}
	delete(fields, "content")
	ev.Extras = fields
	ev.Source = "agent"
	cause := f.lastAction
	ev.Cause = &cause
}

func importArray(ctx context.Context, file string, opts Options, target transcript.ImportTarget) error {
	d, err := input.OpenDoc(file, opts)
	if err != nil {
		return err
	}
	defer d.Close()
	sink, err := target.Conversation(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)))
	if err != nil {
		return err
	}
	c := newConv(sink)
	err = d.Each("events", func(int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		var ev event
		if err := d.Value(&ev, "an OpenHands event object"); err != nil {
			return err
		}
		return c.event(&ev, file, d.Line())
	})
	if err != nil {
		return err
	}
	if err := d.End(); err != nil {
		return err
	}
	return c.end(file)
}
