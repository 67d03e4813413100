// ctxfold {{VERSION}} extension for pi: written by 'ctxfold setup pi'; 'ctxfold setup pi --uninstall' removes it (docs/HOOKS.md).
// It runs `ctxfold hook` before pi's compaction, which hands pi's
// summariser the facts of the turns it folds (the ledger joins the
// messages it summarises), and before each prompt after it, which adds
// what the summary still dropped. pi has no MCP: the tool ctxfold_search
// runs `ctxfold search` over the session instead. It never breaks the
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

// hook runs `ctxfold hook --client pi` with one event and resolves to the
// text it hands the model ("" for none).
async function hook(event: string, ctx: any): Promise<string> {
  const file = ctx?.sessionManager?.getSessionFile?.();
  if (!file) return "";
  const out = await run(["hook", "--client", "pi", "--by-setup"],
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
  pi.registerTool({
    name: "ctxfold_search",
    label: "ctxfold search",
    description: "Search this whole session, the turns a compaction folded included, for a case-insensitive substring; each hit names its node, its role, whether the model still reads it (visible) or a summary replaced it (covered), and a snippet. Read a hit whole with ctxfold_read.",
    parameters: Type.Object({ query: Type.String({ description: "text to find" }) }),
    async execute(_id: string, params: any, _signal: any, _onUpdate: any, ctx: any) {
      const file = ctx?.sessionManager?.getSessionFile?.();
      const out = file ? await run(["search", file, String(params?.query ?? ""), "--json"], "", ctx.cwd) : "";
      return { content: [{ type: "text", text: out || "no result (ctxfold search failed or found nothing)" }], details: {} };
    },
  });
  pi.registerTool({
    name: "ctxfold_read",
    label: "ctxfold read",
    description: "Read turns of this session verbatim by node id (as ctxfold_search names them), those a compaction folded included.",
    parameters: Type.Object({ node: Type.String({ description: "node id from ctxfold_search" }) }),
    async execute(_id: string, params: any, _signal: any, _onUpdate: any, ctx: any) {
      const file = ctx?.sessionManager?.getSessionFile?.();
      const out = file ? await run(["render", file, "--head", String(params?.node ?? ""), "--format", "text", "--raw"], "", ctx.cwd) : "";
      return { content: [{ type: "text", text: out || "no result (ctxfold render failed)" }], details: {} };
    },
  });
}
