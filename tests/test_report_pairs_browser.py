"""The report's pair pages in a real browser, driven as a user drives it: one headless Chromium
for the module (`tests/cdp.py`), clicks that follow the page's own links, the DOM read after
the page's script ran.

From the code table, two clicks reach a failing pair's messages with the stranded tool result
and the dropped call it lost both marked and linked; the filters narrow the list and its counts
follow, and the URL fragment reopens the same view; message text holding HTML renders as
text (checked on the DOM: no element injected); with JavaScript off every view still reads;
a folder report's pages link both ways. Skipped as `test_report_browser` is: only where
Chromium is missing and not under CI.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from frayproof_audit.corpus import read_table
from frayproof_audit.htmlreport import ReportConfig
from frayproof_audit.htmlreport.write import write_report_pages
from tests.cdp import Browser, Tab
from tests.pair_pages_support import (
    CODEX_PAIR,
    FORMATS,
    HOSTILE_PAIR,
    HOSTILE_TEXT,
    OTHER_COMPACTOR,
    PairsDataset,
    build_pairs_dataset,
)
from tests.test_report_browser import FLAGS, _chromium

CSP_WATCH = ("window.__csp=[];document.addEventListener('securitypolicyviolation',"
             "function(e){window.__csp.push(e.violatedDirective);});")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> PairsDataset:
    return build_pairs_dataset(tmp_path_factory.mktemp("pairs-browser"))


@pytest.fixture(scope="module")
def single(dataset: PairsDataset) -> Path:
    page = dataset.root / "report.html"
    config = ReportConfig(str(dataset.out), str(page), source_root=str(dataset.root))
    assert not write_report_pages(config).folder
    return page


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    chromium = _chromium()
    started = Browser(chromium, tmp_path_factory.mktemp("profile"), FLAGS)
    yield started
    started.close()


def _open(browser: Browser, url: str, *, script: bool = True) -> Tab:
    tab = browser.tab("about:blank", script=script)
    browser.send("Page.addScriptToEvaluateOnNewDocument", {"source": CSP_WATCH}, tab.session)
    tab.go(url)
    if script:
        tab.wait("document.documentElement.getAttribute('data-report-ready') === '1'")
    return tab


def _view(tab: Tab) -> str:
    found: str = tab.js("document.documentElement.getAttribute('data-view')")
    return found


def _visible_views(tab: Tab) -> list[str]:
    found: list[str] = tab.js("[].slice.call(document.querySelectorAll('.view'))"
                              ".filter(function(v){return v.offsetHeight>0;}).map(function(v){return v.id;})")
    return found


def _counts(tab: Tab) -> dict[str, int]:
    found: dict[str, Any] = tab.js(
        "(function(){var c=document.getElementById('filter-counts');"
        "return {shown:+c.getAttribute('data-shown'),"
        "fail:+c.getAttribute('data-fail'),pass:+c.getAttribute('data-pass'),"
        "rows:document.querySelectorAll('#t-pairs tbody tr:not([hidden])').length};})()")
    return {name: int(value) for name, value in found.items()}


def _row_link(pair_id: str) -> str:
    return f"#t-pairs tbody tr[data-pair={json.dumps(pair_id)}]:not([hidden]) td[data-col=pair_id] a"


def test_two_clicks_from_the_code_table_reach_the_marked_stranded_result_and_its_lost_call(
        browser: Browser, single: Path, dataset: PairsDataset) -> None:
    tab = _open(browser, single.as_uri())
    assert _view(tab) == "report" and _visible_views(tab) == ["report"]
    orphan = 'tr[data-key^="tool_pair_integrity"][data-key$="TP-ORPHAN"] td[data-col=failing_pairs] a'
    count = int(tab.js(f"document.querySelector({json.dumps('#t-codes ' + orphan)}).textContent"))
    failing = (read_table(dataset.out, "findings").filter(pl.col("code") == "TP-ORPHAN")
               .select("run_id", "pair_id").unique().collect().height)
    assert count == failing == len(FORMATS) + 2  # each format's broken pair, the trimmed and the hostile one

    tab.click(f"#t-codes {orphan}")  # click 1: the pairs behind the count
    assert _view(tab) == "pairs"
    assert tab.js("location.hash") == f"#pairs?status=fail&code=TP-ORPHAN&n={count}"
    assert _counts(tab) == {"shown": count, "fail": count, "pass": 0, "rows": count}

    tab.click(_row_link("anthropic-broken"))  # click 2: the pair's page
    section = tab.js("document.getElementById(location.hash.slice(1)).getAttribute('data-pair')")
    assert section == "anthropic-broken" and _visible_views(tab) == [tab.js("location.hash.slice(1)")]
    page: dict[str, Any] = tab.js("""(function(){
      var s=document.getElementById(location.hash.slice(1));
      var f=[].slice.call(s.querySelectorAll('ol.findings li')).filter(function(li){
        return li.getAttribute('data-code')==='TP-ORPHAN';})[0];
      var at=document.getElementById(f.querySelector('a[href^="#"]').getAttribute('href').slice(1));
      var own=at.querySelector('a.mark.m-error');
      var pointers=[].slice.call(s.querySelectorAll('a.mark.m-related')).filter(function(a){
        return a.getAttribute('href')==='#'+f.id;});
      var lost=pointers.map(function(a){return a.closest('.part');}).filter(function(p){
        return p && p.classList.contains('p-call');})[0];
      var link=at.querySelector('.lk a.link');
      return {result_kind: at.className, result_text: at.querySelector('pre').textContent,
              own_mark_to: own && own.getAttribute('href'), finding: f.id,
              lost_call: lost && lost.id, lost_call_row: lost && lost.closest('tr').className,
              lost_call_text: lost && lost.textContent,
              result_links_to: link && link.getAttribute('href').slice(1),
              link_says: link && link.parentNode.textContent,
              result_row: at.closest('tr').className};})()""")
    assert "p-result" in page["result_kind"] and "marked" in page["result_kind"]
    assert page["result_text"] == "port = 8080"
    assert page["own_mark_to"] == "#" + page["finding"]  # the mark links back to its finding
    assert page["result_row"] == "r-kept"  # the stranded result was kept ...
    assert page["lost_call_row"] == "r-dropped"  # ... and the call it answers was dropped
    assert "read_file" in page["lost_call_text"] and "toolu_1" in page["lost_call_text"]
    assert page["result_links_to"] == page["lost_call"]  # the result links to its lost call
    assert "its call is not in after" in page["link_says"] and "(dropped)" in page["link_says"]

    tab.click(f"a.link[href='#{page['lost_call']}']")
    assert tab.js("location.hash") == f"#{page['lost_call']}"
    assert tab.js(f"document.getElementById({json.dumps(page['lost_call'])}).classList.contains('hit')")
    assert tab.js("window.__csp.length") == 0


def test_the_filters_narrow_the_list_count_and_name_the_view(browser: Browser, single: Path,
                                                             dataset: PairsDataset) -> None:
    tab = _open(browser, single.as_uri() + "#pairs")
    pages = read_table(dataset.out, "pairs").filter(pl.col("status") == "fail").collect()
    assert _counts(tab)["shown"] == pages.height  # every failing pair has a page
    tab.js(f"""(function(){{var s=document.querySelector('select[data-filter=compactor]');
      s.value={json.dumps(OTHER_COMPACTOR)};s.dispatchEvent(new Event('change'));}})()""")
    expected = pages.filter(pl.col("compactor") == OTHER_COMPACTOR).height
    assert expected == 2
    assert _counts(tab) == {"shown": expected, "fail": expected, "pass": 0, "rows": expected}
    assert tab.js("location.hash") == f"#pairs?compactor={OTHER_COMPACTOR}"
    # each other control counts what the compactor leaves: the codes of its two pairs, twice each
    options = tab.js("[].map.call(document.querySelector('select[data-filter=code]').options,"
                     "function(o){return o.textContent;})")
    assert [o for o in options if not o.endswith(" (0)")] == ["any", "RET-EXCHANGE (2)", "TP-ORPHAN (2)"]

    tab.js("(function(){var q=document.querySelector('input[data-filter=q]');q.value='HOSTILE-text';"
           "q.dispatchEvent(new Event('input'));})()")
    assert _counts(tab)["shown"] == 1
    assert tab.js("location.hash") == f"#pairs?compactor={OTHER_COMPACTOR}&q=HOSTILE-text"

    pasted = _open(browser, single.as_uri() + f"#pairs?compactor={OTHER_COMPACTOR}&q=HOSTILE-text")
    assert _view(pasted) == "pairs" and _counts(pasted)["shown"] == 1  # a link pasted in a chat
    assert pasted.js("document.querySelector('select[data-filter=compactor]').value") == OTHER_COMPACTOR
    tab.click("#filters a[href='#pairs']")
    assert _counts(tab)["shown"] == pages.height


def test_every_count_in_the_tables_opens_the_pairs_behind_it(browser: Browser, single: Path) -> None:
    tab = _open(browser, single.as_uri())
    links: list[list[str]] = tab.js(
        "[].map.call(document.querySelectorAll('#report table.data td a, #report .card a'),"
        "function(a){var td=a.closest('td');return [td?a.closest('table').id:'card',"
        "td?td.getAttribute('data-col'):a.closest('.card').getAttribute('data-card'),"
        "a.textContent,a.getAttribute('href')];})")
    tables = {table for table, *_ in links}
    assert {"t-nights", "t-checks", "t-codes", "t-compactors", "t-streaks", "card"} <= tables
    assert {column for table, column, *_ in links if table == "card"} == {"failed", "pair_pages"}
    for table, column, text, href in links:
        if not href.startswith("#pairs"):
            continue
        tab.js(f"location.hash={json.dumps(href)}")
        tab.wait(f"location.hash === {json.dumps(href)}")
        tab.js("new Promise(function(done){setTimeout(done,0);})")
        counts = _counts(tab)
        if href == "#pairs":  # the pair pages card: the whole list
            assert counts["shown"] == int(text.replace(",", "")) == 7, (table, column)
        elif "status=fail" in href:  # every failing pair has a page: the list holds exactly the count
            assert counts["shown"] == counts["fail"] == int(text.replace(",", "")), (table, column, href)
        else:  # passing pairs get a page only with warnings or survivors: the list says the rest
            total = int(text.replace(",", ""))
            assert counts["shown"] <= total, (table, column, href)
            said = tab.js("document.getElementById('filter-counts').textContent")
            assert f"stands for {total} pair(s)" in said, said
            if counts["shown"] < total:
                assert f"{total - counts['shown']} of them without a page" in said, said


def test_message_text_holding_html_renders_as_text(browser: Browser, single: Path) -> None:
    tab = _open(browser, single.as_uri() + "#pairs")
    tab.click(_row_link(HOSTILE_PAIR))
    found: dict[str, Any] = tab.js("""(function(){
      var s=document.getElementById(location.hash.slice(1));
      var texts=[].map.call(s.querySelectorAll('pre.t'),function(p){return p.textContent;});
      return {scripts: document.querySelectorAll('script').length,
              styles: document.querySelectorAll('style').length,
              images: document.querySelectorAll('img').length,
              handlers: document.querySelectorAll('[onerror],[onload],[onclick]').length,
              js_links: document.querySelectorAll('a[href^="javascript:"]').length,
              pwned: document.documentElement.hasAttribute('data-pwned'), title: document.title,
              texts: texts, session: s.querySelector('p.meta').textContent,
              children: [].map.call(s.querySelectorAll('pre.t'),
                                    function(p){return p.children.length;})};})()""")
    assert found["scripts"] == 1 and found["styles"] == 1  # the report's own
    assert found["images"] == found["handlers"] == found["js_links"] == 0 and not found["pwned"]
    assert found["title"].startswith("Compaction audit report")
    assert HOSTILE_TEXT in found["texts"]  # the tool result, character for character
    assert any(text.endswith(HOSTILE_TEXT) for text in found["texts"] if text != HOSTILE_TEXT)
    assert HOSTILE_TEXT in found["session"] and set(found["children"]) == {0}
    assert tab.js("window.__csp.length") == 0


def test_without_javascript_the_pair_pages_and_tables_still_read(browser: Browser, single: Path) -> None:
    tab = _open(browser, single.as_uri(), script=False)
    state: dict[str, Any] = tab.js("""(function(){
      var pages=[].slice.call(document.querySelectorAll('section.pairpage'));
      var anthropic=pages.filter(function(p){return p.getAttribute('data-pair')==='anthropic-broken';})[0];
      return {ready: document.documentElement.getAttribute('data-report-ready'),
              pages: pages.length, shown: pages.filter(function(p){return p.offsetHeight>0;}).length,
              list_rows: [].filter.call(document.querySelectorAll('#t-pairs tbody tr'),function(r){
                return r.offsetHeight>0;}).length,
              filters_hidden: document.getElementById('filters').offsetHeight===0,
              text: anthropic.innerText, marks: anthropic.querySelectorAll('a.mark').length,
              codes: document.querySelectorAll('#t-codes tbody tr').length};})()""")
    assert state["ready"] is None  # the script did not run
    assert state["pages"] == state["shown"] == state["list_rows"] == 7
    assert state["filters_hidden"] and state["codes"] > 0  # no control that could not work
    assert "port = 8080" in state["text"] and "TP-ORPHAN" in state["text"] and state["marks"] >= 2
    # a pair's link is a plain anchor: followed, it scrolls to the pair's section
    key = tab.js("document.querySelector('section.pairpage[data-pair=\"anthropic-broken\"]').id")
    tab.go(single.as_uri() + f"#{key}")
    tab.wait(f"Math.abs(document.getElementById({json.dumps(key)}).getBoundingClientRect().top) < 5")


def test_a_folder_report_links_the_list_and_each_pair_page_both_ways(
        browser: Browser, dataset: PairsDataset, tmp_path: Path) -> None:
    folder = tmp_path / "site"
    config = ReportConfig(str(dataset.out), str(folder) + "/", source_root=str(dataset.root))
    written = write_report_pages(config)
    assert written.folder and Path(written.path) == folder / "index.html"
    tab = _open(browser, (folder / "index.html").as_uri() + "#pairs")
    tab.click(_row_link(CODEX_PAIR))
    assert tab.js("location.pathname").startswith(str(folder / "pairs"))
    derived: dict[str, Any] = tab.js("""(function(){var s=document.querySelector('section.pairpage');
      return {pair: s.getAttribute('data-pair'), state: s.getAttribute('data-state'),
              prov: (s.querySelector('.prov')||{}).textContent||'',
              summary: s.querySelectorAll('tr.r-summary').length,
              marks: s.querySelectorAll('a.mark').length};})()""")
    assert derived["pair"] == CODEX_PAIR and derived["state"] == "found"
    assert "codex" in derived["prov"] and "fidelity" in derived["prov"] and derived["summary"] == 1
    assert derived["marks"] > 0
    tab.click("p.crumbs a[href$='#pairs']")
    assert tab.js("location.pathname").endswith("/index.html") and _view(tab) == "pairs"
    assert tab.js("window.__csp.length") == 0
