// ctxfold {{VERSION}} plugin for {{TITLE}}: written by 'ctxfold setup {{NAME}}'; 'ctxfold setup {{NAME}} --uninstall' removes it (docs/HOOKS.md).
// It runs `ctxfold hook` before the client's compaction, which hands the
// summariser the facts of the turns it folds (the ledger goes into the
// compaction prompt), and on each prompt after it, which adds what the
// summary still dropped. It never breaks the client: whatever fails, or
// takes longer than its bound, adds nothing.
//
// Kilo compacts when the next prompt arrives, after that prompt's
// chat.message ran (docs/HOOKS.md): there the plugin runs the hook on the
// first request to the model after the compaction
// (experimental.chat.messages.transform) and adds what the summary dropped
// to that request's last user message; it stores that part in the client
// (PATCH of the part), which a transform's change is not, and adds it to every
// later request of this process with the same summary that lacks it.
import { spawn } from "node:child_process";

const CTXFOLD = {{CTXFOLD}};
const CLIENT = {{CLIENT}};
const TIMEOUT_MS = 55000;
const MAX_OUTPUT = 4 << 20;
const AFTER_COMPACTION = CLIENT === "Kilo";

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

// compactions is, per session compacted in this process, the state of
// the injection after it: phase 1 until the compaction's own request (the
// client transforms the messages it summarises right after
// session.compacting), then 2; before is the summary that request held,
// summary and part the new summary and the part that adds the hook's text.
const compactions = new Map();

// store saves part in the client's session through its SDK client, within
// a bound; a failure leaves the part to this process's requests.
function store(client, part) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 5000);
    try {
      const path = { sessionID: part.sessionID, messageID: part.messageID, partID: part.id };
      // The SDK client Kilo 7.7 hands plugins has no method for it: its
      // request client sends the server's PATCH of a part.
      const req = client._client.patch({ url: "/session/{sessionID}/message/{messageID}/part/{partID}", path, body: part });
      Promise.resolve(req)
        .catch(() => {})
        .finally(() => {
          clearTimeout(timer);
          resolve();
        });
    } catch {
      clearTimeout(timer);
      resolve();
    }
  });
}

// afterCompaction adds the hook's text to a request after a compaction
// of this process (output of experimental.chat.messages.transform).
async function afterCompaction(output, directory, client) {
  const msgs = output && output.messages;
  if (!Array.isArray(msgs) || msgs.length === 0) return;
  const info = (m) => (m && m.info) || {};
  const sessionID = info(msgs[msgs.length - 1]).sessionID;
  const c = compactions.get(sessionID);
  if (!c) return;
  let summary, user;
  for (const m of msgs) {
    if (info(m).role === "assistant" && info(m).summary === true) summary = info(m).id;
    if (info(m).role === "user") user = m;
  }
  if (c.phase === 1) {
    c.phase = 2;
    c.before = summary;
    return;
  }
  if (!summary || summary === c.before || !user || !Array.isArray(user.parts)) return;
  if (c.summary !== summary) {
    c.summary = summary;
    c.part = undefined;
    const text = await hook("experimental.chat.messages.transform", sessionID, directory);
    if (!text) return;
    c.part = { id: partID(), sessionID, messageID: info(user).id, type: "text", text, synthetic: true };
    await store(client, c.part);
  }
  const has = (m) => Array.isArray(m.parts) && m.parts.some((p) => p && p.id === c.part.id);
  if (c.part && !msgs.some(has)) user.parts.push({ ...c.part });
}

export const CtxfoldPlugin = async ({ directory, client }) => ({
  "experimental.session.compacting": async (input, output) => {
    try {
      if (AFTER_COMPACTION) compactions.set(input.sessionID, { phase: 1 });
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
  "experimental.chat.messages.transform": async (input, output) => {
    try {
      if (AFTER_COMPACTION) await afterCompaction(output, directory, client);
    } catch {}
  },
});
