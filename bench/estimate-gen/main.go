// Command estimate-gen writes a synthetic session directory for the
// estimate benchmark (bench/estimate.sh): N nodes on one linear spine,
// cycling user → assistant (text, sometimes thinking, sometimes tool calls)
// → tool results, with mixed text (prose, code, JSON, CJK, emoji,
// whitespace runs, the odd long base64 piece) and usage on assistant
// nodes. Output is deterministic for a given -n and -seed.
//
//	go run ./bench/estimate-gen -n 100000 -o bench/out/s100k
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

func main() {
	n := flag.Int("n", 10000, "number of nodes")
	out := flag.String("o", "", "session directory to create (must not exist)")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if *out == "" || *n <= 0 {
		fmt.Fprintln(os.Stderr, "usage: estimate-gen -n N -o DIR")
		os.Exit(2)
	}
	if err := generate(*out, *n, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "estimate-gen:", err)
		os.Exit(1)
	}
}

var words = strings.Fields(`the of and to in is that it for was on are as with his they at be this from have or by one had
not but what all were when we there can an your which their said if do will each about how up out them then she many some so
these would other into has more her two like him see time could no make than first been its who now people my made over did
down only way find use may water long little very after words called just where most know get through back much go good new
write our me man too any day same right look think also around another came come work three word must because does part
function return error nil context session token budget window summary compaction render estimate graph verify node HEAD
I'm don't we'll it's they've DON'T JSON HTTPServer naïve café Überprüfung`)

type gen struct{ r *rand.Rand }

func (g *gen) pick(list []string) string { return list[g.r.IntN(len(list))] }

func (g *gen) prose(sentences int) string {
	var b strings.Builder
	for i := 0; i < sentences; i++ {
		k := 4 + g.r.IntN(18)
		for j := 0; j < k; j++ {
			if j > 0 {
				b.WriteByte(' ')
			}
			w := g.pick(words)
			if j == 0 {
				r := []rune(w)
				w = strings.ToUpper(string(r[:1])) + string(r[1:])
			}
			if g.r.IntN(25) == 0 {
				w = fmt.Sprint(g.r.IntN(100000))
			}
			b.WriteString(w)
		}
		b.WriteString(g.pick([]string{". ", ". ", "? ", "! ", ".\n\n", ":\n"}))
	}
	return b.String()
}

func (g *gen) code(lines int) string {
	var b strings.Builder
	b.WriteString("func " + g.pick(words) + "(ctx context.Context, n int) error {\n")
	for i := 0; i < lines; i++ {
		b.WriteString(g.pick([]string{
			"\tif err != nil {\n\t\treturn fmt.Errorf(\"%s: %w\", name, err)\n\t}\n",
			"\tfor i := 0; i < n; i++ {\n\t\ttotal += i * 42\n\t}\n",
			"\t" + g.pick(words) + " := strings.TrimSpace(line)  // " + g.prose(1) + "\n",
			"\t\n\n\tbuf = append(buf, '" + g.pick([]string{"a", "\\n", "}"}) + "')\n",
		}))
	}
	return b.String() + "\treturn nil\n}\n"
}

func (g *gen) cjk(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		switch g.r.IntN(10) {
		case 0:
			b.WriteString("。")
		case 1:
			b.WriteRune(rune(0x3041 + g.r.IntN(0x55)))
		default:
			b.WriteRune(rune(0x4e00 + g.r.IntN(0x5200)))
		}
	}
	return b.String()
}

var emoji = []string{"😀", "👍🏽", "👨‍👩‍👧‍👦", "🇯🇵", "🔥", "✨", "🤖", "🎉"}

func (g *gen) text() string {
	switch g.r.IntN(20) {
	case 0:
		return g.cjk(20 + g.r.IntN(120))
	case 1:
		return g.prose(1) + " " + g.pick(emoji) + g.pick(emoji) + " " + g.prose(1)
	case 2:
		return g.code(2 + g.r.IntN(10))
	case 3:
		return g.prose(2) + strings.Repeat("  \n", 1+g.r.IntN(6)) + g.prose(1)
	default:
		return g.prose(1 + g.r.IntN(5))
	}
}

func (g *gen) toolOutput() string {
	switch g.r.IntN(12) {
	case 0:
		// A long piece without spaces: slow in every BPE.
		const abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
		b := make([]byte, 500+g.r.IntN(3000))
		for i := range b {
			b[i] = abc[g.r.IntN(64)]
		}
		return string(b)
	case 1, 2:
		rows := make([]map[string]any, 1+g.r.IntN(6))
		for i := range rows {
			rows[i] = map[string]any{"id": g.r.IntN(1e6), "name": g.pick(words), "ok": g.r.IntN(2) == 0, "note": g.prose(1)}
		}
		data, _ := json.MarshalIndent(rows, "", "  ")
		return string(data)
	case 3, 4, 5:
		return g.code(3 + g.r.IntN(15))
	}
	return g.text()
}

func generate(dir string, n int, seed uint64) error {
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("%s exists", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, store.NodesFile))
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x5eed))}
	var written int64
	prev, pending := "", []string(nil)
	id := func(i int) string { return fmt.Sprintf("n%d", i) }
	for i := 0; i < n; i++ {
		node := transcript.Node{ID: id(i), Predecessor: prev}
		switch {
		case i == 0:
			node.Role = transcript.RoleSystem
			node.Content = transcript.TextContent("You are a careful coding agent. " + g.prose(3))
		case len(pending) > 0:
			node.Role = transcript.RoleTool
			node.ToolCallID = pending[0]
			node.Name = "bash"
			node.Content = transcript.TextContent(g.toolOutput())
			pending = pending[1:]
		case i%2 == 1:
			node.Role = transcript.RoleUser
			node.Content = transcript.TextContent(g.text())
		default:
			node.Role = transcript.RoleAssistant
			blocks := []transcript.Block{}
			if g.r.IntN(4) == 0 {
				blocks = append(blocks, transcript.Block{Type: transcript.BlockThinking, Text: g.prose(1 + g.r.IntN(3)), Signature: "sig"})
			}
			blocks = append(blocks, transcript.Block{Type: transcript.BlockText, Text: g.text()})
			node.Content = transcript.Content{IsBlocks: true, Blocks: blocks}
			if g.r.IntN(3) == 0 && i < n-2 {
				for k := 0; k < 1+g.r.IntN(2) && i+len(pending)+1 < n; k++ {
					call := fmt.Sprintf("call_%d_%d", i, k)
					args, _ := json.Marshal(map[string]string{"cmd": "go test ./" + g.pick(words) + "/...", "why": g.prose(1)})
					node.ToolCalls = append(node.ToolCalls, transcript.ToolCall{ID: call, Name: "bash", Arguments: args})
					pending = append(pending, call)
				}
			}
			node.Usage = &transcript.Usage{InputTokens: int64(1000 + i*120), OutputTokens: int64(20 + g.r.IntN(300))}
		}
		line, err := json.Marshal(node)
		if err != nil {
			return err
		}
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			return err
		}
		written += int64(len(line))
		prev = node.ID
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	meta := store.Meta{FormatVersion: store.InitFormatVersion, Head: prev, Model: "gpt-4.1", CreatedAt: "2026-11-30T00:00:00Z", NodesBytes: &written}
	if last := n - 1; last >= 0 {
		// HEAD never rests on a pending tool call's assistant: the spine
		// simply ends where it ends.
		meta.Head = id(last)
	}
	data, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, store.MetaFile), append(data, '\n'), 0o644)
}
