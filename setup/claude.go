package setup

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// The Claude Code hooks ctxfold installs (docs/HOOKS.md): PreCompact keeps
// the turns about to be folded, SessionStart compact and PostCompact note
// the compaction, UserPromptSubmit injects what its summary dropped once
// the record is in the transcript.
var claudeHooks = []hookSpec{
	{"PreCompact", ""},
	{"SessionStart", "compact"},
	{"PostCompact", ""},
	{"UserPromptSubmit", ""},
}

// hookGroup and hookCommand are a settings.json hook entry, keys in the
// order Claude Code's documentation writes them.
type hookGroup struct {
	Matcher string        `json:"matcher,omitempty"`
	Hooks   []hookCommand `json:"hooks"`
}

type hookCommand struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

// hookTimeout is the seconds Claude Code gives the hook; ctxfold hook
// bounds itself below it (--timeout 50s by default).
const hookTimeout = 60

// ServerName is the MCP server's name in the client's configuration.
const ServerName = "ctxfold"

// ours reports whether a command line is ctxfold's sub (hook, statusline,
// mcp): the configured command, or any executable named ctxfold.
func ours(command, bin, sub string) bool {
	f := strings.Fields(command)
	if len(f) < 2 || f[1] != sub {
		return false
	}
	return f[0] == bin || filepath.Base(f[0]) == "ctxfold"
}

// mergeClaudeSettings adds (or, with remove, takes out) ctxfold's status
// line and hooks in a settings.json object; approveMCP also lists the
// project's .mcp.json server as enabled. It reports what it did.
func mergeClaudeSettings(o *object, bin string, remove, approveMCP bool) []string {
	var did []string
	if v, ok := o.get("statusLine"); ok {
		var sl struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(v, &sl) == nil && ours(sl.Command, bin, "statusline") {
			if remove {
				o.del("statusLine")
				did = append(did, "removed the status line")
			}
		} else if !remove {
			did = append(did, "kept your own statusLine (ctxfold's not installed)")
		}
	} else if !remove {
		o.set("statusLine", marshal(struct {
			Type    string `json:"type"`
			Command string `json:"command"`
			Padding int    `json:"padding"`
		}{"command", bin + " statusline", 0}))
		did = append(did, "added the status line")
	}
	did = append(did, mergeHooks(o, bin, bin+" hook", remove, hookSet{claudeHooks, hookTimeout})...)
	if approveMCP {
		did = append(did, mergeList(o, "enabledMcpjsonServers", ServerName, remove)...)
	}
	return did
}

// mergeList adds item to (or removes it from) the string list under key.
func mergeList(o *object, key, item string, remove bool) []string {
	var list []string
	if v, ok := o.get(key); ok && json.Unmarshal(v, &list) != nil {
		return nil // not a list of strings: not ours to touch
	}
	at := -1
	for i, s := range list {
		if s == item {
			at = i
		}
	}
	switch {
	case remove && at >= 0:
		list = append(list[:at:at], list[at+1:]...)
	case !remove && at < 0:
		list = append(list, item)
	default:
		return nil
	}
	if len(list) == 0 {
		o.del(key)
	} else {
		o.set(key, marshal(list))
	}
	if remove {
		return []string{"removed " + item + " from " + key}
	}
	return []string{"added " + item + " to " + key}
}

// hookSpec is one hook ctxfold installs: the event and its matcher.
type hookSpec struct{ event, matcher string }

// hookSet is the hooks of one client: the events, and the timeout in the
// client's unit (Claude Code and Codex: seconds; Gemini CLI:
// milliseconds).
type hookSet struct {
	specs   []hookSpec
	timeout int
}

// mergeHooks adds (or removes) ctxfold's command hook (command, recognised
// by bin and the hook sub-command) for each event under
// the object's "hooks" key: Claude Code's settings.json and Codex's
// hooks.json share the layout (event → matcher groups → command hooks).
func mergeHooks(o *object, bin, command string, remove bool, set hookSet) []string {
	var did []string
	hooks, _ := o.child("hooks")
	changed := false
	for _, h := range set.specs {
		groups := array(hooks.vals[h.event])
		kept, found := dropOurHooks(groups, bin)
		switch {
		case remove && found:
			did = append(did, "removed the "+h.event+" hook")
			groups = kept
		case !remove && !found:
			groups = append(groups, marshal(hookGroup{Matcher: h.matcher,
				Hooks: []hookCommand{{Type: "command", Command: command, Timeout: set.timeout}}}))
			did = append(did, "added the "+h.event+" hook")
		default:
			continue
		}
		changed = true
		if len(groups) == 0 {
			hooks.del(h.event)
		} else {
			hooks.set(h.event, rawArray(groups))
		}
	}
	if changed {
		setOrDrop(o, "hooks", hooks)
	}
	return did
}

// dropOurHooks returns the matcher groups without ctxfold's hook commands
// (a group left with no hook goes) and whether there was one.
func dropOurHooks(groups []json.RawMessage, bin string) ([]json.RawMessage, bool) {
	var out []json.RawMessage
	found := false
	for _, g := range groups {
		o, err := parseObject(g)
		if err != nil {
			out = append(out, g)
			continue
		}
		var kept []json.RawMessage
		hs := array(o.vals["hooks"])
		for _, h := range hs {
			var c struct {
				Command string `json:"command"`
			}
			if json.Unmarshal(h, &c) == nil && ours(c.Command, bin, "hook") {
				found = true
				continue
			}
			kept = append(kept, h)
		}
		if len(kept) == len(hs) {
			out = append(out, g)
			continue
		}
		if len(kept) > 0 {
			o.set("hooks", rawArray(kept))
			out = append(out, o.raw())
		}
	}
	return out, found
}

// claudeServer is the server entry of ~/.claude.json and .mcp.json.
func claudeServer(bin string) json.RawMessage {
	return marshal(struct {
		Type    string   `json:"type"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}{"stdio", bin, []string{"mcp"}})
}

// mergeMCPServer adds (or removes) the ctxfold server entry under
// mcpServers: ~/.claude.json (user scope), .mcp.json (project scope) and
// Gemini CLI's settings.json hold them alike. A server named ctxfold that
// is not ctxfold's is left alone.
func mergeMCPServer(o *object, bin string, remove bool, entry json.RawMessage) []string {
	servers, _ := o.child("mcpServers")
	v, present := servers.get(ServerName)
	var s struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	mine := present && json.Unmarshal(v, &s) == nil && len(s.Args) > 0 && ours(s.Command+" "+s.Args[0], bin, "mcp")
	var did []string
	switch {
	case remove && mine:
		servers.del(ServerName)
		did = append(did, "removed the MCP server")
	case !remove && !present:
		servers.set(ServerName, entry)
		did = append(did, "added the MCP server")
	case !remove && !mine:
		did = append(did, "kept your own MCP server named "+ServerName+" (ctxfold's not installed)")
	default:
		return nil
	}
	setOrDrop(o, "mcpServers", servers)
	return did
}

// setOrDrop stores child under key, or drops the key when child is empty.
func setOrDrop(o *object, key string, child *object) {
	if len(child.keys) == 0 {
		o.del(key)
		return
	}
	o.set(key, child.raw())
}
