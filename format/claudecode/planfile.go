package claudecode

// This file reads the files of a conversation line by line for the first pass.

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// openFile opens path (a regular file: Import spools anything else) for
// reading by offset.
func (p *planner) openFile(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &transcript.ParseError{File: p.display(path), Msg: err.Error()}
	}
	return f, nil
}

// display is the name errors and warnings give a file: the name the
// caller passed, not the temporary copy of a pipe.
func (p *planner) display(path string) string {
	if name, ok := p.names[path]; ok {
		return name
	}
	return path
}

func (p *planner) planFile(path string, agent bool) error {
	f, err := p.startFile(path, agent)
	if err != nil {
		return err
	}
	if agent {
		id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "agent-"), ".jsonl")
		if tool, ok := p.agentTool[id]; ok {
			if n, ok := p.toolNode[tool]; ok {
				p.fileCaller = n
			}
		}
	}
	return p.planLines(newLineReader(f, p.display(path), p.opts.max()))
}

// startFile opens the next file to plan, at its start.
func (p *planner) startFile(path string, agent bool) (*os.File, error) {
	f, err := p.openFile(path)
	if err != nil {
		return nil, err
	}
	p.files = append(p.files, p.display(path))
	p.open = append(p.open, f)
	p.fileIdx = int32(len(p.files) - 1)
	p.agentFile = agent
	p.actx = agentContext{}
	if agent {
		p.actx = newAgentContext(p.display(path))
	}
	p.fileCaller = none
	p.fileSys = none
	p.warnedLink = false
	p.lines = 0
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, &transcript.ParseError{File: path, Msg: err.Error()}
	}
	return f, nil
}

// planLines plans the lines lr reads to the end of the file, decoded
// ahead on every core (prefetch.go) and planned in file order. A
// resumable import (resume.go) notes every line start of the session file
// as a possible resume point, and saves the planner at the one it was
// asked to. lr's position is where reading stopped; pos and line are
// where planning is.
func (p *planner) planLines(lr *lineReader) error {
	pos, line := lr.off, lr.line // before the prefetch moves lr on
	pf := startPrefetch(lr)
	defer pf.close()
	complete := true
	var batch *lineBatch
	k := 0
	for {
		if p.res != nil && !p.agentFile {
			// No resume point while a line waits for its parent: the
			// saved state holds no waiting line.
			if err := p.notePoint(pos, line, complete && len(p.held) == 0); err != nil {
				return err
			}
		}
		if batch == nil || k == len(batch.items) {
			var ok bool
			if batch, ok = pf.next(); !ok {
				return p.endFile()
			}
			k = 0
		}
		it := &batch.items[k]
		k++
		if it.err != nil {
			return it.err
		}
		pos, line, complete = it.end, it.line, it.complete
		if line%1024 == 0 {
			if err := p.ctx.Err(); err != nil {
				return err
			}
		}
		ref := lineRef{file: p.fileIdx, line: int32(line), off: it.off, n: int32(len(it.body))}
		if p.waitsForParent(it) {
			p.held = append(p.held, heldLine{*it, ref})
			if len(p.held) > maxHeld {
				// Waited long enough: the oldest is planned as it is (a
				// root, with its warning), and what waited on it follows.
				if err := p.planHeld(0); err != nil {
					return err
				}
			}
			continue
		}
		if len(p.held) > 0 && !mayOvertake(it) {
			// Only the turn's own lines pass a waiting line: anything
			// else (a prompt, an attachment, a compaction) keeps the
			// file's order.
			if err := p.releaseHeld(true); err != nil {
				return err
			}
		}
		if err := p.planLine(it, ref); err != nil {
			return err
		}
		if err := p.releaseHeld(false); err != nil {
			return err
		}
	}
}

// endFile completes the plan of a file whose lines are all read.
func (p *planner) endFile() error {
	if p.res != nil && !p.agentFile {
		p.res.openGroup = append([]int32(nil), p.grp...)
	}
	// A group never spans files: a sub-agent file is a chain of its own.
	p.closeGroup()
	// Lines still waiting for their parents are planned as they are
	// (roots, with their warnings), after the file's own lines and off
	// HEAD's chain: a file read between a result and its call (the desktop
	// app writes them so) is the session as it was before the result, not
	// a lone result.
	head := p.head
	if err := p.releaseHeld(true); err != nil {
		return err
	}
	if head != none {
		p.head = head
	}
	p.closeGroup()
	if p.agentFile && p.actx.due() {
		// The file ends with its first results: the request about to be
		// sent carries the parent's message (agentcontext.go).
		p.placeAgentContext(p.chainEnd())
	}
	return nil
}

// mayOvertake says it may be planned before a line waiting for its
// parent: an assistant line, another tool result, or a line that makes no
// node (the desktop app writes the turn's thinking, text, calls and other
// results between a result and its call).
func mayOvertake(it *lineItem) bool {
	r := &it.rec
	switch {
	case it.err != nil || it.blank || it.decErr != nil:
		return true
	case r.Type == "assistant":
		return true
	case r.Type == "user" && !r.IsCompactSummary && r.Message != nil && r.badMessage == "":
		return carriesResult(r)
	case r.Type == "attachment", r.Type == "system" && r.Subtype == "compact_boundary", r.Type == "user":
		return false
	}
	return true
}

// A parent written after its child. Claude Code's desktop app (2.1.16x)
// writes a turn's tool_result line a few lines before the assistant lines
// it answers (docs/INTEROP-claude-code.md, "A parent written after its
// child"); Claude Code links lines by parentUuid, so the order does not
// matter to it. Such a line waits, at most maxHeld lines, until its parent
// is planned, then is planned right after it, as if written in order.
const maxHeld = 16

// heldLine is a line waiting for its parent.
type heldLine struct {
	it  lineItem
	ref lineRef
}

// waitsForParent says it waits for its parent: a user line carrying a
// tool result whose parent is no line read yet (the one kind of line a
// client was seen to write before its parent), or, while lines wait, a
// message whose parent is none read yet (it may be a waiting line).
func (p *planner) waitsForParent(it *lineItem) bool {
	r := &it.rec
	if it.err != nil || it.blank || it.decErr != nil || it.badUTF8 > 0 || (r.Type != "user" && r.Type != "assistant") ||
		r.IsCompactSummary || r.ParentUUID == "" || r.Message == nil || r.badMessage != "" {
		return false
	}
	if _, ok := p.resolve(r.ParentUUID); ok {
		return false
	}
	return len(p.held) > 0 || r.Type == "user" && carriesResult(r)
}

// carriesResult says a user line holds a tool_result block.
func carriesResult(r *record) bool {
	if !r.scanned {
		r.scanContent()
	}
	for _, b := range r.scan.blocks {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}

// releaseHeld plans every waiting line whose parent is now planned, in
// file order, and with all, the rest as they are (the file ended).
func (p *planner) releaseHeld(all bool) error {
	for i := 0; i < len(p.held); {
		if _, ok := p.resolve(p.held[i].it.rec.ParentUUID); !ok && !all {
			i++
			continue
		}
		if err := p.planHeld(i); err != nil {
			return err
		}
		i = 0 // what waited on it may be free now
	}
	return nil
}

// planHeld plans waiting line i and takes it off the list.
func (p *planner) planHeld(i int) error {
	h := p.held[i]
	p.held = append(p.held[:i], p.held[i+1:]...)
	return p.planLine(&h.it, h.ref)
}

// notePoint records the line start pos (line lines read) as a resume
// point, and saves the planner there when asked to.
func (p *planner) notePoint(pos int64, line int, complete bool) error {
	if complete {
		p.res.candidate(pos, len(p.nodes))
	}
	if pos == p.res.saveAt && p.res.point == nil {
		if err := p.res.save(p, pos, line); err != nil {
			return err
		}
	}
	if r := p.res; r.provNext < len(r.provAts) && pos >= r.provAts[r.provNext] && complete {
		if err := r.save(p, pos, line); err != nil {
			return err
		}
		r.provs, r.provLost = append(r.provs, r.point), append(r.provLost, false)
		r.point = nil
		for r.provNext < len(r.provAts) && pos >= r.provAts[r.provNext] {
			r.provNext++
		}
	}
	return nil
}

// emptyFile is the error for a file with no line: like every other
// importer, an empty file is refused rather than imported as an empty
// session.
func (p *planner) emptyFile(path string) error {
	return &transcript.ParseError{File: p.display(path), Line: 1, Msg: "empty file; expected a Claude Code session"}
}
