package summarize

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/transcript"
)

// The state sections of the extractive summary (docs/COMPACT.md §3): what
// the agent is doing now, filled from the turns rather than left as prose
// fragments. The plan is the latest state of the agent's own todo list
// (Claude Code TodoWrite, Codex update_plan, Gemini write_todos, OpenCode
// todowrite: whatever tool names "todo" or "plan" and carries a list of
// steps with a status).
const (
	secTask = "Current task"
	secPlan = "Plan"
)

// Plan step marks: done, in progress, open, dropped.
const (
	markDone    = "[x]"
	markDoing   = "[>]"
	markOpen    = "[ ]"
	markDropped = "[-]"
)

// maxPlanSteps bounds the plan a summary lists; maxStepText a step's text.
const (
	maxPlanSteps = 40
	maxStepText  = 240
)

var (
	// planListKeys hold a todo tool's list of steps; stepTextKeys and
	// stepStatusKeys a step's text and status.
	planListKeys   = []string{"todos", "plan", "steps", "items", "tasks", "todoList", "todo_list"}
	stepTextKeys   = []string{"content", "step", "description", "title", "task", "text", "name"}
	stepStatusKeys = []string{"status", "state"}
	// reMarkdownStep: "- [x] step", "1. [in_progress] step", "[ ] step".
	reMarkdownStep = regexp.MustCompile(`^\s*(?:[-*+]|\d+[.)])?\s*\[([ xX>~-]|[a-z_ -]+)\]\s+(.+?)\s*$`)
	// reContinue: a request that only says to go on; the current task is
	// then the request before it.
	reContinue = regexp.MustCompile(`(?i)^(ok(ay)?|yes|yep|y|go( on| ahead)?|continue|proceed|keep going|carry on|thanks|thank you|sure|do it|next|lgtm|please continue|resume)[\s.!]*$`)
)

// planStep is one step of a plan state.
type planStep struct{ mark, text string }

// planOf reads a todo tool call's steps; ok is false when the call is no
// todo tool or carries no list of steps.
func planOf(c transcript.ToolCall) (steps []planStep, ok bool) {
	if !reTodoTool.MatchString(c.Name) {
		return nil, false
	}
	args := c.ArgumentsObject()
	for _, k := range planListKeys {
		switch v := args[k].(type) {
		case []any:
			for _, e := range v {
				if s, ok := stepOf(e); ok {
					steps = append(steps, s)
				}
			}
			return steps, true
		case string:
			for _, line := range strings.Split(v, "\n") {
				if m := reMarkdownStep.FindStringSubmatch(line); m != nil {
					steps = append(steps, planStep{markOf(m[1]), clipText(m[2], maxStepText)})
				}
			}
			return steps, len(steps) > 0
		}
	}
	return nil, false
}

func stepOf(e any) (planStep, bool) {
	switch v := e.(type) {
	case string:
		if s := strings.TrimSpace(v); s != "" {
			return planStep{markOpen, clipText(s, maxStepText)}, true
		}
	case map[string]any:
		text := strings.TrimSpace(firstOf(v, stepTextKeys))
		if text == "" {
			return planStep{}, false
		}
		mark := markOf(firstOf(v, stepStatusKeys))
		if done, ok := v["completed"].(bool); ok && done {
			mark = markDone
		}
		return planStep{mark, clipText(text, maxStepText)}, true
	}
	return planStep{}, false
}

func firstOf(m map[string]any, keys []string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// markOf maps a client's status word to a step mark.
func markOf(status string) string {
	switch strings.ToLower(strings.TrimSpace(strings.NewReplacer("-", "_", " ", "_").Replace(status))) {
	case "x", "completed", "complete", "done", "finished", "succeeded", "success":
		return markDone
	case ">", "~", "in_progress", "inprogress", "active", "doing", "running", "started", "current":
		return markDoing
	case "-", "cancelled", "canceled", "skipped", "abandoned", "dropped", "rejected", "failed":
		return markDropped
	}
	return markOpen
}

// planState follows the agent's plan through the covered turns: the
// latest state wins, and a step an earlier state had open that a later,
// non-empty state no longer lists (and never marked done) was dropped.
type planState struct {
	steps   []planStep
	id      string // the node of the latest state
	dropped []string
	done    map[string]bool
}

func (p *planState) update(steps []planStep, id string) {
	if p.done == nil {
		p.done = map[string]bool{}
	}
	now := map[string]bool{}
	for _, s := range steps {
		now[s.text] = true
		if s.mark == markDone {
			p.done[s.text] = true
		}
		if s.mark == markDropped {
			p.dropped = appendNew(p.dropped, s.text)
		}
	}
	if len(steps) > 0 {
		// An emptied list is a plan finished and cleared, not abandoned.
		for _, s := range p.steps {
			if !now[s.text] && !p.done[s.text] && s.mark != markDropped {
				p.dropped = appendNew(p.dropped, s.text)
			}
		}
	}
	p.steps, p.id = steps, id
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// setPlan writes the latest plan state: the Plan section replaces a
// previous summary's, dropped steps are rejected approaches.
func (x *extraction) setPlan(p *planState) {
	if p.id == "" {
		return
	}
	var items []string
	for i, s := range p.steps {
		if i == maxPlanSteps {
			items = append(items, fmt.Sprintf("… %d more steps", len(p.steps)-maxPlanSteps))
			break
		}
		items = append(items, s.mark+" "+s.text)
	}
	x.lists[secPlan] = items
	x.seen[secPlan] = nil
	for _, d := range p.dropped {
		x.add(secRejected, "dropped from the plan: "+d)
	}
}

// setTask writes the current task: the latest substantive request of the
// new turns, else the one a previous summary's Current task names, and
// what the latest plan has open. With neither a new request nor a new
// plan, a previous summary's stands.
func (x *extraction) setTask(ids IDShortener) {
	if x.task == "" && x.plan.id == "" {
		return
	}
	request, id := x.task, ids.Short(x.taskID)
	same := request != "" && clipText(request, 2000) == x.paragraph[secObjective]
	if same {
		// The objective quotes it already.
		request = ""
	}
	prev := x.paragraph[secTask]
	t := currentTask(request, id, &x.plan)
	if request == "" && !same {
		for _, line := range strings.Split(prev, "\n") {
			if strings.HasPrefix(line, "Request: ") {
				t = strings.TrimSpace(line + "\n" + t)
				break
			}
		}
	}
	if t != "" {
		x.paragraph[secTask] = t
	}
}

// currentTask is the latest substantive request and what is still open
// about it: the plan's step in progress and how many are open.
func currentTask(request, requestID string, p *planState) string {
	var lines []string
	if request != "" {
		line := "Request: " + clipText(firstLine(request), 400)
		if requestID != "" {
			line += " [" + requestID + "]"
		}
		lines = append(lines, line)
	}
	if p != nil && p.id != "" {
		open, doing := 0, []string{}
		for _, s := range p.steps {
			switch s.mark {
			case markDoing:
				doing = append(doing, s.text)
				open++
			case markOpen:
				open++
			}
		}
		for _, d := range doing {
			lines = append(lines, "In progress: "+d)
		}
		if len(p.steps) > 0 {
			lines = append(lines, fmt.Sprintf("Open: %d of %d plan steps", open, len(p.steps)))
		}
	}
	return strings.Join(lines, "\n")
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

// substantive: a request that asks for something, not only to go on.
func substantive(text string) bool {
	return strings.TrimSpace(text) != "" && !reContinue.MatchString(strings.TrimSpace(text))
}

// rejectedChanges lists the changes a later turn undid (audit's change
// facts with a reverted or superseded status) as rejected approaches.
func (x *extraction) rejectedChanges(facts []audit.Fact) {
	for _, f := range facts {
		if f.Kind != audit.KindChange {
			continue
		}
		p, syms, status := audit.ParseChange(f.Text)
		if status != audit.StatusReverted && status != audit.StatusSuperseded {
			continue
		}
		item := "the change to " + p
		if len(syms) > 0 {
			item += " (" + strings.Join(syms[:min(len(syms), 4)], ", ") + ")"
		}
		x.add(secRejected, item+" was "+status)
	}
}

// Decision markers (docs/COMPACT.md §3): a decision is a sentence that
// says what the agent chose; its reason is the same sentence's cause
// clause or the next sentence when that opens with one.
var (
	reStrongDecision = keywordRE{regexp.MustCompile(`(?i)(\bdecided\b|\bdecision\b|\bchose\b|\bchoose\b|\bopted\b|\bgoing with\b|\bgo with\b|\bswitch(ed|ing)? to\b|\binstead of\b|\brather than\b|\binstead\b|\bsettled on\b|\bthe plan is\b|\bthe fix is\b|\bthe approach\b)`),
		[]string{"decided", "decision", "chose", "choose", "opted", "going with", "go with", "switch", "instead", "rather than", "settled on", "the plan is", "the fix is", "the approach"}}
	reReason = keywordRE{regexp.MustCompile(`(?i)(\bbecause\b|\bsince\b|\bso that\b|\bin order to\b|\bto avoid\b|\bto keep\b|\bas it\b|\bas this\b|\bwhich means\b|\bthat way\b|\bthis way\b|\bthis avoids\b|\bthis keeps\b|\bdue to\b|\bgiven that\b)`),
		[]string{"because", "since", "so that", "in order to", "to avoid", "to keep", "as it", "as this", "which means", "that way", "this way", "this avoids", "this keeps", "due to", "given that"}}
	reReasonOpening = regexp.MustCompile(`(?i)^(because|since|that way|this way|this avoids|this keeps|this is because|the reason|otherwise)\b`)
	// reFinding: a sentence stating what the agent found, the reason for
	// the decision that follows it ("Found it: n/60 keeps only whole
	// hours. I'll compute minutes directly.").
	reFinding = regexp.MustCompile(`(?i)^(found it\b|the (root )?cause\b|the (problem|issue|bug|culprit) (is|was)\b|turns out\b|it turns out\b)`)
)

// decisions picks the decisions of an assistant text, each with its
// reason: a sentence with a decision marker and a reason (in it, or the
// next sentence opening with one, or a finding right before it), or a
// strong decision marker alone
// ("decided", "instead of"). A plain "I'll …" without a reason is no
// decision: most are the next step, not a choice.
func decisions(ss []string) []string {
	var out []string
	for i, s := range ss {
		if !reDecision.MatchString(s) && !reStrongDecision.MatchString(s) {
			continue
		}
		if reInspect.MatchString(s) || strings.HasSuffix(s, "?") {
			continue
		}
		switch {
		case reReason.MatchString(s):
			out = append(out, s)
		case i > 0 && reFinding.MatchString(ss[i-1]):
			out = append(out, ss[i-1]+" "+s)
		case i+1 < len(ss) && reReasonOpening.MatchString(ss[i+1]):
			out = append(out, s+" "+ss[i+1])
		case reStrongDecision.MatchString(s):
			out = append(out, s)
		}
	}
	return out
}

// pointTaskAtRequest shortens the Current task's request line to a
// pointer when the User requests list quotes that request already (the
// latest request is a fact too): the text once, the task naming it. When
// the list does not hold it (it did not fit), the line keeps the text.
func (x *extraction) pointTaskAtRequest(picks []factPick, ranked []audit.Fact) {
	if x.taskID == "" || !strings.HasPrefix(x.paragraph[secTask], "Request: ") {
		return
	}
	for _, p := range picks {
		f := ranked[p.at]
		if f.Kind != audit.KindRequest || !slices.Contains(f.NodeIDs, x.taskID) {
			continue
		}
		lines := strings.SplitN(x.paragraph[secTask], "\n", 2)
		ref := ""
		if i := strings.LastIndex(lines[0], " ["); i > 0 && strings.HasSuffix(lines[0], "]") {
			ref = lines[0][i:]
		}
		lines[0] = "Request: the one of the User requests marked" + ref
		x.paragraph[secTask] = strings.Join(lines, "\n")
		return
	}
}
