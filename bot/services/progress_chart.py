"""`/progress`'s chart: scores over time with a moving average, and mastery per topic, as a PNG.

Drawn on a bare `Figure` with the Agg canvas, never through pyplot: pyplot keeps global state
(the current figure, rcParams changes) and is not thread-safe, while this runs in a worker
thread (`asyncio.to_thread`). Every size is set on the artists themselves for the same reason.
"""

from __future__ import annotations

import io

import matplotlib.dates as mdates
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from bot.content.schema import Language
from bot.i18n import t, topic_name
from bot.services.progress import ProgressSummary

WINDOW = 5  # answers in the moving average
TOPICS_SHOWN = 10
MIN_BAR_SLOTS = 4  # one or two topics still get bars of the usual thickness
SIZE_IN, DPI = (10.0, 7.0), 100  # 1000 x 700 px: a phone shows it full width
TITLE, LABEL = 17, 14  # font sizes (pt): readable once Telegram scales the photo to a phone
DOTS, LINE, BARS = "#1f77b4", "#d62728", "#ff7f0e"
# Day-month without month names: %b follows the process locale, not the user's language.
DATE_FORMATS = ["%Y", "%d.%m", "%d.%m", "%H:%M", "%H:%M", "%S.%f"]
ZERO_FORMATS = ["", "%Y", "%d.%m", "%d.%m", "%H:%M", "%H:%M"]
OFFSET_FORMATS = ["", "%Y", "%Y", "%d.%m.%Y", "%d.%m.%Y", "%d.%m.%Y %H:%M"]


def moving_average(values: list[float], window: int = WINDOW) -> list[float]:
    """Trailing mean of up to `window` values: the first points average fewer."""
    out = []
    for i in range(len(values)):
        part = values[max(0, i - window + 1) : i + 1]
        out.append(sum(part) / len(part))
    return out


def render_progress_chart(summary: ProgressSummary, lang: Language) -> bytes:
    if summary.is_empty:
        raise ValueError("nothing to chart: the summary has no graded answer")
    fig = Figure(figsize=SIZE_IN, dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)  # attaches itself to the figure; savefig then renders with Agg
    topics = summary.topics[:TOPICS_SHOWN]
    # The bar panel grows with its bars (from a floor) so that ten topic names stay legible.
    slots = max(len(topics), MIN_BAR_SLOTS)
    # Two subfigures, not two subplots: the topic names' margin would otherwise indent the
    # time axis too, and its legend would run into its title.
    grid = fig.add_gridspec(2, 1, height_ratios=[1.0, 0.12 * slots])
    scores_ax = fig.add_subfigure(grid[0]).add_subplot()
    topics_ax = fig.add_subfigure(grid[1]).add_subplot()
    _scores(scores_ax, summary, lang)
    _topics(topics_ax, summary, lang, slots)
    out = io.BytesIO()
    fig.savefig(out, format="png")
    return out.getvalue()


def _scores(ax: Axes, summary: ProgressSummary, lang: Language) -> None:
    when = mdates.date2num([w for w, _ in summary.points])  # days, UTC: what the axis plots
    scores = [s for _, s in summary.points]
    # Fewer, fainter dots once there are many, so the average line stays visible.
    alpha = 0.8 if len(scores) <= 50 else 0.35
    ax.scatter(when, scores, s=30, color=DOTS, alpha=alpha, label=t(lang, "progress.chart.answer"))
    ax.plot(
        when,
        moving_average(scores),
        color=LINE,
        linewidth=2.5,
        label=t(lang, "progress.chart.average", n=WINDOW),
    )
    # A single day (or answer) would otherwise span years of empty axis.
    pad = max((when[-1] - when[0]) * 0.03, 0.5)
    ax.set_xlim(when[0] - pad, when[-1] + pad)
    ax.set_ylim(0, 10.3)
    ax.set_yticks([0, 2, 4, 6, 8, 10])
    ax.set_title(t(lang, "progress.chart.scores"), fontsize=TITLE, loc="left")
    ax.set_ylabel(t(lang, "progress.chart.score_axis"), fontsize=LABEL)
    locator = mdates.AutoDateLocator(minticks=3, maxticks=8)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(
        mdates.ConciseDateFormatter(
            locator, formats=DATE_FORMATS, zero_formats=ZERO_FORMATS, offset_formats=OFFSET_FORMATS
        )
    )
    ax.xaxis.get_offset_text().set_fontsize(LABEL)
    ax.tick_params(labelsize=LABEL)
    ax.grid(axis="y", alpha=0.3)
    # Above the axes, beside the title: inside, it would hide dots.
    ax.legend(
        loc="lower right", bbox_to_anchor=(1.0, 1.0), ncols=2, fontsize=LABEL, frameon=False,
        borderaxespad=0.2,
    )  # fmt: skip


def _topics(ax: Axes, summary: ProgressSummary, lang: Language, slots: int) -> None:
    topics = summary.topics[:TOPICS_SHOWN]
    names = [topic_name(lang, p.topic) for p in topics]
    values = [p.mastery for p in topics]
    rows = range(len(topics))
    ax.barh(rows, values, color=BARS, height=0.7)
    for row, value in zip(rows, values, strict=True):
        ax.text(value + 0.1, row, f"{value:.1f}", va="center", fontsize=LABEL)
    ax.set_yticks(list(rows), names)
    ax.set_ylim(slots - 0.5, -0.5)  # inverted: the weakest topic on top, where the eye starts
    ax.set_xlim(0, 10.8)  # room for the value after a full bar
    ax.set_xticks([0, 2, 4, 6, 8, 10])
    ax.set_title(t(lang, "progress.chart.topics"), fontsize=TITLE, loc="left")
    ax.tick_params(labelsize=LABEL)
    ax.grid(axis="x", alpha=0.3)
