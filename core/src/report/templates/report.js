// The interactive part of `hpo report --html`: a parallel-coordinates plot of the trials (one axis
// per hyperparameter, then the sweep metric; drag along an axis to keep only the trials in that
// range, click the axis to clear it), the learning curves of the sweep metric, and a sortable
// table, all filtered by the same selection. Plain JavaScript and SVG, no library, so the page
// works offline. The pure functions (scales, selection, colours) are exported for Node tests.
"use strict";

const HpoReport = (() => {
  // The axes of the plot: the study's parameter axes, then the sweep metric (linear over the
  // finite objectives). Each axis gets `value(trial)` and `position(value)`: a number in [0, 1]
  // (0 bottom, 1 top), or null when the trial has no usable value there.
  function buildAxes(data) {
    const axes = data.axes.map((axis) => Object.assign({}, axis, {
      value: (trial) => trial.params[axis.name],
    }));
    const objectives = data.trials.map((t) => t.objective).filter((v) => Number.isFinite(v));
    axes.push({
      name: data.metric,
      scale: "linear",
      min: objectives.length ? Math.min(...objectives) : 0,
      max: objectives.length ? Math.max(...objectives) : 1,
      metric: true,
      value: (trial) => trial.objective,
    });
    for (const axis of axes) axis.position = positionFunction(axis);
    return axes;
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

  // Which trials every brush keeps. `brushes` maps an axis index to [lo, hi] in positions; a trial
  // without a value on a brushed axis is not kept.
  function selectTrials(trials, axes, brushes) {
    return trials.map((trial) => Object.entries(brushes).every(([index, range]) => {
      const axis = axes[Number(index)];
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

  // ---- drawing (browser only) ----

  const SVG = "http://www.w3.org/2000/svg";

  function element(tag, attributes, parent) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, v);
    if (parent) parent.appendChild(node);
    return node;
  }

  function formatValue(v) {
    if (v === null || v === undefined) return "-";
    if (typeof v !== "number") return String(v);
    if (!Number.isFinite(v)) return "-";
    if (Number.isInteger(v)) return String(v);
    return Math.abs(v) >= 1e-3 && Math.abs(v) < 1e4 ? String(Number(v.toPrecision(4)))
                                                      : v.toExponential(2);
  }

  // Round tick values inside [min, max]: steps of 1, 2 or 5 times a power of ten, about five
  // intervals; on a log axis the powers of ten when it spans at least two of them.
  function niceTicks(min, max) {
    if (!(max > min)) return [min];
    const raw = (max - min) / 5;
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
    if (axis.scale === "categorical") return axis.categories.map((c) => [axis.position(c), c]);
    const values = axis.scale === "log" ? logTicks(axis.min, axis.max)
                                        : niceTicks(axis.min, axis.max);
    return values.map((v) => [axis.position(v), formatValue(v)]);
  }

  function render(data) {
    const axes = buildAxes(data);
    const trials = data.trials;
    const brushes = {};
    const state = {sortKey: "objective", descending: data.goal === "maximize"};
    const plot = drawParallel(data, axes, brushes, update);
    const curves = drawCurves(data, axes);
    const table = document.getElementById("trials");
    const summary = document.getElementById("selection");

    function update() {
      const selected = selectTrials(trials, axes, brushes);
      plot.highlight(selected);
      curves.highlight(selected);
      const count = selected.filter(Boolean).length;
      summary.textContent = count === trials.length
          ? "All " + trials.length + " trials shown. Drag along an axis to select a range."
          : count + " of " + trials.length + " trials selected (click an axis to clear it).";
      fillTable(data, table, selected, state, update);
    }
    update();
  }

  function drawParallel(data, axes, brushes, onChange) {
    const svg = document.getElementById("parallel");
    const width = Math.max(640, 130 * axes.length);
    const height = 360;
    const top = 30;
    const bottom = 40;
    const inner = height - top - bottom;
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    svg.setAttribute("width", width);
    const x = (i) => 60 + (i * (width - 120)) / Math.max(1, axes.length - 1);
    const y = (p) => top + (1 - p) * inner;
    const lines = element("g", {}, svg);
    const order = data.trials.map((t, i) => i);
    order.sort((a, b) => (goodness(data, axes, data.trials[a]) ?? -1) -
                         (goodness(data, axes, data.trials[b]) ?? -1));  // best drawn last
    const paths = [];
    for (const i of order) {
      const trial = data.trials[i];
      const points = [];
      axes.forEach((axis, k) => {
        const p = axis.position(axis.value(trial));
        if (p !== null) points.push(x(k).toFixed(1) + "," + y(p).toFixed(1));
      });
      const g = goodness(data, axes, trial);
      const path = element("polyline", {
        points: points.join(" "),
        fill: "none",
        stroke: colour(g),
        "stroke-width": trial.trial_id === data.best_trial_id ? 3 : 1.5,
        "stroke-dasharray": trial.status === "failed" ? "4 3" : "none",
      }, lines);
      element("title", {}, path).textContent = "trial " + trial.trial_id + " (" + trial.status +
          "): " + data.metric + " " + formatValue(trial.objective);
      paths[i] = path;
    }
    axes.forEach((axis, k) => {
      const group = element("g", {class: "axis"}, svg);
      element("line", {x1: x(k), x2: x(k), y1: top, y2: top + inner}, group);
      element("text", {x: x(k), y: top - 12, "text-anchor": "middle", class: "axis-name"}, group)
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
        const box = svg.getBoundingClientRect();
        const py = ((event.clientY - box.top) * height) / box.height;
        return Math.min(Math.max(1 - (py - top) / inner, 0), 1);
      };
      const show = () => {
        const range = brushes[k];
        band.setAttribute("y", range ? y(range[1]) : top);
        band.setAttribute("height", range ? y(range[0]) - y(range[1]) : 0);
      };
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
    return {
      highlight(selected) {
        paths.forEach((path, i) => path.setAttribute("class", selected[i] ? "" : "dimmed"));
      },
    };
  }

  function drawCurves(data, axes) {
    const svg = document.getElementById("curves");
    const width = 640;
    const height = 300;
    const left = 60;
    const right = 20;
    const top = 15;
    const bottom = 40;
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    const points = data.trials.flatMap((t) => t.curve).filter((p) => Number.isFinite(p[1]));
    const maxEpoch = Math.max(1, ...points.map((p) => p[0]));
    const lo = points.length ? Math.min(...points.map((p) => p[1])) : 0;
    const hi = points.length ? Math.max(...points.map((p) => p[1])) : 1;
    const x = (e) => left + ((e - 1) / Math.max(1, maxEpoch - 1)) * (width - left - right);
    const y = (v) => top + (hi === lo ? 0.5 : (hi - v) / (hi - lo)) * (height - top - bottom);
    const frame = element("g", {class: "axis"}, svg);
    element("line", {x1: left, x2: width - right, y1: height - bottom, y2: height - bottom}, frame);
    element("line", {x1: left, x2: left, y1: top, y2: height - bottom}, frame);
    for (const v of niceTicks(lo, hi)) {
      element("text", {x: left - 6, y: y(v) + 4, "text-anchor": "end"}, frame).textContent =
          formatValue(v);
    }
    for (const e of niceTicks(1, maxEpoch).filter((e) => Number.isInteger(e))) {
      element("text", {x: x(e), y: height - bottom + 16, "text-anchor": "middle"}, frame)
          .textContent = e;
    }
    element("text", {x: (left + width - right) / 2, y: height - 6, "text-anchor": "middle"}, frame)
        .textContent = "epoch";
    const lines = data.trials.map((trial) => {
      const line = element("polyline", {
        points: trial.curve.filter((p) => Number.isFinite(p[1]))
                    .map((p) => x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1)).join(" "),
        fill: "none",
        stroke: colour(goodness(data, axes, trial)),
        "stroke-width": trial.trial_id === data.best_trial_id ? 3 : 1.5,
      }, svg);
      element("title", {}, line).textContent = "trial " + trial.trial_id + " (" + trial.status +
          ", " + trial.epochs + " epochs)";
      return line;
    });
    return {
      highlight(selected) {
        lines.forEach((line, i) => line.setAttribute("class", selected[i] ? "" : "dimmed"));
      },
    };
  }

  function fillTable(data, table, selected, state, onChange) {
    const columns = ["trial_id", "status", "objective"]
        .concat(data.axes.map((a) => a.name), ["epochs", "duration_s", "message"]);
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
    const shown = data.trials.filter((t, i) => selected[i]);
    for (const trial of sortTrials(data, shown, state.sortKey, state.descending)) {
      const row = body.insertRow();
      if (trial.trial_id === data.best_trial_id) row.className = "best";
      for (const column of columns) {
        const v = column in trial.params ? trial.params[column] : trial[column];
        row.insertCell().textContent = formatValue(v);
      }
    }
  }

  return {buildAxes, goodness, colour, selectTrials, sortTrials, formatValue, axisTicks, render};
})();

if (typeof module !== "undefined") {
  module.exports = HpoReport;
} else {
  HpoReport.render(JSON.parse(document.getElementById("hpo-study").textContent));
}
