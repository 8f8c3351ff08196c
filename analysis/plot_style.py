"""How cpsim's plots look: the figure each phase is judged by, one colour per CP algorithm (the same in every plot),
one line style per partition, legends outside the data, and grouped bars for sweeps that do not vary the CP degree.

plot_sweep.py decides what to plot; this module decides how series are told apart. A series is a dict
{axis key: value}; `SeriesStyle` gives each distinct series its own (colour, line style, marker), never repeating a
combination, whatever the number of series.
"""
import itertools
import os

import matplotlib.pyplot as plt

# The figure a phase is judged by (docs/outputs.md): what its makespan means to the user.
PHASE_FIGURE = {
    "prefill": ("Prefill time (TTFT)", "TTFT"),
    "decode": ("Decode time (all generated tokens)", "decode time"),
    "train": ("Training step time (forward + backward)", "step time"),
}


def phase_figure(rows):
    """(title noun, axis noun) for the phase of the rows; 'makespan' when the rows mix phases or do not say."""
    phases = sorted(rows["phase"].dropna().unique()) if "phase" in rows else []
    if len(phases) == 1 and phases[0] in PHASE_FIGURE:
        return PHASE_FIGURE[phases[0]]
    return ("Makespan", "makespan")


# CP algorithms keep their colour across every plot (kind.hpp's names); unknown values take the next free colour.
ALGORITHM_COLOURS = {
    "ring": "tab:blue", "ulysses": "tab:orange", "usp": "tab:green", "allgather": "tab:red",
    "pass-q": "tab:purple", "tree": "tab:brown", "auto": "tab:gray", "lasp1": "tab:olive", "lasp2": "tab:cyan",
    "boundary": "tab:pink", "local": "#1a1a1a", "select-gather": "#8c6d31", "gather": "#393b79",
}
# 20 distinguishable colours for values that are not algorithms (tab10, then the light halves of tab20).
PALETTE = [plt.get_cmap("tab10")(i) for i in range(10)] + [plt.get_cmap("tab20")(2 * i + 1) for i in range(10)]
LINE_STYLES = ["-", "--", ":", "-."]
MARKERS = ["o", "s", "D", "^", "v", "P", "X", "<", ">", "*"]
HATCHES = ["", "//", "..", "xx", "\\\\", "oo"]


def is_algorithm_axis(key):
    return key.endswith(".algorithm")


def is_partition_axis(key):
    return key.endswith(".partition")


def short_key(key):
    """'cp.dense.algorithm' -> 'dense algorithm', 'platform.gpus_per_node' -> 'gpus_per_node'."""
    parts = key.split(".")
    if is_algorithm_axis(key) or is_partition_axis(key):
        return " ".join(parts[-2:])
    return parts[-1]


def show_value(key, value):
    """Axis values as a reader wants them: a model path becomes its file stem."""
    text = str(value)
    if key == "model" or text.endswith((".yaml", ".json")):
        return os.path.splitext(os.path.basename(text))[0]
    return text


class SeriesStyle:
    """Colour from the algorithm axis (else the first dimension), line style from the partition axis (else the next
    dimension), marker from what remains; a combination already used moves to the next marker, so no two series
    look alike."""

    def __init__(self, dims, rows):
        self.dims = [d for d in dims if rows[d].nunique() > 1]  # a dimension with one value tells nothing apart
        colour = next((d for d in self.dims if is_algorithm_axis(d)), self.dims[0] if self.dims else None)
        rest = [d for d in self.dims if d != colour]
        line = next((d for d in rest if is_partition_axis(d)), rest[0] if rest else None)
        self.colour_dim, self.line_dim = colour, line
        self.marker_dims = [d for d in rest if d != line]
        self._values = {d: sorted(rows[d].dropna().unique(), key=natural_key) for d in self.dims}
        self._used = set()
        self._given = {}

    def colour(self, series):
        if self.colour_dim is None:
            return PALETTE[0]
        value = series[self.colour_dim]
        if is_algorithm_axis(self.colour_dim) and value in ALGORITHM_COLOURS:
            return ALGORITHM_COLOURS[value]
        return PALETTE[self._values[self.colour_dim].index(value) % len(PALETTE)]

    def _index(self, dim, series):
        return self._values[dim].index(series[dim]) if dim else 0

    def line(self, series):
        """Keyword arguments for ax.plot: color, linestyle, marker."""
        key = tuple(series.get(d) for d in self.dims)
        if key in self._given:
            return self._given[key]
        ls = LINE_STYLES[self._index(self.line_dim, series) % len(LINE_STYLES)]
        marker_index = 0
        for d in self.marker_dims:
            marker_index = marker_index * len(self._values[d]) + self._index(d, series)
        colour = self.colour(series)
        for m in itertools.count(marker_index):
            style = (str(colour), ls, MARKERS[m % len(MARKERS)], m // len(MARKERS))
            if style not in self._used:
                break
        self._used.add(style)
        kwargs = {"color": colour, "linestyle": ls, "marker": style[2]}
        if style[3]:
            kwargs["markerfacecolor"] = "white"  # past the marker list: hollow markers stay distinct
        self._given[key] = kwargs
        return kwargs

    def bar(self, series):
        """Keyword arguments for ax.bar: colour per the colour dimension, hatch per the others."""
        hatch_index = 0
        for d in ([self.line_dim] if self.line_dim else []) + self.marker_dims:
            hatch_index = hatch_index * len(self._values[d]) + self._index(d, series)
        return {"color": self.colour(series), "hatch": HATCHES[hatch_index % len(HATCHES)], "edgecolor": "white"}

    def label(self, series):
        order = [d for d in [self.colour_dim, self.line_dim] if d] + self.marker_dims  # colour first: legends read by it
        return ", ".join(f"{short_key(d)}={show_value(d, series[d])}" for d in order) or "all points"


def natural_key(value):
    """Sort '2K' < '32K' < '1M' and 2 < 16 the way a reader counts; text after numbers."""
    text = str(value)
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    try:
        if text[-1:] in units:
            return (0, float(text[:-1]) * units[text[-1]], "")
        return (0, float(text), "")
    except ValueError:
        return (1, 0.0, text)


def natural_sorted(values):
    return sorted(values, key=natural_key)


def legend_outside(ax, title=None):
    """The legend to the right of the axes, never over the data."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize="small", title=title,
                  title_fontsize="small", frameon=False)


def grouped_bars(ax, rows, group_dims, bar_dims, value, style, scale=1.0, show=lambda v: f"{v:.4g}"):
    """One group of bars per combination of group_dims (x axis), one bar per combination of bar_dims inside it; with
    no group_dims, one bar per combination, each named under its bar (no legend needed). rows holds one row per
    (group, bar); value is the column drawn (times scale)."""
    groups = _combinations(rows, group_dims)
    bars = _combinations(rows, bar_dims)
    width = 0.8 / max(1, len(bars))
    ticks, tick_labels = [], []
    for b, bar in enumerate(bars):
        xs, ys = [], []
        for g, group in enumerate(groups):
            match = rows
            for d, v in list(group.items()) + list(bar.items()):
                match = match[match[d] == v]
            if not match.empty:
                xs.append(g - 0.4 + width * (b + 0.5))
                ys.append(float(match[value].iloc[0]) * scale)
        drawn = ax.bar(xs, ys, width=width * 0.8, label=style.label(bar) if group_dims else None, **style.bar(bar))
        if len(bars) * len(groups) <= 24:  # few bars: print each value, close ones are then still told apart
            ax.bar_label(drawn, labels=[show(y) for y in ys], fontsize="x-small", padding=2)
        if not group_dims:
            ticks += xs
            tick_labels += ["\n".join(f"{short_key(d)}={show_value(d, v)}" for d, v in bar.items())] * len(xs)
    if not group_dims and len(bar_dims) == 1:  # one axis: its name once, below its values
        tick_labels = [show_value(bar_dims[0], b[bar_dims[0]]) for b in bars]
        ax.set_xlabel(short_key(bar_dims[0]))
    if group_dims:
        ticks = list(range(len(groups)))
        tick_labels = ["\n".join(f"{short_key(d)}={show_value(d, v)}" for d, v in g.items()) for g in groups]
    ax.set_xticks(ticks)
    ax.set_xticklabels(tick_labels, fontsize="small")
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    values = rows[value].dropna() * scale
    if len(values) and values.min() > 0 and values.max() / values.min() > 50:  # spans decades: log, or bars vanish
        ax.set_yscale("log")


def time_unit(seconds):
    """(scale, unit) for showing these times: ms below one second, s above."""
    return (1.0, "s") if seconds.max() >= 1.0 else (1e3, "ms")


def _combinations(rows, dims):
    """The distinct value combinations of dims present in rows, in natural order; [{}] without dims."""
    if not dims:
        return [{}]
    seen = {tuple(r[d] for d in dims) for _, r in rows.iterrows()}
    ordered = sorted(seen, key=lambda t: [natural_key(v) for v in t])
    return [dict(zip(dims, t)) for t in ordered]


def save(fig, path, dpi):
    """bbox 'tight' so that legends outside the axes stay in the image."""
    fig.savefig(path, dpi=dpi, bbox_inches="tight", pad_inches=0.15)
    plt.close(fig)
    return path
