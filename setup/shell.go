package setup

import (
	"path/filepath"
	"strings"
)

// Marker is the argument setup adds to every command it writes into a
// client's settings (the hooks and the status line): `ctxfold hook` and
// `ctxfold statusline` accept and ignore it, and setup recognises its own
// entries by it whatever command ran ctxfold (docs/HOOKS.md, "Merge").
const Marker = "--by-setup"

// shellQuote quotes s for the POSIX shell the clients run hook and status
// line commands with (Claude Code, Codex and Gemini CLI alike), when it
// holds anything but the characters a shell word keeps as they are; a
// leading ~ stays unquoted so the shell still expands it.
func shellQuote(s string) string {
	plain := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./:@%+=,~", r)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellWords splits a command line into words as a POSIX shell does with
// quotes and backslashes (no expansion); an unterminated quote ends the
// last word.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	in := false // inside a word
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words, in = append(words, w.String()), false
				w.Reset()
			}
			continue
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
		default:
			w.WriteByte(c)
		}
		in = true
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// command is the shell command setup writes to run ctxfold's sub-command
// sub (with args).
func command(bin, sub string) string { return shellQuote(bin) + " " + sub + " " + Marker }

// match is how a command line relates to ctxfold's sub-command sub.
type match int

const (
	notOurs match = iota
	// mentions: it runs ctxfold (or names it) but setup did not write it.
	mentions
	ours
)

// recognise tells setup's own entries: sub-command sub of any command
// carrying the marker, or — as setup wrote them before the marker — of
// the configured command or an executable named ctxfold.
func recognise(cmdline, bin, sub string) match {
	w := shellWords(cmdline)
	if len(w) >= 2 && w[1] == sub {
		for _, a := range w[2:] {
			if a == Marker {
				return ours
			}
		}
		if w[0] == bin || isCtxfold(w[0]) {
			return ours
		}
		return mentions // another program's sub-command of that name, or ctxfold under another name
	}
	for _, a := range w {
		if isCtxfold(a) {
			return mentions
		}
	}
	return notOurs
}

func isCtxfold(word string) bool {
	b := strings.ToLower(filepath.Base(strings.ReplaceAll(word, `\`, "/")))
	return b == "ctxfold" || b == "ctxfold.exe"
}
