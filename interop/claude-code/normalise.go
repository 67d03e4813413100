package claudecodeinterop

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Normaliser rewrites what changes from one recording to the next — temp
// paths, UUIDs, content hashes, agent ids, timestamps, durations, the
// kernel release, today's date — into stable placeholders, the same value
// always mapping to the same placeholder across all files of a scenario, so
// links between records and requests survive (docs/INTEROP-claude-code.md
// "Normalisation").
type Normaliser struct {
	paths  [][2]string
	agents [][2]string
	ids    map[string]string
	n      map[string]int
	times  map[string]string
}

// NewNormaliser replaces each key path by its value (longest first).
func NewNormaliser(paths map[string]string) *Normaliser {
	n := &Normaliser{ids: map[string]string{}, n: map[string]int{}}
	for k, v := range paths {
		n.paths = append(n.paths, [2]string{k, v})
		n.paths = append(n.paths, [2]string{slug(k), slug(v)})
	}
	sort.Slice(n.paths, func(i, j int) bool { return len(n.paths[i][0]) > len(n.paths[j][0]) })
	if rel, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		if r := strings.TrimSpace(string(rel)); r != "" {
			n.paths = append(n.paths, [2]string{"Linux " + r, "Linux 0.0.0-interop"})
		}
	}
	return n
}

var (
	reUUID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	reHash = regexp.MustCompile(`\b[0-9a-f]{64}\b`)
	// Claude Code 1.0's metadata.user_id: user_<device hash>_account_…
	reUserHash = regexp.MustCompile(`\buser_[0-9a-f]{64}_`)
	reAgent    = regexp.MustCompile(`\bagent-(a[0-9a-f]{6,32})\b|"agentId":\s*"(a[0-9a-f]{6,32})"`)
	reTime     = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	reEpochMS  = regexp.MustCompile(`\b1[78]\d{11}\b`)
	reDur      = regexp.MustCompile(`"(\w*(?:[Dd]uration|_ms|Ms|[Ll]atency)\w*)":\s*\d+(\.\d+)?`)
	reCost     = regexp.MustCompile(`"(costUSD|totalCostUSD|total_cost_usd)":\s*[0-9.e-]+`)
	reSlug     = regexp.MustCompile(`"slug":\s*"[a-z]+(-[a-z]+)*"`)
	reRunID    = regexp.MustCompile(`"runId":\s*"[^"]*"`)
	reXMLMS    = regexp.MustCompile(`<duration_ms>\d+</duration_ms>`)
)

func (n *Normaliser) id(kind, v string, format func(int) string) string {
	if p, ok := n.ids[kind+v]; ok {
		return p
	}
	n.n[kind]++
	p := format(n.n[kind])
	n.ids[kind+v] = p
	return p
}

// findAgents registers the sub-agent ids s names (file names
// agent-<id>.jsonl, "agentId" fields), which the client also prints in tool
// results, so every occurrence is replaced.
func (n *Normaliser) findAgents(s string) {
	for _, m := range reAgent.FindAllStringSubmatch(s, -1) {
		id := m[1] + m[2]
		if _, ok := n.ids["agent"+id]; ok {
			continue
		}
		p := n.id("agent", id, func(k int) string { return fmt.Sprintf("a%016d", k) })
		n.agents = append(n.agents, [2]string{id, p})
	}
}

// Paths replaces the machine-specific paths and the kernel release only;
// the fake provider measures usage on its result.
func (n *Normaliser) Paths(b []byte) []byte {
	s := string(b)
	for _, p := range n.paths {
		s = strings.ReplaceAll(s, p[0], p[1])
	}
	return []byte(s)
}

// text normalises everything but timestamps, which need every file first.
func (n *Normaliser) text(b []byte) []byte {
	s := string(n.Paths(b))
	s = reUUID.ReplaceAllStringFunc(s, func(u string) string {
		return n.id("uuid", u, func(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) })
	})
	s = reHash.ReplaceAllStringFunc(s, func(h string) string {
		return n.id("hash", h, func(i int) string { return fmt.Sprintf("%064d", i) })
	})
	s = reUserHash.ReplaceAllStringFunc(s, func(h string) string {
		return "user_" + n.id("hash", h[5:69], func(i int) string { return fmt.Sprintf("%064d", i) }) + "_"
	})
	for _, a := range n.agents {
		s = strings.ReplaceAll(s, a[0], a[1])
	}
	s = reEpochMS.ReplaceAllString(s, "1767225600000")
	s = reDur.ReplaceAllString(s, `"$1":0`)
	s = reCost.ReplaceAllString(s, `"$1":0`)
	// The session's random three-word name.
	s = reSlug.ReplaceAllString(s, `"slug":"interop-session"`)
	s = reRunID.ReplaceAllString(s, `"runId":"interop-run"`)
	// A sub-agent's run time, inside the task notification's text.
	s = reXMLMS.ReplaceAllString(s, `<duration_ms>0</duration_ms>`)
	return []byte(s)
}

// stamp replaces each timestamp occurrence by the next of a sequence one
// second apart from a fixed epoch. Occurrence order is file order, which the
// client appends in; numbering distinct values instead would shift whenever
// two records happen to share a millisecond in one run and not the next.
func (n *Normaliser) stamp(b []byte) []byte {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return reTime.ReplaceAllFunc(b, func([]byte) []byte {
		n.n["time"]++
		return []byte(base.Add(time.Duration(n.n["time"]) * time.Second).Format("2006-01-02T15:04:05.000Z"))
	})
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

func (n *Normaliser) finish(b []byte, today []string) []byte {
	b = n.stamp(b)
	for _, d := range today {
		b = bytes.ReplaceAll(b, []byte(d), []byte("2026-01-01"))
	}
	return b
}

type file struct {
	rel  string
	data []byte
}

// Collect normalises the client's project directory (session files and
// their subagents/ files) and the recorded requests into dst/transcript and
// dst/requests.
func (n *Normaliser) Collect(projects, requests, dst string) error {
	var sess, subs []file
	err := filepath.WalkDir(projects, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		rel, _ := filepath.Rel(projects, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(rel, string(filepath.Separator)) {
			subs = append(subs, file{rel, b})
		} else {
			sess = append(sess, file{rel, b})
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(sess) == 0 {
		return fmt.Errorf("no session file under %s", projects)
	}
	// Session files have fixed names; subagent files random ones, so they
	// are ordered by their first timestamp to keep the id mapping stable.
	sort.Slice(sess, func(i, j int) bool { return sess[i].rel < sess[j].rel })
	sort.SliceStable(subs, func(i, j int) bool {
		return parseTime(string(reTime.Find(subs[i].data))).Before(parseTime(string(reTime.Find(subs[j].data))))
	})
	var reqs []file
	ents, err := os.ReadDir(requests)
	if err != nil {
		return err
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(requests, e.Name()))
		if err != nil {
			return err
		}
		reqs = append(reqs, file{e.Name(), b})
	}
	all := append(append(append([]file{}, sess...), subs...), reqs...)
	for _, f := range all {
		n.findAgents(f.rel)
		n.findAgents(string(f.data))
	}
	for i := range all {
		all[i].data = n.text(all[i].data)
		all[i].rel = string(n.text([]byte(all[i].rel)))
	}
	now := time.Now().UTC()
	today := []string{now.Format("2006-01-02"), now.Add(-24 * time.Hour).Format("2006-01-02")}
	for i, f := range all {
		sub := "transcript"
		if i >= len(sess)+len(subs) {
			sub = "requests"
		}
		p := filepath.Join(dst, sub, f.rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, n.finish(f.data, today), 0o644); err != nil {
			return err
		}
	}
	return nil
}
