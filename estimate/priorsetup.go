package estimate

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// Which setup a session's first request is predicted with (docs/ACCURACY.md,
// "The prior"): the client's default mode (PriorDefault: every default
// tool) unless the transcript records a tool set (Claude Code 2.1.3xx's
// api-request-shape line, kept on the view's system node) that the
// recording harness's tool set holds whole (PriorHarness). A tool call
// the view shows is no evidence of a restricted set — a default session
// may use Bash alone — and before request 1 a view holds none: the
// smaller prior is taken only on the tool set the transcript records,
// the default otherwise, so a wrong guess overstates the occupancy
// rather than hiding it.

// PriorSetup is the setup of a session of client whose view records the
// tool set recorded (nil when it records none), with why.
func PriorSetup(table []PriorEntry, client string, recorded []string) (setup, why string) {
	if recorded == nil {
		return PriorDefault, "the session records no tool set: the client's default"
	}
	harness := map[string]bool{}
	for _, e := range table {
		if e.Client == client && entrySetup(e) == PriorHarness && e.ToolNames != "" {
			for _, n := range strings.Split(e.ToolNames, ",") {
				harness[n] = true
			}
		}
	}
	var beyond []string
	for _, n := range recorded {
		if !harness[n] {
			beyond = append(beyond, n)
		}
	}
	if len(harness) > 0 && len(beyond) == 0 {
		return PriorHarness, "the session records the recording harness's tool set"
	}
	sort.Strings(beyond)
	if len(beyond) > 3 {
		beyond = append(beyond[:3], "…")
	}
	return PriorDefault, "the session records tools beyond the recording harness's: " + strings.Join(beyond, ", ")
}

// PriorFor is the prior of a session of client whose view's first nodes
// (at most priorLead) are lead, from table: the setup the tool set its
// leading system nodes record gives (PriorSetup), the version and mode
// the first of them that records one gives (render may put a system
// node or an attachment before the chain's first message); the method
// says which, and why the setup.
func PriorFor(table []PriorEntry, client string, lead []*transcript.Node) (Prior, bool) {
	version, mode := "", PriorMain
	for _, n := range lead {
		if version == "" {
			version = ClientVersion(n)
		}
		if PriorMode(n) == PriorSubagent {
			mode = PriorSubagent
		}
	}
	setup, why := PriorSetup(table, client, RecordedTools(lead))
	p, ok := NearestPrior(table, client, version, mode, setup)
	if !ok {
		return p, false
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
