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
.view[hidden]{display:none}
.crumbs{font-size:12px;margin:18px 0 0}
.card b a{color:inherit}
td a,summary a{color:var(--accent)}
details.pair summary a.open{margin-left:10px;font-size:12px}
.st-fail{color:var(--bad);font-weight:600}.st-pass{color:var(--good);font-weight:600}
.tag{font-size:11px;border:1px solid var(--line);border-radius:4px;padding:0 4px;margin-left:4px;
color:var(--muted)}
form.filters{display:flex;flex-wrap:wrap;gap:6px 14px;margin:8px 0;font-size:12px}
[hidden],form.filters[hidden]{display:none}
form.filters select,form.filters input{margin-left:4px;font-size:12px;max-width:220px}
.filter-counts{font-weight:600}
ol.findings{padding-left:0;list-style:none}
ol.findings li{border-left:4px solid var(--line);padding:4px 10px;margin:6px 0;background:var(--panel)}
ol.findings li.f-error{border-left-color:var(--bad)}ol.findings li.f-warning{border-left-color:#b7791f}
.ref{font-weight:700;font-family:ui-monospace,monospace}
.provider,.also{font-size:12px;color:var(--muted);margin-top:2px}
table.diff{width:100%;border-collapse:collapse;table-layout:fixed;margin:6px 0 20px}
table.diff th{background:var(--panel);text-align:left;padding:3px 8px}
table.diff td{vertical-align:top;border-bottom:1px solid var(--line);padding:4px 6px;width:50%;
overflow-wrap:anywhere}
tr.r-dropped>td:first-child{background:#c0392b17}
tr.r-added>td:last-child,tr.r-summary>td:last-child{background:#1e844917}
tr.r-changed>td{background:#b7791f17}
tr.r-change-note td,tr.gap td{font-size:12px;color:var(--muted);font-style:italic}
.msg .mh{font-size:12px;color:var(--muted)}
.lbl,.site,.cid{font-family:ui-monospace,monospace;font-size:12px}
.lbl{color:var(--fg);font-weight:600}
.kind{font-size:11px;border:1px solid var(--line);border-radius:4px;padding:0 4px}
.k-summary{border-color:var(--good);color:var(--good)}.k-dropped{border-color:var(--bad);color:var(--bad)}
.part{margin:3px 0 3px 6px;padding:2px 4px;border-radius:4px}
.part.marked{box-shadow:inset 3px 0 0 var(--bad)}
.pk{font-size:11px;text-transform:uppercase;letter-spacing:.03em;color:var(--muted)}
pre.t{white-space:pre-wrap;overflow-wrap:anywhere;margin:2px 0;padding:4px 6px;background:var(--panel);
border-radius:4px;max-height:none}
.cut{font-size:12px;color:var(--muted);margin:2px 0}
.lk{font-size:12px;color:var(--muted)}
details.fold summary{cursor:pointer;font-size:12px;color:var(--muted)}
a.mark{display:inline-block;margin-left:6px;padding:0 6px;border-radius:8px;font-size:11px;font-weight:600;
text-decoration:none;color:#fff;background:var(--bad)}
a.m-warning{background:#b7791f}a.m-survivor{background:#7d3c98}
a.m-related{background:transparent;color:var(--bad);border:1px solid var(--bad)}
:target,.hit{outline:3px solid var(--accent);outline-offset:2px}
.view:target{outline:none}
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
/* One view at a time, named by the URL fragment: the report (#summary, #failures, ...), the
   list of pairs (#pairs?compactor=a&status=fail), a pair's page (#p1a2b..., #p1a2b...-a4-0).
   Without this script every view reads one after another and each fragment is a plain anchor. */
var root=document.documentElement,views=[].slice.call(document.querySelectorAll('.view'));
var FILTERS=['night','compactor','status','check','code','operator','origin','q'];
function viewOf(el){while(el&&!(el.classList&&el.classList.contains('view'))){el=el.parentNode;}return el;}
function params(query){var out={};query.split('&').forEach(function(item){if(!item)return;
  var at=item.indexOf('=');
  var k=decodeURIComponent(at<0?item:item.slice(0,at)),v=at<0?'':item.slice(at+1);
  try{out[k]=decodeURIComponent(v.replace(/[+]/g,' '));}catch(e){out[k]=v;}});return out;}
var list=document.getElementById('t-pairs'),rows=[],facets=[],state={},wanted=null;
function values(f,name){var v=f[name];if(v===null||v===undefined)return[''];return Array.isArray(v)?v:[v];}
function hits(f,name,want){if(name==='q')return f.q.indexOf(want.toLowerCase())>=0;
  return values(f,name).indexOf(want)>=0;}
function keep(f,skip){for(var name in state){if(name!==skip&&!hits(f,name,state[name]))return false;}
  return true;}
function query(){var out=[];FILTERS.forEach(function(name){
  if(name in state)out.push(name+'='+encodeURIComponent(state[name]));});
  return '#pairs'+(out.length?'?'+out.join('&'):'');}
function refresh(){
  if(!list)return;
  var shown=0,fail=0,pass=0;
  rows.forEach(function(row,i){var on=keep(facets[i],null);row.hidden=!on;if(on){shown++;
    if(facets[i].status==='fail')fail++;else pass++;}});
  document.querySelectorAll('#filters select').forEach(function(select){
    var name=select.getAttribute('data-filter'),counts={},order=[];
    facets.forEach(function(f){if(!keep(f,name))return;values(f,name).forEach(function(v){
      if(!(v in counts)){counts[v]=0;order.push(v);}counts[v]++;});});
    facets.forEach(function(f){values(f,name).forEach(function(v){
      if(!(v in counts)){counts[v]=0;order.push(v);}});});
    if((name in state)&&!(state[name] in counts)){counts[state[name]]=0;order.push(state[name]);}
    order.sort();
    select.parentNode.hidden=(order.length===0);
    while(select.options.length>1)select.remove(1);
    order.forEach(function(v){var option=document.createElement('option');option.value=v;
      option.textContent=(v===''?'(none)':v)+' ('+counts[v]+')';select.appendChild(option);});
    select.value=(name in state)?state[name]:'';select.setAttribute('data-chosen',select.value);});
  var search=document.querySelector('#filters input');if(search)search.value=state.q||'';
  var text=shown+' of '+rows.length+' pairs with pages shown ('+fail+' fail, '+pass+' pass)';
  if(wanted!==null){text+='; the count you followed stands for '+wanted+' pair(s)'+
    (wanted>shown?', '+(wanted-shown)+' of them without a page (see the cap above)':'');}
  var counts=document.getElementById('filter-counts');
  counts.textContent=text;counts.setAttribute('data-shown',String(shown));
  counts.setAttribute('data-fail',String(fail));counts.setAttribute('data-pass',String(pass));}
if(list){
  rows=[].slice.call(list.tBodies[0].rows);
  facets=rows.map(function(row){return JSON.parse(row.getAttribute('data-f'));});
  var form=document.getElementById('filters');form.hidden=false;
  form.addEventListener('submit',function(event){event.preventDefault();});
  form.querySelectorAll('select,input').forEach(function(control){
    control.addEventListener(control.tagName==='INPUT'?'input':'change',function(){
      var name=control.getAttribute('data-filter');
      if(control.tagName==='SELECT'&&control.selectedIndex===0||control.tagName==='INPUT'&&!control.value){
        delete state[name];}
      else{state[name]=control.value;}
      wanted=null;history.replaceState(null,'',query());refresh();});});}
function route(){
  var hash=location.hash.slice(1),at=hash.indexOf('?'),id=at<0?hash:hash.slice(0,at),target=null;
  try{id=decodeURIComponent(id);}catch(e){}
  if(id)target=document.getElementById(id);
  var view=(target&&viewOf(target))||views[0];
  if(!view)return;
  views.forEach(function(v){v.hidden=(v!==view);});
  root.setAttribute('data-view',view.id);
  if(view.id==='pairs'){var p=params(at<0?'':hash.slice(at+1));state={};
    FILTERS.forEach(function(name){if(name in p)state[name]=p[name];});
    wanted=('n' in p)?parseInt(p.n,10):null;refresh();}
  document.querySelectorAll('.hit').forEach(function(el){el.classList.remove('hit');});
  if(target&&target!==view){var shown=target.closest('.part,.msg,li,tr,td')||target;
    shown.classList.add('hit');
    shown.scrollIntoView();}else{window.scrollTo(0,0);}}
window.addEventListener('hashchange',route);
route();
document.documentElement.setAttribute('data-report-ready','1');
})();
""".strip()


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src {_hash(STYLE)}; script-src {_hash(SCRIPT)}; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)
