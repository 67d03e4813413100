package transcript

import (
	"regexp"
	"sort"
	"strings"
)

// shellTools are the tools that run a shell command: Claude Code's Bash,
// Codex's shell and exec_command, Gemini's run_shell_command, Factory
// Droid's Execute, and the usual names of OpenAI-style agents. Other tools (a todo list, an editor)
// run no command, whatever their arguments say.
var shellTools = map[string]bool{"bash": true, "shell": true, "sh": true, "zsh": true, "exec_command": true,
	"local_shell": true, "local_shell_call": true, "shell_command": true, "run_shell_command": true,
	"run_terminal_cmd": true, "run_command": true, "execute_command": true, "terminal": true, "container.exec": true,
	"execute": true}

// ShellCommand returns the command a shell tool call runs, "" for any
// other tool: a "command" or "cmd" string, or an argv array, of which a
// `bash -lc SCRIPT` form gives SCRIPT.
func (tc ToolCall) ShellCommand() string {
	if !shellTools[strings.ToLower(tc.Name)] {
		return ""
	}
	args := tc.ArgumentsObject()
	for _, k := range []string{"command", "cmd"} {
		switch v := args[k].(type) {
		case string:
			return strings.TrimSpace(v)
		case []any:
			var argv []string
			for _, e := range v {
				if s, ok := e.(string); ok {
					argv = append(argv, s)
				}
			}
			if len(argv) == 3 && (argv[1] == "-lc" || argv[1] == "-c") {
				return strings.TrimSpace(argv[2])
			}
			return strings.TrimSpace(strings.Join(argv, " "))
		}
	}
	return ""
}

var (
	// reFailed: output that says its command failed, whatever is_error
	// says (Codex reports a non-zero exit only in the text; a test runner
	// prints FAIL and still exits through a pipe).
	// Every marker is anchored at a line start, an exit code alone on its
	// line ("Exit code 1", Codex's "Exit code: 1"): a fetched page that
	// says "Exit code 2 is the way a hook signals…" did not fail. GitHub
	// Copilot CLI 1.0.102 ends a shell result with "<shellId: 0 completed
	// with exit code 2>" and records it as a success.
	reFailed  = regexp.MustCompile(`(?im)^\s*(((<shellId: \d+ completed with )?exit (code|status):? ?[1-9]\d*|process exited with code [1-9]\d*)\W*$|(--- )?FAIL\b|panic:|Traceback \(most recent call last\)|fatal:|error(\[\w+\])?:|\*\* \(\w+Error\))`)
	reErrLine = regexp.MustCompile(`(?i)(\berror\b|\berrors?:|\bfail(ed|ure|s)?\b|panic:|exception|traceback|\bundefined\b|\bcannot\b|\bcan't\b|not found|no such file|permission denied|\bdenied\b|\bfatal\b|segmentation fault|exit (code|status):? [1-9]|\.go:\d+:\d*|", line \d+)`)
	// An import or include line names a module; it is not an error even in
	// a failed result (a traceback quotes the importing line), nor is a
	// numbered source line a file viewer printed ("12→…").
	reImportLine = regexp.MustCompile(`^\s*((from\s+\S+\s+)?import\s|use\s+\S|#include\b|require\(|\d+\s*→)`)
)

// Failed reports whether a tool result reports a failure: flagged
// is_error, or its output says a command failed (a non-zero exit, a
// FAIL/panic:/Traceback/fatal:/error: line).
func (r ToolResult) Failed() bool {
	return r.IsError || reFailed.MatchString(r.Text)
}

// ErrorLines returns up to max error lines of a failed result, nil for
// one that did not fail: lines that say error/FAIL/panic/…, never an
// import line; for a flagged failure with none, its first line.
func (r ToolResult) ErrorLines(max int) []string {
	if !r.Failed() {
		return nil
	}
	var out []string
	first := ""
	for _, line := range strings.Split(r.Text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if first == "" {
			first = line
		}
		if reImportLine.MatchString(line) || !reErrLine.MatchString(line) {
			continue
		}
		out = append(out, line)
		if len(out) >= max {
			break
		}
	}
	if len(out) == 0 && r.IsError && first != "" && !reImportLine.MatchString(first) {
		out = append(out, first)
	}
	return out
}

// JSONStrings are the string values of a decoded JSON value (tool-call
// arguments), depth first, object members in key order: what the audit and
// the extractive summarizer search for facts.
func JSONStrings(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			out = append(out, JSONStrings(e)...)
		}
		return out
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var out []string
		for _, k := range keys {
			out = append(out, JSONStrings(t[k])...)
		}
		return out
	}
	return nil
}
