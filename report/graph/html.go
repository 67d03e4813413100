package graph

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"

	"github.com/ctxfold/ctxfold/transcript"
)

// htmlNode is one node as the page's script sees it. Every string here is
// transcript data: the script only ever puts it into the page with
// textContent.
type htmlNode struct {
	ID      string `json:"id"`
	Role    string `json:"role"`
	Name    string `json:"name,omitempty"`
	Tokens  int    `json:"tokens"`
	Content string `json:"content"`
	Pred    string `json:"pred,omitempty"`
	Caller  string `json:"caller,omitempty"`
	Summary bool   `json:"summary,omitempty"`
	Relic   bool   `json:"relic,omitempty"`
	Head    bool   `json:"head,omitempty"`
	Pinned  bool   `json:"pinned,omitempty"`
	Folded  bool   `json:"folded,omitempty"`
	Carries bool   `json:"carries,omitempty"`
	Line    int    `json:"line"`
}

type htmlCapsule struct {
	ID     string `json:"id"`
	Covers int    `json:"covers"`
	Before int    `json:"before"`
	After  int    `json:"after"`
}

type htmlOccupancy struct {
	Model       string  `json:"model"`
	Total       int     `json:"total"`
	Window      int     `json:"window"`
	Ratio       float64 `json:"ratio"`
	InputBudget int     `json:"input_budget"`
	BudgetPct   float64 `json:"budget_pct"`
	// Basis is estimate's budget basis: with "calibrated", Total is the
	// calibrated total and RawTotal the view's own count.
	Basis    string `json:"basis"`
	RawTotal int    `json:"raw_total"`
}

type htmlData struct {
	Session   string         `json:"session"`
	Head      string         `json:"head"`
	Expanded  bool           `json:"expanded"`
	Occupancy *htmlOccupancy `json:"occupancy"`
	Capsule   *htmlCapsule   `json:"capsule"`
	Nodes     []htmlNode     `json:"nodes"`
	// Lines are [kind, node (index into Nodes), tree art, spawned]:
	// kind 0 a node drawn raw, 1 the capsule, 2 a node inside the capsule
	// (the lines right after it).
	Lines [][4]any `json:"lines"`
}

// writeHTML writes one self-contained page. The layout is always built
// with the capsule's folded nodes in it so a click can open it; opts.Expand
// only decides whether it starts open.
func writeHTML(ctx context.Context, w io.Writer, l *layout, c *counter, opts Options) error {
	g, f := l.g, l.fold
	occ, err := occupancy(ctx, g, opts.Estimate)
	if err != nil {
		return err
	}
	fig, err := c.capsule(f)
	if err != nil {
		return err
	}
	data := htmlData{Session: opts.Session, Expanded: opts.Expand,
		Occupancy: &htmlOccupancy{Model: occ.Model, Total: occ.Total, Window: occ.Window, Ratio: occ.Ratio,
			InputBudget: occ.InputBudget, BudgetPct: occ.BudgetPct, Basis: occ.BudgetBasis, RawTotal: occ.Total}}
	if c := occ.Calibration; c != nil {
		// The header shows what the provider will count (estimate's gate).
		data.Occupancy.Total = c.CalibratedTotal
	}
	if h := g.Head(); h >= 0 {
		data.Head = g.ID(h)
	}
	if f.Summary >= 0 && f.Applies {
		data.Capsule = &htmlCapsule{ID: g.ID(f.Summary), Covers: fig.covers, Before: fig.before, After: fig.after}
	}
	var items []line
	if err := l.walk(func(ln line) error {
		items = append(items, ln)
		return nil
	}); err != nil {
		return err
	}
	// Each node once in Nodes, however many lines draw it.
	slot := make(map[int]int, len(items))
	var idx []int
	for _, ln := range items {
		i := l.node(ln.item)
		if _, ok := slot[i]; !ok {
			slot[i] = len(idx)
			idx = append(idx, i)
		}
	}
	data.Nodes = make([]htmlNode, len(idx))
	err = c.each(idx, func(k int, n *transcript.Node, tokens int) error {
		i := idx[k]
		ref := g.Ref(i)
		data.Nodes[k] = htmlNode{ID: ref.ID, Role: roleLabel(ref), Name: ref.Name, Tokens: tokens, Content: fullText(n),
			Pred: ref.Predecessor, Caller: ref.Caller, Summary: ref.Summary, Relic: g.IsRelic(i), Head: i == g.Head(),
			Folded: f.Folded(i), Carries: f.Carries(i), Line: ref.Line, Pinned: l.pinned[ref.ID]}
		return nil
	})
	if err != nil {
		return err
	}
	data.Lines = make([][4]any, len(items))
	for k, ln := range items {
		kind := 0
		switch l.kind(ln.item) {
		case kindCapsule:
			kind = 1
		case kindInside:
			kind = 2
		}
		data.Lines[k] = [4]any{kind, slot[l.node(ln.item)], ln.prefix, l.spawned[ln.item]}
	}
	// encoding/json escapes <, > and & (and U+2028/9), so the data can
	// never close its <script> element.
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.WriteString(htmlHead)
	bw.WriteString(`<script type="application/json" id="data">`)
	bw.Write(raw)
	bw.WriteString("</script>\n<script>")
	bw.WriteString(pageScript)
	bw.WriteString("</script>\n</body>\n</html>\n")
	return bw.Flush()
}

// scriptHash pins the page's one script in its Content-Security-Policy:
// nothing else may run, even if an escaping bug let markup through.
var scriptHash = func() string {
	sum := sha256.Sum256([]byte(pageScript))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}()

var htmlHead = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src '` + scriptHash + `'; img-src 'none'; connect-src 'none'; font-src 'none'; form-action 'none'; base-uri 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ctxfold graph</title>
<style>
:root { --fg:#1f2328; --dim:#6e7781; --cap:#7b3fc4; --capbg:#f4ecff; --head:#1a7f37; --hit:#fff3b0; --line:#d0d7de; }
* { box-sizing: border-box; }
body { margin:0; font:13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; color:var(--fg); background:#fff; }
header { position:sticky; top:0; z-index:2; background:#f6f8fa; border-bottom:1px solid var(--line); padding:8px 12px; display:flex; gap:16px; align-items:center; flex-wrap:wrap; }
header h1 { font-size:14px; margin:0; }
#occ { color:var(--fg); }
#occ .bar { display:inline-block; width:120px; height:8px; background:#e6e9ed; vertical-align:middle; margin-left:6px; border-radius:4px; overflow:hidden; }
#occ .bar i { display:block; height:100%; background:var(--head); }
#q { font:inherit; padding:3px 6px; width:260px; }
#qn { color:var(--dim); }
main { display:flex; align-items:flex-start; }
#tree { flex:1 1 auto; padding:8px 12px; white-space:pre; overflow-x:auto; }
#details { flex:0 0 38%; position:sticky; top:48px; max-height:calc(100vh - 56px); overflow:auto; border-left:1px solid var(--line); padding:8px 12px; white-space:normal; }
#details pre { white-space:pre-wrap; word-break:break-word; background:#f6f8fa; padding:8px; border-radius:4px; }
#details dl { display:grid; grid-template-columns:max-content 1fr; gap:2px 10px; margin:0 0 8px; }
#details dt { color:var(--dim); }
#details dd { margin:0; word-break:break-all; }
.row { cursor:pointer; border-radius:3px; }
.row:hover { background:#f3f4f6; }
.row.sel { outline:1px solid #8c959f; }
.art { color:#8c959f; }
.id { font-weight:600; }
.meta, .pv { color:var(--dim); }
.capsule { color:var(--cap); background:var(--capbg); }
.capsule .meta { color:var(--cap); }
.relic { color:var(--dim); font-style:italic; }
.inside { color:#57606a; }
.head { color:var(--head); font-weight:700; }
.headmark { color:var(--head); font-weight:700; }
.hit { background:var(--hit); }
.covered[hidden] { display:none; }
.chunk { content-visibility:auto; contain-intrinsic-size:auto 4000px; }
</style>
</head>
<body>
<header><h1>ctxfold graph</h1><span id="occ"></span><input id="q" type="search" placeholder="search ids and content" aria-label="search"><span id="qn"></span></header>
<main><div id="tree" role="tree"></div><aside id="details"><p class="meta">Click a node for its content; click the capsule to open it.</p></aside></main>
`

// pageScript builds the page from the JSON data. Transcript text reaches
// the DOM through textContent only.
const pageScript = `(function () {
"use strict";
var data = JSON.parse(document.getElementById("data").textContent);
var tree = document.getElementById("tree");
var details = document.getElementById("details");
function el(tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
// toLocaleString is slow across 10,000 rows; group digits by hand.
function num(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
function preview(s) {
  s = String(s).slice(0, 400).replace(/\s+/g, " ").trim();
  return s.length > 90 ? s.slice(0, 89) + "\u2026" : s;
}
var occ = data.occupancy, occEl = document.getElementById("occ");
if (occ) {
  var t = "HEAD context: " + num(occ.total) + " tokens";
  if (occ.basis === "calibrated") t += " calibrated (" + num(occ.raw_total) + " in the transcript)";
  if (occ.window > 0) t += " of " + num(occ.window) + " window (" + (occ.ratio * 100).toFixed(1) + "%)";
  if (occ.model) t += " \u00b7 " + occ.model;
  occEl.appendChild(el("span", null, t));
  if (occ.window > 0) {
    var bar = el("span", "bar"), fill = el("i");
    fill.style.width = Math.min(100, occ.ratio * 100).toFixed(1) + "%";
    bar.appendChild(fill); occEl.appendChild(bar);
  }
}
var rows = [], groups = [], capRows = [];
// Rows go into chunks the browser may skip laying out while off screen.
var frag = document.createDocumentFragment(), group = null, chunk = null, inChunk = 0;
function place(node) {
  if (!chunk || inChunk >= 200) { chunk = el("div", "chunk"); frag.appendChild(chunk); inChunk = 0; }
  chunk.appendChild(node); inChunk++;
}
for (var k = 0; k < data.lines.length; k++) {
  var ln = data.lines[k], kind = ln[0], n = data.nodes[ln[1]];
  var row = el("div", "row");
  row.dataset.line = k;
  row.setAttribute("role", "treeitem");
  row.appendChild(el("span", "art", ln[2]));
  if (kind === 1) {
    var c = data.capsule;
    row.className += " capsule";
    row.appendChild(el("span", "id", "\u25c6 " + n.id));
    row.appendChild(el("span", "meta", "  covers " + num(c.covers) + " nodes \u00b7 " + num(c.before) + " \u2192 " + num(c.after) + " tokens"));
    row.setAttribute("aria-expanded", data.expanded ? "true" : "false");
    place(row);
    group = el("div", "covered");
    group.hidden = !data.expanded;
    groups.push(group);
    row.dataset.group = groups.length - 1;
    group.dataset.group = groups.length - 1;
    capRows.push(row);
    chunk.appendChild(group); // always beside its capsule row
    rows.push(row);
    continue;
  }
  var glyph = kind === 2 ? "\u25e6 " : n.relic ? "\u25cb " : n.summary ? "\u25c7 " : "\u25cf ";
  if (kind === 2) row.className += " inside";
  if (n.relic) row.className += " relic";
  if (n.head && kind !== 2) row.className += " head";
  row.appendChild(el("span", "id", glyph + n.id));
  var meta = n.relic ? "relic \u00b7 superseded summary" : n.summary ? "summary \u00b7 applies to no branch" : n.role;
  if (ln[3] && n.caller) meta += " \u00b7 spawned by " + n.caller;
  if (n.pinned) meta += " \u00b7 pinned";
  row.appendChild(el("span", "meta", "  " + meta + " \u00b7 " + num(n.tokens) + " tok"));
  var pv = preview(n.content);
  if (pv) row.appendChild(el("span", "pv", " \u00b7 " + pv));
  if (n.head && kind !== 2) row.appendChild(el("span", "headmark", "  \u2190 HEAD"));
  if (kind === 2 && group) {
    group.appendChild(row);
  } else {
    group = null;
    place(row);
  }
  rows.push(row);
}
tree.appendChild(frag);
var selected = null;
function show(row) {
  var ln = data.lines[+row.dataset.line], n = data.nodes[ln[1]];
  if (selected) selected.classList.remove("sel");
  selected = row; row.classList.add("sel");
  details.textContent = "";
  details.appendChild(el("h2", null, n.id));
  var dl = el("dl");
  function item(k, v) { if (v === undefined || v === null || v === "" || v === false) return; dl.appendChild(el("dt", null, k)); dl.appendChild(el("dd", null, v)); }
  item("role", n.role);
  item("name", n.name);
  item("tokens", num(n.tokens));
  item("predecessor", n.pred || "(root)");
  item("caller", n.caller);
  item("line", n.line);
  if (n.head) item("HEAD", "yes");
  if (n.relic) item("summary", "relic (superseded)");
  else if (n.summary) item("summary", "active");
  if (n.folded) item("folded", "yes: covered by the active summary");
  if (n.carries) item("context", "carries the summary");
  details.appendChild(dl);
  if (ln[0] === 1 && data.capsule) {
    details.appendChild(el("p", "meta", "covers " + num(data.capsule.covers) + " nodes: " + num(data.capsule.before) + " \u2192 " + num(data.capsule.after) + " tokens"));
  }
  details.appendChild(el("pre", "content", n.content));
}
tree.addEventListener("click", function (ev) {
  var row = ev.target.closest(".row");
  if (!row) return;
  if (row.dataset.group !== undefined) {
    var g = groups[+row.dataset.group];
    g.hidden = !g.hidden;
    row.setAttribute("aria-expanded", g.hidden ? "false" : "true");
  }
  show(row);
});
var q = document.getElementById("q"), qn = document.getElementById("qn"), timer = 0;
var lower = null;
function search() {
  var s = q.value.trim().toLowerCase(), hits = 0;
  if (!lower) lower = data.nodes.map(function (n) { return (n.id + "\n" + n.content).toLowerCase(); });
  for (var k = 0; k < rows.length; k++) {
    var hit = s !== "" && lower[data.lines[+rows[k].dataset.line][1]].indexOf(s) >= 0;
    rows[k].classList.toggle("hit", hit);
    if (hit) {
      hits++;
      var p = rows[k].parentNode;
      if (p.classList.contains("covered") && p.hidden) {
        p.hidden = false;
        capRows[+p.dataset.group].setAttribute("aria-expanded", "true");
      }
    }
  }
  qn.textContent = s === "" ? "" : hits + (hits === 1 ? " match" : " matches");
}
q.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(search, 120); });
document.body.dataset.ready = "1";
})();
`
