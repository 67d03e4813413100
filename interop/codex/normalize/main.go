// Command normalize copies one recorded Codex scenario (the rollouts under
// ROOT/home/.codex/sessions and the fake provider's ROOT/requests) into the
// fixture directory OUT, replacing what changes from run to run — the
// temporary root, UUIDs, timestamps, wall times, process ids, random chunk
// ids — by stable values. The rules are listed in docs/INTEROP-codex.md;
// each is applied to the rollout and the requests alike, so the oracle
// tests compare like with like.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

func main() {
	root := flag.String("root", "", "the scenario's temporary root")
	out := flag.String("out", "", "the fixture directory to write")
	flag.Parse()
	if err := run(*root, *out); err != nil {
		fmt.Fprintln(os.Stderr, "normalize:", err)
		os.Exit(1)
	}
}

func run(root, out string) error {
	var rollouts []string
	err := filepath.WalkDir(filepath.Join(root, "home", ".codex", "sessions"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			rollouts = append(rollouts, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	if len(rollouts) == 0 {
		return fmt.Errorf("no rollout under %s", root)
	}
	sort.Strings(rollouts) // rollout names start with their creation time
	requests, err := filepath.Glob(filepath.Join(root, "requests", "request-*.json"))
	if err != nil {
		return err
	}
	sort.Strings(requests)
	n := &normalizer{root: root, ids: map[string]string{}}
	if err := os.MkdirAll(filepath.Join(out, "requests"), 0o755); err != nil {
		return err
	}
	for _, p := range rollouts {
		name := n.apply(filepath.Base(p))
		if err := n.copy(p, filepath.Join(out, name), nil); err != nil {
			return err
		}
	}
	for _, p := range requests {
		if err := n.copy(p, filepath.Join(out, "requests", filepath.Base(p)), canonical); err != nil {
			return err
		}
	}
	return nil
}

type normalizer struct {
	root string
	ids  map[string]string
}

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	rules  = []struct {
		re   *regexp.Regexp
		with string
	}{
		{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`), "2026-01-01T00:00:00.000Z"},
		{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d`), "2026-01-01T00-00-00"},
		{regexp.MustCompile(`(<current_date>|"current_date": ?")\d{4}-\d\d-\d\d`), "${1}2026-01-01"},
		{regexp.MustCompile(`(\\?"(?:create_time|started_at|completed_at|started_at_ms|completed_at_ms|turn_started_at_unix_ms|duration_ms|time_to_first_token_ms|timestamp_ms|created_at)\\?": ?)[0-9.]+`), "${1}0"},
		{regexp.MustCompile(`("process_id": ?")\d+"`), `${1}0"`},
		// Codex names each sub-agent after a random scientist.
		{regexp.MustCompile(`(\\?"(?:agent_)?nickname\\?": ?\\?")[A-Z][A-Za-z]*`), "${1}Agent"},
		{regexp.MustCompile(`("subagents": ?"- [0-9a-f-]{36}: )[A-Z][A-Za-z]*`), "${1}Agent"},
		// A fork's offset into its parent's rollout counts raw bytes, which
		// the rules above change.
		{regexp.MustCompile(`("end_byte_offset": ?)\d+`), "${1}0"},
		{regexp.MustCompile(`Wall time: [0-9.]+ seconds`), "Wall time: 0.0000 seconds"},
		{regexp.MustCompile(`"duration": ?\{"secs": ?\d+, ?"nanos": ?\d+\}`), `"duration":{"secs":0,"nanos":0}`},
		{regexp.MustCompile(`Chunk ID: [0-9a-f]+`), "Chunk ID: 000000"},
	}
)

func (n *normalizer) apply(s string) string {
	s = strings.ReplaceAll(s, n.root, "/interop")
	s = uuidRE.ReplaceAllStringFunc(s, func(id string) string {
		if v, ok := n.ids[id]; ok {
			return v
		}
		v := fmt.Sprintf("00000000-0000-7000-8000-%012d", len(n.ids)+1)
		n.ids[id] = v
		return v
	})
	for _, r := range rules {
		s = r.re.ReplaceAllString(s, r.with)
	}
	return s
}

func (n *normalizer) copy(from, to string, format func([]byte) ([]byte, error)) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if format != nil {
		if data, err = format(data); err != nil {
			return fmt.Errorf("%s: %w", from, err)
		}
	}
	return os.WriteFile(to, []byte(n.apply(string(data))), 0o644)
}

// canonical re-encodes a request body with sorted keys, indented: Codex
// fills some objects (client_metadata) from hash maps, in random order.
func canonical(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(v)
	return buf.Bytes(), err
}
