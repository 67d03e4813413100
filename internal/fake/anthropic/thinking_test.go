package anthropic

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A sub-agent asked to think gets, for its prompt, an omitted thinking
// (a signature, no text) and a Bash call, streamed with the usage of the
// stream's start first and the final usage only thinkingUsageDelay after
// the last block.
func TestThinkingReplyStreamsItsUsageLate(t *testing.T) {
	r := Script(Request{Tools: []struct {
		Name string `json:"name"`
	}{{Name: "Agent"}}, Messages: []Message{user("Delegate. " + MarkAgentThinking)}})
	if len(r.Content) != 1 || r.Content[0].Name != "Agent" || !strings.Contains(string(r.Content[0].Input), MarkThinkingBash) {
		t.Fatalf("the main agent's reply %+v, want an Agent call whose prompt asks to think", r)
	}
	r = Script(Request{Messages: []Message{user("Think, then run one command. " + MarkThinkingBash + "echo x]]")}})
	if len(r.Content) != 2 || r.Content[0].Type != "thinking" || r.Content[0].Signature != thinkingSignature || r.Content[1].Name != "Bash" || r.UsageDelay != thinkingUsageDelay {
		t.Fatalf("the sub-agent's reply %+v, want an omitted thinking and a Bash call, its usage late", r)
	}

	s, err := Start(Options{RecordDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	body := `{"model":"m","stream":true,"max_tokens":10,"messages":[{"role":"user","content":"` + MarkThinkingBash + `echo x]]"}]}`
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Post(s.URL+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var lastBlock, final time.Time
	var signed, started bool
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.Contains(line, `"type":"message_start"`):
			started = strings.Contains(line, `"output_tokens":1`)
		case strings.Contains(line, `"signature_delta"`):
			signed = strings.Contains(line, thinkingSignature)
		case strings.Contains(line, `"type":"content_block_stop"`):
			lastBlock = time.Now()
		case strings.Contains(line, `"type":"message_delta"`):
			final = time.Now()
		}
	}
	if !started || !signed {
		t.Errorf("message_start with one output token %v, the signature streamed %v", started, signed)
	}
	if wait := final.Sub(lastBlock); wait < thinkingUsageDelay*9/10 {
		t.Errorf("the final usage came %v after the last block, want about %v", wait, thinkingUsageDelay)
	}
}
