// This file holds the incremental run: after a pure append to a measured
// session, the new committed bytes of nodes.jsonl are read and counted,
// and combined with the stored figures of the previous view, instead of
// indexing and rendering the whole session (docs/ESTIMATE.md,
// "Incremental estimate").

package estimate

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// How Session measured (SessionResult.Path).
const (
	// PathView: the stored Result of an unchanged session.
	PathView = "view"
	// PathIncremental: the stored figures plus the appended nodes.
	PathIncremental = "incremental"
	// PathFull: the session indexed and rendered, counts through the
	// per-node cache.
	PathFull = "full"
)

// fallbackReason says why an incremental run gave way to the full path
// (SessionResult.Fallback): the session is not the measured one plus an
// append the stored figures can absorb. Each step returns one ("" when it
// passed); measure, which can also fail (a canceled context), returns it
// as its error, so a failure is one value whatever its kind.
type fallbackReason string

func (r fallbackReason) Error() string { return string(r) }

// maxTailBytes bounds the appended bytes an incremental run reads at once;
// past it the full path (which streams) is as good.
const maxTailBytes = 256 << 20

// tailRun is one incremental attempt.
type tailRun struct {
	dir   string
	vc    *viewCache
	basis *incrBasis
	meta  store.Meta
	// metaBytes is session.json as the key read it.
	metaBytes []byte
	// data is the old seam followed by the appended bytes.
	data    []byte
	seamLen int
	recs    nodeRecs
	reqs    []MatchedRequest
	f       *store.NodesReader
	// nodes are the appended nodes in file order, lines their stored
	// bytes; chain indexes nodes from the previous HEAD's child to HEAD.
	nodes []*transcript.Node
	lines [][]byte
	newR  nodeRecs
	chain []int
}

// openTail checks that the session is the measured one plus appended
// bytes and reads them; a reason is returned when it is not.
func openTail(dir string, k viewKey, maxLine int) (*tailRun, fallbackReason) {
	vc, ok := readViewCache(dir)
	if !ok || vc.Basis == nil {
		return nil, "no stored basis"
	}
	t := &tailRun{dir: dir, vc: vc, basis: vc.Basis, metaBytes: k.meta}
	if err := json.Unmarshal(k.meta, &t.meta); err != nil || t.meta.NodesBytes == nil {
		return nil, "session.json has no committed length"
	}
	f, err := store.OpenNodes(dir)
	if errors.Is(err, store.ErrNotRegular) {
		return nil, "nodes.jsonl is not a regular file"
	}
	if err != nil {
		return nil, fallbackReason("nodes.jsonl: " + err.Error())
	}
	st := f.Stat()
	t.f = f
	base, err := baseOf(k.meta, k.inputs, fileIdentity(st), maxLine)
	b := t.basis
	newLen := *t.meta.NodesBytes
	switch {
	case err != nil || base != b.Base:
		return t.fail("session.json (beyond HEAD and the committed length), the inputs or nodes.jsonl's identity changed")
	case st.Size() != newLen:
		return t.fail("nodes.jsonl has bytes past the committed length")
	case newLen == b.Committed && t.meta.Head == b.Head:
		return t.fail("unchanged but stored under another key")
	case newLen <= b.Committed:
		return t.fail("nothing appended (HEAD moved or the file shrank)")
	case newLen-b.Committed > maxTailBytes:
		return t.fail("too much appended to read at once")
	}
	t.seamLen = int(min(seamBytes, b.Committed))
	t.data = make([]byte, int64(t.seamLen)+newLen-b.Committed)
	if _, err := f.ReadAt(t.data, b.Committed-int64(t.seamLen)); err != nil {
		return t.fail(fallbackReason("nodes.jsonl: " + err.Error()))
	}
	if seamHash(t.data[:t.seamLen]) != b.Seam {
		return t.fail("the committed bytes before the append changed")
	}
	if why := store.ChainExtends(t.meta, b.HashState, t.data[t.seamLen:], st); why != "" {
		return t.fail(fallbackReason(why))
	}
	if t.recs, t.reqs, err = readSidecar(dir, vc.Key); err != nil || t.recs.len() != b.Nodes {
		return t.fail("no matching " + IncrementalFile)
	}
	return t, ""
}

func (t *tailRun) fail(reason fallbackReason) (*tailRun, fallbackReason) {
	t.close()
	return nil, reason
}

func (t *tailRun) close() {
	if t.f != nil {
		t.f.Close()
		t.f = nil
	}
}

// decode parses the appended lines as Open would, refusing (with a
// reason) anything the full path would report or that changes how the
// earlier view renders: the full path then gives the exact error.
func (t *tailRun) decode(maxLine int) fallbackReason {
	data := t.data[t.seamLen:]
	off := t.basis.Committed
	for len(data) > 0 {
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			return "the last appended line has no newline"
		}
		chunk := data[:j+1]
		data = data[j+1:]
		body := bytes.TrimSuffix(chunk[:j], []byte("\r"))
		if len(chunk) > maxLine || len(bytes.TrimSpace(body)) == 0 || transcript.FirstInvalidUTF8(body) > 0 {
			return "an appended line is not a valid node"
		}
		n := &transcript.Node{}
		if err := n.UnmarshalJSON(body); err != nil || n.ID == "" || !knownRole(n.Role) {
			return "an appended line is not a valid node"
		}
		if n.IsSummary() {
			return "a summary node was appended"
		}
		t.nodes = append(t.nodes, n)
		t.lines = append(t.lines, body)
		t.newR = t.newR.add(nodeRec{hash: idHash(n.ID), offset: off, length: uint32(len(body))})
		off += int64(len(chunk))
	}
	return ""
}

func knownRole(r transcript.Role) bool {
	switch r {
	case transcript.RoleSystem, transcript.RoleUser, transcript.RoleAssistant, transcript.RoleTool:
		return true
	}
	return false
}

// link checks the appended nodes' links exactly as the index and the
// graph would (no duplicate id, every predecessor and caller an earlier
// node, so no cycle), and finds the chain from the previous HEAD to HEAD.
func (t *tailRun) link() fallbackReason {
	newIdx := make(map[string]int, len(t.nodes))
	// names that must be old nodes (true) or must not be (false).
	lookup := map[string]bool{}
	for k, n := range t.nodes {
		if _, dup := newIdx[n.ID]; dup {
			return "duplicate id among the appended nodes"
		}
		newIdx[n.ID] = k
		lookup[n.ID] = false
	}
	for k, n := range t.nodes {
		for _, l := range [...]string{n.Predecessor, n.Caller} {
			j, isNew := newIdx[l]
			switch {
			case l == "" || l == t.basis.Head && !isNew:
			case isNew && j >= k:
				return "an appended node links to a later one"
			case !isNew:
				lookup[l] = true
			}
		}
	}
	for _, id := range t.basis.Unresolved {
		if _, ok := newIdx[id]; ok {
			return "an appended node is covered by a summary"
		}
	}
	found, err := t.oldIDs(lookup)
	if err != nil {
		return fallbackReason("nodes.jsonl: " + err.Error())
	}
	for id, mustExist := range lookup {
		if found[id] != mustExist {
			if mustExist {
				return "an appended node links to a missing or later node"
			}
			return "an appended node repeats an earlier id"
		}
	}
	head := t.meta.Head
	for head != t.basis.Head {
		k, ok := newIdx[head]
		if !ok {
			return "HEAD does not descend from the previous HEAD through appended nodes"
		}
		t.chain = append(t.chain, k)
		head = t.nodes[k].Predecessor
	}
	for a, b := 0, len(t.chain)-1; a < b; a, b = a+1, b-1 {
		t.chain[a], t.chain[b] = t.chain[b], t.chain[a]
	}
	return ""
}

// oldIDs reports which of names are ids of measured nodes: candidates by
// hash, confirmed by reading their stored lines.
func (t *tailRun) oldIDs(names map[string]bool) (map[string]bool, error) {
	byHash := make(map[uint64][]string, len(names))
	for id := range names {
		h := idHash(id)
		byHash[h] = append(byHash[h], id)
	}
	found := map[string]bool{}
	var line []byte
	for i := range t.recs.len() {
		ids, ok := byHash[binary.LittleEndian.Uint64(t.recs[i*nodeRecSize:])]
		if !ok {
			continue
		}
		r := t.recs.at(i)
		line = append(line[:0], make([]byte, r.length)...)
		if _, err := t.f.ReadAt(line, r.offset); err != nil {
			return nil, err
		}
		var n struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(line, &n); err != nil {
			return nil, fmt.Errorf("a stored line changed: %v", err)
		}
		for _, id := range ids {
			if id == n.ID {
				found[id] = true
			}
		}
	}
	return found, nil
}

// measure counts the chain (the nodes the view gained) and combines them
// with the stored figures into the Result a full run would give, and the
// basis and sidecar for the next run. A fallbackReason is the error
// instead when the append changes what calibration reads.
func (t *tailRun) measure(ctx context.Context, e Options, key string) (*Result, *viewCache, []byte, error) {
	b, err := resolve(e)
	if err != nil {
		return nil, nil, nil, err
	}
	if e.Counting != nil {
		e.Counting(len(t.chain))
	}
	counts := make([]parts, len(t.chain))
	err = parallel(ctx, len(t.chain), workers(e), b.Encoding, func(lc *lazyCounter, k int) error {
		c, err := lc.get()
		if err != nil {
			return err
		}
		counts[k] = countNode(c, b.Provider, t.nodes[t.chain[k]])
		bpeNodes.Add(1)
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if e.Counted != nil {
		e.Counted(len(t.chain))
	}
	if !e.NoCache {
		t.saveCounts(profileOf(b), counts)
	}
	old := t.basis
	tl := tally{cats: old.Cats, nodes: old.ViewNodes, total: old.ViewTotal, anyTools: old.AnyTools}
	for k, ci := range t.chain {
		tl.add(categoryFor(false, t.nodes[ci].Role), counts[k])
	}
	res := tl.result(b, e, tl.nodes)
	res.Head = t.meta.Head
	if e.NodeDetail {
		if len(t.vc.Result.Nodes) != old.ViewNodes {
			return nil, nil, nil, fallbackReason("the stored view has no per-node detail")
		}
		res.Nodes = append(make([]NodeCount, 0, tl.nodes), t.vc.Result.Nodes...)
		for k, ci := range t.chain {
			n := t.nodes[ci]
			res.Nodes = append(res.Nodes, nodeCount(n.ID, n.Role, categoryFor(false, n.Role), counts[k]))
		}
	}
	nb := *old
	nb.Committed, nb.Nodes, nb.Head = *t.meta.NodesBytes, old.Nodes+len(t.nodes), t.meta.Head
	nb.Seam = seamHash(t.data[max(0, len(t.data)-seamBytes):])
	nb.HashState = t.meta.NodesHashState
	nb.Cats, nb.ViewNodes, nb.ViewTotal, nb.AnyTools = tl.cats, tl.nodes, tl.total, tl.anyTools
	reqs, why := t.recalibrate(&nb, counts, b, e.NoCalibrate)
	if why != "" {
		return nil, nil, nil, why
	}
	if len(reqs) > 0 {
		res.Calibration = newCalibration(reqs, res, nb.Calib.Head)
		res.setBudget(b, e)
	} else if c := carryPrior(t.vc.Result.Calibration, res); c != nil && !e.NoCalibrate {
		// No request recorded yet: the prior the stored view was given.
		res.Calibration = c
		res.setBudget(b, e)
	}
	vc := &viewCache{Key: key, Result: res, Basis: &nb}
	recs := append(t.recs[:len(t.recs):len(t.recs)], t.newR...)
	return res, vc, encodeSidecar(key, recs, reqs), nil
}

// recalibrate extends the matched requests with the chain's (as
// matchRequests re-estimates them) and updates nb's calibration state.
func (t *tailRun) recalibrate(nb *incrBasis, counts []parts, b BudgetInfo, off bool) ([]MatchedRequest, fallbackReason) {
	if off {
		return nil, ""
	}
	if nb.Calib == nil {
		// Summaries and no usage on the spine: one with usage now would
		// make View count the raw spine, which the basis does not have.
		for _, ci := range t.chain {
			if t.nodes[ci].Role == transcript.RoleAssistant && containsUsage(t.lines[ci]) {
				return nil, "usage recorded on the spine of a session with summaries, for the first time"
			}
		}
		return nil, ""
	}
	c := *nb.Calib
	reqs := t.reqs[:len(t.reqs):len(t.reqs)]
	userSince := c.Head.UserAfterLatest
	for k, ci := range t.chain {
		p := c.SpineLen + k
		if counts[k].Measured > 0 {
			est, framing, tools := c.SpineTotal, c.SpineFraming, c.SpineTools
			if ls := c.Latest; ls != nil && ls.Substitutes {
				est, framing, tools = est-ls.SegTokens+ls.Total, framing-ls.SegFraming+ls.Framing, tools || ls.Tools
			}
			extras := viewExtras(b.Provider, p, tools)
			reqs = append(reqs, MatchedRequest{Node: t.nodes[ci].ID, Estimated: est + extras, Framing: framing + extras, Measured: counts[k].Measured,
				Hidden: int64(counts[k].Hidden), NewTurn: userSince && len(reqs) > 0, Segment: nb.Summaries, Tokenizer: counts[k].Tokenizer})
			userSince, c.Head.AfterCompaction = false, false
		}
		if t.nodes[ci].Role == transcript.RoleUser && !hiddenKeptAcrossTurns(b.Provider) {
			userSince = true
		}
		c.SpineTotal += counts[k].total()
		c.SpineFraming += int(counts[k].Overhead)
		c.SpineTools = c.SpineTools || counts[k].ToolDefs > 0
	}
	c.Head.UserAfterLatest = userSince
	c.SpineLen += len(t.chain)
	c.reqs = reqs
	nb.Calib = &c
	return reqs, ""
}

// incremental measures the session in dir from its stored basis when it
// only grew by an append (see the file comment); why says what made it
// fall back to the full path when out is nil.
func incremental(ctx context.Context, dir string, k viewKey, e Options, opts SessionOptions) (out *SessionResult, why fallbackReason) {
	maxLine := effectiveMaxLine(opts.Open)
	t, why := openTail(dir, k, maxLine)
	if t == nil {
		return nil, why
	}
	defer t.close()
	if why := t.decode(maxLine); why != "" {
		return nil, why
	}
	if why := t.link(); why != "" {
		return nil, why
	}
	e = e.ForSession(t.meta, opts.DefaultModel)
	if e.Model == "" && e.Window == 0 {
		return nil, "no model"
	}
	if e.ModelAssumed {
		// The full path looks for the model in the view (announcedModel).
		return nil, "model assumed"
	}
	res, vc, sidecar, err := t.measure(ctx, e, k.key)
	if errors.As(err, &why) {
		return nil, why
	}
	if err != nil {
		// An error here (a canceled context) is the full path's to give.
		return nil, fallbackReason(fmt.Sprint(err))
	}
	res.Session = dir
	res.ModelAssumed = e.ModelAssumed
	out = &SessionResult{Result: res, Path: PathIncremental, Summaries: t.basis.Summaries}
	if err := storeView(dir, *vc, sidecar); err != nil {
		out.Warnings = append(out.Warnings, "view cache not saved: "+err.Error())
	}
	if w := res.ModelWarning(); w != "" {
		out.Warnings = append(out.Warnings, w)
	}
	return out, ""
}

// saveCounts adds the chain's counts to the per-node cache, so that a later
// full run (after a compaction, say) does not count them again. A cache
// that is not in order is left to that run, which says so.
func (t *tailRun) saveCounts(profile string, counts []parts) {
	n := t.basis.Nodes + len(t.nodes)
	keys := newKeyer(profile)
	entries := make([][]byte, len(t.nodes))
	for k, ci := range t.chain {
		entries[ci] = make([]byte, cacheEntrySize)
		putEntry(entries[ci], keys.key(t.lines[ci]), counts[k])
	}
	if extendCounts(t.dir, profile, t.basis.Nodes, entries) {
		return
	}
	ok := true
	c := openCache(t.dir, profile, n, func(string) { ok = false })
	if !ok || c.out == nil {
		c.abort()
		return
	}
	visited := make([]bool, n)
	for _, ci := range t.chain {
		i := t.basis.Nodes + ci
		if c.writeNew(i, entries[ci]) != nil {
			c.abort()
			return
		}
		visited[i] = true
	}
	c.finish(visited, true, nil)
}
