package timeline

// css is the page's whole style: no font or file is fetched, and the
// print rules keep the chart and tables on paper.
const css = `
:root{--rec:#1f6feb;--est:#d97706;--sub:#8b5cf6;--cmp:#dc2626;--fg:#1f2328;--mut:#656d76;--bd:#d0d7de}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);margin:24px auto;max-width:1080px;padding:0 16px}
h1{font-size:20px;margin:0 0 4px;word-break:break-all}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid var(--bd)}
h3{font-size:15px;margin:16px 0 6px}.meta,.note,.legend{color:var(--mut)}.warn{color:#9a6700}
code{font:12px ui-monospace,monospace}
#chart{width:100%;height:auto;border:1px solid var(--bd);border-radius:6px;background:#fff}
.grid{stroke:#eaeef2}.tick{font-size:11px;fill:var(--mut);text-anchor:end}.axis{font-size:11px;fill:var(--mut)}
.limit line{stroke-dasharray:6 4;stroke-width:1.2}.limit text{font-size:11px}
.window line{stroke:#57606a}.window text{fill:#57606a}.budget line{stroke:#1a7f37}.budget text{fill:#1a7f37}
.threshold line{stroke:#bf8700}.threshold text{fill:#bf8700}
.line{fill:none;stroke-width:1.2}.line.rec{stroke:var(--rec)}.line.est{stroke:var(--est);stroke-dasharray:3 2}
.mark .rec{fill:var(--rec)}.mark .est{fill:var(--est)}.mark .sub{fill:var(--sub)}.mark:hover circle,.mark:hover rect{stroke:#000;stroke-width:1.5}
.compaction line{stroke:var(--cmp);stroke-width:1.5}.compaction text{font-size:11px;fill:var(--cmp)}
.legend .k{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px;border-radius:2px;vertical-align:-1px}
.k.rec{background:var(--rec)}.k.est{background:var(--est)}.k.sub{background:var(--sub)}.k.cmp{background:var(--cmp)}
.bar{display:flex;height:22px;border-radius:4px;overflow:hidden;border:1px solid var(--bd)}.seg{display:block;height:100%}
.c0{background:#6e7781}.c1{background:#8250df}.c2{background:#cf222e}.c3{background:#1f6feb}.c4{background:#2da44e}
.c5{background:#bf8700}.c6{background:#fb8500}.c7{background:#a475f9}.c8{background:#57606a}.c9{background:#d0d7de}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;padding:3px 6px;border-bottom:1px solid #eaeef2;vertical-align:top}
.n{text-align:right;font-variant-numeric:tabular-nums}tr.group th{background:#f6f8fa}.snip{color:var(--mut);word-break:break-word}
.kinds{width:auto}.meter{display:inline-block;width:120px;height:8px;background:#eaeef2;border-radius:4px;overflow:hidden;vertical-align:middle}
.meter span{display:block;height:100%;background:#2da44e}.dropped{font-size:13px}.dropped .kind{color:var(--mut);font-size:11px;margin-right:4px}
@media print{body{margin:0;max-width:none}#chart{border:none}section{break-inside:avoid-page}a{color:inherit;text-decoration:none}}
`
