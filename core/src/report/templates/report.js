// The interactive part of `hpo report --html`: the history of the objective, hyperparameter
// importance, slices, a contour of the two most important hyperparameters, the timeline of the
// trial groups, parallel coordinates (drag along an axis to keep only the trials in that range,
// click the axis to clear it), the learning curves and a sortable table, all filtered by the same
// selection; and, for `hpo report A.h5 B.h5 --html`, the comparison of several studies. Plain
// JavaScript: marks on a <canvas> (10,000 trials draw in milliseconds), axes, labels and brushes
// in SVG over it; no library, so the page works offline. The pure functions (scales, selection,
// colours, history, timeline, interpolation) are exported for Node tests.
"use strict";

const HpoReport = (() => {
  // ---- pure functions ----

  // The axes of the parallel coordinates: the study's parameter axes, then the sweep metric
  // (linear over the finite objectives). Each axis gets `value(trial)` and `position(value)`: a
  // number in [0, 1] (0 bottom, 1 top), or null when the trial has no usable value there.
  function buildAxes(data) {
    const axes = data.axes.map((axis) => Object.assign({}, axis, {
      value: (trial) => trial.params[axis.name],
    }));
    const [lo, hi] = finiteRange(data.trials.map((t) => t.objective));
    axes.push({
      name: data.metric,
      scale: "linear",
      min: lo === null ? 0 : lo,
      max: hi === null ? 1 : hi,
      metric: true,
      value: (trial) => trial.objective,
    });
    for (const axis of axes) axis.position = positionFunction(axis);
    return axes;
  }

  // [min, max] of the finite numbers in `values`, [null, null] when there are none.
  function finiteRange(values) {
    let lo = Infinity;
    let hi = -Infinity;
    for (const v of values) {
      if (typeof v === "number" && Number.isFinite(v)) {
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    }
    return lo <= hi ? [lo, hi] : [null, null];
  }

  function positionFunction(axis) {
    if (axis.scale === "categorical") {
      const n = axis.categories.length;
      return (v) => {
        const i = axis.categories.indexOf(v);
        if (i < 0) return null;
        return n === 1 ? 0.5 : i / (n - 1);
      };
    }
    const log = axis.scale === "log";
    const transform = log ? Math.log : (v) => v;
    const lo = transform(axis.min);
    const hi = transform(axis.max);
    return (v) => {
      if (typeof v !== "number" || !Number.isFinite(v) || (log && v <= 0)) return null;
      if (hi === lo) return 0.5;
      return (transform(v) - lo) / (hi - lo);
    };
  }

  // How good a trial is in [0, 1] (1: the best objective of the study), null without an
  // objective; follows the metric's goal.
  function goodness(data, axes, trial) {
    const p = axes[axes.length - 1].position(trial.objective);
    if (p === null) return null;
    return data.goal === "maximize" ? p : 1 - p;
  }

  // From pale yellow (worst) to dark blue (best), as viridis runs; grey without an objective.
  function colour(g) {
    if (g === null) return "rgb(160,160,160)";
    const stops = [[253, 231, 37], [33, 145, 140], [68, 1, 84]];
    const x = Math.min(Math.max(g, 0), 1) * (stops.length - 1);
    const i = Math.min(Math.floor(x), stops.length - 2);
    const f = x - i;
    const c = stops[i].map((a, k) => Math.round(a + (stops[i + 1][k] - a) * f));
    return "rgb(" + c.join(",") + ")";
  }

  const STATUS_COLOURS = {
    completed: "#1f77b4", stopped: "#ff7f0e", failed: "#d62728", running: "#7f7f7f",
    paused: "#9467bd",
  };
  const STUDY_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
                         "#e377c2", "#17becf"];

  // Which trials every brush keeps. `brushes` maps an axis index to [lo, hi] in positions; a trial
  // without a value on a brushed axis is not kept.
  function selectTrials(trials, axes, brushes) {
    const entries = Object.entries(brushes).map(([index, range]) => [axes[Number(index)], range]);
    return trials.map((trial) => entries.every(([axis, range]) => {
      const p = axis.position(axis.value(trial));
      return p !== null && p >= range[0] && p <= range[1];
    }));
  }

  // Trials sorted by a table column (best first for the metric column), ties by trial id.
  function sortTrials(data, trials, key, descending) {
    const get = (t) => (key in t.params ? t.params[key] : t[key]);
    const sign = descending ? -1 : 1;
    return trials.slice().sort((a, b) => {
      const x = get(a);
      const y = get(b);
      const xMissing = x === null || x === undefined || (typeof x === "number" && isNaN(x));
      const yMissing = y === null || y === undefined || (typeof y === "number" && isNaN(y));
      if (xMissing !== yMissing) return xMissing ? 1 : -1;
      if (!xMissing && x !== y) return (x < y ? -1 : 1) * sign;
      return a.trial_id - b.trial_id;
    });
  }

  // When each trial ran, in seconds from the first dispatch: exact from the study's start_time_s
  // when every trial has one; otherwise (a study written before hpo recorded it) approximate, each
  // group's trials laid end to end in the order they finished. {start, end, spans, exact,
  // missing}: start and end of each trial's last run; spans[i] every run of trial i as [start,
  // end, group, last] (exact: a trial paused at ASHA rungs ran once per pause before its last).
  function trialTimes(trials) {
    const order = finishingOrder(trials);
    const missing = trials.filter((t) => !Number.isFinite(t.start_time_s)).length;
    const start = new Array(trials.length);
    const end = new Array(trials.length);
    const duration = (d) => (Number.isFinite(d) ? Math.max(0, d) : 0);
    if (missing === 0 && trials.length > 0) {
      let origin = Infinity;
      for (const t of trials) {
        origin = Math.min(origin, t.start_time_s);
        for (const [s] of t.spans || []) if (Number.isFinite(s)) origin = Math.min(origin, s);
      }
      const spans = trials.map((t, i) => {
        start[i] = t.start_time_s - origin;
        end[i] = start[i] + duration(t.duration_s);
        const earlier = (t.spans || []).filter(([s]) => Number.isFinite(s))
                            .map(([s, d, g]) => [s - origin, s - origin + duration(d), g, false]);
        return earlier.concat([[start[i], end[i], t.group, true]]);
      });
      return {start, end, spans, exact: true, missing: 0};
    }
    const cursor = {};
    for (const i of order) {
      const t = trials[i];
      const at = cursor[t.group] || 0;
      start[i] = at;
      end[i] = at + duration(t.duration_s);
      cursor[t.group] = end[i];
    }
    const spans = trials.map((t, i) => [[start[i], end[i], t.group, true]]);
    return {start, end, spans, exact: false, missing};
  }

  // Trial indices in the order the trials finished (the study file's order).
  function finishingOrder(trials) {
    const order = trials.map((t, i) => i);
    const key = (i) => (Number.isFinite(trials[i].order) ? trials[i].order : trials[i].trial_id);
    return order.sort((a, b) => key(a) - key(b));
  }

  // The history: for each trial in finishing order its x (mode "trial": 1, 2, ...; "compute":
  // cumulative epochs when it finished; "time": seconds from the first dispatch to its end), and
  // the best-so-far steps [[x, best], ...] over the trials with an objective, by the goal.
  function history(trials, goal, mode, times) {
    let order = finishingOrder(trials);
    const x = new Array(trials.length);
    if (mode === "time") {
      const t = times || trialTimes(trials);
      order = order.slice().sort((a, b) => t.end[a] - t.end[b]);
      for (const i of order) x[i] = t.end[i];
    } else {
      let epochs = 0;
      order.forEach((i, k) => {
        epochs += Number.isFinite(trials[i].epochs) ? trials[i].epochs : 0;
        x[i] = mode === "compute" ? epochs : k + 1;
      });
    }
    const best = [];
    let current = null;
    for (const i of order) {
      const v = trials[i].objective;
      if (typeof v !== "number" || !Number.isFinite(v)) continue;
      if (current === null || (goal === "maximize" ? v > current : v < current)) {
        current = v;
        best.push([x[i], v]);
      }
    }
    return {x, order, best};
  }

  // Busy share of the slots: the trials' summed run time over groups x (last end - first start).
  function utilization(times, groups) {
    let lo = Infinity;
    let hi = -Infinity;
    let busy = 0;
    for (const spans of times.spans) {
      for (const [s, e] of spans) {
        lo = Math.min(lo, s);
        hi = Math.max(hi, e);
        busy += e - s;
      }
    }
    const span = hi - lo;
    if (!(span > 0) || !(groups > 0)) return null;
    return {share: Math.min(1, busy / (groups * span)), busy, span};
  }

  // Inverse-distance-weighted interpolation (power 2) of `points` ([u, v, value], u and v in
  // [0, 1]) on an n x n grid of cell centres; row-major, v (rows) from the bottom. `stretch`
  // ([su, sv], default [1, 1]) multiplies distances along u and v: a categorical axis gets a large
  // one, so that each cell follows the trials of its nearest category.
  function interpolateGrid(points, n, stretch) {
    const [su, sv] = stretch || [1, 1];
    const grid = new Float64Array(n * n);
    for (let r = 0; r < n; ++r) {
      const v = (r + 0.5) / n;
      for (let c = 0; c < n; ++c) {
        const u = (c + 0.5) / n;
        let num = 0;
        let den = 0;
        let exact = null;
        for (const p of points) {
          const d2 = su * su * (p[0] - u) * (p[0] - u) + sv * sv * (p[1] - v) * (p[1] - v);
          if (d2 < 1e-12) {
            exact = p[2];
            break;
          }
          const w = 1 / d2;
          num += w * p[2];
          den += w;
        }
        grid[r * n + c] = exact !== null ? exact : den > 0 ? num / den : NaN;
      }
    }
    return grid;
  }

  function formatValue(v) {
    if (v === null || v === undefined) return "-";
    if (typeof v !== "number") return String(v);
    if (!Number.isFinite(v)) return "-";
    if (Number.isInteger(v)) return String(v);
    return Math.abs(v) >= 1e-3 && Math.abs(v) < 1e4 ? String(Number(v.toPrecision(4)))
                                                      : v.toExponential(2);
  }

  function formatDuration(seconds) {
    if (!Number.isFinite(seconds)) return "-";
    if (seconds < 90) return formatValue(Number(seconds.toPrecision(3))) + " s";
    if (seconds < 5400) return formatValue(Number((seconds / 60).toPrecision(3))) + " min";
    return formatValue(Number((seconds / 3600).toPrecision(3))) + " h";
  }

  // Round tick values inside [min, max]: steps of 1, 2 or 5 times a power of ten, about five
  // intervals; on a log axis the powers of ten when it spans at least two of them.
  function niceTicks(min, max, count) {
    if (!(max > min)) return [min];
    const raw = (max - min) / (count || 5);
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw * (1 - 1e-9));
    const ticks = [];
    for (let v = Math.ceil(min / step - 1e-9) * step; v <= max + step * 1e-9; v += step) {
      ticks.push(Number(v.toPrecision(12)));
    }
    return ticks;
  }

  function logTicks(min, max) {
    const ticks = [];
    for (let k = Math.ceil(Math.log10(min) - 1e-9); k <= Math.floor(Math.log10(max) + 1e-9); ++k) {
      ticks.push(Number(Math.pow(10, k).toPrecision(12)));
    }
    if (ticks.length >= 2) return ticks;
    return niceTicks(min, max).filter((v) => v > 0);
  }

  // [position, label] pairs for an axis.
  function axisTicks(axis) {
    if (axis.scale === "categorical") {
      return axis.categories.map((c) => [axis.position(c), String(c)]);
    }
    const values = axis.scale === "log" ? logTicks(axis.min, axis.max)
                                        : niceTicks(axis.min, axis.max);
    return values.map((v) => [axis.position(v), formatValue(v)]);
  }

  // ---- drawing helpers (browser only) ----

  const SVG = "http://www.w3.org/2000/svg";

  function element(tag, attributes, parent) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, v);
    if (parent) parent.appendChild(node);
    return node;
  }

  function htmlElement(tag, className, parent, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }

  // A plot in `container`: a canvas for the marks under an SVG for axes and labels, `width` the
  // container's (the page's) width unless given. The inner area is [left, right] x [top, bottom].
  function makePlot(container, height, margin, width) {
    container.textContent = "";
    const w = Math.round(width || Math.max(320, container.clientWidth || 960));
    const box = htmlElement("div", "plot-box", container);
    box.style.width = w + "px";
    box.style.height = height + "px";
    const canvas = htmlElement("canvas", "", box);
    const ratio = (typeof window !== "undefined" && window.devicePixelRatio) || 1;
    canvas.width = Math.round(w * ratio);
    canvas.height = Math.round(height * ratio);
    canvas.style.width = w + "px";
    canvas.style.height = height + "px";
    const ctx = canvas.getContext("2d");
    ctx.scale(ratio, ratio);
    const svg = element("svg", {width: w, height, viewBox: "0 0 " + w + " " + height}, box);
    const plot = {
      box, canvas, ctx, svg, width: w, height,
      left: margin[3], right: w - margin[1], top: margin[0], bottom: height - margin[2],
      marks: 0,
      hits: null,
      clear() {
        ctx.clearRect(0, 0, w, height);
        plot.marks = 0;
      },
    };
    return plot;
  }

  // Axis lines, ticks ([pixel, label]) and names on a plot's SVG.
  function drawFrame(plot, xTicks, yTicks, xName, yName) {
    const g = element("g", {class: "axis"}, plot.svg);
    element("line", {x1: plot.left, x2: plot.right, y1: plot.bottom, y2: plot.bottom}, g);
    element("line", {x1: plot.left, x2: plot.left, y1: plot.top, y2: plot.bottom}, g);
    for (const [x, label] of xTicks) {
      element("line", {x1: x, x2: x, y1: plot.bottom, y2: plot.bottom + 4}, g);
      element("text", {x, y: plot.bottom + 16, "text-anchor": "middle"}, g).textContent = label;
    }
    for (const [y, label] of yTicks) {
      element("line", {x1: plot.left - 4, x2: plot.left, y1: y, y2: y}, g);
      element("line", {x1: plot.left, x2: plot.right, y1: y, y2: y, class: "grid"}, g);
      element("text", {x: plot.left - 7, y: y + 4, "text-anchor": "end"}, g).textContent = label;
    }
    if (xName) {
      element("text", {x: (plot.left + plot.right) / 2, y: plot.height - 4,
                       "text-anchor": "middle", class: "axis-name"}, g).textContent = xName;
    }
    if (yName) {
      element("text", {x: 12, y: (plot.top + plot.bottom) / 2, "text-anchor": "middle",
                       class: "axis-name",
                       transform: "rotate(-90 12 " + (plot.top + plot.bottom) / 2 + ")"}, g)
          .textContent = yName;
    }
    return g;
  }

  function noteOnPlot(plot, text) {
    element("text", {x: (plot.left + plot.right) / 2, y: (plot.top + plot.bottom) / 2,
                     "text-anchor": "middle", class: "note"}, plot.svg).textContent = text;
  }

  // A scale from an axis (buildAxes) to pixels between `from` (position 0) and `to` (1).
  function pixelScale(axis, from, to) {
    return (v) => {
      const p = axis.position(v);
      return p === null ? null : from + p * (to - from);
    };
  }

  function ticksAt(axis, from, to) {
    return axisTicks(axis).map(([p, label]) => [from + p * (to - from), label]);
  }

  // A numeric axis-like object over [min, max] (linear), for positions and ticks.
  function linearAxis(min, max, pad) {
    let lo = min;
    let hi = max;
    if (!(hi > lo)) {
      lo = lo === null ? 0 : lo - 0.5;
      hi = hi === null ? 1 : hi + 0.5;
    }
    const margin = (hi - lo) * (pad || 0);
    const axis = {scale: "linear", min: lo - margin, max: hi + margin};
    axis.position = positionFunction(axis);
    return axis;
  }

  // Markers in batches: one path per colour and shape, so that 10,000 trials are a few dozen
  // canvas calls (the browser rasterises each call at the next frame). `marks` are
  // [x, y, shape, colour, hollow] (hollow, optional: outlined, not filled); later batches are
  // drawn over earlier ones in their first-seen order.
  function drawMarkers(ctx, marks, r, alpha) {
    const batches = new Map();
    for (const m of marks) {
      const key = m[3] + "|" + m[2] + (m[4] ? "|hollow" : "");
      if (!batches.has(key)) batches.set(key, []);
      batches.get(key).push(m);
    }
    ctx.globalAlpha = alpha === undefined ? 1 : alpha;
    for (const [key, list] of batches) {
      const [colour, shape, hollow] = key.split("|");
      ctx.fillStyle = colour;
      ctx.strokeStyle = colour;
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      for (const [x, y] of list) {
        if (shape === "triangle") {
          ctx.moveTo(x, y - r * 1.2);
          ctx.lineTo(x + r * 1.1, y + r * 0.8);
          ctx.lineTo(x - r * 1.1, y + r * 0.8);
          ctx.closePath();
        } else if (shape === "cross") {
          ctx.moveTo(x - r, y - r);
          ctx.lineTo(x + r, y + r);
          ctx.moveTo(x + r, y - r);
          ctx.lineTo(x - r, y + r);
        } else {
          ctx.moveTo(x + r, y);
          ctx.arc(x, y, r, 0, 2 * Math.PI);
        }
      }
      if (shape === "cross" || hollow) {
        ctx.stroke();
      } else {
        ctx.fill();
      }
    }
    ctx.globalAlpha = 1;
  }

  // Polylines (`lines`: [points, colour, width, dashed]; points [x, y] or null for a gap), one
  // stroke each, in order. (One path per colour would be fewer calls, but the software
  // rasteriser strokes a path of thousands of crossing lines several times slower.)
  function drawLines(ctx, lines, alpha) {
    ctx.globalAlpha = alpha === undefined ? 1 : alpha;
    ctx.lineJoin = "round";
    for (const [points, colour, width, dashed] of lines) {
      ctx.strokeStyle = colour;
      ctx.lineWidth = width;
      ctx.setLineDash(dashed ? [4, 3] : []);
      ctx.beginPath();
      let started = false;
      for (const point of points) {
        if (point === null) continue;
        if (started) {
          ctx.lineTo(point[0], point[1]);
        } else {
          ctx.moveTo(point[0], point[1]);
          started = true;
        }
      }
      ctx.stroke();
    }
    ctx.setLineDash([]);
    ctx.globalAlpha = 1;
  }

  // The most lines a plot draws of one kind (selected, or not): past it, the best half of them and
  // an even sample of the rest, so that 10,000 trials still open in about a second.
  const LINE_CAP = 2000;

  // `list` sorted worst to best, thinned to `cap`: the best cap/2 and every k-th of the others,
  // in the same order.
  function thinLines(list, cap) {
    if (list.length <= cap) return list;
    const best = Math.floor(cap / 2);
    const rest = list.slice(0, list.length - best);
    const step = rest.length / (cap - best);
    const sample = [];
    for (let k = 0; k < cap - best; ++k) sample.push(rest[Math.floor(k * step)]);
    return sample.concat(list.slice(list.length - best));
  }

  function thinningNote(container, drawn, total) {
    if (drawn >= total) return;
    htmlElement("p", "figure", container,
        "Lines drawn: " + drawn + " of " + total + " trials (the best half of them and an even " +
        "sample of the rest; the other plots and the table show every trial).");
  }

  const PARETO_COLOUR = "#d62728";
  const SHAPES = {completed: "circle", stopped: "triangle", paused: "triangle", failed: "cross",
                  running: "circle"};

  // The status shapes, in the status colours (or all in `neutral`, where colour means another
  // thing), then `extra` items [label, swatch class, colour].
  function statusLegend(parent, extra, neutral) {
    const legend = htmlElement("div", "legend", parent);
    for (const [status, shape] of Object.entries(SHAPES)) {
      if (status === "running") continue;
      const item = htmlElement("span", "item", legend);
      htmlElement("span", "swatch " + shape, item).style.color = neutral || STATUS_COLOURS[status];
      item.appendChild(document.createTextNode(status));
    }
    for (const [label, className, colour] of extra || []) {
      const item = htmlElement("span", "item", legend);
      htmlElement("span", "swatch " + className, item).style.color = colour;
      item.appendChild(document.createTextNode(label));
    }
    return legend;
  }

  // The metric's colour scale as a bar from worst to best.
  function colourLegend(parent, data, axes) {
    const legend = htmlElement("div", "legend", parent);
    const metricAxis = axes[axes.length - 1];
    const worst = data.goal === "maximize" ? metricAxis.min : metricAxis.max;
    const best = data.goal === "maximize" ? metricAxis.max : metricAxis.min;
    htmlElement("span", "", legend, data.metric + ": worse " + formatValue(worst));
    const bar = htmlElement("span", "gradient", legend);
    bar.style.background = "linear-gradient(to right, " + colour(0) + ", " + colour(0.5) + ", " +
                           colour(1) + ")";
    htmlElement("span", "", legend, formatValue(best) + " better");
    const none = htmlElement("span", "item", legend);
    htmlElement("span", "swatch line", none).style.color = colour(null);
    none.appendChild(document.createTextNode("no " + data.metric + " (failed)"));
    return legend;
  }

  // Hover: the plot's `hits(x, y)` names the trial under the pointer, shown in the tooltip.
  function attachTooltip(plot, describe) {
    const tip = document.getElementById("tooltip");
    if (!tip || !plot.box.addEventListener) return;
    plot.box.addEventListener("mousemove", (event) => {
      const rect = plot.box.getBoundingClientRect();
      const i = plot.hits ? plot.hits(event.clientX - rect.left, event.clientY - rect.top) : null;
      if (i === null || i === undefined) {
        tip.hidden = true;
        return;
      }
      tip.textContent = describe(i);
      tip.hidden = false;
      tip.style.left = event.pageX + 12 + "px";
      tip.style.top = event.pageY + 12 + "px";
    });
    plot.box.addEventListener("mouseleave", () => { tip.hidden = true; });
  }

  // The nearest of `points` ([x, y, index]) within 8 pixels.
  function nearest(points) {
    return (x, y) => {
      let best = null;
      let bestD = 64;
      for (const p of points) {
        const d = (p[0] - x) * (p[0] - x) + (p[1] - y) * (p[1] - y);
        if (d < bestD) {
          bestD = d;
          best = p[2];
        }
      }
      return best;
    };
  }

  function describeTrial(data, trial) {
    const params = Object.entries(trial.params || {}).map(([k, v]) => k + "=" + formatValue(v));
    return "trial " + trial.trial_id + " (" + trial.status + ", " + trial.epochs + " epochs): " +
           data.metric + " " + formatValue(trial.objective) +
           (params.length ? "; " + params.join(", ") : "") +
           (trial.message ? " [" + trial.message + "]" : "");
  }

  function setDrawn(id, count) {
    const section = document.getElementById(id);
    if (section && section.setAttribute) section.setAttribute("data-drawn", count);
  }

  // ---- the single-study page ----

  function render(data) {
    const axes = buildAxes(data);
    const trials = data.trials;
    const brushes = {};
    const state = {sortKey: "objective", descending: data.goal === "maximize", limit: 100,
                   selected: trials.map(() => true)};
    const times = trialTimes(trials);
    const views = [];
    const draw = (id, f) => {
      if (!document.getElementById(id)) return;
      const view = f();
      if (!view) return;
      views.push(view);
      if (state.selected.some((s) => !s)) view.highlight(state.selected);  // brushed meanwhile
    };
    // The first screen (history, importance, the table) is drawn at once; the views below it one
    // task each after the first frame, so that a large study shows its first screen early. The
    // page sets data-complete-ms on <html> once every view is drawn.
    const later = [
      ["slices-plots", () => drawSlices(data, axes)],
      ["contour-plot", () => drawContour(data, axes)],
      ["timeline-plot", () => drawTimeline(data, times)],
      ["parallel-plot", () => drawParallel(data, axes, brushes, update)],
      ["curves-plot", () => drawCurves(data, axes)],
    ];
    draw("history-plot", () => drawHistory(data, axes, times));
    if (data.objectives && data.objectives.length > 1) draw("pareto-plot", () => drawPareto(data));
    draw("importance-plot", () => drawImportance(data));
    const complete = () => {
      const root = document.documentElement;
      if (root && root.setAttribute && typeof performance !== "undefined") {
        root.setAttribute("data-complete-ms", performance.now().toFixed(0));
      }
    };
    // Everything at once: under Node (tests), and with #all-at-once in the page's URL (to time
    // the whole page, bench/report_open_time.py).
    const atOnce = typeof requestAnimationFrame === "undefined" ||
                   (typeof location !== "undefined" && location.hash === "#all-at-once");
    if (atOnce) {
      for (const [id, f] of later) draw(id, f);
      complete();
    } else {
      const next = () => {
        const job = later.shift();
        if (!job) return complete();
        draw(job[0], job[1]);
        setTimeout(next, 0);
      };
      // After the first frame, or after a timer where no frame comes (a page in a background
      // tab, or headless Chromium whose virtual time runs ahead of its frames on a busy machine).
      let started = false;
      const start = () => {
        if (started) return;
        started = true;
        setTimeout(next, 0);
      };
      requestAnimationFrame(start);
      setTimeout(start, 250);
    }
    const table = document.getElementById("trials");
    const summary = document.getElementById("selection");
    const clear = document.getElementById("clear-selection");
    const showAll = document.getElementById("show-all");
    if (clear && clear.addEventListener) {
      clear.addEventListener("click", () => {
        for (const k of Object.keys(brushes)) delete brushes[k];
        views.forEach((v) => v.resetBrushes && v.resetBrushes());
        update();
      });
    }
    if (showAll && showAll.addEventListener) {
      showAll.addEventListener("click", () => {
        state.limit = state.limit === Infinity ? 100 : Infinity;
        update();
      });
    }
    let pending = false;
    function update() {
      state.selected = selectTrials(trials, axes, brushes);
      const count = state.selected.filter(Boolean).length;
      summary.textContent = count === trials.length
          ? "All " + trials.length + " trials shown. Drag along an axis of the parallel " +
            "coordinates to select a range."
          : count + " of " + trials.length + " trials selected (click an axis to clear it).";
      if (clear) clear.hidden = count === trials.length;
      fillTable(data, table, state, showAll, update);
      if (pending) return;
      pending = true;
      const redraw = () => {
        pending = false;
        for (const view of views) view.highlight(state.selected);
      };
      if (!views.drawn) {
        pending = false;  // every view drew itself with everything selected
      } else if (typeof requestAnimationFrame !== "undefined" && views.length) {
        requestAnimationFrame(redraw);
      } else {
        redraw();
      }
    }
    update();
    views.drawn = true;
  }

  function drawHistory(data, axes, times) {
    const container = document.getElementById("history-plot");
    const select = document.getElementById("history-x");
    const trials = data.trials;
    const metricAxis = axes[axes.length - 1];
    let selected = trials.map(() => true);
    let plot = null;
    const names = {trial: "trial (finishing order)", compute: "cumulative epochs",
                   time: "wall time since the first dispatch" +
                         (times.exact ? "" : " (approximate: no start times in the study)")};
    function paint() {
      const mode = select ? select.value : "trial";
      const h = history(trials, data.goal, mode, times);
      plot = makePlot(container, 340, [12, 20, 40, 70]);
      const [lo, hi] = finiteRange(h.x);
      const xAxis = linearAxis(mode === "trial" ? Math.min(0, lo) : 0, hi, 0.02);
      const yAxis = linearAxis(metricAxis.min, metricAxis.max, 0.05);
      const X = pixelScale(xAxis, plot.left, plot.right);
      const Y = pixelScale(yAxis, plot.bottom, plot.top);
      const xTicks = niceTicks(xAxis.min, xAxis.max, 8).filter((v) => v >= xAxis.min)
          .map((v) => [X(v), mode === "time" ? formatDuration(v) : formatValue(v)]);
      drawFrame(plot, xTicks, ticksAt(yAxis, plot.bottom, plot.top), names[mode], data.metric);
      const ctx = plot.ctx;
      const hits = [];
      const marks = [[], []];
      for (const i of h.order) {
        const t = trials[i];
        const x = X(h.x[i]);
        const finite = Number.isFinite(t.objective);
        const y = finite ? Y(t.objective) : plot.bottom - 5;
        const chosen = selected[i];
        marks[chosen ? 1 : 0].push([x, y, finite ? SHAPES[t.status] : "cross",
                                    chosen ? STATUS_COLOURS[t.status] || "#555" : "#d0d0d0"]);
        if (chosen) hits.push([x, y, i]);
        plot.marks += 1;
      }
      const r = trials.length > 2000 ? 2 : 3.5;
      drawMarkers(ctx, marks[0], r);
      drawMarkers(ctx, marks[1], r, trials.length > 2000 ? 0.6 : 1);
      if (h.best.length) {
        ctx.strokeStyle = "#2ca02c";
        ctx.lineWidth = 2.5;
        ctx.beginPath();
        h.best.forEach(([x, v], k) => {
          if (k === 0) {
            ctx.moveTo(X(x), Y(v));
          } else {
            ctx.lineTo(X(x), Y(h.best[k - 1][1]));
            ctx.lineTo(X(x), Y(v));
          }
        });
        ctx.lineTo(plot.right, Y(h.best[h.best.length - 1][1]));
        ctx.stroke();
        plot.marks += 1;
      }
      if (!trials.length) noteOnPlot(plot, "no trials yet");
      plot.hits = nearest(hits);
      attachTooltip(plot, (i) => describeTrial(data, trials[i]));
      statusLegend(container, [["best so far", "line", "#2ca02c"]]);
      setDrawn("history", plot.marks);
    }
    if (select && select.addEventListener) select.addEventListener("change", paint);
    paint();
    return {highlight(s) { selected = s; paint(); }};
  }

  // Several objectives: which of the points [x, y] (two objectives' values) no other point
  // dominates under `goals` (the two objectives' "minimize" | "maximize"); a point with a
  // non-finite value is never on it. Returns the indices of the front, sorted by x.
  function paretoFront(points, goals) {
    const sign = goals.map((g) => (g === "maximize" ? -1 : 1));
    const loss = points.map((p) => [sign[0] * p[0], sign[1] * p[1]]);
    const front = [];
    loss.forEach((a, i) => {
      if (!Number.isFinite(a[0]) || !Number.isFinite(a[1])) return;
      const dominated = loss.some((b, j) => j !== i && Number.isFinite(b[0]) &&
          Number.isFinite(b[1]) && b[0] <= a[0] && b[1] <= a[1] && (b[0] < a[0] || b[1] < a[1]));
      if (!dominated) front.push(i);
    });
    return front.sort((i, j) => points[i][0] - points[j][0] || i - j);
  }

  // A trial's objectives in the study's order: the sweep metric, then the further ones.
  function objectiveValues(trial) {
    return [trial.objective].concat(trial.further || []);
  }

  // The line under #pareto: how many trials the front holds, over how many objectives, and of
  // those how many no other front trial beats on the two drawn (`names`).
  function paretoCaption(count, front, unbeaten, names) {
    const trials = (n) => n + (n === 1 ? " trial" : " trials");
    const caption = "Pareto front over " + (count === 2 ? "both" : "all " + count) +
                    " objectives: " + trials(front);
    if (count === 2) return caption + " (joined by the dashed staircase).";
    return caption + "; " + unbeaten + " unbeaten on " + names.join(" and ") + " (filled, " +
           "joined by the dashed staircase), " + (front - unbeaten) + " kept on the front by " +
           "another objective (hollow).";
  }

  // #pareto (several objectives): two objectives of every trial against each other (with three or
  // more, those chosen in #pareto-x and #pareto-y, the first two at first); trials without a
  // finite value in either are left out. The front is the study's over every objective (the
  // trials' `pareto` flags), in red: filled and joined by a step line where no other front trial
  // beats them on the two drawn, hollow where only another objective keeps them on it.
  function drawPareto(data) {
    const container = document.getElementById("pareto-plot");
    const selects = [document.getElementById("pareto-x"), document.getElementById("pareto-y")];
    const objectives = data.objectives;
    const trials = data.trials;
    const values = trials.map(objectiveValues);
    const drawn = selects.map((select, k) => (select ? Number(select.value) : k));
    let selected = trials.map(() => true);
    function paint() {
      const [xs, ys] = drawn.map((k) => values.map((v) => v[k]));
      const goals = drawn.map((k) => objectives[k].goal);
      const xAxis = linearAxis(...finiteRange(xs), 0.05);
      const yAxis = linearAxis(...finiteRange(ys), 0.05);
      const plot = makePlot(container, 360, [12, 20, 40, 70]);
      const X = pixelScale(xAxis, plot.left, plot.right);
      const Y = pixelScale(yAxis, plot.bottom, plot.top);
      drawFrame(plot, ticksAt(xAxis, plot.left, plot.right), ticksAt(yAxis, plot.bottom, plot.top),
                ...drawn.map((k) => objectives[k].name + " (" + objectives[k].goal + ")"));
      const shown = trials.map((t, i) => i).filter((i) => Number.isFinite(xs[i]) &&
                                                          Number.isFinite(ys[i]));
      const members = shown.filter((i) => trials[i].pareto);
      const front = paretoFront(members.map((i) => [xs[i], ys[i]]), goals).map((k) => members[k]);
      const unbeaten = new Set(front);
      const marks = [[], [], []];
      const hits = [];
      for (const i of shown) {
        const t = trials[i];
        const layer = !selected[i] ? 0 : t.pareto ? 2 : 1;
        marks[layer].push([X(xs[i]), Y(ys[i]), SHAPES[t.status],
                           layer === 2 ? PARETO_COLOUR : layer === 1 ? "#8a8a8a" : "#d8d8d8",
                           t.pareto && !unbeaten.has(i)]);
        if (selected[i]) hits.push([X(xs[i]), Y(ys[i]), i]);
        plot.marks += 1;
      }
      // The unbeaten front as a staircase: each point's region reaches to the next point.
      const step = [];
      front.forEach((i, k) => {
        step.push([X(xs[i]), Y(ys[i])]);
        if (k + 1 < front.length) {
          const next = front[k + 1];
          step.push(goals[0] === goals[1] ? [X(xs[i]), Y(ys[next])] : [X(xs[next]), Y(ys[i])]);
        }
      });
      if (step.length > 1) drawLines(plot.ctx, [[step, PARETO_COLOUR, 1.5, true]], 0.8);
      drawMarkers(plot.ctx, marks[0], 3, 0.6);
      drawMarkers(plot.ctx, marks[1], 3, 0.8);
      drawMarkers(plot.ctx, marks[2], 4, 1);
      if (!plot.marks) noteOnPlot(plot, "no trial with both objectives");
      plot.hits = nearest(hits);
      const further = (i) => objectives.slice(1)
          .map((o, j) => o.name + " " + formatValue(values[i][j + 1])).join(", ");
      attachTooltip(plot, (i) => describeTrial(data, trials[i]) + "; " + further(i) +
                                 (trials[i].pareto ? " (front)" : ""));
      htmlElement("p", "figure", container, paretoCaption(
          objectives.length, members.length, front.length, drawn.map((k) => objectives[k].name)));
      setDrawn("pareto", plot.marks);
    }
    // One axis changed: when it now shows the other axis's objective, the two swap.
    const choose = (k) => {
      const value = Number(selects[k].value);
      if (value === drawn[1 - k]) {
        drawn[1 - k] = drawn[k];
        selects[1 - k].value = String(drawn[k]);
      }
      drawn[k] = value;
      paint();
    };
    selects.forEach((select, k) => {
      if (select && select.addEventListener) select.addEventListener("change", () => choose(k));
    });
    paint();
    return {highlight(s) { selected = s; paint(); }};
  }

  function drawImportance(data) {
    const container = document.getElementById("importance-plot");
    const importance = data.importance || {importance: [], note: "not computed"};
    const values = importance.importance || [];
    const rowHeight = 26;
    const height = Math.max(80, 30 + rowHeight * values.length);
    const longest = Math.max(6, ...values.map((v) => v.name.length));
    const plot = makePlot(container, height, [10, 70, 20, Math.min(260, 20 + 7 * longest)]);
    const g = element("g", {class: "axis"}, plot.svg);
    const X = (v) => plot.left + v * (plot.right - plot.left);
    for (const v of [0, 0.25, 0.5, 0.75, 1]) {
      element("line", {x1: X(v), x2: X(v), y1: plot.top, y2: plot.bottom, class: "grid"}, g);
      element("text", {x: X(v), y: plot.bottom + 14, "text-anchor": "middle"}, g).textContent =
          Math.round(v * 100) + "%";
    }
    values.forEach((entry, k) => {
      const y = plot.top + k * rowHeight;
      element("rect", {x: plot.left, y: y + 4, width: Math.max(1, X(entry.importance) - plot.left),
                       height: rowHeight - 8, class: "bar"}, plot.svg);
      element("text", {x: plot.left - 8, y: y + rowHeight / 2 + 4, "text-anchor": "end",
                       class: "bar-label"}, plot.svg).textContent = entry.name;
      element("text", {x: X(entry.importance) + 6, y: y + rowHeight / 2 + 4},
              plot.svg).textContent = (100 * entry.importance).toFixed(1) + "%";
      plot.marks += 1;
    });
    if (!values.length) noteOnPlot(plot, "No importance: " + (importance.note || "not computed"));
    const note = htmlElement("p", "figure", container,
        values.length ? "fANOVA, " + importance.trees + " trees, seed " + importance.seed +
                        ", over " + importance.trials + " completed trials; stored in the " +
                        "study as its param_importance attribute." : "");
    note.hidden = !values.length;
    setDrawn("importance", plot.marks);
    return {highlight() {}};
  }

  // A category's points spread over a third of its band (as a share of the band, in [-1/6, 1/6])
  // so that they do not hide each other; the same for a trial every time.
  function jitter(id) {
    const h = Math.sin(id * 12.9898 + 78.233) * 43758.5453;
    return ((h - Math.floor(h)) - 0.5) / 3;
  }

  function drawSlices(data, axes) {
    const container = document.getElementById("slices-plots");
    const trials = data.trials;
    const metricAxis = axes[axes.length - 1];
    const yAxis = linearAxis(metricAxis.min, metricAxis.max, 0.05);
    const paramAxes = axes.slice(0, -1);
    let selected = trials.map(() => true);
    const plots = [];
    container.textContent = "";
    const cell = Math.max(300, Math.floor(((container.clientWidth || 960) - 16) / 3));
    for (const axis of paramAxes) {
      const box = htmlElement("div", "slice", container);
      htmlElement("div", "slice-title", box, axis.name + (axis.scale === "log" ? " (log)" : ""));
      const area = htmlElement("div", "", box);
      plots.push({axis, area});
    }
    if (!paramAxes.length) htmlElement("p", "note", container, "No swept hyperparameters.");
    let total = 0;
    function paint() {
      total = 0;
      for (const {axis, area} of plots) {
        const plot = makePlot(area, 230, [8, 12, 34, 58], cell - 12);
        const x0 = plot.left + 6;
        const x1 = plot.right - 6;
        const Y = pixelScale(yAxis, plot.bottom, plot.top);
        const n0 = axis.scale === "categorical" ? axis.categories.length : 0;
        const xTicks = axisTicks(axis).map(([p, label]) => [
          x0 + (n0 ? (p * (n0 - 1) + 0.5) / n0 : p) * (x1 - x0), label]);
        drawFrame(plot, axis.scale === "categorical" && xTicks.length > 8
                            ? xTicks.filter((t, k) => k % Math.ceil(xTicks.length / 8) === 0)
                            : xTicks,
                  ticksAt(yAxis, plot.bottom, plot.top), "", data.metric);
        const ctx = plot.ctx;
        const hits = [];
        const n = axis.scale === "categorical" ? axis.categories.length : 0;
        // Categories sit in the middle of equal bands, their points spread across a third of it.
        const band = (p) => (n ? (p * (n - 1) + 0.5) / n : p);
        const marks = [[], []];
        trials.forEach((t, i) => {
          if (!Number.isFinite(t.objective)) return;
          const p = axis.position(axis.value(t));
          if (p === null) return;
          const x = x0 + (band(p) + (n ? jitter(t.trial_id) / n : 0)) * (x1 - x0);
          const y = Y(t.objective);
          const chosen = selected[i];
          marks[chosen ? 1 : 0].push([x, y, SHAPES[t.status],
                                      chosen ? STATUS_COLOURS[t.status] || "#555" : "#d8d8d8"]);
          if (chosen) hits.push([x, y, i]);
          plot.marks += 1;
        });
        const r = trials.length > 2000 ? 1.8 : 3;
        drawMarkers(ctx, marks[0], r, 0.6);
        drawMarkers(ctx, marks[1], r, trials.length > 2000 ? 0.5 : 0.8);
        if (!plot.marks) noteOnPlot(plot, "no trial with an objective");
        plot.hits = nearest(hits);
        attachTooltip(plot, (i) => describeTrial(data, trials[i]));
        total += plot.marks;
      }
      setDrawn("slices", total);
    }
    paint();
    if (paramAxes.length) statusLegend(container.parentNode || container);
    return {highlight(s) { selected = s; paint(); }};
  }

  // The two most important hyperparameters' axes (by the study's importance, else the first two).
  function contourAxes(data, axes) {
    const paramAxes = axes.slice(0, -1);
    const ranked = ((data.importance && data.importance.importance) || [])
        .map((v) => paramAxes.find((a) => a.name === v.name)).filter(Boolean);
    for (const axis of paramAxes) if (!ranked.includes(axis)) ranked.push(axis);
    return ranked.slice(0, 2);
  }

  function drawContour(data, axes) {
    const container = document.getElementById("contour-plot");
    const trials = data.trials;
    const chosenAxes = contourAxes(data, axes);
    const side = Math.min(560, Math.max(320, (container.clientWidth || 960) - 40));
    const plot = makePlot(container, side, [10, 20, 44, 78], side + 60);
    if (chosenAxes.length < 2) {
      noteOnPlot(plot, "The contour needs two swept hyperparameters.");
      drawFrame(plot, [], [], "", "");
      setDrawn("contour", 0);
      return {highlight() {}};
    }
    const [ax, ay] = chosenAxes;
    const x0 = plot.left + 6;
    const x1 = plot.right - 6;
    const y0 = plot.bottom - 6;
    const y1 = plot.top + 6;
    const points = [];
    const dots = [];
    trials.forEach((t, i) => {
      const u = ax.position(ax.value(t));
      const v = ay.position(ay.value(t));
      if (u === null || v === null) return;
      dots.push([u, v, i]);
      const g = goodness(data, axes, t);
      if (g !== null) points.push([u, v, g]);
    });
    const ctx = plot.ctx;
    if (points.length) {
      const n = 48;
      const step = Math.max(1, Math.ceil(points.length / 3000));
      const stretch = [ax, ay].map((a) => (a.scale === "categorical" ? 30 : 1));
      const grid = interpolateGrid(points.filter((p, k) => k % step === 0), n, stretch);
      const w = (x1 - x0) / n;
      const h = (y0 - y1) / n;
      for (let r = 0; r < n; ++r) {
        for (let c = 0; c < n; ++c) {
          const g = grid[r * n + c];
          ctx.fillStyle = Number.isFinite(g) ? colour(g) : "#eee";
          ctx.fillRect(x0 + c * w, y0 - (r + 1) * h, w + 0.5, h + 0.5);
        }
      }
      plot.marks += n * n;
    }
    let selected = trials.map(() => true);
    const hits = [];
    const paintDots = () => {
      hits.length = 0;
      const marks = [];
      for (const [u, v, i] of dots) {
        const x = x0 + u * (x1 - x0);
        const y = y0 - v * (y0 - y1);
        marks.push([x, y, "circle", selected[i] ? "rgba(0,0,0,0.75)" : "rgba(255,255,255,0.6)"]);
        if (selected[i]) hits.push([x, y, i]);
      }
      drawMarkers(ctx, marks, trials.length > 2000 ? 1.3 : 2.5);
    };
    paintDots();
    plot.marks += dots.length;
    drawFrame(plot, ticksAt(ax, x0, x1), ticksAt(ay, y0, y1),
              ax.name + (ax.scale === "log" ? " (log)" : ""),
              ay.name + (ay.scale === "log" ? " (log)" : ""));
    plot.hits = nearest(hits);
    attachTooltip(plot, (i) => describeTrial(data, trials[i]));
    colourLegend(container, data, axes);
    setDrawn("contour", plot.marks);
    // Re-interpolating on every brush would be slow; dots show the selection over the surface.
    return {highlight(s) { selected = s; paintDots(); }};
  }

  function drawTimeline(data, times) {
    const container = document.getElementById("timeline-plot");
    const trials = data.trials;
    const groups = Math.max(1, data.groups || 1,
                            ...trials.map((t) => (Number.isFinite(t.group) ? t.group + 1 : 1)));
    const lane = Math.max(5, Math.min(28, Math.floor(480 / groups)));
    const plot = makePlot(container, 54 + lane * groups, [8, 20, 40, 70]);
    const [, hi] = finiteRange(times.end);
    const xAxis = linearAxis(0, hi === null ? 1 : hi, 0.01);
    const X = pixelScale(xAxis, plot.left, plot.right);
    const laneTop = (g) => plot.top + g * lane;
    const yTicks = [];
    const every = Math.ceil(groups / 24);
    for (let g = 0; g < groups; g += every) yTicks.push([laneTop(g) + lane / 2, "group " + g]);
    drawFrame(plot, niceTicks(xAxis.min, xAxis.max, 8).map((v) => [X(v), formatDuration(v)]),
              [], "wall time since the first dispatch" +
                  (times.exact ? "" : " (approximate)"), "");
    for (const [y, label] of yTicks) {
      element("text", {x: plot.left - 6, y: y + 4, "text-anchor": "end"}, plot.svg).textContent =
          label;
    }
    let selected = trials.map(() => true);
    const rects = [];
    const paint = () => {
      plot.clear();
      rects.length = 0;
      const ctx = plot.ctx;
      const batches = new Map();
      trials.forEach((t, i) => {
        for (const [s, e, group, last] of times.spans[i]) {
          const g = Number.isFinite(group) && group >= 0 ? group : 0;
          const x = X(s);
          const w = Math.max(1, X(e) - x);
          const y = laneTop(g) + 1;
          const h = Math.max(2, lane - 2);
          // A run that ended in a pause is drawn as paused, whatever became of the trial.
          const status = last ? t.status : "paused";
          const c = selected[i] ? STATUS_COLOURS[status] || "#555" : "#ddd";
          if (!batches.has(c)) batches.set(c, []);
          batches.get(c).push([x, y, w, h]);
          rects.push([x, y, w, h, i]);
          plot.marks += 1;
        }
      });
      for (const [c, list] of batches) {
        ctx.fillStyle = c;
        ctx.beginPath();
        for (const [x, y, w, h] of list) ctx.rect(x, y, w, h);
        ctx.fill();
      }
      // White edges between neighbouring bars, where bars are wide enough to show them.
      if (trials.length <= 2000) {
        ctx.strokeStyle = "white";
        ctx.lineWidth = 1;
        ctx.beginPath();
        for (const [x, y, w, h] of rects) if (w > 3 && h > 4) ctx.rect(x, y, w, h);
        ctx.stroke();
      }
      setDrawn("timeline", plot.marks);
    };
    paint();
    plot.hits = (mx, my) => {
      for (const [x, y, w, h, i] of rects) {
        if (mx >= x && mx <= x + w && my >= y && my <= y + h) return i;
      }
      return null;
    };
    attachTooltip(plot, (i) => describeTrial(data, trials[i]) + "; ran " +
                               formatDuration(times.end[i] - times.start[i]) + " from " +
                               formatDuration(times.start[i]) + " on group " + trials[i].group);
    statusLegend(container);
    const figure = document.getElementById("utilization");
    const used = utilization(times, groups);
    if (figure) {
      figure.textContent = (used
          ? "Slot utilization: " + (100 * used.share).toFixed(1) + "% (trials ran " +
            formatDuration(used.busy) + " in all on " + groups + " group" +
            (groups === 1 ? "" : "s") + " over " + formatDuration(used.span) + ")."
          : "Slot utilization: no trial has run yet.") +
          (times.exact ? "" : " Approximate: " + times.missing + " trials have no recorded " +
           "start time (the study predates start_time_s), so each group's trials are laid end " +
           "to end.");
    }
    return {highlight(s) { selected = s; paint(); }};
  }

  function drawParallel(data, axes, brushes, onChange) {
    const container = document.getElementById("parallel-plot");
    const width = Math.max(Math.max(320, container.clientWidth || 960), 110 * axes.length);
    const height = 380;
    const top = 34;
    const bottom = 30;
    const inner = height - top - bottom;
    const plot = makePlot(container, height, [top, 70, bottom, 70], width);
    const x = (i) => plot.left + (i * (plot.right - plot.left)) / Math.max(1, axes.length - 1);
    const y = (p) => top + (1 - p) * inner;
    const trials = data.trials;
    const order = trials.map((t, i) => i);
    const g = trials.map((t) => goodness(data, axes, t));
    order.sort((a, b) => (g[a] ?? -1) - (g[b] ?? -1));  // best drawn last
    const lines = trials.map((trial) => axes.map((axis, k) => {
      const p = axis.position(axis.value(trial));
      return p === null ? null : [x(k), y(p)];
    }));
    let selected = trials.map(() => true);
    const paint = () => {
      plot.clear();
      for (const chosen of [false, true]) {
        const batch = [];
        for (const i of thinLines(order.filter((i) => selected[i] === chosen), LINE_CAP)) {
          const trial = trials[i];
          batch.push([lines[i], chosen ? colour(g[i]) : "#e2e2e2",
                      trial.trial_id === data.best_trial_id ? 3 : trials.length > 1000 ? 1 : 1.5,
                      trial.status === "failed"]);
          plot.marks += 1;
        }
        drawLines(plot.ctx, batch, chosen ? (trials.length > 1000 ? 0.5 : 0.85) : 0.5);
      }
      setDrawn("parallel", plot.marks);
    };
    const showers = [];
    axes.forEach((axis, k) => {
      const group = element("g", {class: "axis"}, plot.svg);
      element("line", {x1: x(k), x2: x(k), y1: top, y2: top + inner}, group);
      element("text", {x: x(k), y: top - 14, "text-anchor": "middle", class: "axis-name"}, group)
          .textContent = axis.name + (axis.scale === "log" ? " (log)" : "");
      for (const [p, label] of axisTicks(axis)) {
        element("line", {x1: x(k) - 4, x2: x(k), y1: y(p), y2: y(p)}, group);
        element("text", {x: x(k) - 7, y: y(p) + 4, "text-anchor": "end"}, group).textContent =
            label;
      }
      const band = element("rect", {x: x(k) - 6, y: top, width: 12, height: 0, class: "brush"},
                           group);
      const hit = element("rect", {x: x(k) - 14, y: top, width: 28, height: inner,
                                   class: "hit"}, group);
      let start = null;
      const positionAt = (event) => {
        const box = plot.svg.getBoundingClientRect();
        const py = ((event.clientY - box.top) * height) / box.height;
        return Math.min(Math.max(1 - (py - top) / inner, 0), 1);
      };
      const show = () => {
        const range = brushes[k];
        band.setAttribute("y", range ? y(range[1]) : top);
        band.setAttribute("height", range ? y(range[0]) - y(range[1]) : 0);
      };
      showers.push(show);
      hit.addEventListener("pointerdown", (event) => {
        start = positionAt(event);
        hit.setPointerCapture(event.pointerId);
      });
      hit.addEventListener("pointermove", (event) => {
        if (start === null) return;
        const now = positionAt(event);
        brushes[k] = [Math.min(start, now), Math.max(start, now)];
        show();
        onChange();
      });
      hit.addEventListener("pointerup", (event) => {
        if (start !== null && Math.abs(positionAt(event) - start) < 0.01) delete brushes[k];
        start = null;
        show();
        onChange();
      });
    });
    paint();
    colourLegend(container, data, axes);
    thinningNote(container, Math.min(trials.length, LINE_CAP), trials.length);
    return {
      highlight(s) { selected = s; paint(); },
      resetBrushes() { showers.forEach((show) => show()); },
    };
  }

  function drawCurves(data, axes) {
    const container = document.getElementById("curves-plot");
    const trials = data.trials;
    let maxEpoch = 1;
    let lo = Infinity;
    let hi = -Infinity;
    for (const t of trials) {
      for (const [e, v] of t.curve || []) {
        if (!Number.isFinite(v)) continue;
        maxEpoch = Math.max(maxEpoch, e);
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
    }
    const yAxis = linearAxis(lo <= hi ? lo : null, lo <= hi ? hi : null, 0.03);
    const plot = makePlot(container, 340, [12, 20, 40, 70]);
    const X = (e) => plot.left + ((e - 1) / Math.max(1, maxEpoch - 1)) * (plot.right - plot.left);
    const Y = pixelScale(yAxis, plot.bottom, plot.top);
    drawFrame(plot, niceTicks(1, maxEpoch, 10).filter((e) => Number.isInteger(e))
                        .map((e) => [X(e), String(e)]),
              ticksAt(yAxis, plot.bottom, plot.top), "epoch", data.metric);
    const g = trials.map((t) => goodness(data, axes, t));
    const order = trials.map((t, i) => i).sort((a, b) => (g[a] ?? -1) - (g[b] ?? -1));
    let selected = trials.map(() => true);
    const hits = [];
    const paint = () => {
      plot.clear();
      hits.length = 0;
      for (const chosen of [false, true]) {
        const batch = [];
        const dots = [];
        for (const i of thinLines(order.filter((i) => selected[i] === chosen), LINE_CAP)) {
          const points = (trials[i].curve || []).filter((p) => Number.isFinite(p[1]))
              .map(([e, v]) => [X(e), Y(v)]);
          if (!points.length) continue;
          const c = chosen ? colour(g[i]) : "#e2e2e2";
          batch.push([points, c, trials[i].trial_id === data.best_trial_id ? 3
                                 : trials.length > 1000 ? 1 : 1.5, false]);
          if (points.length === 1) dots.push([points[0][0], points[0][1], "circle", c]);
          const last = points[points.length - 1];
          if (chosen) hits.push([last[0], last[1], i]);
          plot.marks += 1;
        }
        const alpha = chosen ? (trials.length > 1000 ? 0.5 : 0.85) : 0.5;
        drawLines(plot.ctx, batch, alpha);
        drawMarkers(plot.ctx, dots, 2, alpha);
      }
      setDrawn("curves", plot.marks);
    };
    paint();
    plot.hits = nearest(hits);
    attachTooltip(plot, (i) => describeTrial(data, trials[i]));
    if (!trials.length) noteOnPlot(plot, "no trials yet");
    colourLegend(container, data, axes);
    thinningNote(container, Math.min(trials.length, LINE_CAP), trials.length);
    return {highlight(s) { selected = s; paint(); }};
  }

  function fillTable(data, table, state, showAll, onChange) {
    if (!table) return;
    const columns = ["trial_id", "status", "objective"]
        .concat(data.axes.map((a) => a.name), ["epochs", "duration_s", "group", "message"]);
    const labels = {objective: data.metric};
    table.textContent = "";
    const head = table.createTHead().insertRow();
    for (const column of columns) {
      const cell = document.createElement("th");
      cell.textContent = (labels[column] || column) +
                         (state.sortKey === column ? (state.descending ? " \u25bc" : " \u25b2") : "");
      cell.addEventListener("click", () => {
        state.descending = state.sortKey === column ? !state.descending : false;
        state.sortKey = column;
        onChange();
      });
      head.appendChild(cell);
    }
    const body = table.createTBody();
    const shown = data.trials.filter((t, i) => state.selected[i]);
    const sorted = sortTrials(data, shown, state.sortKey, state.descending);
    for (const trial of sorted.slice(0, state.limit)) {
      const row = body.insertRow();
      if (trial.trial_id === data.best_trial_id) row.className = "best";
      for (const column of columns) {
        const v = column in trial.params ? trial.params[column] : trial[column];
        const cell = row.insertCell();
        cell.textContent = formatValue(v);
        if (column === "message") cell.className = "message";  // its lines kept (a traceback's)
      }
    }
    if (showAll) {
      showAll.hidden = sorted.length <= 100;
      showAll.textContent = state.limit === Infinity ? "show the first 100 rows"
                                                     : "show all " + sorted.length + " rows";
    }
  }

  // ---- the comparison page ----

  function renderComparison(data) {
    const container = document.getElementById("comparison-plot");
    const select = document.getElementById("comparison-x");
    const studies = data.studies.map((study, s) => Object.assign({}, study, {
      colour: STUDY_COLOURS[s % STUDY_COLOURS.length],
      times: trialTimes(study.trials),
    }));
    const [lo, hi] = finiteRange(studies.flatMap((s) => s.trials.map((t) => t.objective)));
    const yAxis = linearAxis(lo, hi, 0.05);
    const names = {compute: "cumulative epochs", trial: "trial (finishing order)",
                   time: "wall time since the study's first dispatch"};
    function paint() {
      const mode = select ? select.value : "compute";
      const histories = studies.map((s) => history(s.trials, s.goal || data.goal, mode, s.times));
      const [, xHi] = finiteRange(histories.flatMap((h) => h.x));
      const xAxis = linearAxis(0, xHi === null ? 1 : xHi, 0.02);
      const plot = makePlot(container, 420, [12, 20, 40, 70]);
      const X = pixelScale(xAxis, plot.left, plot.right);
      const Y = pixelScale(yAxis, plot.bottom, plot.top);
      drawFrame(plot, niceTicks(xAxis.min, xAxis.max, 8).map((v) => [
        X(v), mode === "time" ? formatDuration(v) : formatValue(v)]),
                ticksAt(yAxis, plot.bottom, plot.top), names[mode], data.metric);
      const ctx = plot.ctx;
      const hits = [];
      studies.forEach((s, k) => {
        const h = histories[k];
        const marks = [];
        for (const i of h.order) {
          const t = s.trials[i];
          if (!Number.isFinite(t.objective)) continue;
          marks.push([X(h.x[i]), Y(t.objective), SHAPES[t.status], s.colour]);
          hits.push([X(h.x[i]), Y(t.objective), [k, i]]);
          plot.marks += 1;
        }
        drawMarkers(ctx, marks, 3, 0.45);
      });
      studies.forEach((s, k) => {
        const best = histories[k].best;
        if (!best.length) return;
        ctx.strokeStyle = s.colour;
        ctx.lineWidth = 2.5;
        ctx.beginPath();
        best.forEach(([x, v], j) => {
          if (j === 0) {
            ctx.moveTo(X(x), Y(v));
          } else {
            ctx.lineTo(X(x), Y(best[j - 1][1]));
            ctx.lineTo(X(x), Y(v));
          }
        });
        const lastX = finiteRange(histories[k].x)[1];
        ctx.lineTo(X(lastX), Y(best[best.length - 1][1]));
        ctx.stroke();
        plot.marks += 1;
      });
      plot.hits = nearest(hits);
      attachTooltip(plot, ([k, i]) => studies[k].name + ": " + describeTrial(
          {metric: data.metric}, Object.assign({params: {}}, studies[k].trials[i])));
      const legend = htmlElement("div", "legend", container);
      for (const s of studies) {
        const item = htmlElement("span", "item", legend);
        htmlElement("span", "swatch line", item).style.color = s.colour;
        item.appendChild(document.createTextNode(s.name + (s.method ? " (" + s.method + ")" : "")));
      }
      statusLegend(container, [], "#666");
      setDrawn("comparison", plot.marks);
    }
    if (select && select.addEventListener) select.addEventListener("change", paint);
    paint();
    if (document.documentElement && typeof performance !== "undefined") {
      document.documentElement.setAttribute("data-complete-ms", performance.now().toFixed(0));
    }
  }

  return {
    buildAxes, goodness, colour, selectTrials, sortTrials, formatValue, formatDuration, axisTicks,
    trialTimes, history, utilization, interpolateGrid, contourAxes, paretoFront, render,
    renderComparison,
  };
})();

if (typeof module !== "undefined") {
  module.exports = HpoReport;
} else {
  // Times from navigation start (parsing included), on <html>: data-render-ms when the script has
  // drawn the first screen and laid the page out, data-frame-ms when that frame has painted
  // (canvases rasterised), data-complete-ms when every view is drawn.
  requestAnimationFrame(() => setTimeout(() => {
    document.documentElement.setAttribute("data-frame-ms", performance.now().toFixed(0));
  }, 0));
  const study = document.getElementById("hpo-study");
  if (study) {
    HpoReport.render(JSON.parse(study.textContent));
  } else {
    HpoReport.renderComparison(JSON.parse(document.getElementById("hpo-comparison").textContent));
  }
  document.body.offsetHeight;
  document.documentElement.setAttribute("data-render-ms", performance.now().toFixed(0));
}
