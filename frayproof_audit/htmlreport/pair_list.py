"""The list of the pairs that have pages, with its filters, and the links into it.

The list is a plain table (it reads with JavaScript off). Each row carries what the filters
match on as JSON in `data-f` (escaped like any attribute); the page's script fills the filter
controls from the rows, hides the rows that do not match, and counts what is left. A filtered
view is a URL fragment (`#pairs?compactor=drop_result&status=fail`), so a link into the list
from a table count, or pasted in a chat, opens the same view: `filter_href` writes them.
"""

from __future__ import annotations

from html import escape
from urllib.parse import quote

import orjson

from frayproof_audit.htmlreport.pages import PairPages

FILTERS = ("night", "compactor", "status", "check", "code", "operator", "origin", "q")
"""The list's filters, in the order of its controls and of a fragment's parameters."""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def filter_href(total: int | None = None, **filters: str | None) -> str:
    """`#pairs?check=retention&status=fail&n=37`: the list filtered, `n` the count the link stands
    for (the list says how many of them have pages). A filter given as "" matches pairs without
    that value (no compactor); one given as None is left out."""
    query = "&".join(f"{name}={quote(value, safe='')}" for name in FILTERS
                     if (value := filters.get(name)) is not None)
    if total is not None:
        query += ("&" if query else "") + f"n={total}"
    return "#pairs" + (f"?{query}" if query else "")


def page_href(key: str, *, folder: bool) -> str:
    return f"pairs/{key}.html" if folder else f"#{key}"


def pair_list(pages: PairPages, *, folder: bool) -> str:
    """The `#pairs` view: the cap in words, the filter controls (shown by the script), the table."""
    shown = len(pages.pages)
    if pages.candidates > shown:
        cap = (f"{shown:,} of the {pages.candidates:,} pairs worth a page have one (worst first, "
               f"<code>--max-pairs {pages.cap:,}</code>): {min(pages.failing, shown):,} of "
               f"{pages.failing:,} failing, {max(shown - pages.failing, 0):,} of {pages.passing:,} passing "
               "with warnings or surviving mutants.")
    else:
        cap = (f"All {shown:,} pairs worth a page have one: {pages.failing:,} failing, "
               f"{pages.passing:,} passing with warnings or surviving mutants.")
    rows = []
    for page in pages.pages:
        pair, facets = page.pair, page.facets
        data = orjson.dumps({"night": facets.night, "compactor": facets.compactor, "status": facets.status,
                             "check": facets.checks, "code": facets.codes, "operator": facets.operators,
                             "origin": facets.origins, "q": facets.text.lower()}).decode()
        state = "" if page.state == "found" else f' <span class="tag">{_e(page.state)}</span>'
        rows.append(
            f'<tr data-key="{_e(page.key)}" data-pair="{_e(pair.pair_id)}" data-f="{_e(data)}">'
            f'<td data-col="pair_id"><a href="{page_href(page.key, folder=folder)}">{_e(pair.pair_id)}</a>'
            f"{state}</td>"
            f'<td class="d" data-col="night">{_e(facets.night)}</td>'
            f'<td data-col="compactor">{_e(pair.compactor if pair.compactor is not None else "–")}</td>'
            f'<td data-col="status" class="st-{_e(pair.status)}">{_e(pair.status)}</td>'
            f'<td class="n" data-col="errors" data-value="{pair.errors or 0}">{pair.errors or 0}</td>'
            f'<td class="n" data-col="warnings" data-value="{pair.warnings or 0}">{pair.warnings or 0}</td>'
            f'<td class="n" data-col="survived" data-value="{pair.survived or 0}">{pair.survived or 0}</td>'
            f'<td data-col="codes">{_e(" ".join(facets.codes or facets.operators))}</td></tr>')
    controls = "".join(
        f'<label>{name}<select data-filter="{name}"><option value="">any</option></select></label>'
        for name in FILTERS if name != "q")
    return (
        '<section class="view" id="pairs"><p class="crumbs"><a href="#summary">Report</a></p><h2>Pairs</h2>'
        f'<p class="muted" id="pairs-cap">{cap} Click a pair to see its messages; a count in the report\'s '
        "tables opens the pairs behind it.</p>"
        f'<form class="filters" id="filters" hidden>{controls}<label>search<input type="search" '
        'data-filter="q" placeholder="pair id, session, finding text"></label>'
        '<a href="#pairs">clear</a></form>'
        '<p id="filter-counts" class="filter-counts" aria-live="polite"></p>'
        '<table class="data" id="t-pairs"><thead><tr><th>pair</th><th>night</th><th>compactor</th>'
        "<th>status</th><th>errors</th><th>warnings</th><th>survived</th><th>codes / operators</th>"
        "</tr></thead>"
        f'<tbody>{"".join(rows)}</tbody></table></section>')
