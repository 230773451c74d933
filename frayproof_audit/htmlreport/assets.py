"""The report's one stylesheet and one script, inlined into the page, and the policy that pins them.

The page's Content-Security-Policy allows no network at all (`default-src 'none'`) and only
these two blocks, by hash: the report never fetches anything when opened, and even a record
whose text slipped through escaping could not run a script or load an image.
"""

from __future__ import annotations

import base64
import hashlib

STYLE = """
:root{--fg:#1d2430;--muted:#5c6778;--bg:#fff;--panel:#f5f7fa;--line:#d9dee6;--accent:#2458c6;
--bad:#c0392b;--good:#1e8449;--band:#2458c62e}
@media (prefers-color-scheme:dark){:root{--fg:#e6e9ef;--muted:#9aa4b5;--bg:#14181f;--panel:#1c222b;
--line:#323b48;--accent:#6d9cff;--bad:#ff7b6b;--good:#5fd38d;--band:#6d9cff33}}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
background:var(--bg)}
main{max-width:1180px;margin:0 auto;padding:20px 24px 60px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:34px 0 8px;border-bottom:1px solid var(--line);
padding-bottom:4px}h3{font-size:15px;margin:20px 0 6px}
p.meta,.muted{color:var(--muted)}
nav a{margin-right:14px;color:var(--accent);text-decoration:none}
.notice{background:var(--panel);border-left:4px solid var(--bad);padding:8px 12px;margin:10px 0}
.notice ul{margin:6px 0 0;padding-left:20px}
.ok{background:var(--panel);border-left:4px solid var(--good);padding:8px 12px;margin:10px 0}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}
.card{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:8px 14px;min-width:120px}
.card b{display:block;font-size:20px}.card span{color:var(--muted);font-size:12px}
table.data{border-collapse:collapse;margin:6px 0 12px;font-variant-numeric:tabular-nums}
table.data th,table.data td{border-bottom:1px solid var(--line);padding:3px 10px;text-align:left;
vertical-align:top}
table.data th{cursor:pointer;user-select:none;font-weight:600;background:var(--panel)}
table.data td.n{text-align:right}
table.data td.d{white-space:nowrap}
.grid{display:flex;flex-wrap:wrap;gap:8px}
svg.chart{background:var(--panel);border:1px solid var(--line);border-radius:6px}
svg .ct{font-size:12px;font-weight:600;fill:var(--fg)}
svg .tick{font-size:10px;fill:var(--muted)}
svg line.grid{stroke:var(--line);stroke-width:1}
svg .line{fill:none;stroke:var(--accent);stroke-width:2}
svg .pt{fill:var(--accent)}
svg circle.worse{fill:var(--bad)}
svg .whisker{stroke:var(--accent);stroke-width:1;opacity:.6}
svg .band{fill:var(--band);stroke:none}
svg .baseline{fill:none;stroke:var(--muted);stroke-width:1;stroke-dasharray:4 3}
svg .track{fill:var(--line);opacity:.5}
svg rect.bar{fill:var(--bad)}
details.pair{border:1px solid var(--line);border-radius:6px;margin:6px 0;padding:4px 10px}
details.pair summary{cursor:pointer}
code,pre{font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre.contract{background:var(--panel);border:1px solid var(--line);padding:12px;overflow:auto;
white-space:pre-wrap}
.sev-error{color:var(--bad);font-weight:600}.sev-warning{color:#b7791f;font-weight:600}
""".strip()

SCRIPT = """
(function(){
function num(cell){var v=cell.getAttribute('data-value');return v===null?NaN:parseFloat(v);}
document.querySelectorAll('table.data').forEach(function(table){
  table.querySelectorAll('th').forEach(function(th,col){
    th.title='Sort';
    th.addEventListener('click',function(){
      var body=table.tBodies[0],rows=Array.prototype.slice.call(body.rows);
      var down=th.getAttribute('data-sorted')!=='down';
      rows.sort(function(a,b){
        var x=a.cells[col],y=b.cells[col],nx=num(x),ny=num(y),r;
        if(!isNaN(nx)&&!isNaN(ny)){r=nx-ny;}else{r=x.textContent.localeCompare(y.textContent);}
        return down?-r:r;});
      rows.forEach(function(row){body.appendChild(row);});
      table.querySelectorAll('th').forEach(function(h){h.removeAttribute('data-sorted');});
      th.setAttribute('data-sorted',down?'down':'up');
    });
  });
});
/* Record the size each chart was laid out at: a chart that collapsed to nothing is visible to
   any automated check of the page (data-drawn-width / data-drawn-height). */
document.querySelectorAll('svg.chart').forEach(function(svg){
  var box=svg.getBoundingClientRect();
  svg.setAttribute('data-drawn-width',String(Math.round(box.width)));
  svg.setAttribute('data-drawn-height',String(Math.round(box.height)));
  svg.setAttribute('data-drawn-points',String(svg.querySelectorAll('.pt').length));
});
document.documentElement.setAttribute('data-report-ready','1');
})();
""".strip()


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src {_hash(STYLE)}; script-src {_hash(SCRIPT)}; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)
