package setup

import (
	_ "embed"
	"path/filepath"
	"strings"
)

// pi 0.73 takes TypeScript extensions, not hook commands, and has no MCP
// by design (docs/HOOKS.md, "pi"): every *.ts in ~/.pi/agent/extensions/
// ($PI_CODING_AGENT_DIR/extensions/) or a project's .pi/extensions/ is
// loaded. setup writes one, ctxfold.ts, that runs `ctxfold hook` on
//   - session_before_compact: the fact ledger the hook prints joins the
//     messages pi's summariser reads (event.preparation.messagesToSummarize,
//     read by pi's compaction once the handlers ran);
//   - session_compact: the compaction is noted;
//   - before_agent_start, each prompt: once a compaction is pending, what
//     its summary still dropped is added as a message of its own;
//
// and registers the tools ctxfold_search_history and ctxfold_read_turns,
// which call the MCP server's search_history and read_turns through
// `ctxfold mcp --transcript <session file>` (one call a run).

// ClientPi is pi's name in setup.
const ClientPi = "pi"

// piExtensionTS is the extension's template.
//
//go:embed pi_extension.ts
var piExtensionTS string

// piAgentDir is pi's folder: $PI_CODING_AGENT_DIR, else ~/.pi/agent.
func (o Options) piAgentDir() string {
	return o.home("PI_CODING_AGENT_DIR", filepath.Join(".pi", "agent"))
}

func piPath(o Options) (string, error) {
	switch o.Scope {
	case ScopeUser:
		return filepath.Join(o.piAgentDir(), "extensions", "ctxfold.ts"), nil
	case ScopeProject:
		return filepath.Join(o.Project, ".pi", "extensions", "ctxfold.ts"), nil
	}
	return "", errUnknownScope(o.Scope)
}

// piExtension is the extension file for the command bin.
func piExtension(bin string, archive bool) []byte {
	return []byte(strings.NewReplacer("{{VERSION}}", ownVersion, "{{CTXFOLD}}", jsString(bin), "{{ARCHIVE}}", archiveArg(archive)).Replace(piExtensionTS))
}

// Pi plans the extension file. Nothing is written.
func Pi(o Options) ([]*Change, error) {
	if o.Command == "" {
		o.Command = "ctxfold"
	}
	path, err := piPath(o)
	if err != nil {
		return nil, err
	}
	c, err := planOwnFile(path, piExtension(o.Command, o.Archive), o.Uninstall, "extension")
	if err != nil {
		return nil, err
	}
	return []*Change{c}, nil
}

// piHookEvents are the events the extension runs the hook on.
var piHookEvents = []string{"session_before_compact", "session_compact", "before_agent_start"}

var piClient = &Client{
	Name: ClientPi, Title: "pi", Program: "pi", Folder: ".pi/agent", FolderEnv: "PI_CODING_AGENT_DIR", Format: "pi",
	Files: func(o Options) ([]string, error) {
		p, err := piPath(o)
		return []string{p}, err
	},
	Plan: Pi,
	Inspect: func(in *Installation, o Options) ([]string, error) {
		path, err := piPath(o)
		if err != nil {
			return nil, err
		}
		var want []string
		bin, ok := readOwnCommand(path)
		for _, ev := range piHookEvents {
			want = append(want, "hook "+ev)
			if ok {
				in.Entries = append(in.Entries, Entry{Kind: "hook", Event: ev, File: path, Argv: []string{bin, "hook", "--client", "pi", Marker}})
			}
		}
		return want, nil
	},
}
