package codex

// A resumable import of one rollout (input/resume.go; live's
// incremental refresh, docs/LIVE.md "The resume point"). The importer
// reads a rollout in one pass and a node, once emitted, never changes:
// what later lines can still change is the request in progress (held
// until the next one starts) and the state around it. So the end of the
// file is a resume point: the state there is saved, the sink is asked to
// commit what it holds (the checkpoint), and only then is the request in
// progress emitted. The next import of the grown file loads the state,
// reads the lines after the point and emits from there.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// snapState is the state a Point holds.
type snapState struct {
	Prefix      string            `json:"prefix"`
	Off         int64             `json:"off"`
	Line        int               `json:"line"`
	Prev        string            `json:"prev"`
	Real        []string          `json:"real"`
	Base        string            `json:"base"`
	ByRecord    bool              `json:"by_record"`
	Window      int64             `json:"window"`
	Ordinals    map[string]int64  `json:"ordinals"`
	EmittedIDs  []string          `json:"emitted_ids"`
	EmittedOrds []int64           `json:"emitted_ords"`
	Caller      string            `json:"caller"`
	Spawned     map[string]string `json:"spawned"`
	G           *snapGroup        `json:"g"`
	Pending     *transcript.Usage `json:"pending"`
	Total       string            `json:"total"`
	Meta        json.RawMessage   `json:"meta"`
	Model       string            `json:"model"`
	Reordered   int               `json:"reordered"`
	ReorderedAt []string          `json:"reordered_at"`
}

type snapGroup struct {
	Assistant transcript.Node   `json:"assistant"`
	Open      bool              `json:"open"`
	Calls     map[string]string `json:"calls"`
	Answer    map[string]bool   `json:"answer"`
	Results   []transcript.Node `json:"results"`
	After     []transcript.Node `json:"after"`
	Reordered int               `json:"reordered"`
}

// ImportResumable imports one rollout resumably: from its start, or with
// res.State from the point a previous import of it saved. Anything else
// (several files, a saved state that does not fit) is input.ErrCannotResume
// when a state was given, a plain Import when not.
func ImportResumable(ctx context.Context, files []string, opts Options, res *input.Resume, target transcript.ImportTarget) error {
	res.Point = nil
	if len(files) != 1 {
		if res.State != nil {
			return fmt.Errorf("%w: several files", input.ErrCannotResume)
		}
		return Import(ctx, files, opts, target)
	}
	h := order(files)[0]
	f, err := os.Open(h.file)
	if err != nil {
		return &transcript.ParseError{File: h.file, Msg: err.Error()}
	}
	defer f.Close()
	st := &state{file: h.file, lines: input.NewLines(limited(f, 0, res.Limit), h.file, opts)}
	first, err := st.lines.Next()
	st.read()
	if err == io.EOF {
		return input.Errorf(h.file, 1, "empty file; expected a Codex rollout")
	}
	if err != nil {
		return err
	}
	var rec record
	if err := st.decode(first, &rec); err != nil {
		return err
	}
	name := threadName(h.file, rec)
	st.prefix = idPrefix(name)
	from := int64(0)
	if res.State != nil {
		if from, err = st.restore(res.State, f, opts, res.Limit); err != nil {
			return err
		}
		first = nil
	}
	if st.sink, err = st.openSink(h, name, target, map[string]*thread{}); err != nil {
		return err
	}
	if err := st.readRecords(ctx, first, rec); err != nil {
		return err
	}
	if info, err := f.Stat(); err == nil {
		size := info.Size()
		if res.Limit > 0 && res.Limit < size {
			size = res.Limit
		}
		res.Parsed = size - from
	}
	if res.Point, err = st.point(); err != nil {
		return err
	}
	if err := st.flush(); err != nil {
		return err
	}
	st.finish(h, map[string]*thread{})
	return nil
}

// point saves the state at the end of what was read and asks the sink to
// commit the nodes emitted so far. There is none after a last line
// without its newline that was read whole: the line after it would be
// numbered differently when read from there.
func (st *state) point() (*input.Point, error) {
	cp, ok := st.sink.(input.Checkpointer)
	if !ok || st.deferErr != nil || st.unterminated {
		return nil, nil
	}
	// The lines after the last record read (blank ones, a torn one) are
	// read again from there.
	s := snapState{Prefix: st.prefix, Off: st.readOff, Line: st.readLine, Prev: st.prev, Real: st.real, Base: st.base,
		ByRecord: st.byRecord, Window: st.window, Ordinals: st.ordinals, Caller: st.caller, Spawned: st.spawned,
		Pending: st.pending, Total: st.total, Meta: st.meta, Model: st.model, Reordered: st.reordered, ReorderedAt: st.reorderedAt}
	for _, e := range st.emitted {
		s.EmittedIDs, s.EmittedOrds = append(s.EmittedIDs, e.id), append(s.EmittedOrds, e.ordinal)
	}
	if g := st.g; g != nil {
		s.G = &snapGroup{Assistant: *g.assistant, Open: g.open, Calls: g.calls, Answer: g.answer,
			Results: g.results, After: g.after, Reordered: g.reordered}
	}
	// Without HTML escaping: the held nodes' raw JSON (tool arguments)
	// must come back byte for byte as the store would write it.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("codex: saving the resume point: %w", err)
	}
	b := buf.Bytes()
	if err := cp.Checkpoint(); err != nil {
		return nil, err
	}
	return &input.Point{State: b, Offset: s.Off, Nodes: len(st.emitted)}, nil
}

// restore loads a saved state into st and positions its reader at the
// point; it returns the point's offset.
func (st *state) restore(state []byte, f *os.File, opts Options, limit int64) (int64, error) {
	var s snapState
	if err := json.Unmarshal(state, &s); err != nil {
		return 0, fmt.Errorf("%w: %v", input.ErrCannotResume, err)
	}
	if s.Prefix != st.prefix || s.Off < st.readOff || s.Line < 1 || len(s.EmittedIDs) != len(s.EmittedOrds) {
		return 0, fmt.Errorf("%w: the saved state is not this rollout's", input.ErrCannotResume)
	}
	st.prev, st.real, st.base, st.byRecord, st.window = s.Prev, s.Real, s.Base, s.ByRecord, s.Window
	st.ordinals, st.caller, st.spawned, st.pending, st.total = s.Ordinals, s.Caller, s.Spawned, s.Pending, s.Total
	st.meta, st.model, st.reordered, st.reorderedAt = s.Meta, s.Model, s.Reordered, s.ReorderedAt
	for i, id := range s.EmittedIDs {
		st.emitted = append(st.emitted, emitted{id: id, ordinal: s.EmittedOrds[i]})
	}
	if g := s.G; g != nil {
		a := g.Assistant
		st.g = &group{assistant: &a, open: g.Open, calls: orEmpty(g.Calls), answer: orEmpty(g.Answer),
			results: g.Results, after: g.After, reordered: g.Reordered}
	}
	if _, err := f.Seek(s.Off, io.SeekStart); err != nil {
		return 0, &transcript.ParseError{File: st.file, Msg: err.Error()}
	}
	st.lines = input.NewLinesAt(limited(f, s.Off, limit), st.file, opts, s.Off, s.Line)
	// Until a line is read, the point is the one loaded.
	st.readOff, st.readLine, st.unterminated = s.Off, s.Line, false
	return s.Off, nil
}

func orEmpty[V any](m map[string]V) map[string]V {
	if m == nil {
		return map[string]V{}
	}
	return m
}

// limited is f, positioned at off, read no further than limit when above 0
// (input.Resume.Limit).
func limited(f *os.File, off, limit int64) io.Reader {
	if limit > 0 {
		return io.LimitReader(f, max(limit-off, 0))
	}
	return f
}
