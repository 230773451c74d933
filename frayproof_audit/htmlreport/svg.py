"""Small inline SVG charts for the HTML report: rates over nights, and rates as bars.

Drawn here rather than by a charting library so the report stays one self-contained file that
needs no script, font or image from anywhere: every chart is plain SVG markup, every text in it
escaped. Each data point is a `<circle class="pt">` carrying its value in `data-value` (and a
`<title>` tooltip), so a reader, a test or a scraper can tell what was drawn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

WIDTH = 340
HEIGHT = 180
_LEFT, _RIGHT, _TOP, _BOTTOM = 44, 12, 26, 30
_NICE_MAXIMA = (0.01, 0.02, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0)


@dataclass(frozen=True, slots=True)
class Point:
    """One night of a series: its rate (None: nothing to measure that night), the rate's 95%
    interval, and the tooltip text."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    note: str = ""
    flagged: bool = False
    """Drawn as a warning: worse than the baseline beyond noise."""


@dataclass(frozen=True, slots=True)
class BandPoint:
    """The baseline a night is compared with: its centre and the band around it (None where no
    earlier nights exist yet)."""

    centre: float | None
    low: float | None
    high: float | None


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _pct(value: float) -> str:
    return f"{value:.0%}" if value >= 0.1 or value == 0 else f"{value:.1%}"


def _nice_max(values: Sequence[float]) -> float:
    top = max(values, default=0.0) * 1.05
    return next((m for m in _NICE_MAXIMA if m >= top), 1.0)


def rate_chart(chart_id: str, title: str, points: Sequence[Point],
               band: Sequence[BandPoint] | None = None) -> str:
    """A line of rates over nights with 95% whiskers, over the baseline band when given.

    The y axis starts at 0 and ends at a round rate just above the highest value, so a survival
    rate of 2% is not drawn flat against the floor of a 0-100% axis.
    """
    plot_w = WIDTH - _LEFT - _RIGHT
    plot_h = HEIGHT - _TOP - _BOTTOM
    band = list(band or [])
    values = [v for p in points for v in (p.value, p.high) if v is not None]
    values += [v for b in band for v in (b.high, b.centre) if v is not None]
    top = _nice_max(values)

    def x(i: int) -> float:
        return _LEFT + (plot_w / 2 if len(points) == 1 else plot_w * i / (len(points) - 1))

    def y(value: float) -> float:
        return _TOP + plot_h * (1 - min(value, top) / top)

    parts = [
        f'<svg class="chart" id="{_e(chart_id)}" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" '
        f'aria-label="{_e(title)}" data-points="{sum(p.value is not None for p in points)}">',
        f'<text class="ct" x="{_LEFT}" y="16">{_e(title)}</text>',
    ]
    for tick in (0.0, top / 2, top):
        ty = y(tick)
        parts.append(f'<line class="grid" x1="{_LEFT}" x2="{WIDTH - _RIGHT}" y1="{ty:.1f}" y2="{ty:.1f}"/>')
        parts.append(f'<text class="tick" x="{_LEFT - 4}" y="{ty + 3:.1f}" '
                     f'text-anchor="end">{_pct(tick)}</text>')
    parts.extend(_band(band, x, y))
    for i, point in enumerate(points):
        if point.low is not None and point.high is not None and point.value is not None:
            parts.append(f'<line class="whisker" x1="{x(i):.1f}" x2="{x(i):.1f}" '
                         f'y1="{y(point.low):.1f}" y2="{y(point.high):.1f}"/>')
    for run in _runs([(i, p.value) for i, p in enumerate(points)]):
        if len(run) > 1:
            coords = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in run)
            parts.append(f'<polyline class="line" points="{coords}"/>')
    for i, point in enumerate(points):
        if point.value is None:
            continue
        parts.append(
            f'<circle class="pt{" worse" if point.flagged else ""}" cx="{x(i):.1f}" '
            f'cy="{y(point.value):.1f}" r="{4.5 if point.flagged else 3.5}" '
            f'data-label="{_e(point.label)}" data-value="{point.value!r}">'
            f'<title>{_e(point.note or f"{point.label}: {_pct(point.value)}")}</title></circle>'
        )
    if points:
        anchor = "middle" if len(points) == 1 else "start"
        parts.append(f'<text class="tick" x="{x(0):.1f}" y="{HEIGHT - 10}" '
                     f'text-anchor="{anchor}">{_e(points[0].label)}</text>')
    if len(points) > 1:
        parts.append(f'<text class="tick" x="{x(len(points) - 1):.1f}" y="{HEIGHT - 10}" '
                     f'text-anchor="end">{_e(points[-1].label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _runs(values: Sequence[tuple[int, float | None]]) -> list[list[tuple[int, float]]]:
    """Stretches of consecutive nights that have a value: a missing night breaks the line."""
    runs: list[list[tuple[int, float]]] = [[]]
    for i, value in values:
        if value is None:
            runs.append([])
        else:
            runs[-1].append((i, value))
    return [run for run in runs if run]


def _band(band: Sequence[BandPoint], x: Callable[[int], float], y: Callable[[float], float]) -> list[str]:
    parts = []
    for run in _runs([(i, None if b.low is None or b.high is None else 0.0) for i, b in enumerate(band)]):
        indices = [i for i, _ in run]
        highs = [_known(band[i].high) for i in indices]
        lows = [_known(band[i].low) for i in indices]
        upper = [f"{x(i):.1f},{y(h):.1f}" for i, h in zip(indices, highs, strict=True)]
        lower = [f"{x(i):.1f},{y(lo):.1f}" for i, lo in reversed(list(zip(indices, lows, strict=True)))]
        if len(indices) == 1:  # one night: a short bar, still visible
            i = indices[0]
            parts.append(f'<rect class="band" x="{x(i) - 6:.1f}" y="{y(highs[0]):.1f}" width="12" '
                         f'height="{max(y(lows[0]) - y(highs[0]), 1):.1f}"/>')
        else:
            parts.append(f'<polygon class="band" points="{" ".join(upper + lower)}"/>')
    for run in _runs([(i, b.centre) for i, b in enumerate(band)]):
        if len(run) > 1:
            coords = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in run)
            parts.append(f'<polyline class="baseline" points="{coords}"/>')
    return parts


def _known(value: float | None) -> float:
    assert value is not None  # only called inside a run of nights that have a band
    return value


def bar_chart(chart_id: str, title: str, rows: Sequence[tuple[str, float, str]]) -> str:
    """Horizontal bars, one per (label, rate, tooltip), on a 0-100% scale."""
    row_h, label_w, bar_w = 20, 190, 220
    height = 26 + row_h * len(rows) + 6
    width = label_w + bar_w + 56
    parts = [
        f'<svg class="chart bars" id="{_e(chart_id)}" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{_e(title)}" data-points="{len(rows)}">',
        f'<text class="ct" x="4" y="16">{_e(title)}</text>',
    ]
    for i, (label, value, note) in enumerate(rows):
        top = 26 + i * row_h
        shown = label if len(label) <= 28 else label[:27] + "…"
        parts.append(f'<text class="tick" x="{label_w - 6}" y="{top + 13}" '
                     f'text-anchor="end">{_e(shown)}</text>')
        parts.append(f'<rect class="track" x="{label_w}" y="{top + 3}" width="{bar_w}" '
                     f'height="{row_h - 6}"/>')
        parts.append(
            f'<rect class="pt bar" x="{label_w}" y="{top + 3}" width="{max(bar_w * value, 1):.1f}" '
            f'height="{row_h - 6}" data-label="{_e(label)}" data-value="{value!r}">'
            f'<title>{_e(note)}</title></rect>'
        )
        parts.append(f'<text class="tick" x="{label_w + bar_w + 6}" y="{top + 13}">{_pct(value)}</text>')
    parts.append("</svg>")
    return "".join(parts)
