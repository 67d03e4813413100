// Package claudecodeinterop drives the real Claude Code client against the
// fake Anthropic provider (internal/fake/anthropic) and turns what it writes —
// its transcript files and every request it sent — into the normalised
// fixtures under testdata/interop/claude-code/<version>/<scenario>/ that the
// oracle tests compare ctxfold's import and render with (docs/INTEROP-claude-code.md).
package claudecodeinterop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/internal/fake/anthropic"
)

// Version is the pinned client version the committed fixtures come from.
const Version = "2.1.328"

// Versions are the client versions whose recordings are committed; the
// oracle tests run on each (the pinned one and the newest,
// docs/INTEROP-claude-code.md).
var Versions = []string{Version, "2.1.332"}

// Step is one run of the client.
type Step struct {
	// Args follow the client binary; Prompt, when set, goes last.
	Args []string
	// Turns, when set, are fed one by one as stream-json user messages,
	// each after the client reported the previous turn's result (queued
	// messages would be merged into one turn).
	Turns []string
	// Env adds NAME=value entries to the client's environment.
	Env []string
}

// Scenario is a named sequence of client runs in one working directory.
type Scenario struct {
	Name  string
	About string
	Steps []Step
	// Setup, when set, prepares the client's home and working directory
	// before the first run (a hook, a skill).
	Setup func(home, work string) error
}

// Session ids are fixed so a re-recording sends the same metadata; the
// normaliser maps every UUID anyway.
const (
	sessA = "5e55a0a0-0000-4000-8000-000000000001"
	sessB = "5e55a0a0-0000-4000-8000-000000000002"
)

// common restricts the built-in tools to Bash and Agent: the recorded
// system prompt and tool definitions stay real but the fixtures stay small.
var common = []string{"--tools", "Bash,Agent", "--allowedTools", "Bash"}

func printStep(prompt string, extra ...string) Step {
	args := append([]string{"-p"}, extra...)
	args = append(args, common...)
	return Step{Args: append(args, "--", prompt)}
}

func streamJSON(session string, prompts ...string) Step {
	args := []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--session-id", session}
	return Step{Args: append(args, common...), Turns: prompts}
}

// Scenarios lists every recorded scenario, in recording order.
func Scenarios() []Scenario {
	return []Scenario{
		{Name: "chat", About: "three user turns in one process (stream-json input)",
			Steps: []Step{streamJSON(sessA, "First chat turn.", "Second chat turn.", "Third chat turn.")}},
		{Name: "tool", About: "one Bash call the client runs, and its result",
			Steps: []Step{printStep("Please run a command. [[bash:echo hello-from-tool]]", "--session-id", sessA)}},
		{Name: "tool-error", About: "a Bash call that exits non-zero (is_error result)",
			Steps: []Step{printStep("Run something that fails. [[toolerror]]", "--session-id", sessA)}},
		{Name: "parallel", About: "two Bash calls in one assistant message",
			Steps: []Step{printStep("Run two things at once. [[parallel]]", "--session-id", sessA)}},
		{Name: "subagent", About: "a sub-agent through the Agent tool",
			Steps: []Step{printStep("Delegate this to a sub-agent. [[agent]]", "--session-id", sessA, "--allowedTools", "Agent")}},
		// A sub-agent that calls a tool, with a skill, hooks and an MCP
		// server: its second request carries the agent types and the
		// server's instructions, which clients before 2.1.259 do not write
		// in its file (docs/INTEROP-claude-code.md, "A sub-agent's second
		// request"; 2.1.222 recorded by name).
		{Name: "subagent-step", About: "a sub-agent that runs one Bash call, then replies",
			Setup: attachmentsSetup,
			Steps: []Step{{Args: []string{"-p", "--session-id", sessA, "--tools", "Bash,Agent,Skill", "--allowedTools", "Bash,Agent",
				"--mcp-config", mcpConfig(), "--", "Delegate a command to a sub-agent. [[agent-bash]]"}}}},
		{Name: "compact", About: "two turns, /compact, then two more turns",
			Steps: []Step{
				printStep("Before compaction, turn one.", "--session-id", sessA),
				printStep("Before compaction, turn two. [[bash:echo kept-by-compaction]]", "--resume", sessA),
				printStep("/compact", "--resume", sessA),
				printStep("After compaction, turn three.", "--resume", sessA),
				printStep("After compaction, turn four.", "--resume", sessA),
			}},
		// A file read before /compact: the client re-attaches it after the
		// compaction (2.1.2xx writes the attachment without its rendered
		// text: docs/INTEROP-claude-code.md, "Attachments without
		// rendered content"; 2.1.222 recorded by name).
		{Name: "compact-file", About: "a Read of a file, /compact, then a turn: the file re-attached after the compaction",
			Setup: notesSetup,
			Steps: []Step{
				{Args: []string{"-p", "--session-id", sessA, "--tools", "Bash,Read", "--allowedTools", "Bash,Read", "--", "Read the notes. [[read:" + workDir + "/notes.md]]"}},
				{Args: []string{"-p", "--resume", sessA, "--tools", "Bash,Read", "--allowedTools", "Bash,Read", "--", "/compact"}},
				{Args: []string{"-p", "--resume", sessA, "--tools", "Bash,Read", "--allowedTools", "Bash,Read", "--", "After compaction, one more turn."}},
			}},
		// A skill loaded beside another call in one assistant message: the
		// skill's text, a meta user line after the Skill result, must stay
		// on the chain the other call's result continues.
		{Name: "skill-parallel", About: "a Skill call and a Bash call in one assistant message",
			Setup: attachmentsSetup,
			Steps: []Step{{Args: []string{"-p", "--session-id", sessA, "--tools", "Bash,Skill", "--allowedTools", "Bash,Skill",
				"--", "Use the skill and run a command. [[skill-bash:pdf-notes]]"}}}},
		{Name: "resume", About: "one turn, then a second process resumes the session",
			Steps: []Step{
				printStep("First turn before resume.", "--session-id", sessA),
				printStep("Second turn after resume.", "--resume", sessA),
			}},
		{Name: "fork", About: "one turn, then --fork-session into a new session id",
			Steps: []Step{
				printStep("Turn on the original session.", "--session-id", sessA),
				printStep("Turn on the fork.", "--resume", sessA, "--fork-session", "--session-id", sessB),
			}},
	}
}

// interactive runs a print-mode step with the entrypoint of a session a
// person started: Claude Code leaves the claude-code-guide agent out of a
// program's sessions (sdk-cli), so a print-mode recording's Task tool
// lists one agent fewer than the user's (2.1.39: 613 bytes). 2.1.39 keeps
// the entrypoint it finds set; 2.1.222 and later turn "cli" into
// "sdk-cli" in print mode, so their default recordings stay a program's
// (docs/ACCURACY.md, "The prior").
var interactive = []string{"CLAUDE_CODE_ENTRYPOINT=cli"}

// DefaultScenarios are the prior's recordings (docs/ACCURACY.md, "The
// prior"): one print-mode turn with the client's default tools, as a new
// user runs it (no CLAUDE.md, no MCP server, nothing of the restriction
// the other scenarios use), for the first request's system prompt and
// tool definitions; and one that delegates to a sub-agent (Task, Agent
// in newer clients), for a sub-agent's first request. Not among
// Scenarios(): they are recorded only when named (scripts/record-priors.sh
// keeps their first requests).
func DefaultScenarios() []Scenario {
	return []Scenario{
		{Name: "default", About: "one turn with the default tools (the prior's recording)",
			Steps: []Step{{Env: interactive, Args: []string{"-p", "--session-id", sessA, "--", "Hello. Reply briefly."}}}},
		{Name: "default-subagent", About: "a sub-agent with the default tools (the prior's recording)",
			Steps: []Step{{Env: interactive, Args: []string{"-p", "--session-id", sessA, "--allowedTools", "Task,Agent", "--", "Delegate this to a sub-agent. [[agent]]"}}}},
	}
}

// AttachmentScenarios record what a client before 2.1.3xx sends for the
// attachment records it writes without rendered content
// (docs/INTEROP-claude-code.md, "Attachments without rendered content"):
// a SessionStart hook's additional context, a UserPromptSubmit hook's
// output, the agent types, an MCP server's instructions (the recorder's
// own server, mcpserver.go) and a user skill's listing, then one Bash
// call.
// Recorded only when named, with such a client (CTXFOLD_CLAUDE_BIN, e.g.
// 2.1.222): interop/claude-code/record.sh attachments.
func AttachmentScenarios() []Scenario {
	return []Scenario{
		{Name: "attachments", About: "a turn with hook output, agent types, MCP instructions and a skill listing, and one Bash call",
			Setup: attachmentsSetup,
			Steps: []Step{{Args: []string{"-p", "--session-id", sessA, "--tools", "Bash,Agent,Skill", "--allowedTools", "Bash",
				"--mcp-config", mcpConfig(), "--", "Please run a command. [[bash:echo hello-from-tool]]"}}}},
	}
}

// ModelSwitchScenarios record a `/model` command between two turns of one
// session (docs/INTEROP-claude-code.md, "A model switch"): what the client
// writes of it and the model the request after it names. Recorded only
// when named: interop/claude-code/record.sh model-switch.
func ModelSwitchScenarios() []Scenario {
	return []Scenario{
		{Name: "model-switch", About: "a turn, /model claude-sonnet-4-6, then a turn on the new model",
			Steps: []Step{streamJSON(sessA, "First turn, on the default model.", "/model claude-sonnet-4-6", "Second turn, after /model.")}},
	}
}

// ThinkingScenarios record a sub-agent whose reply thinks — an omitted
// thinking, then a Bash call — with the final usage a second and a half
// after the reply's last block (docs/INTEROP-claude-code.md, "A
// sub-agent's thinking, counted at its start"): what output count the
// client writes on the reply's lines.
// Recorded only when named: interop/claude-code/record.sh subagent-thinking.
func ThinkingScenarios() []Scenario {
	return []Scenario{
		{Name: "subagent-thinking", About: "a sub-agent whose reply is an omitted thinking and a Bash call, its usage late",
			Steps: []Step{{Args: []string{"-p", "--session-id", sessA, "--tools", "Bash,Agent", "--allowedTools", "Bash,Agent",
				"--", "Delegate a thought-through command to a sub-agent. [[agent-thinking]]"}}}},
	}
}

// notesSetup writes the file compact-file reads.
func notesSetup(_, work string) error {
	return os.WriteFile(filepath.Join(work, "notes.md"), []byte("# Notes\n\nThe release is on Friday.\nThe build uses Go 1.26.\n"), 0o644)
}

// attachmentsSetup writes a user skill and two hooks in the client's
// settings.
func attachmentsSetup(home, _ string) error {
	skill := filepath.Join(home, ".claude", "skills", "pdf-notes")
	if err := os.MkdirAll(skill, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: pdf-notes\ndescription: Summarise a PDF into notes with page references.\n---\nRead the PDF and write notes.\n"), 0o644); err != nil {
		return err
	}
	const settings = `{"hooks":{` +
		`"SessionStart":[{"hooks":[{"type":"command","command":"echo '{\"hookSpecificOutput\":{\"hookEventName\":\"SessionStart\",\"additionalContext\":\"Project rule: keep answers short.\"}}'"}]}],` +
		`"UserPromptSubmit":[{"hooks":[{"type":"command","command":"echo 'Prompt context: ticket ABC-1'"}]}]}}`
	return os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(settings), 0o644)
}

// Config is one recording run.
type Config struct {
	// Client is the claude binary of the pinned version.
	Client string
	// Out receives one directory per scenario.
	Out string
	// Only, when non-empty, limits the run to these scenario names.
	Only []string
	// StepTimeout bounds one client run.
	StepTimeout time.Duration
	// Log receives progress lines.
	Log io.Writer
}

// Record runs every selected scenario and writes its normalised fixtures.
func Record(ctx context.Context, cfg Config) error {
	if cfg.StepTimeout == 0 {
		cfg.StepTimeout = 3 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	for k, sc := range slices.Concat(Scenarios(), DefaultScenarios(), AttachmentScenarios(), ModelSwitchScenarios(), ThinkingScenarios()) {
		if (len(cfg.Only) > 0 || k >= len(Scenarios())) && !slices.Contains(cfg.Only, sc.Name) {
			continue
		}
		start := time.Now()
		if err := recordOne(ctx, cfg, sc); err != nil {
			return fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		fmt.Fprintf(cfg.Log, "recorded %s in %s\n", sc.Name, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

func recordOne(ctx context.Context, cfg Config, sc Scenario) error {
	tmp, err := os.MkdirTemp("", "ctxfold-interop-claude-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// Resolve symlinks so the path the client records is the one replaced.
	if tmp, err = filepath.EvalSymlinks(tmp); err != nil {
		return err
	}
	home, work, reqs := filepath.Join(tmp, "home"), filepath.Join(tmp, "work"), filepath.Join(tmp, "requests")
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	n := NewNormaliser(map[string]string{
		work: "/interop/work",
		home: "/interop/home",
		tmp:  "/interop",
	})
	srv, err := anthropic.Start(anthropic.Options{RecordDir: reqs, Canonical: n.Paths})
	if err != nil {
		return err
	}
	defer srv.Close()
	if sc.Setup != nil {
		if err := sc.Setup(home, work); err != nil {
			return err
		}
	}
	for i, st := range sc.Steps {
		if err := runStep(ctx, cfg, srv.URL, home, work, st); err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
	}
	if err := srv.Close(); err != nil {
		return err
	}
	dst := filepath.Join(cfg.Out, sc.Name)
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return n.Collect(filepath.Join(home, ".claude", "projects", slug(work)), reqs, dst)
}

// slug is Claude Code's project directory name for a working directory.
func slug(dir string) string {
	var b strings.Builder
	for _, r := range dir {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// workDir in a step's argument is replaced by the scenario's working
// directory when the step runs (a file the prompt names by its absolute
// path).
const workDir = "{work}"

func runStep(ctx context.Context, cfg Config, url, home, work string, st Step) error {
	ctx, cancel := context.WithTimeout(ctx, cfg.StepTimeout)
	defer cancel()
	args := make([]string, len(st.Args))
	for i, a := range st.Args {
		args[i] = strings.ReplaceAll(a, workDir, work)
	}
	cmd := exec.CommandContext(ctx, cfg.Client, args...)
	cmd.Dir = work
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"SHELL=/bin/bash",
		"LANG=C.UTF-8",
		"TERM=dumb",
		"TZ=UTC",
		"ANTHROPIC_BASE_URL=" + url,
		"ANTHROPIC_API_KEY=sk-ant-interop-dummy",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}
	cmd.Env = append(cmd.Env, st.Env...)
	fmt.Fprintf(cfg.Log, "  claude %s\n", strings.Join(args, " "))
	var out bytes.Buffer
	cmd.Stderr = &out
	if len(st.Turns) == 0 {
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %w\n%s", cfg.Client, err, tail(out.Bytes(), 2000))
		}
		return nil
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for _, t := range st.Turns {
		b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": t}})
		if _, err := in.Write(append(b, '\n')); err != nil {
			break
		}
		// The context deadline bounds this wait: it kills the client,
		// which closes stdout.
		for sc.Scan() {
			if bytes.Contains(sc.Bytes(), []byte(`"type":"result"`)) {
				break
			}
		}
	}
	in.Close()
	_, _ = io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("%s: %w\n%s", cfg.Client, err, tail(out.Bytes(), 2000))
	}
	return nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
