package estimate

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// Which setup a session's first request is predicted with (docs/ACCURACY.md,
// "The prior"), from what the transcript shows: the client's default mode
// (PriorDefault), which is what a person's session runs, unless the
// transcript shows the recording harness's (PriorHarness: Claude Code's
// tools restricted to Bash and Agent, the smaller prior the recordings
// measured) — a tool set it records (Claude Code 2.1.3xx's
// api-request-shape line, kept on the view's system node) within the
// harness's, or, when it records none, calls that all stay within the
// harness's set, or, before any call, a program's run (Claude Code's
// entrypoint "sdk-…": `claude -p`, the Agent SDK, whose program picks the
// tools as the harness does). The calls are read from the session's
// first assistant nodes (calledLimit of them: a lookup, not a scan). A
// person's session before its first reply has called nothing, which says
// nothing of a restricted tool set: it takes the default, as `estimate`
// on the file cut there (the status line's first request) and `estimate
// --head` on the whole file then agree for a session that goes on to
// call Read or Edit.

// calledLimit is how many of a session's assistant nodes are read for
// the tools it called.
const calledLimit = 64

// PriorSetup is the setup of a session of client whose view records the
// tool set recorded (nil when it records none), which called the tools
// called and was started through entrypoint ("" when not recorded), with
// why.
func PriorSetup(table []PriorEntry, client string, recorded, called []string, entrypoint string) (setup, why string) {
	harness := map[string]bool{}
	for _, e := range table {
		if e.Client == client && entrySetup(e) == PriorHarness && e.ToolNames != "" {
			for _, n := range strings.Split(e.ToolNames, ",") {
				harness[n] = true
			}
		}
	}
	beyond := func(names []string) string {
		var out []string
		seen := map[string]bool{}
		for _, n := range names {
			if !harness[n] && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
		sort.Strings(out)
		if len(out) > 4 {
			out = append(out[:4], "…")
		}
		return strings.Join(out, ", ")
	}
	switch {
	case recorded != nil && beyond(recorded) == "":
		return PriorHarness, "the session records the recording harness's tool set"
	case recorded != nil:
		return PriorDefault, "the session records tools beyond the recording harness's: " + beyond(recorded)
	case beyond(called) != "":
		return PriorDefault, "the session called tools beyond the recording harness's: " + beyond(called)
	case len(called) == 0 && strings.HasPrefix(entrypoint, "sdk"):
		return PriorHarness, "a program's session (entrypoint " + entrypoint + ") that has called nothing yet: its tools are the program's choice, the recording harness's prior"
	case len(called) == 0:
		return PriorDefault, "the session records no tool set and has called none yet: the client's default mode"
	}
	return PriorHarness, "the session records no tool set and called none beyond the recording harness's"
}

// CalledTools is the names of the tools the first calledLimit assistant
// nodes of s called, in order.
func CalledTools(s *store.Session) []string {
	var names []string
	seen := 0
	for i := 0; i < s.Len() && seen < calledLimit; i++ {
		if s.RoleAt(i) != transcript.RoleAssistant {
			continue
		}
		seen++
		n, err := s.Node(i)
		if err != nil {
			continue
		}
		for _, c := range n.AllToolCalls() {
			if c.Name != "" {
				names = append(names, c.Name)
			}
		}
	}
	return names
}

// PriorFor is the prior of a session of client whose view's first nodes
// (at most priorLead) are lead and which called the tools called
// (CalledTools), from table: the setup PriorSetup gives, the version and
// mode the first lead node that records one gives (render may put a
// system node or an attachment before the chain's first message); the
// method says which, and why the setup.
func PriorFor(table []PriorEntry, client string, lead []*transcript.Node, called []string) (Prior, bool) {
	version, mode, entry := "", PriorMain, ""
	for _, n := range lead {
		if version == "" {
			version = ClientVersion(n)
		}
		if entry == "" {
			entry = ClientEntrypoint(n)
		}
		if PriorMode(n) == PriorSubagent {
			mode = PriorSubagent
		}
	}
	setup, why := PriorSetup(table, client, RecordedTools(lead), called, entry)
	p, ok := NearestPrior(table, client, version, mode, setup)
	if !ok {
		return p, false
	}
	if setup == PriorDefault && p.Entry.Tools == 0 {
		// A default-mode recording whose request carried no tool (Codex
		// 0.169.0's default model in the fake's catalogue) is not what a
		// coding agent's session is sent, before its first call or after
		// it: the harness's, which had them, is nearer.
		if h, ok := NearestPrior(table, client, version, mode, PriorHarness); ok && h.Entry.Tools > 0 {
			why += ", but the default recording of " + client + " " + p.Entry.Version + " sent no tools: the harness's"
			p, setup = h, PriorHarness
		}
	}
	if got := entrySetup(p.Entry); got != setup {
		why = "no " + setup + " recording of " + client + ": the " + got + "'s"
	}
	p.Method += "; " + why
	return p, true
}

// RecordedTools is the names of the tool definitions a view's leading
// system nodes record (metadata.tools, in Anthropic's or OpenAI's form),
// nil when they record none. nodes are the view's first nodes: those
// after the first that is no system node are not read.
func RecordedTools(nodes []*transcript.Node) []string {
	var names []string
	for _, n := range nodes {
		if n == nil || n.Role != transcript.RoleSystem {
			break
		}
		raw, ok := n.Metadata["tools"]
		if !ok {
			continue
		}
		var defs []struct {
			Name     string `json:"name"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if json.Unmarshal(raw, &defs) != nil {
			continue
		}
		if names == nil {
			names = []string{}
		}
		for _, d := range defs {
			name := d.Name
			if name == "" {
				name = d.Function.Name
			}
			if name != "" {
				names = append(names, name)
			}
		}
	}
	return names
}

// leadNodes decodes the view's first nodes (at most priorLead): what
// PriorFor reads.
func leadNodes(s *store.Session, idx []int) []*transcript.Node {
	var out []*transcript.Node
	for k := 0; k < min(len(idx), priorLead); k++ {
		n, err := s.Node(idx[k])
		if err != nil {
			break
		}
		out = append(out, n)
	}
	return out
}
