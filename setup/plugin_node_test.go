package setup

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The plugin setup writes for OpenCode, run by Node as the client runs it
// (an ES module whose export is called with the plugin input, its hooks
// called with input and output): the compaction hook pushes the hook's
// text on output.context, chat.message adds it as a synthetic text part
// with an id, session.compacted runs the hook; each sends the hook its
// event and the session's id. A ctxfold that cannot run adds nothing and
// throws nothing.
func TestOpenCodePluginRuns(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "ctxfold")
	script := "#!/bin/sh\ncat >> " + filepath.Join(dir, "inputs") + "\necho >> " + filepath.Join(dir, "inputs") +
		"\necho '{\"hookSpecificOutput\":{\"additionalContext\":\"KEEP THIS\"}}'\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	driver := `
const m = await import(process.argv[2]);
const hooks = await m.CtxfoldPlugin({ directory: process.argv[3] });
const compacting = { context: [], prompt: undefined };
await hooks["experimental.session.compacting"]({ sessionID: "ses_1" }, compacting);
const chat = { message: { id: "msg_1" }, parts: [] };
await hooks["chat.message"]({ sessionID: "ses_1" }, chat);
await hooks.event({ event: { type: "session.compacted", properties: { sessionID: "ses_1" } } });
await hooks.event({ event: { type: "session.idle", properties: {} } });
console.log(JSON.stringify({ compacting, chat }));
`
	if err := os.WriteFile(filepath.Join(dir, "driver.mjs"), []byte(driver), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(bin string, cut ...bool) (out struct {
		Compacting struct{ Context []string }
		Chat       struct {
			Parts []map[string]any
		}
	}) {
		t.Helper()
		plugin := filepath.Join(dir, "ctxfold.mjs")
		src := openCodePlugin(openCodeFlavourOC, bin, false)
		if len(cut) > 0 {
			// Its 55 s bound cut to 300 ms, so a hang is given up within
			// the test.
			src = []byte(strings.Replace(string(src), "const TIMEOUT_MS = 55000;", "const TIMEOUT_MS = 300;", 1))
		}
		if err := os.WriteFile(plugin, src, 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := exec.Command(node, filepath.Join(dir, "driver.mjs"), plugin, dir).CombinedOutput()
		if err != nil {
			t.Fatalf("node: %v\n%s", err, b)
		}
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		return out
	}
	got := run(fake)
	if len(got.Compacting.Context) != 1 || got.Compacting.Context[0] != "KEEP THIS" {
		t.Errorf("compaction context: %v", got.Compacting.Context)
	}
	if len(got.Chat.Parts) != 1 {
		t.Fatalf("chat parts: %v", got.Chat.Parts)
	}
	p := got.Chat.Parts[0]
	if p["text"] != "KEEP THIS" || p["type"] != "text" || p["synthetic"] != true || p["messageID"] != "msg_1" || p["sessionID"] != "ses_1" ||
		!strings.HasPrefix(p["id"].(string), "prt_") || len(p["id"].(string)) != 30 {
		t.Errorf("chat part: %v", p)
	}
	inputs, _ := os.ReadFile(filepath.Join(dir, "inputs"))
	var events []string
	for _, l := range strings.Split(strings.TrimSpace(string(inputs)), "\n") {
		var in map[string]string
		if json.Unmarshal([]byte(l), &in) != nil {
			t.Fatalf("hook input %q", l)
		}
		if in["session_id"] != "ses_1" || in["cwd"] != dir {
			t.Errorf("hook input %q", l)
		}
		events = append(events, in["hook_event_name"])
	}
	if strings.Join(events, " ") != "experimental.session.compacting chat.message session.compacted" {
		t.Errorf("events: %v", events)
	}
	got = run(filepath.Join(dir, "no-such-ctxfold"))
	if len(got.Compacting.Context) != 0 || len(got.Chat.Parts) != 0 {
		t.Errorf("a ctxfold that cannot run added %v %v", got.Compacting.Context, got.Chat.Parts)
	}
	// A ctxfold that prints no JSON, fails, or hangs past the bound: the
	// plugin returns normally, adds nothing, and gives a hang up in time.
	for name, script := range map[string]string{
		"garbage": "cat >/dev/null; echo 'not the hook JSON {'",
		"fails":   "cat >/dev/null; echo '{\"hookSpecificOutput\":'; exit 3",
		"hangs":   "exec sleep 30",
	} {
		bin := filepath.Join(dir, name+"-ctxfold")
		if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		got = run(bin, true)
		if len(got.Compacting.Context) != 0 || len(got.Chat.Parts) != 0 {
			t.Errorf("a ctxfold that %s: the plugin added %v %v", name, got.Compacting.Context, got.Chat.Parts)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("a ctxfold that %s held the plugin %s", name, d)
		}
	}
}

// Kilo's plugin (setup kilo) also runs the hook on the first request
// after a compaction of its process — Kilo compacts after the prompt's
// chat.message ran — and adds its text to that request's last user
// message and stores that part through the SDK client's request client
// (Kilo 7.7's has no part.update), then adds
// it to every later request with the same summary that lacks it without
// running the hook again; not on the compaction's own request, and not
// with OpenCode's plugin, whose next prompt's chat.message comes after
// the compaction.
func TestKiloPluginInjectsAfterCompaction(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "ctxfold")
	script := "#!/bin/sh\ncat >> " + filepath.Join(dir, "inputs") + "\necho >> " + filepath.Join(dir, "inputs") +
		"\necho '{\"hookSpecificOutput\":{\"additionalContext\":\"KEEP THIS\"}}'\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	driver := `
const m = await import(process.argv[2]);
const updates = [];
const client = { _client: { patch: async (o) => { updates.push({ url: o.url, ...o.path, part: o.body }); return {}; } } };
const hooks = await m.CtxfoldPlugin({ directory: process.argv[3], client });
const user = (id) => ({ info: { id, sessionID: "ses_1", role: "user" }, parts: [{ type: "text", text: "hi" }] });
const summary = { info: { id: "msg_s", sessionID: "ses_1", role: "assistant", summary: true }, parts: [] };
const transform = async (msgs) => { await hooks["experimental.chat.messages.transform"]({}, { messages: msgs }); return msgs.at(-1).parts.length; };
const before = await transform([user("msg_0")]);
await hooks["experimental.session.compacting"]({ sessionID: "ses_1" }, { context: [], prompt: undefined });
const own = await transform([user("msg_0")]);
const first = [user("msg_c"), summary, user("msg_1")];
await transform(first);
const later = await transform([user("msg_c"), summary, user("msg_1"), user("msg_2")]);
const stored = [user("msg_c"), summary, first.at(-1), user("msg_3")];
const afterStored = await transform(stored);
console.log(JSON.stringify({ before, own, part: first.at(-1).parts[1] ?? null, later, afterStored, updates }));
`
	if err := os.WriteFile(filepath.Join(dir, "driver.mjs"), []byte(driver), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []openCodeFlavour{openCodeFlavourKilo, openCodeFlavourOC} {
		_ = os.Remove(filepath.Join(dir, "inputs"))
		plugin := filepath.Join(dir, f.name+".mjs")
		if err := os.WriteFile(plugin, openCodePlugin(f, fake, false), 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := exec.Command(node, filepath.Join(dir, "driver.mjs"), plugin, dir).CombinedOutput()
		if err != nil {
			t.Fatalf("node: %v\n%s", err, b)
		}
		var got struct {
			Before, Own, Later, AfterStored int
			Part                            map[string]any
			Updates                         []map[string]any
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		inputs, _ := os.ReadFile(filepath.Join(dir, "inputs"))
		runs := strings.Count(string(inputs), "experimental.chat.messages.transform")
		if f.name == ClientOpenCode {
			if got.Part != nil || got.Later != 1 || runs != 0 || len(got.Updates) != 0 {
				t.Errorf("OpenCode's plugin added %v (later: %d parts), ran the hook %d times on transform", got.Part, got.Later, runs)
			}
			continue
		}
		if got.Before != 1 || got.Own != 1 {
			t.Errorf("added before the compaction (%d parts) or to its own request (%d)", got.Before, got.Own)
		}
		if got.Part == nil || got.Part["text"] != "KEEP THIS" || got.Part["synthetic"] != true || got.Part["messageID"] != "msg_1" || got.Part["sessionID"] != "ses_1" {
			t.Errorf("the request after the compaction: %v", got.Part)
		}
		if got.Later != 2 || got.AfterStored != 1 || runs != 1 {
			t.Errorf("a later request: %d parts (%d with the part stored); the hook ran %d times on transform", got.Later, got.AfterStored, runs)
		}
		if len(got.Updates) != 1 || got.Updates[0]["url"] != "/session/{sessionID}/message/{messageID}/part/{partID}" || got.Updates[0]["partID"] != got.Part["id"] || got.Updates[0]["messageID"] != "msg_1" || got.Updates[0]["sessionID"] != "ses_1" {
			t.Errorf("stored %v", got.Updates)
		} else if p, _ := got.Updates[0]["part"].(map[string]any); p["text"] != "KEEP THIS" || p["id"] != got.Part["id"] {
			t.Errorf("stored part %v", p)
		}
	}
}
