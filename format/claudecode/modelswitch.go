package claudecode

import (
	"regexp"
	"strings"
)

// A `/model` command in Claude Code writes what it set as the command's
// local output: "Set model to claude-sonnet-4-6" (the desktop app,
// 2.1.16x, a user line), "Set model to \x1b[1mOpus 4.8\x1b[22m and saved as
// your default for new sessions" (the CLI, 2.1.2xx: the display name in
// bold, a user line) or "Set model to `Sonnet 4.6` for this session only"
// (2.1.3xx: a system record of subtype local_command).
// The requests after it are the new model's, and a model of another
// tokenizer reads the same conversation as another count
// (docs/INTEROP-claude-code.md, "A model switch"), so the importer takes
// the named model as the session's from there on, as an assistant line's
// model is taken.

const setModelPrefix = "<local-command-stdout>Set model to "

var (
	// ansiSGR is a terminal style sequence (the CLI's bold).
	ansiSGR = regexp.MustCompile("\x1b\\[[0-9;]*m")
	// modelID is a Claude model id as the API names it, with the
	// client's 1M-context suffix dropped ("claude-opus-4-6[1m]").
	modelID = regexp.MustCompile(`^(claude-[a-z0-9][a-z0-9.-]*[a-z0-9])(\[1m\])?$`)
	// displayName is a Claude model's display name: "Opus 4.8", "Opus 5",
	// "Sonnet 4.6 (1M context)".
	displayName = regexp.MustCompile(`^(Opus|Sonnet|Haiku) (\d+)(?:\.(\d+))?(?: \(.*\))?$`)
)

// noteSwitch takes the model a /model command's output text names, if it
// is one, as the session's: the requests after it are that model's.
func (p *planner) noteSwitch(text string) {
	if m := switchedModel(text); m != "" {
		p.model = m
	}
}

// switchedModel is the model a `/model` command's output names, "" when
// text is no such output or names no model this can tell ("Opus Plan",
// the workspace default, a custom model).
func switchedModel(text string) string {
	rest, ok := strings.CutPrefix(strings.TrimSpace(text), setModelPrefix)
	if !ok {
		return ""
	}
	rest, _, _ = strings.Cut(rest, "</local-command-stdout>")
	name := ansiSGR.ReplaceAllString(rest, "")
	for _, tail := range []string{" for this session only", " and saved as ", " with ", " · "} {
		name, _, _ = strings.Cut(name, tail)
	}
	name = strings.Trim(strings.TrimSpace(name), "`") // 2.1.3xx: `Sonnet 4.6`
	if m := modelID.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	if m := displayName.FindStringSubmatch(name); m != nil {
		id := "claude-" + strings.ToLower(m[1]) + "-" + m[2]
		if m[3] != "" {
			id += "-" + m[3]
		}
		return id
	}
	return ""
}
