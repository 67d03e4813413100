package main

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/transcript"
)

// looSignatures is what a session's replies with an omitted thinking say
// of its size (docs/ACCURACY.md, "A thinking sized by its signature"):
// over the replies whose recorded output is their final count (at least
// what they show), the thinking they stand for — the output less the
// shown text and calls, as o200k counts them — and their signatures'
// bytes. estimate's signatureRate is the pooled Σthinking / Σbytes.
type looSignatures struct {
	thinking, bytes float64
	replies         int
}

func looSignaturesOf(t *testing.T, nodes []*transcript.Node) looSignatures {
	t.Helper()
	var s looSignatures
	count := func(text string) int64 {
		n, err := estimate.Text(estimate.ClaudeEncoding, text)
		if err != nil {
			t.Fatal(err)
		}
		return int64(n)
	}
	for _, n := range nodes {
		if n.Role != transcript.RoleAssistant || n.Usage == nil || !n.Content.IsBlocks {
			continue
		}
		var shown int64
		sig, thinkingShown := 0, false
		for _, b := range n.Content.Blocks {
			switch b.Type {
			case transcript.BlockThinking:
				thinkingShown = thinkingShown || b.Text != ""
				sig += len(b.Signature)
			case transcript.BlockText:
				shown += count(b.Text)
			case transcript.BlockToolCall:
				shown += count(b.Name) + count(transcript.ArgumentsText(b.Arguments))
			}
		}
		for _, c := range n.ToolCalls {
			shown += count(c.Name) + count(c.ArgumentsText())
		}
		if sig > 0 && !thinkingShown && n.Usage.OutputTokens >= shown {
			s.thinking += float64(n.Usage.OutputTokens - shown)
			s.bytes += float64(sig)
			s.replies++
		}
	}
	return s
}

// looLogSignatures logs the signature rate pooled over the held-out
// sessions (no shared transcript omits its thinking) and over each of
// their publishers: estimate's signatureRate is the pooled figure.
func looLogSignatures(t *testing.T, sessions []looSession) {
	var all looSignatures
	by := map[string]looSignatures{}
	for _, s := range sessions {
		if !looHeld(s.name) || s.sigs.bytes == 0 {
			continue
		}
		owner := strings.SplitN(s.name, "/", 3)[1]
		o := by[owner]
		o.thinking, o.bytes, o.replies = o.thinking+s.sigs.thinking, o.bytes+s.sigs.bytes, o.replies+s.sigs.replies
		by[owner] = o
		all.thinking, all.bytes, all.replies = all.thinking+s.sigs.thinking, all.bytes+s.sigs.bytes, all.replies+s.sigs.replies
	}
	if all.bytes == 0 {
		return
	}
	owners := make([]string, 0, len(by))
	for o, s := range by {
		owners = append(owners, fmt.Sprintf("%s %.4f (%.0f bytes)", o, s.thinking/s.bytes, s.bytes))
	}
	sort.Strings(owners)
	t.Logf("omitted thinking per signature byte, held-out replies whose count is final: %.4f over %d replies, %.0f bytes (%s)",
		all.thinking/all.bytes, all.replies, all.bytes, strings.Join(owners, "; "))
}
