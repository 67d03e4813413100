package claudecode

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// sawAgent records that a sidechain line of agent id was read, inline or
// from its own file.
func (p *planner) sawAgent(id string, sidechain bool) {
	if id == "" || !sidechain {
		return
	}
	if p.agentSeen == nil {
		p.agentSeen = map[string]bool{}
	}
	p.agentSeen[id] = true
}

// reportAgentFiles tells the import report which sub-agent files were read
// into the conversation, and warns of each sub-agent the session spawned
// (a Task result naming its agentId) whose lines were found nowhere: its
// turns are not in the import, and the user should know where they were
// looked for.
func (p *planner) reportAgentFiles(c *conversation) {
	fr, _ := p.sink.(transcript.FileReporter)
	for _, a := range c.agents {
		if fr != nil {
			fr.AttachedFile(p.display(a))
		}
	}
	if c.main == "" {
		return
	}
	var missing []string
	for id := range p.agentTool {
		if !p.agentSeen[id] {
			missing = append(missing, id)
		}
	}
	sort.Strings(missing)
	main := p.display(c.main)
	sub := filepath.Join(strings.TrimSuffix(main, ".jsonl"), "subagents")
	for _, id := range missing {
		want := filepath.Join(sub, "agent-"+id+".jsonl")
		if fr != nil {
			fr.MissingFile(want)
		}
		p.sink.Warn(main, 0, fmt.Sprintf("sub-agent %s was spawned but no file holds its turns (looked for %s and agent-%s.jsonl beside the session); they are not imported", id, want, id))
	}
}
