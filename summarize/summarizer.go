package summarize

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/transcript"
)

// Summarizer turns covered turns into summary text. Implementations:
// Extractive (offline, deterministic), OpenAI (any Chat Completions
// endpoint) and Exec (a shell command). render --fit reuses the interface
// with its own budget.
type Summarizer interface {
	// Name is recorded in the compaction_finished event.
	Name() string
	// CacheKey identifies the settings that shape the summaries (a command
	// and its environment, an endpoint, a model and its limits), so a cache
	// of summaries (render --fit's) never serves one summarizer's output
	// for another's. It never contains a secret such as an API key.
	CacheKey() string
	// Summarize returns the summary text without SummaryPrefix. An empty
	// result is rejected by the caller.
	Summarize(ctx context.Context, req Request) (string, error)
}

// Limiter is implemented by summarizers that make several provider calls
// per Summarize (retries, chunking): a caller with its own budget (render
// --fit) hands each call only what remains of it.
type Limiter interface {
	// Limited returns a copy that makes at most maxCalls provider calls —
	// every HTTP attempt counts, retries included — and stops at deadline;
	// used reports how many calls the copy has made so far.
	Limited(maxCalls int, deadline time.Time) (s Summarizer, used func() int)
}

// Request is one summarization job.
type Request struct {
	// Previous is the active summary's text (without SummaryPrefix), "" when
	// none: a re-compaction absorbs it (docs/FORMAT.md §4, rolling summary).
	Previous string
	// Nodes are the newly covered turns, in order.
	Nodes []*transcript.Node
	// FirstRequest is the first request the user typed, from the turns the
	// previous summary covers, when Previous does not state it under an
	// "## Objective" heading (a client's own summary, imported): the
	// objective stays the first request ever made. "" when unknown.
	FirstRequest string
	// Facts are every fact the summary should carry: audit.Extract over
	// every turn the new summary covers (the previous summary's included)
	// and their caller subtrees — what `ctxfold audit` will measure. nil:
	// the summarizer takes them from Nodes (and from the fact sections of
	// Previous).
	Facts []audit.Fact
	// Pinned are texts the user pinned (ctxfold pin) among the turns to
	// summarize; the summary quotes each verbatim.
	Pinned []string
	// MaxTokens is the summary's token budget.
	MaxTokens int
	// Ceiling is the most the summary may grow to, past MaxTokens, to hold
	// every fact and the pinned texts (docs/COMPACT.md §3); 0: MaxTokens.
	Ceiling int
	// Encoding sizes text through estimate.Text.
	Encoding string
	// FullResults shows tool results unclipped: the caller has already cut
	// long output into chunks it wants read whole (render --fit).
	FullResults bool
}

// Sections are the summary's headings, in order (docs/COMPACT.md §3's structured
// summary). Every summarizer asks for, or builds, these.
var Sections = []string{
	"Objective",
	"Current task",
	"Plan",
	"Current state and plan",
	"Files inspected",
	"Files modified",
	"Commands run",
	"Key decisions",
	"Rejected approaches",
	"Constraints and user preferences",
	"Errors and failing tests",
	"Open questions",
	"Latest user request",
}

// Tool output is clipped hard in every summarizer input: the head and the
// tail of a long result carry the command's verdict, the middle rarely.
const (
	clipHead = 600
	clipTail = 300
)

func clip(s string, head, tail int) string {
	if len(s) <= head+tail+40 {
		return s
	}
	h := cutUTF8(s, head)
	t := s[len(s)-tail:]
	for len(t) > 0 && !utf8Start(t[0]) {
		t = t[1:]
	}
	return fmt.Sprintf("%s\n… [%d bytes clipped] …\n%s", h, len(s)-len(h)-len(t), t)
}

func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n]
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// mediaNotice is how non-text media reaches a summarizer: a reference, never
// the bytes (docs/COMPACT.md §3).
func mediaNotice(b transcript.Block) string {
	kind := b.Type
	if b.MediaType != "" {
		kind += " " + b.MediaType
	}
	src := b.Source
	if src == "" {
		src = "inline"
	}
	return fmt.Sprintf("[%s: %s — media reference only; not shown to the summarizer]", kind, src)
}

// Transcript writes covered nodes as plain text for a summarizer prompt:
// roles, text, tool calls with their arguments, tool results clipped,
// media as a reference notice. Thinking is left out (signed reasoning is the
// model's, not the conversation's).
func Transcript(nodes []*transcript.Node) string { return transcriptText(nodes, true) }

// TranscriptFull is Transcript with tool results unclipped, for a caller
// that sizes and chunks the text itself.
func TranscriptFull(nodes []*transcript.Node) string { return transcriptText(nodes, false) }

// transcriptOf is the request's transcript, clipped unless FullResults.
func transcriptOf(req Request) string { return transcriptText(req.Nodes, !req.FullResults) }

func transcriptText(nodes []*transcript.Node, clipResults bool) string {
	var b strings.Builder
	for _, nd := range nodes {
		writeNode(&b, nd, clipResults)
	}
	return b.String()
}

func writeNode(b *strings.Builder, nd *transcript.Node, clipResults bool) {
	result := func(s string) string {
		if clipResults {
			return clip(s, clipHead, clipTail)
		}
		return s
	}
	label := string(nd.Role)
	if nd.ToolCallID != "" {
		label += " (result of " + nd.ToolCallID + ")"
	}
	fmt.Fprintf(b, "### %s [%s]\n", label, nd.ID)
	text := func(s string) {
		if s = strings.TrimRight(s, "\n"); s != "" {
			b.WriteString(s)
			b.WriteString("\n")
		}
	}
	if !nd.Content.IsBlocks {
		if nd.Role == transcript.RoleTool {
			text(result(nd.Content.Text))
		} else {
			text(nd.Content.Text)
		}
	}
	for _, blk := range nd.Content.Blocks {
		switch blk.Type {
		case transcript.BlockText:
			text(blk.Text)
		case transcript.BlockThinking:
		case transcript.BlockToolCall:
			text(fmt.Sprintf("-> call %s %s (id %s)", blk.Name, transcript.ArgumentsText(blk.Arguments), blk.ID))
		case transcript.BlockToolResult:
			status := ""
			if blk.IsError {
				status = " (error)"
			}
			text(fmt.Sprintf("<- result of %s%s:", blk.ToolCallID, status))
			text(result(blk.Text))
		default:
			text(mediaNotice(blk))
		}
	}
	for _, c := range nd.ToolCalls {
		text(fmt.Sprintf("-> call %s %s (id %s)", c.Name, c.ArgumentsText(), c.ID))
	}
	b.WriteString("\n")
}

// Prompt is the instruction a model-backed summarizer (OpenAI, Exec) sends:
// the same sections as the extractive summary, identifiers verbatim.
func Prompt(req Request) string {
	return promptFor(req.Previous, transcriptOf(req), req.MaxTokens, req.Facts)
}

// maxPromptFactBytes bounds the fact list a prompt carries: past it the
// lowest-ranked facts are left to the ledger (compact appends the facts a
// summary lacks).
const maxPromptFactBytes = 48 << 10

func promptFor(previous, transcriptText string, maxTokens int, facts []audit.Fact) string {
	var b strings.Builder
	b.WriteString(`You are compacting an LLM conversation. The turns below will be removed from the
model's context and replaced by your summary, so it must carry everything needed to
continue the work. Write a structured summary in Markdown with exactly these sections,
as "## " headings, in this order (write "none" under a section with nothing to say):
`)
	for _, s := range Sections {
		b.WriteString("- " + s + "\n")
	}
	fmt.Fprintf(&b, `
Rules:
- Keep identifiers, file paths, commands, function and test names, ids, numbers and
  error messages verbatim.
- Quote the user's constraints and preferences verbatim, in double quotes.
- Under Files modified, list each file written or edited with the functions, types,
  fields, routes, events and keys the change touched ("path → symbols", as the
  fact list's change lines do), and say when a later turn reverted it.
- The objective is the user's first request; the latest user request is the last one.
- Under Current task, the latest request that asks for something and what is still
  open about it; under Plan, the agent's latest todo list or plan, one step a line,
  "[x]" done, "[>]" in progress, "[ ]" open; under Key decisions, each decision with
  its reason; under Rejected approaches, what was tried and undone or dropped.
- Prefer omission to invention: never state anything the turns do not show.
- Media appears only as a reference notice; do not describe its content.
- Stay under %d tokens. Output only the summary.
`, maxTokens)
	writeFactList(&b, facts)
	if previous != "" {
		b.WriteString("\nThe conversation was already summarized once; absorb this earlier summary:\n<previous-summary>\n")
		b.WriteString(strings.TrimRight(previous, "\n"))
		b.WriteString("\n</previous-summary>\n")
	}
	b.WriteString("\nTurns to summarize:\n<transcript>\n")
	b.WriteString(transcriptText)
	b.WriteString("</transcript>\n")
	return b.String()
}

// Offline reports whether s runs locally, deterministically and without
// cost (the extractive summarizer), so a dry run may run it. A wrapper
// that embeds a Summarizer can say so by implementing Unwrap.
func Offline(s Summarizer) bool {
	for s != nil {
		switch v := s.(type) {
		case Extractive, *Extractive:
			return true
		case interface{ Unwrap() Summarizer }:
			s = v.Unwrap()
		default:
			return false
		}
	}
	return false
}

// writeFactList asks for the facts explicitly (docs/COMPACT.md §3): every
// fact `ctxfold audit` will look for, most valuable first, to be kept
// verbatim. What the summary still lacks is appended as a ledger.
func writeFactList(b *strings.Builder, facts []audit.Fact) {
	if len(facts) == 0 {
		return
	}
	b.WriteString(`
Facts: the summary is checked for each fact below, verbatim (a path may be
shortened to its last two components). Keep every one, the first ones above
all: requests and the user's instructions (quoted), errors, commands, paths,
URLs, identifiers, numbers. Put a fact that fits no section under a final
"## Facts" section, one per line.
<facts>
`)
	size := 0
	for _, f := range audit.Rank(facts) {
		line := "- " + string(f.Kind) + ": " + strings.ReplaceAll(f.Text, "\n", " ") + "\n"
		if size += len(line); size > maxPromptFactBytes {
			break
		}
		b.WriteString(line)
	}
	b.WriteString("</facts>\n")
}
