// Parses a Mermaid diagram read from stdin with the real mermaid package
// (mermaid.parse under jsdom) and exits non-zero with the parser's message
// when it is invalid. Usage: node mermaid-parse.mjs MODULES_DIR < file.mmd
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const dir = process.argv[2];
const { JSDOM } = await import(pathToFileURL(join(dir, "node_modules/jsdom/lib/api.js")).href);
const dom = new JSDOM("<!doctype html><html><body></body></html>");
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const mermaid = (await import(pathToFileURL(join(dir, "node_modules/mermaid/dist/mermaid.core.mjs")).href)).default;
const text = readFileSync(0, "utf8");
try {
  const res = await mermaid.parse(text);
  console.log(JSON.stringify(res));
} catch (e) {
  console.error(String(e && e.message ? e.message : e));
  process.exit(1);
}
