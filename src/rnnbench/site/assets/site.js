// rnnbench report: sortable tables, the ledger's filters, the comparison of your runs.
// Plain JavaScript, no library, works from file://.
"use strict";

function cellValue(row, index) {
  const cell = row.cells[index];
  if (!cell) return "";
  return cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent.trim();
}

function makeSortable(table) {
  const heads = table.querySelectorAll("thead th");
  heads.forEach((th, index) => {
    if (!th.dataset.sort) return;
    th.addEventListener("click", () => {
      const numeric = th.dataset.sort === "num";
      const ascending = !th.classList.contains("asc");
      heads.forEach((h) => h.classList.remove("asc", "desc"));
      th.classList.add(ascending ? "asc" : "desc");
      const body = table.tBodies[0];
      const rows = Array.from(body.rows);
      rows.sort((a, b) => {
        let x = cellValue(a, index), y = cellValue(b, index);
        if (numeric) {
          x = x === "" ? NaN : parseFloat(x);
          y = y === "" ? NaN : parseFloat(y);
          if (isNaN(x) && isNaN(y)) return 0;
          if (isNaN(x)) return 1;  // empty cells last, either way
          if (isNaN(y)) return -1;
          return ascending ? x - y : y - x;
        }
        return ascending ? x.localeCompare(y) : y.localeCompare(x);
      });
      rows.forEach((r) => body.appendChild(r));
    });
  });
}

function setupLedger() {
  const form = document.getElementById("ledger-filters");
  const table = document.getElementById("ledger");
  if (!form || !table) return;
  const count = document.getElementById("ledger-count");
  const rows = Array.from(table.tBodies[0].rows);
  // ledger.html#paper=RCRN&kind=accuracy: the home page's links open the ledger filtered
  const wanted = new URLSearchParams(window.location.hash.replace(/^#/, ""));
  for (const [key, value] of wanted) {
    const field = form.elements[key];
    if (field) field.value = value;
  }
  function apply() {
    const filters = ["paper", "table", "verdict", "kind", "scope"].map((k) => [k, form.elements[k].value]);
    const text = form.elements.text.value.trim().toLowerCase();
    let shown = 0;
    rows.forEach((row) => {
      const keep = filters.every(([k, v]) => !v || row.dataset[k] === v) && (!text || row.textContent.toLowerCase().includes(text));
      row.classList.toggle("hidden", !keep);
      if (keep) shown += 1;
    });
    count.textContent = `showing ${shown} of ${rows.length} claims`;
  }
  form.addEventListener("input", apply);
  form.addEventListener("change", apply);
  apply();
}

function element(tag, attributes, text) {
  const node = document.createElementNS(tag === "svg" || attributes.svg ? "http://www.w3.org/2000/svg" : "http://www.w3.org/1999/xhtml", tag);
  for (const [k, v] of Object.entries(attributes)) if (k !== "svg") node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function htmlTable(header, rows) {
  const table = element("table", { class: "data" });
  const head = table.createTHead().insertRow();
  header.forEach((h) => head.appendChild(element("th", {}, h)));
  const body = table.createTBody();
  rows.forEach((r) => {
    const tr = body.insertRow();
    r.forEach((v) => tr.appendChild(element("td", {}, v)));
  });
  return table;
}

function fmt(value) {
  if (value === null || value === undefined) return "–";
  if (typeof value === "number") return Number.isInteger(value) ? value.toLocaleString("en") : value.toPrecision(5);
  return String(value);
}

function curvesSvg(picked, colours) {
  // The dev curve of each run on its task's selection metric, overlaid.
  const series = picked.map((run) => {
    const metric = run.select_metric && run.curves[run.select_metric] ? run.select_metric : Object.keys(run.curves)[0];
    return { run, metric, values: metric ? run.curves[metric] : [] };
  }).filter((s) => s.values.some((v) => v !== null));
  if (!series.length) return element("p", { class: "muted" }, "None of these runs has a dev curve.");
  const W = 720, H = 320, L = 60, R = 20, T = 20, B = 40;
  const epochs = Math.max(...series.map((s) => s.values.length));
  const all = series.flatMap((s) => s.values.filter((v) => v !== null));
  let lo = Math.min(...all), hi = Math.max(...all);
  if (lo === hi) { lo -= 1; hi += 1; }
  const x = (e) => L + (epochs > 1 ? (e - 1) / (epochs - 1) : 0.5) * (W - L - R);
  const y = (v) => T + (1 - (v - lo) / (hi - lo)) * (H - T - B);
  const svg = element("svg", { class: "curves", viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img",
    "aria-label": "dev curves of the compared runs" });
  svg.appendChild(element("line", { svg: 1, x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#888" }));
  svg.appendChild(element("line", { svg: 1, x1: L, y1: T, x2: L, y2: H - B, stroke: "#888" }));
  for (let i = 0; i <= 4; i += 1) {
    const v = lo + (hi - lo) * i / 4;
    svg.appendChild(element("text", { svg: 1, x: L - 6, y: y(v) + 4, "text-anchor": "end" }, v.toPrecision(3)));
  }
  svg.appendChild(element("text", { svg: 1, x: (L + W - R) / 2, y: H - 8, "text-anchor": "middle" }, `epoch (1-${epochs})`));
  const dashes = ["", "6 3", "2 3", "8 3 2 3"];
  const seen = {};
  series.forEach((s, i) => {
    const colour = colours[s.run.encoder] || "#333";
    const k = (seen[s.run.encoder] = (seen[s.run.encoder] || 0) + 1) - 1;
    const points = s.values.map((v, e) => (v === null ? null : `${x(e + 1).toFixed(1)},${y(v).toFixed(1)}`)).filter(Boolean);
    svg.appendChild(element("polyline", { svg: 1, points: points.join(" "), fill: "none", stroke: colour, "stroke-width": 2,
      "stroke-dasharray": dashes[k % dashes.length] }));
    const ly = T + 14 * i;
    svg.appendChild(element("line", { svg: 1, x1: W - R - 230, y1: ly, x2: W - R - 210, y2: ly, stroke: colour, "stroke-width": 2,
      "stroke-dasharray": dashes[k % dashes.length] }));
    svg.appendChild(element("text", { svg: 1, x: W - R - 205, y: ly + 4 }, `${s.run.encoder} s${s.run.seed} ${s.run.id.slice(0, 8)} (dev ${s.metric})`));
  });
  return svg;
}

function setupRuns() {
  const data = document.getElementById("runs-data");
  if (!data) return;
  const { runs, colours } = JSON.parse(data.textContent);
  const boxes = Array.from(document.querySelectorAll("input.pick"));
  const button = document.getElementById("compare-button");
  const count = document.getElementById("pick-count");
  const picked = () => boxes.filter((b) => b.checked).map((b) => runs[Number(b.value)]);
  boxes.forEach((b) => b.addEventListener("change", () => {
    const n = picked().length;
    button.disabled = n < 2;
    count.textContent = n ? `${n} ticked` : "";
  }));
  button.addEventListener("click", () => {
    const chosen = picked();
    if (chosen.length < 2) return;
    const names = chosen.map((r) => `${r.encoder} s${r.seed} ${r.id.slice(0, 8)}`);
    const metricKeys = [...new Set(chosen.flatMap((r) => [...Object.keys(r.metrics), ...Object.keys(r.cost)]))].sort();
    const metricRows = metricKeys.map((k) => [k, ...chosen.map((r) => fmt(k in r.metrics ? r.metrics[k] : r.cost[k]))]);
    const configKeys = [...new Set(chosen.flatMap((r) => Object.keys(r.config)))].sort()
      .filter((k) => new Set(chosen.map((r) => (k in r.config ? r.config[k] : "(not set)"))).size > 1);
    const configRows = configKeys.map((k) => [k, ...chosen.map((r) => (k in r.config ? r.config[k] : "(not set)"))]);
    const section = document.getElementById("comparison");
    const put = (id, node) => { const where = document.getElementById(id); where.replaceChildren(node); };
    put("compare-metrics", htmlTable(["", ...names], metricRows));
    put("compare-curves", curvesSvg(chosen, colours));
    put("compare-config", configRows.length ? htmlTable(["config key", ...names], configRows)
      : element("p", { class: "muted" }, "The runs' configs are the same, but for the seed."));
    section.hidden = false;
    section.scrollIntoView();
  });
}

document.querySelectorAll("table.sortable").forEach(makeSortable);
setupLedger();
setupRuns();
