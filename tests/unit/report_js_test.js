// Node tests of the HTML report's script (core/src/report/templates/report.js): the axis scales,
// the brushing selection, colours by the metric's goal and the table's sort order. The drawing
// itself needs a browser; these are the functions it is built on.
"use strict";

const assert = require("assert");
const report = require(process.argv[2]);

const data = {
  metric: "val_accuracy",
  goal: "maximize",
  best_trial_id: 1,
  params: ["lr", "optimizer", "width"],
  axes: [
    {name: "lr", scale: "log", min: 1e-4, max: 1e-2},
    {name: "optimizer", scale: "categorical", categories: ["sgd", "adam", "adamw"]},
    {name: "width", scale: "linear", min: 4, max: 64},
  ],
  trials: [
    {trial_id: 0, status: "completed", objective: 0.8, params: {lr: 1e-3, optimizer: "adam", width: 4}},
    {trial_id: 1, status: "completed", objective: 0.9, params: {lr: 1e-2, optimizer: "sgd", width: 64}},
    {trial_id: 2, status: "stopped", objective: 0.7, params: {lr: 1e-4, optimizer: "adamw", width: 34}},
    {trial_id: 3, status: "failed", objective: null, params: {lr: 5e-3, optimizer: "unknown", width: 10}},
  ],
};

const close = (a, b) => assert.ok(Math.abs(a - b) < 1e-12, a + " != " + b);

// Axes: the parameters, then the metric over the finite objectives.
const axes = report.buildAxes(data);
assert.deepStrictEqual(axes.map((a) => a.name), ["lr", "optimizer", "width", "val_accuracy"]);
close(axes[0].position(1e-3), 0.5);  // log: the middle decade
close(axes[0].position(1e-2), 1);
assert.strictEqual(axes[0].position(0), null);  // no log of 0
assert.strictEqual(axes[1].position("sgd"), 0);
assert.strictEqual(axes[1].position("adam"), 0.5);
assert.strictEqual(axes[1].position("adamw"), 1);
assert.strictEqual(axes[1].position("unknown"), null);
close(axes[2].position(34), 0.5);
close(axes[3].position(0.7), 0);
close(axes[3].position(0.9), 1);
assert.strictEqual(axes[3].position(null), null);

// Brushes keep trials inside every brushed range; a trial without a value there is dropped.
assert.deepStrictEqual(report.selectTrials(data.trials, axes, {}), [true, true, true, true]);
assert.deepStrictEqual(report.selectTrials(data.trials, axes, {0: [0.4, 1]}),
                       [true, true, false, true]);
assert.deepStrictEqual(report.selectTrials(data.trials, axes, {0: [0.4, 1], 3: [0.25, 1]}),
                       [true, true, false, false]);
assert.deepStrictEqual(report.selectTrials(data.trials, axes, {1: [0, 0.6]}),
                       [true, true, false, false]);

// Goodness follows the goal: the best objective is 1, the worst 0, no objective null.
close(report.goodness(data, axes, data.trials[1]), 1);
close(report.goodness(data, axes, data.trials[2]), 0);
assert.strictEqual(report.goodness(data, axes, data.trials[3]), null);
const minimizing = Object.assign({}, data, {goal: "minimize"});
close(report.goodness(minimizing, report.buildAxes(minimizing), data.trials[2]), 1);
assert.strictEqual(report.colour(1), "rgb(68,1,84)");
assert.strictEqual(report.colour(0), "rgb(253,231,37)");
assert.strictEqual(report.colour(null), "rgb(160,160,160)");

// Sorting: by the metric best first, by a parameter, missing values last, ties by trial id.
const ids = (trials) => trials.map((t) => t.trial_id);
assert.deepStrictEqual(ids(report.sortTrials(data, data.trials, "objective", true)), [1, 0, 2, 3]);
assert.deepStrictEqual(ids(report.sortTrials(data, data.trials, "objective", false)), [2, 0, 1, 3]);
assert.deepStrictEqual(ids(report.sortTrials(data, data.trials, "width", false)), [0, 3, 2, 1]);
assert.deepStrictEqual(ids(report.sortTrials(data, data.trials, "status", false)), [0, 1, 3, 2]);

// A study where every trial failed still has a metric axis.
const failed = Object.assign({}, data, {trials: [data.trials[3]]});
const failedAxes = report.buildAxes(failed);
assert.strictEqual(failedAxes[3].min, 0);
assert.strictEqual(report.goodness(failed, failedAxes, data.trials[3]), null);

// Ticks: decades on a log axis, round steps on a linear one, every category.
const labels = (axis) => report.axisTicks(axis).map((t) => t[1]);
assert.deepStrictEqual(labels(axes[0]), ["1.00e-4", "0.001", "0.01"]);
assert.deepStrictEqual(labels(axes[1]), ["sgd", "adam", "adamw"]);
assert.deepStrictEqual(labels(axes[2]), ["20", "40", "60"]);
assert.deepStrictEqual(labels(axes[3]), ["0.7", "0.75", "0.8", "0.85", "0.9"]);
assert.deepStrictEqual(labels({scale: "linear", min: 0.01, max: 0.87, position: () => 0}),
                       ["0.2", "0.4", "0.6", "0.8"]);
for (const [position] of report.axisTicks(axes[2])) assert.ok(position >= 0 && position <= 1);

assert.strictEqual(report.formatValue(0.000123456), "1.23e-4");
assert.strictEqual(report.formatValue(0.87654321), "0.8765");
assert.strictEqual(report.formatValue(64), "64");
assert.strictEqual(report.formatValue(null), "-");
// History: x by finishing order, cumulative epochs or wall time; the best so far by the goal.
const timed = [
  {trial_id: 0, status: "completed", objective: 0.5, epochs: 3, duration_s: 10, group: 0, order: 1,
   start_time_s: 1000},
  {trial_id: 1, status: "stopped", objective: 0.7, epochs: 1, duration_s: 2, group: 1, order: 0,
   start_time_s: 1001},
  {trial_id: 2, status: "failed", objective: null, epochs: 0, duration_s: 1, group: 1, order: 2,
   start_time_s: 1004},
  {trial_id: 3, status: "completed", objective: 0.4, epochs: 3, duration_s: 6, group: 1, order: 3,
   start_time_s: 1006},
];
const byTrial = report.history(timed, "minimize", "trial");
assert.deepStrictEqual(byTrial.order, [1, 0, 2, 3]);
assert.deepStrictEqual(byTrial.x, [2, 1, 3, 4]);
assert.deepStrictEqual(byTrial.best, [[1, 0.7], [2, 0.5], [4, 0.4]]);
assert.deepStrictEqual(report.history(timed, "minimize", "compute").x, [4, 1, 4, 7]);
assert.deepStrictEqual(report.history(timed, "maximize", "compute").best, [[1, 0.7]]);
const times = report.trialTimes(timed);
assert.ok(times.exact);
assert.deepStrictEqual(times.start, [0, 1, 4, 6]);
assert.deepStrictEqual(times.end, [10, 3, 5, 12]);
assert.deepStrictEqual(report.history(timed, "minimize", "time", times).x, [10, 3, 5, 12]);
// Slot utilization: 19 s of trials on 2 groups over 12 s.
close(report.utilization(times, 2).share, 19 / 24);
// A promoted trial ran once per pause before its last run: every run counts and is drawn.
const promoted = timed.map((t) => Object.assign({}, t));
promoted[3] = Object.assign({}, timed[3], {spans: [[999, 2, 0], [1003, 1, 1]]});
const spanned = report.trialTimes(promoted);
assert.deepStrictEqual(spanned.start, [1, 2, 5, 7]);  // from the first run, at 999
assert.deepStrictEqual(spanned.spans[3], [[0, 2, 0, false], [4, 5, 1, false], [7, 13, 1, true]]);
assert.deepStrictEqual(spanned.spans[0], [[1, 11, 0, true]]);
// 19 s as before plus the 3 s of the earlier runs, on 2 groups over 13 s.
close(report.utilization(spanned, 2).share, 22 / 26);
// Without start times (an older study): each group's trials end to end, in finishing order.
const untimed = timed.map((t) => Object.assign({}, t, {start_time_s: null}));
const packed = report.trialTimes(untimed);
assert.ok(!packed.exact);
assert.strictEqual(packed.missing, 4);
assert.deepStrictEqual(packed.start, [0, 0, 2, 3]);
assert.deepStrictEqual(packed.end, [10, 2, 3, 9]);
assert.strictEqual(report.formatDuration(42), "42 s");
assert.strictEqual(report.formatDuration(600), "10 min");
assert.strictEqual(report.formatDuration(7200), "2 h");

// Interpolation passes through the trials and stays within their range.
const grid = report.interpolateGrid([[0.25, 0.25, 1], [0.75, 0.75, 0]], 2);
assert.strictEqual(grid[0], 1);  // the cell centred on the first point
assert.strictEqual(grid[3], 0);
assert.ok(grid[1] > 0 && grid[1] < 1);
// The contour takes the two most important hyperparameters.
const ranked = Object.assign({}, data, {importance: {importance: [
  {name: "width", importance: 0.6}, {name: "lr", importance: 0.3}]}});
assert.deepStrictEqual(report.contourAxes(ranked, axes).map((a) => a.name), ["width", "lr"]);
assert.deepStrictEqual(report.contourAxes(data, axes).map((a) => a.name), ["lr", "optimizer"]);

// The drawing, on a minimal stand-in for the browser's DOM and canvas: every section draws every
// trial, the table has a row each; dragging on an axis of the parallel coordinates selects,
// filters the table; a click on the axis clears it; a click on a column header sorts by it.
class FakeNode {
  constructor(tag) {
    this.tag = tag;
    this.attributes = {};
    this.children = [];
    this.listeners = {};
    this.textContent = "";
    this.style = {};
    this.value = "trial";
  }
  setAttribute(name, value) { this.attributes[name] = String(value); }
  getAttribute(name) { return this.attributes[name]; }
  appendChild(child) { this.children.push(child); child.parentNode = this; return child; }
  addEventListener(type, listener) { this.listeners[type] = listener; }
  setPointerCapture() {}
  getBoundingClientRect() { return {top: 0, left: 0, width: 1000, height: 380}; }
  getContext() {
    const calls = {};
    this.calls = calls;
    return new Proxy({}, {
      get: (target, key) => (key in target ? target[key] : (...args) => {
        calls[key] = (calls[key] || 0) + 1;
        return args;
      }),
    });
  }
  get classList() { return {add: (c) => { this.className = c; }}; }
  set className(value) { this.attributes.class = value; }
  get className() { return this.attributes.class || ""; }
  // Tables.
  createTHead() { return this.appendChild(new FakeNode("thead")); }
  createTBody() { return this.appendChild(new FakeNode("tbody")); }
  insertRow() { return this.appendChild(new FakeNode("tr")); }
  insertCell() { return this.appendChild(new FakeNode("td")); }
  all(tag) {
    return this.children.flatMap((c) => (c.tag === tag ? [c] : []).concat(c.all(tag)));
  }
}
// Setting textContent to "" empties an element, as in the DOM.
Object.defineProperty(FakeNode.prototype, "textContent", {
  get() { return this._text; },
  set(value) { this._text = value; if (value === "") this.children = []; },
});
const elements = {};
const elementIds = ["history", "history-plot", "history-x", "importance", "importance-plot", "slices",
             "slices-plots", "contour", "contour-plot", "timeline", "timeline-plot", "utilization",
             "parallel", "parallel-plot", "curves", "curves-plot", "trials", "selection",
             "clear-selection", "show-all", "tooltip"];
for (const id of elementIds) elements[id] = new FakeNode(id);
global.document = {
  getElementById: (id) => elements[id],
  createElementNS: (ns, tag) => new FakeNode(tag),
  createElement: (tag) => new FakeNode(tag),
  createTextNode: (text) => { const node = new FakeNode("#text"); node.textContent = text; return node; },
};
const drawn = Object.assign({}, data, {
  groups: 2,
  importance: {trees: 64, seed: 0, trials: 3, importance: [{name: "lr", importance: 0.75},
                                                           {name: "width", importance: 0.25}]},
  trials: data.trials.map((t, i) => Object.assign({}, t, {
    epochs: 3, duration_s: 1 + i, group: i % 2, order: i, start_time_s: 100 + i, message: "",
    curve: [[1, 0.5], [2, 0.6 + i / 100], [3, t.objective]],
  })),
});
report.render(drawn);
const drawnIn = (id) => Number(elements[id].getAttribute("data-drawn"));
const tableRows = () => elements.trials.all("tbody")[0].all("tr");
assert.strictEqual(drawnIn("parallel"), 4);
assert.strictEqual(drawnIn("curves"), 4);  // the failed trial up to its last finite value
assert.strictEqual(drawnIn("history"), 4 + 1);  // every trial, and the best-so-far line
assert.strictEqual(drawnIn("timeline"), 4);
assert.strictEqual(drawnIn("importance"), 2);
assert.strictEqual(drawnIn("slices"), 3 * 3);  // 3 axes x 3 trials with an objective
assert.ok(drawnIn("contour") > 48 * 48);
assert.strictEqual(elements["importance-plot"].all("rect").length, 2);
assert.ok(elements.utilization.textContent.startsWith("Slot utilization: "),
          elements.utilization.textContent);
assert.strictEqual(tableRows().length, 4);
assert.ok(elements.selection.textContent.startsWith("All 4 trials"), elements.selection.textContent);
assert.strictEqual(tableRows()[0].className, "best");
// Switching the history to compute redraws it.
elements["history-x"].value = "compute";
elements["history-x"].listeners.change();
assert.strictEqual(drawnIn("history"), 5);

// Drag on the lr axis (the first) from y = 34 (top) to y = 170 (just above the middle).
const lrHit = elements["parallel-plot"].all("rect").filter((r) => r.getAttribute("class") === "hit")[0];
lrHit.listeners.pointerdown({clientY: 34, pointerId: 1});
lrHit.listeners.pointermove({clientY: 170});
lrHit.listeners.pointerup({clientY: 170});
assert.strictEqual(elements.selection.textContent,
                   "2 of 4 trials selected (click an axis to clear it).");
assert.deepStrictEqual(tableRows().map((r) => r.children[0].textContent), ["1", "3"]);
assert.strictEqual(elements["clear-selection"].hidden, false);
lrHit.listeners.pointerdown({clientY: 100, pointerId: 1});
lrHit.listeners.pointerup({clientY: 100});
assert.ok(elements.selection.textContent.startsWith("All 4 trials"));

// Sort by width (ascending, then descending on a second click).
const header = () => elements.trials.all("thead")[0].all("th");
header().find((h) => h.textContent === "width").listeners.click();
assert.deepStrictEqual(tableRows().map((r) => r.children[0].textContent), ["0", "3", "2", "1"]);
header().find((h) => h.textContent.startsWith("width")).listeners.click();
assert.deepStrictEqual(tableRows().map((r) => r.children[0].textContent), ["1", "2", "3", "0"]);

// The comparison page: two studies overlaid, one best-so-far line each.
elements["comparison-plot"] = new FakeNode("comparison-plot");
elements["comparison-x"] = Object.assign(new FakeNode("comparison-x"), {value: "compute"});
elements.comparison = new FakeNode("comparison");
report.renderComparison({metric: "loss", goal: "minimize", studies: [
  {name: "a.h5", method: "random", trials: timed},
  {name: "b.h5", method: "bayes + hyperband", trials: timed.slice(0, 2)},
]});
assert.strictEqual(Number(elements.comparison.getAttribute("data-drawn")), 3 + 2 + 2);

console.log("report.js: all checks passed");

// Several objectives: the front of val_loss (minimize) against val_accuracy (maximize), by x.
// (0.3, 0.7), (0.4, 0.9) and (0.5, 0.95) trade off; (0.6, 0.6) is dominated; NaN is never on it.
assert.deepStrictEqual(
    report.paretoFront([[0.5, 0.95], [0.3, 0.7], [0.4, 0.9], [0.6, 0.6], [NaN, 1.0]],
                       ["minimize", "maximize"]),
    [1, 2, 0]);
console.log("report.js: paretoFront checks passed");

// Three objectives: val_loss (minimize, the sweep metric), val_accuracy (maximize), epoch_time_s
// (minimize). The study's front (`pareto`) is over all three: trial 2 is beaten on the first two
// by trial 0 but is the fastest, so it stays on the front, hollow where loss and accuracy are
// drawn. Trial 4 has no val_loss: left out wherever val_loss is drawn.
elements.pareto = new FakeNode("pareto");
elements["pareto-plot"] = new FakeNode("pareto-plot");
const objectiveTrials = [
  [0, "completed", 0.3, [0.7, 5], true], [1, "completed", 0.4, [0.9, 4], true],
  [2, "completed", 0.5, [0.6, 1], true], [3, "stopped", 0.6, [0.5, 6], false],
  [4, "failed", null, [0.8, 2], false],
].map(([id, status, objective, further, pareto]) => Object.assign(
    {}, drawn.trials[id % 4], {trial_id: id, order: id, status, objective, further, pareto}));
const threeObjectives = Object.assign({}, drawn, {
  metric: "val_loss", goal: "minimize", best_trial_id: 0, trials: objectiveTrials,
  objectives: [{name: "val_loss", goal: "minimize"}, {name: "val_accuracy", goal: "maximize"},
               {name: "epoch_time_s", goal: "minimize"}],
});
const caption = () => elements["pareto-plot"].all("p")[0].textContent;
const strokes = () => elements["pareto-plot"].all("canvas")[0].calls.stroke;
// Two objectives: no axis choice, the first two drawn, the front as before.
report.render(Object.assign({}, threeObjectives, {
  objectives: threeObjectives.objectives.slice(0, 2),
  trials: objectiveTrials.map((t, i) => Object.assign({}, t, {further: t.further.slice(0, 1),
                                                              pareto: i < 2})),
}));
assert.strictEqual(drawnIn("pareto"), 4);
assert.strictEqual(caption(), "Pareto front over both objectives: 2 trials (joined by the dashed " +
                              "staircase).");
// Three objectives, val_loss against val_accuracy at first: trial 2 hollow, drawn with a stroke
// of its own besides the staircase's.
elements["pareto-x"] = Object.assign(new FakeNode("pareto-x"), {value: "0"});
elements["pareto-y"] = Object.assign(new FakeNode("pareto-y"), {value: "1"});
report.render(threeObjectives);
assert.strictEqual(drawnIn("pareto"), 4);
assert.strictEqual(caption(), "Pareto front over all 3 objectives: 3 trials; 2 unbeaten on " +
                              "val_loss and val_accuracy (filled, joined by the dashed " +
                              "staircase), 1 kept on the front by another objective (hollow).");
assert.strictEqual(strokes(), 2);
// val_loss against epoch_time_s: every front trial unbeaten on the two, none hollow.
elements["pareto-y"].value = "2";
elements["pareto-y"].listeners.change();
assert.strictEqual(drawnIn("pareto"), 4);
assert.ok(caption().includes("3 unbeaten on val_loss and epoch_time_s"), caption());
assert.ok(caption().endsWith(", 0 kept on the front by another objective (hollow)."), caption());
assert.strictEqual(strokes(), 1);
// val_accuracy against epoch_time_s: trial 4 is drawn; trial 1 beats trial 0 on both.
elements["pareto-x"].value = "1";
elements["pareto-x"].listeners.change();
assert.strictEqual(drawnIn("pareto"), 5);
assert.ok(caption().includes("2 unbeaten on val_accuracy and epoch_time_s"), caption());
// Choosing the other axis's objective swaps the two.
elements["pareto-x"].value = "2";
elements["pareto-x"].listeners.change();
assert.strictEqual(elements["pareto-y"].value, "1");
assert.ok(caption().includes("unbeaten on epoch_time_s and val_accuracy"), caption());
console.log("report.js: several-objective checks passed");
