package summarize

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Exec runs a shell command as the summarizer, the way git runs its editor
// setting: `sh -c CMD`, the prompt (see Prompt) on stdin, the summary on
// stdout. A non-zero exit or empty output is a failure. Any local LLM CLI
// fits.
type Exec struct {
	Command string
	// Env adds variables (KEY=value) to the child's environment.
	Env []string
}

// Name implements Summarizer.
func (e *Exec) Name() string { return "exec" }

// CacheKey implements Summarizer: the command and the variables it adds
// (hashed: a variable may hold a key).
func (e *Exec) CacheKey() string {
	env := sha256.Sum256([]byte(strings.Join(e.Env, "\x00")))
	return "exec\x00" + e.Command + "\x00env=" + hex.EncodeToString(env[:])
}

// Summarize implements Summarizer.
func (e *Exec) Summarize(ctx context.Context, req Request) (string, error) {
	if strings.TrimSpace(e.Command) == "" {
		return "", errors.New("exec: empty --summarizer-cmd")
	}
	c := exec.CommandContext(ctx, "sh", "-c", e.Command)
	c.Stdin = strings.NewReader(Prompt(req))
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	if len(e.Env) > 0 {
		c.Env = append(c.Environ(), e.Env...)
	}
	setProcessGroup(c)
	// Give a cancelled child a moment to exit before its pipes are closed.
	c.WaitDelay = 2 * time.Second
	err := c.Run()
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if err != nil {
		var exitErr *exec.ExitError
		msg := err.Error()
		if errors.As(err, &exitErr) {
			msg = fmt.Sprintf("exit status %d", exitErr.ExitCode())
		}
		if tail := lastLine(errOut.String()); tail != "" {
			msg += ": " + tail
		}
		return "", fmt.Errorf("exec: %q: %s", e.Command, msg)
	}
	text := strings.TrimSpace(out.String())
	if text == "" {
		return "", fmt.Errorf("exec: %q printed no summary", e.Command)
	}
	return text, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return clipText(s, 200)
}
