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
// The drawing, on a minimal stand-in for the browser's DOM: every trial gets a line in both plots
// and a table row; dragging on an axis selects, dims the rest and filters the table; a click on
// the axis clears it; a click on a column header sorts by it.
class FakeNode {
  constructor(tag) {
    this.tag = tag;
    this.attributes = {};
    this.children = [];
    this.listeners = {};
    this.textContent = "";
  }
  setAttribute(name, value) { this.attributes[name] = String(value); }
  getAttribute(name) { return this.attributes[name]; }
  appendChild(child) { this.children.push(child); return child; }
  addEventListener(type, listener) { this.listeners[type] = listener; }
  setPointerCapture() {}
  getBoundingClientRect() { return {top: 0, left: 0, width: 1000, height: 360}; }
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
for (const id of ["parallel", "curves", "trials", "selection"]) elements[id] = new FakeNode(id);
global.document = {
  getElementById: (id) => elements[id],
  createElementNS: (ns, tag) => new FakeNode(tag),
  createElement: (tag) => new FakeNode(tag),
};
const drawn = Object.assign({}, data, {
  trials: data.trials.map((t, i) => Object.assign({}, t, {
    epochs: 3, duration_s: 1, message: "", curve: [[1, 0.5], [2, 0.6 + i / 100], [3, t.objective]],
  })),
});
report.render(drawn);
const parallelLines = () => elements.parallel.all("polyline");
const tableRows = () => elements.trials.all("tbody")[0].all("tr");
assert.strictEqual(parallelLines().length, 4);
assert.strictEqual(elements.curves.all("polyline").length, 4);
assert.strictEqual(tableRows().length, 4);
assert.ok(elements.selection.textContent.startsWith("All 4 trials"), elements.selection.textContent);
// The best trial's line is drawn last, thickest; its row is marked and comes first.
assert.strictEqual(parallelLines()[3].getAttribute("stroke-width"), "3");
assert.strictEqual(tableRows()[0].className, "best");
// The failed trial's line skips its unknown category and its missing objective: 2 of 4 axes.
const failedLine = parallelLines().find((l) => l.all("title")[0].textContent.startsWith("trial 3"));
assert.strictEqual(failedLine.getAttribute("points").split(" ").length, 2);
assert.strictEqual(failedLine.getAttribute("stroke-dasharray"), "4 3");

// Drag on the lr axis (the first) from y = 30 (top) to y = 160 (just above the middle).
const lrHit = elements.parallel.all("rect").filter((r) => r.getAttribute("class") === "hit")[0];
lrHit.listeners.pointerdown({clientY: 30, pointerId: 1});
lrHit.listeners.pointermove({clientY: 160});
lrHit.listeners.pointerup({clientY: 160});
assert.strictEqual(elements.selection.textContent,
                   "2 of 4 trials selected (click an axis to clear it).");
assert.deepStrictEqual(tableRows().map((r) => r.children[0].textContent), ["1", "3"]);
assert.strictEqual(parallelLines().filter((l) => l.getAttribute("class") === "dimmed").length, 2);
assert.strictEqual(
    elements.curves.all("polyline").filter((l) => l.getAttribute("class") === "dimmed").length, 2);
lrHit.listeners.pointerdown({clientY: 100, pointerId: 1});
lrHit.listeners.pointerup({clientY: 100});
assert.ok(elements.selection.textContent.startsWith("All 4 trials"));

// Sort by width (ascending, then descending on a second click).
const header = () => elements.trials.all("thead")[0].all("th");
header().find((h) => h.textContent === "width").listeners.click();
assert.deepStrictEqual(tableRows().map((r) => r.children[0].textContent), ["0", "3", "2", "1"]);
header().find((h) => h.textContent.startsWith("width")).listeners.click();
assert.deepStrictEqual(tableRows().map((r) => r.children[0].textContent), ["1", "2", "3", "0"]);

console.log("report.js: all checks passed");
