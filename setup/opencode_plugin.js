// ctxfold {{VERSION}} plugin for {{TITLE}}: written by 'ctxfold setup {{NAME}}'; 'ctxfold setup {{NAME}} --uninstall' removes it (docs/HOOKS.md).
// It runs `ctxfold hook` before the client's compaction, which hands the
// summariser the facts of the turns it folds (the ledger goes into the
// compaction prompt), and on each prompt after it, which adds what the
// summary still dropped. It never breaks the client: whatever fails, or
// takes longer than its bound, adds nothing.
import { spawn } from "node:child_process";

const CTXFOLD = {{CTXFOLD}};
const CLIENT = {{CLIENT}};
const TIMEOUT_MS = 55000;
const MAX_OUTPUT = 4 << 20;

// hook runs `ctxfold hook` with one event and resolves to the text it
// hands the model ("" for none).
function hook(event, sessionID, cwd) {
  return new Promise((resolve) => {
    let out = "";
    let done = false;
    let timer;
    const finish = (text) => {
      if (!done) {
        done = true;
        clearTimeout(timer);
        resolve(text);
      }
    };
    let child;
    try {
      child = spawn(CTXFOLD, ["hook", "--client", CLIENT, "--by-setup"{{ARCHIVE}}], { cwd, stdio: ["pipe", "pipe", "ignore"] });
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
    child.stdout.on("data", (d) => {
      if (out.length < MAX_OUTPUT) out += d;
    });
    child.on("close", () => {
      try {
        const text = JSON.parse(out).hookSpecificOutput.additionalContext;
        finish(typeof text === "string" ? text : "");
      } catch {
        finish("");
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify({ hook_event_name: event, session_id: sessionID, cwd }));
  });
}

// partID is an id the client's ascending part ids sort before: the added
// text follows the user's own parts.
let seq = 0;
function partID() {
  const now = BigInt(Date.now()) * 0x1000n + BigInt(0x800 + (seq++ % 0x800));
  let hex = "";
  for (let i = 0; i < 6; i++) hex += Number((now >> BigInt(40 - 8 * i)) & 0xffn).toString(16).padStart(2, "0");
  const abc = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  let rnd = "";
  for (let i = 0; i < 14; i++) rnd += abc[Math.floor(Math.random() * abc.length)];
  return "prt_" + hex + rnd;
}

export const CtxfoldPlugin = async ({ directory }) => ({
  "experimental.session.compacting": async (input, output) => {
    try {
      const text = await hook("experimental.session.compacting", input.sessionID, directory);
      if (text && Array.isArray(output.context)) output.context.push(text);
    } catch {}
  },
  event: async ({ event }) => {
    try {
      if (event && event.type === "session.compacted" && event.properties && event.properties.sessionID)
        await hook("session.compacted", event.properties.sessionID, directory);
    } catch {}
  },
  "chat.message": async (input, output) => {
    try {
      const text = await hook("chat.message", input.sessionID, directory);
      if (text && output && output.message && Array.isArray(output.parts))
        output.parts.push({ id: partID(), sessionID: input.sessionID, messageID: output.message.id, type: "text", text, synthetic: true });
    } catch {}
  },
});
