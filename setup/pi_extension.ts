// ctxfold {{VERSION}} extension for pi: written by 'ctxfold setup pi'; 'ctxfold setup pi --uninstall' removes it (docs/HOOKS.md).
// It runs `ctxfold hook` before pi's compaction, which hands pi's
// summariser the facts of the turns it folds (the ledger joins the
// messages it summarises), and before each prompt after it, which adds
// what the summary still dropped. pi has no MCP: the tools
// ctxfold_search_history and ctxfold_read_turns call `ctxfold mcp`'s
// search_history and read_turns over the session file instead. It never breaks the
// client: whatever fails, or takes longer than its bound, adds nothing.
import { spawn } from "node:child_process";
import { Type } from "typebox";

const CTXFOLD = {{CTXFOLD}};
const TIMEOUT_MS = 55000;
const MAX_OUTPUT = 4 << 20;

// run runs ctxfold with args and input on stdin; it resolves to what it
// printed ("" on any failure).
function run(args: string[], input: string, cwd?: string): Promise<string> {
  return new Promise((resolve) => {
    let out = "";
    let done = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = (text: string) => {
      if (!done) {
        done = true;
        if (timer) clearTimeout(timer);
        resolve(text);
      }
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(CTXFOLD, args, { cwd, stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      return resolve("");
    }
    timer = setTimeout(() => {
      try {
        child.kill();
      } catch {}
      finish("");
    }, TIMEOUT_MS);
    child.on("error", () => finish(""));
    child.stdout?.on("data", (d) => {
      if (out.length < MAX_OUTPUT) out += d;
    });
    child.on("close", () => finish(out));
    child.stdin?.on("error", () => {});
    child.stdin?.end(input);
  });
}

// mcpCall calls one tool of `ctxfold mcp` serving the session file and
// resolves to its text ("" on any failure).
async function mcpCall(file: string, tool: string, args: any, cwd?: string): Promise<string> {
  const msgs = [
    { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "pi-ctxfold", version: "{{VERSION}}" } } },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: tool, arguments: args } },
  ];
  const out = await run(["mcp", "--transcript", file], msgs.map((m) => JSON.stringify(m)).join("\n") + "\n", cwd);
  for (const line of out.split("\n")) {
    try {
      const m = JSON.parse(line);
      if (m.id === 2) return (m.result?.content ?? []).map((c: any) => c.text ?? "").join("\n") || JSON.stringify(m.error ?? "");
    } catch {}
  }
  return "";
}

// hook runs `ctxfold hook --client pi` with one event and resolves to the
// text it hands the model ("" for none).
async function hook(event: string, ctx: any): Promise<string> {
  const file = ctx?.sessionManager?.getSessionFile?.();
  if (!file) return "";
  const out = await run(["hook", "--client", "pi", "--by-setup"{{ARCHIVE}}],
    JSON.stringify({ hook_event_name: event, transcript_path: file, cwd: ctx.cwd }), ctx.cwd);
  try {
    const text = JSON.parse(out).hookSpecificOutput.additionalContext;
    return typeof text === "string" ? text : "";
  } catch {
    return "";
  }
}

export default function (pi: any) {
  pi.on("session_before_compact", async (event: any, ctx: any) => {
    try {
      const text = await hook("session_before_compact", ctx);
      const msgs = event?.preparation?.messagesToSummarize;
      // pi's summariser reads preparation.messagesToSummarize once the
      // handlers ran: the ledger joins them as a message of its own.
      if (text && Array.isArray(msgs))
        msgs.push({ role: "custom", customType: "ctxfold-ledger", content: text, display: false, timestamp: Date.now() });
    } catch {}
    return undefined;
  });
  pi.on("session_compact", async (_event: any, ctx: any) => {
    try {
      await hook("session_compact", ctx);
    } catch {}
  });
  pi.on("before_agent_start", async (_event: any, ctx: any) => {
    try {
      const text = await hook("before_agent_start", ctx);
      if (text) return { message: { customType: "ctxfold", content: text, display: false } };
    } catch {}
    return undefined;
  });
  // The MCP server's recall tools, called through `ctxfold mcp
  // --transcript <session file>` (one tools/call a run).
  const recall = (tool: string) => async (_id: string, params: any, _signal: any, _onUpdate: any, ctx: any) => {
    const file = ctx?.sessionManager?.getSessionFile?.();
    const text = file ? await mcpCall(file, tool, params ?? {}, ctx.cwd) : "";
    return { content: [{ type: "text", text: text || "ctxfold " + tool + " gave no result" }], details: {} };
  };
  pi.registerTool({
    name: "ctxfold_search_history",
    label: "ctxfold search_history",
    description: "Search this whole session, the turns pi's compaction folded included, for text (case-insensitive): each hit names its node id, role, whether the model still reads it or a summary covers it, and a snippet. Read covered hits verbatim with ctxfold_read_turns.",
    parameters: Type.Object({
      query: Type.String({ description: "text to find" }),
      limit: Type.Optional(Type.Number({ description: "most hits (20)" })),
    }),
    execute: recall("search_history"),
  });
  pi.registerTool({
    name: "ctxfold_read_turns",
    label: "ctxfold read_turns",
    description: "Read turns of this session verbatim by node id (as ctxfold_search_history names them), those pi's compaction folded included.",
    parameters: Type.Object({ ids: Type.Array(Type.String(), { description: "node ids" }) }),
    execute: recall("read_turns"),
  });
}
