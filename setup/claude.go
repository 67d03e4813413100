package setup

import (
	"encoding/json"
	"fmt"
	"slices"
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

// notObject is the error for a container of the user's that setup cannot
// merge into: replacing it would lose what it holds.
func notObject(key string, raw json.RawMessage, want string) error {
	return fmt.Errorf("%q is %s, not %s: left untouched (fix it by hand, then run setup again)", key, kind(raw), want)
}

// mergeClaudeSettings adds (or, with remove, takes out) ctxfold's status
// line and hooks in a settings.json object; approveMCP also lists the
// project's .mcp.json server as enabled. It reports what it did, and what
// it kept that looks like ctxfold's.
func mergeClaudeSettings(o *object, bin, hook string, remove, approveMCP bool) ([]string, error) {
	var did []string
	if v, ok := o.get("statusLine"); ok {
		var sl struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(v, &sl)
		switch m := recognise(sl.Command, bin, "statusline"); {
		case m == ours && remove:
			o.del("statusLine")
			did = append(did, "removed the status line")
		case m == ours:
		case remove && m == mentions:
			did = append(did, fmt.Sprintf("kept the statusLine %q: setup did not write it", sl.Command))
		case !remove:
			did = append(did, "kept your own statusLine (ctxfold's not installed)")
		}
	} else if !remove {
		o.set("statusLine", marshal(struct {
			Type    string `json:"type"`
			Command string `json:"command"`
			Padding int    `json:"padding"`
		}{"command", command(bin, "statusline"), 0}))
		did = append(did, "added the status line")
	}
	hd, err := mergeHooks(o, bin, hook, remove, hookSet{claudeHooks, hookTimeout})
	if err != nil {
		return nil, err
	}
	did = append(did, hd...)
	if approveMCP {
		did = append(did, mergeList(o, "enabledMcpjsonServers", ServerName, remove)...)
	}
	return did, nil
}

// mergeList adds item to (or removes it from) the string list under key.
func mergeList(o *object, key, item string, remove bool) []string {
	var list []string
	if v, ok := o.get(key); ok && json.Unmarshal(v, &list) != nil {
		return []string{"left " + key + " alone: not a list of strings"}
	}
	at := slices.Index(list, item)
	switch {
	case remove && at >= 0:
		list = slices.Delete(list, at, at+1)
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
// by recognise) for each event under the object's "hooks" key: Claude
// Code's settings.json and Codex's hooks.json share the layout (event →
// matcher groups → command hooks). A "hooks" that is not an object, or an
// event's value that is not an array, is an error: nothing is changed.
func mergeHooks(o *object, bin, command string, remove bool, set hookSet) ([]string, error) {
	var did []string
	hooks, ok := o.child("hooks")
	if !ok {
		raw, _ := o.get("hooks")
		return nil, notObject("hooks", raw, "an object")
	}
	changed := false
	for _, h := range set.specs {
		var groups []*value
		if raw, present := hooks.get(h.event); present {
			if groups, ok = array(raw); !ok {
				return nil, notObject("hooks."+h.event, raw, "an array")
			}
		}
		kept, ourCmds, others := dropOurHooks(groups, bin)
		found := len(ourCmds) > 0
		if remove {
			for _, c := range others {
				did = append(did, fmt.Sprintf("kept the %s hook %q: setup did not write it", h.event, c))
			}
		}
		switch {
		case remove && found:
			did = append(did, "removed the "+h.event+" hook")
			groups = kept
		case !remove && (!found || !slices.Equal(ourCmds, []string{command})):
			// A hook of setup's that runs another command (setup run
			// again with or without --archive) is replaced.
			groups = append(kept, &value{raw: marshal(hookGroup{Matcher: h.matcher,
				Hooks: []hookCommand{{Type: "command", Command: command, Timeout: set.timeout}}}), fresh: true})
			if found {
				did = append(did, "updated the "+h.event+" hook")
			} else {
				did = append(did, "added the "+h.event+" hook")
			}
		default:
			continue
		}
		changed = true
		if len(groups) == 0 {
			hooks.del(h.event)
		} else {
			hooks.put(h.event, arrayValue(groups))
		}
	}
	if changed {
		setOrDrop(o, "hooks", hooks)
	}
	return did, nil
}

// dropOurHooks returns the matcher groups without ctxfold's hook commands
// (a group left with no hook goes), the ones it dropped, and the commands
// kept that run a "hook" sub-command or ctxfold without being setup's.
func dropOurHooks(groups []*value, bin string) (out []*value, mine []string, others []string) {
	for _, g := range groups {
		o, err := parseObject(g.bytes())
		if err != nil {
			out = append(out, g)
			continue
		}
		raw, _ := o.get("hooks")
		hs, _ := array(raw)
		var kept []*value
		for _, h := range hs {
			var c struct {
				Command string `json:"command"`
			}
			_ = json.Unmarshal(h.raw, &c)
			switch recognise(c.Command, bin, "hook") {
			case ours:
				mine = append(mine, c.Command)
				continue
			case mentions:
				others = append(others, c.Command)
			}
			kept = append(kept, h)
		}
		if len(kept) == len(hs) {
			out = append(out, g)
			continue
		}
		if len(kept) > 0 {
			o.put("hooks", arrayValue(kept))
			out = append(out, &value{obj: o})
		}
	}
	return out, mine, others
}

// claudeServer is the server entry of ~/.claude.json and .mcp.json. The
// client starts it without a shell: the command is not quoted.
func claudeServer(bin string) json.RawMessage {
	return marshal(struct {
		Type    string   `json:"type"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}{"stdio", bin, []string{"mcp"}})
}

// mergeMCPServer adds (or removes) the ctxfold server entry under
// mcpServers: ~/.claude.json (user scope), .mcp.json (project scope) and
// Gemini CLI's settings.json hold them alike. The entry is setup's when it
// is named ctxfold and runs its command with the one argument mcp, as
// setup writes it (whatever the command); a server named ctxfold that is
// not is left alone and reported.
func mergeMCPServer(o *object, remove bool, entry json.RawMessage) ([]string, error) {
	servers, ok := o.child("mcpServers")
	if !ok {
		raw, _ := o.get("mcpServers")
		return nil, notObject("mcpServers", raw, "an object")
	}
	v, present := servers.get(ServerName)
	var s struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	mine := present && json.Unmarshal(v, &s) == nil && len(s.Args) == 1 && s.Args[0] == "mcp"
	var did []string
	switch {
	case remove && mine:
		servers.del(ServerName)
		did = append(did, "removed the MCP server")
	case remove && present:
		return []string{"kept the MCP server named " + ServerName + ": setup did not write it"}, nil
	case !remove && !present:
		servers.set(ServerName, entry)
		did = append(did, "added the MCP server")
	case !remove && !mine:
		did = append(did, "kept your own MCP server named "+ServerName+" (ctxfold's not installed)")
	default:
		return nil, nil
	}
	setOrDrop(o, "mcpServers", servers)
	return did, nil
}

// setOrDrop stores child under key, or drops the key when child is empty.
func setOrDrop(o *object, key string, child *object) {
	if !child.changed {
		return
	}
	if len(child.keys) == 0 {
		o.del(key)
		return
	}
	o.put(key, &value{obj: child})
}

// claudeCodeClient is Claude Code: settings.json (status line, hooks) and
// ~/.claude.json or the project's .mcp.json (the MCP server).
var claudeCodeClient = &Client{
	Name: ClientClaudeCode, Title: "Claude Code", Program: "claude", Folder: ".claude", Format: "claude-code",
	Files: func(o Options) ([]string, error) {
		a, b, err := claudePaths(o)
		return []string{a, b}, err
	},
	Plan: ClaudeCode,
	Inspect: func(in *Installation, o Options) ([]string, error) {
		settings, mcp, err := claudePaths(o)
		if err != nil {
			return nil, err
		}
		if err := in.readJSON(settings, claudeHooks, true); err != nil {
			return nil, err
		}
		if err := in.readJSON(mcp, nil, false); err != nil {
			return nil, err
		}
		return expected(claudeHooks, true), nil
	},
}
