package setup

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// codexHooks are the Codex CLI hooks (recorded with 0.169: PreCompact,
// PostCompact, then SessionStart with source compact once the compacted
// record is written; UserPromptSubmit on the next prompt). SessionStart has
// no matcher: the hook itself ignores sources other than compact at once.
var codexHooks = []hookSpec{
	{"PreCompact", ""},
	{"PostCompact", ""},
	{"SessionStart", ""},
	{"UserPromptSubmit", ""},
}

// The block setup appends to Codex's config.toml; uninstall removes it,
// which gives back the original bytes.
const (
	codexBlockStart = "# >>> ctxfold: added by 'ctxfold setup codex'; 'ctxfold setup codex --uninstall' removes this block\n"
	codexBlockEnd   = "# <<< ctxfold\n"
)

// Codex plans the changes to Codex CLI's files in CodexHome
// ($CODEX_HOME, else ~/.codex): the hooks in hooks.json, the MCP server
// in config.toml. Codex asks the user to review new hooks before it runs
// them (docs/HOOKS.md); setup cannot vouch for them.
func Codex(o Options) ([]*Change, error) {
	codexHome := o.codexHome()
	if err := userOnly(o, "codex", filepath.Join(codexHome, "hooks.json")); err != nil {
		return nil, err
	}
	if o.Command == "" {
		o.Command = "ctxfold"
	}
	hooks, err := plan(filepath.Join(codexHome, "hooks.json"), o.Uninstall, func(obj *object) ([]string, error) {
		return mergeHooks(obj, o.Command, hookLine(o, "hook --client Codex"), o.Uninstall, hookSet{codexHooks, hookTimeout})
	})
	if err != nil {
		return nil, err
	}
	cfg, err := planCodexConfig(filepath.Join(codexHome, "config.toml"), codexBlock(o.Command, codexHome), o.Uninstall)
	if err != nil {
		return nil, err
	}
	return []*Change{hooks, cfg}, nil
}

// codexBlock is the [mcp_servers.ctxfold] block. Codex starts an MCP
// server with a few variables of its own environment only (HOME, PATH,
// SHELL, LANG, TERM, … — recorded with 0.169: not CODEX_HOME, no session
// id), so the block names CODEX_HOME: the server finds the session's
// rollout under it.
func codexBlock(bin, codexHome string) []byte {
	var b bytes.Buffer
	b.WriteString(codexBlockStart)
	b.WriteString("[mcp_servers.ctxfold]\n")
	fmt.Fprintf(&b, "command = %s\n", strconv.Quote(bin))
	b.WriteString("args = [\"mcp\"]\n")
	fmt.Fprintf(&b, "env = { CTXFOLD_CLIENT = \"codex\", CODEX_HOME = %s }\n", strconv.Quote(codexHome))
	b.WriteString(codexBlockEnd)
	return b.Bytes()
}

// planCodexConfig appends (or removes) ctxfold's block in config.toml. A
// file that is not valid TOML, or already defines mcp_servers.ctxfold
// itself, is left untouched.
func planCodexConfig(path string, block []byte, uninstall bool) (*Change, error) {
	c := &Change{Path: path, Action: "unchanged"}
	var fi os.FileInfo
	var err error
	if c.Before, fi, c.exists, err = readSettings(path); err != nil {
		return nil, err
	}
	// A fresh document each time: go-toml cannot decode into a map that
	// already holds an array of tables ([[…]]).
	doc, err := decodeTOML(c.Before)
	if err != nil {
		return nil, &FileError{path, fmt.Errorf("not valid TOML, left untouched: %w", err)}
	}
	start := bytes.Index(c.Before, []byte(codexBlockStart))
	end := -1
	if start >= 0 {
		if e := bytes.Index(c.Before[start:], []byte(codexBlockEnd)); e >= 0 {
			end = start + e + len(codexBlockEnd)
		} else {
			return nil, &FileError{path, fmt.Errorf("holds the start of ctxfold's block (%q) but not its end (%q): left untouched; remove the block by hand",
				strings.TrimSpace(codexBlockStart), strings.TrimSpace(codexBlockEnd))}
		}
	}
	switch {
	case uninstall && end > 0:
		c.After = append(append([]byte(nil), c.Before[:start]...), c.Before[end:]...)
		c.Action, c.Did = "update", []string{"removed the MCP server"}
	case !uninstall && end > 0 && !bytes.Equal(c.Before[start:end], block):
		// An older setup's block (before it named CODEX_HOME, or another
		// command): replaced in place.
		c.After = append(append(append([]byte(nil), c.Before[:start]...), block...), c.Before[end:]...)
		if _, err := decodeTOML(c.After); err != nil {
			return nil, &FileError{path, fmt.Errorf("updating [mcp_servers.ctxfold] would make it invalid (%v); left untouched", err)}
		}
		c.Action, c.Did = "update", []string{"updated the MCP server"}
	case uninstall, end > 0:
		return c, nil
	default:
		if servers, ok := doc["mcp_servers"].(map[string]any); ok && servers[ServerName] != nil {
			c.Did = []string{"kept your own MCP server named " + ServerName + " (ctxfold's not installed)"}
			return c, nil
		}
		c.After = append([]byte(nil), c.Before...)
		if len(c.After) > 0 && !bytes.HasSuffix(c.After, []byte("\n")) {
			c.After = append(c.After, '\n')
		}
		c.After = append(c.After, block...)
		if _, err := decodeTOML(c.After); err != nil {
			return nil, &FileError{path, fmt.Errorf("adding [mcp_servers.ctxfold] would make it invalid (%v); left untouched", err)}
		}
		c.Action, c.Did = "update", []string{"added the MCP server"}
		if !c.exists {
			c.Action = "create"
		}
	}
	if c.exists && fi.Mode().Perm()&0o200 == 0 {
		return nil, &FileError{path, errReadOnly(fi)}
	}
	if c.exists {
		if c.Backup, err = backupPath(path, c.Before); err != nil {
			return nil, err
		}
	}
	if uninstall {
		bak, err := os.ReadFile(path + BackupSuffix)
		switch {
		case err == nil && bytes.Equal(bytes.TrimRight(bak, "\n"), bytes.TrimRight(c.After, "\n")):
			c.After, c.Action, c.Backup = bak, "restore", "" // the newline setup added goes too
		case err != nil && len(bytes.TrimSpace(c.After)) == 0:
			c.After, c.Action, c.Backup = nil, "remove", "" // a file setup created
		}
	}
	return c, nil
}

func decodeTOML(b []byte) (map[string]any, error) {
	var doc map[string]any
	err := toml.Unmarshal(b, &doc)
	return doc, err
}

// codexHome is Codex's folder: $CODEX_HOME, else ~/.codex.
func (o Options) codexHome() string { return o.home("CODEX_HOME", ".codex") }

// codexClient is Codex CLI: hooks.json and config.toml in its folder.
var codexClient = &Client{
	Name: ClientCodex, Title: "Codex", Program: "codex", Folder: ".codex", FolderEnv: "CODEX_HOME", Format: "codex",
	Files: func(o Options) ([]string, error) {
		return []string{filepath.Join(o.codexHome(), "hooks.json"), filepath.Join(o.codexHome(), "config.toml")}, nil
	},
	Plan: Codex,
	Inspect: func(in *Installation, o Options) ([]string, error) {
		if err := in.readJSON(filepath.Join(o.codexHome(), "hooks.json"), codexHooks, false); err != nil {
			return nil, err
		}
		return expected(codexHooks, false), in.readCodexConfig(filepath.Join(o.codexHome(), "config.toml"))
	},
	Note: "Codex runs new hooks only once you trust them: review them when Codex asks at its next interactive start; 'codex exec' runs untrusted hooks only with --dangerously-bypass-hook-trust (docs/HOOKS.md)",
}
