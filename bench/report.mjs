// The benchmark report: the markdown tables of ratios (ttlkv against each peer of the same run:
// the Node workloads, then the IndexedDB ones with a column per browser engine), the bars with
// their measured figure per engine, and an SVG plot of the ratios (Node and Chromium).

/** ttlkv's advantage over `peer` in `rows` of one workload: > 1 means ttlkv is better. */
function ratio(ttlkv, peer) {
  return ttlkv.higherIsBetter ? ttlkv.value / peer.value : peer.value / ttlkv.value;
}

function byWorkload(rows) {
  const groups = new Map();
  for (const row of rows) {
    if (!groups.has(row.workload)) groups.set(row.workload, []);
    groups.get(row.workload).push(row);
  }
  return groups;
}

const find = (rows, workload, peer) => rows.find((r) => r.workload === workload && r.peer === peer);
const fmt = (v, unit) => (unit === "ms" || unit === "KiB" || unit === "×" ? v.toFixed(2) : Math.round(v).toLocaleString("en"));

/** Every pair "ttlkv vs peer" with its ratio. */
export function comparisons(rows) {
  const out = [];
  for (const [workload, group] of byWorkload(rows)) {
    const mine = group.find((r) => r.peer === "ttlkv");
    if (!mine) continue;
    for (const peer of group) if (peer !== mine) out.push({ workload, peer: peer.peer, ratio: ratio(mine, peer) });
  }
  return out;
}

/**
 * The bars, each with the measured figure: the memory and open bars of issue 22 (docs/performance.md)
 * and the earlier ones, which must stay met. The native bars are printed by bench/native.
 */
export function bars(rows) {
  const purgeRows = rows.filter((r) => r.workload.startsWith("purge "));
  const purgeOf = (peer) => purgeRows.filter((r) => r.peer === peer);
  const indexed = purgeOf("ttlkv purgeExpired");
  const scanned = purgeOf("ttlkv full-scan purge");
  const vs = (workload, peer) => {
    const mine = find(rows, workload, "ttlkv");
    const other = find(rows, workload, peer);
    return mine && other ? ratio(mine, other) : undefined;
  };
  // ttlkv's figure over lru-cache's in a row where lower is better (memory): ≤ 1 is ttlkv smaller.
  const share = (workload) => {
    const mine = find(rows, workload, "ttlkv");
    const lru = find(rows, workload, "lru-cache");
    return mine && lru ? mine.value / lru.value : undefined;
  };
  const coldOpen = rows.find((r) => r.workload.startsWith("cold open"));
  const concurrent = rows.find((r) => r.workload.endsWith("concurrent durable puts"));
  const list = [
    ["session mix, 100-byte strings, Zipf keys ≥ 0.5× lru-cache ops/s", vs("session mix (100-byte strings)", "lru-cache"), (r) => r >= 0.5, (r) => `${r.toFixed(2)}×`],
    ["session mix, 100-byte strings, near-uniform keys ≥ 0.5× lru-cache ops/s", vs("session mix (100-byte strings, uniform random keys)", "lru-cache"), (r) => r >= 0.5, (r) => `${r.toFixed(2)}×`],
    ["session mix, 1 KiB JSON ≥ 0.8× async Map + JSON copy ops/s", vs("session mix (1 KiB JSON)", "reference: async Map + JSON copy"), (r) => r >= 0.8, (r) => `${r.toFixed(2)}×`],
    ["ingest in memory ≥ 0.5× lru-cache set", vs("ingest (memory)", "lru-cache"), (r) => r >= 0.5, (r) => `${r.toFixed(2)}×`],
    ["memory per live key ≤ 1.25× lru-cache", share("memory per live key"), (r) => r <= 1.25, (r) => `${r.toFixed(2)}× lru-cache's`],
    ["wasm memory high-water ≤ 2× lru-cache's memory", share("wasm memory high-water per live key"), (r) => r <= 2, (r) => `${r.toFixed(2)}× lru-cache's`],
    ["ingest into IndexedDB ≥ 5× Dexie bulkPut", vs("ingest (IndexedDB)", "Dexie bulkPut"), (r) => r >= 5, (r) => `${r.toFixed(2)}×`],
    ["ingest into IndexedDB ≥ 20× idb-keyval set one by one", vs("ingest (IndexedDB)", "idb-keyval set"), (r) => r >= 20, (r) => `${r.toFixed(1)}×`],
    ["1,000 concurrent durable puts ≥ 10× raw IndexedDB one put per transaction", concurrent ? vs(concurrent.workload, "raw IndexedDB, one put per transaction") : undefined, (r) => r >= 10, (r) => `${r.toFixed(1)}×`],
    ["one durable put p50 ≤ 1.5× raw IndexedDB single put", vs("durable single put, p50", "raw IndexedDB, one put per transaction"), (r) => 1 / r <= 1.5, (r) => `${(1 / r).toFixed(2)}× the raw latency`],
    ["warm point get ≥ 3× Dexie get", vs("warm point get", "Dexie get"), (r) => r >= 3, (r) => `${r.toFixed(2)}×`],
    ["cold open + first get ≤ 1.5× Dexie's time", coldOpen ? vs(coldOpen.workload, "Dexie") : undefined, (r) => 1 / r <= 1.5, (r) => `${(1 / r).toFixed(2)}× Dexie's time`],
    ["purge among the largest total ≤ 1.5× among the smallest", indexed.length > 1 ? indexed[indexed.length - 1].value / indexed[0].value : undefined, (r) => r <= 1.5, (r) => `${r.toFixed(2)}×`],
    ["purge ≥ 20× faster than a full-scan purge (largest total)", indexed.length && scanned.length ? scanned[scanned.length - 1].value / indexed[indexed.length - 1].value : undefined, (r) => r >= 20, (r) => `${r.toFixed(1)}×`],
    ["churn: stored bytes plateau within 2× of live data", find(rows, "churn, stored bytes / live bytes", "ttlkv")?.value, (r) => r <= 2, (r) => `${r.toFixed(2)}× at the worst sample of the second half`],
    ["longest main-thread task during ingest + compaction ≤ 50 ms", find(rows, "longest main-thread task, ingest + compaction", "ttlkv")?.value, (v) => v <= 50, (v) => (v === 0 ? "no task of 50 ms or more (the longtask threshold)" : `${v.toFixed(1)} ms`)],
    ["package size (wasm + JS, gzipped) ≤ 150 KB", find(rows, "package size (wasm + JS, gzipped)", "ttlkv")?.value, (v) => v * 1.024 <= 150, (v) => `${(v * 1.024).toFixed(1)} KB`],
  ];
  return list.map(([bar, value, met, show]) => ({ bar, measured: value === undefined ? "not measured" : show(value), met: value !== undefined && met(value) }));
}

const ENGINE_NAMES = { chromium: "Chromium", firefox: "Firefox", webkit: "WebKit" };

/** The rows of one engine's run, with the rows measured outside a browser (Node, size). */
const inEngine = (rows, engine) => rows.filter((r) => r.engine === undefined || r.engine === engine);

export function renderTable(meta, rows) {
  const engines = Object.keys(meta.engines ?? {});
  const versions = engines.map((e) => `${ENGINE_NAMES[e]} ${meta.engines[e]}`).join(", ");
  const lines = [
    `# ttlkv benchmarks`,
    ``,
    `${meta.date.slice(0, 10)}, \`${meta.command}\`, Node ${meta.node}; ${versions}${meta.smoke ? " — **smoke sizes, not figures**" : ""}.`,
    `A ratio above 1 means ttlkv did better than that peer in the same run (in the same engine).`,
    ``,
    `## Node and the package`,
    ``,
    `| workload | peer | result | ttlkv vs peer |`,
    `|---|---|---|---|`,
  ];
  for (const [workload, group] of byWorkload(rows.filter((r) => r.engine === undefined))) {
    const mine = group.find((r) => r.peer === "ttlkv");
    for (const row of group) {
      const r = mine && row !== mine ? `${ratio(mine, row).toFixed(2)}×` : "";
      lines.push(`| ${workload} | ${row.peer} | ${fmt(row.value, row.unit)} ${row.unit}${row.note ? ` (${row.note})` : ""} | ${r} |`);
    }
  }
  lines.push(``, `## IndexedDB, per browser engine`, ``, `| workload | peer | ${engines.map((e) => ENGINE_NAMES[e]).join(" | ")} |`, `|---|---|${engines.map(() => "---|").join("")}`);
  const browserRows = rows.filter((r) => r.engine !== undefined);
  for (const [workload, group] of byWorkload(browserRows)) {
    for (const peer of [...new Set(group.map((r) => r.peer))]) {
      const cells = engines.map((engine) => {
        const row = group.find((r) => r.peer === peer && r.engine === engine);
        if (!row) return "";
        const mine = group.find((r) => r.peer === "ttlkv" && r.engine === engine);
        const r = mine && row !== mine ? ` — ${ratio(mine, row).toFixed(2)}×` : "";
        return `${fmt(row.value, row.unit)} ${row.unit}${r}${row.note ? ` (${row.note})` : ""}`;
      });
      lines.push(`| ${workload} | ${peer} | ${cells.join(" | ")} |`);
    }
  }
  const perEngine = engines.map((e) => bars(inEngine(rows, e)));
  lines.push(``, `## The bars`, ``, `| bar | ${engines.map((e) => ENGINE_NAMES[e]).join(" | ")} |`, `|---|${engines.map(() => "---|").join("")}`);
  perEngine[0]?.forEach((b, i) => {
    const cells = perEngine.map((list) => `${list[i].measured}: ${list[i].met ? "met" : "**missed**"}`);
    lines.push(`| ${b.bar} | ${cells.join(" | ")} |`);
  });
  return lines.join("\n") + "\n";
}

/** Horizontal bars of ttlkv's ratio against each peer, on a log scale, 1× marked. */
export function renderSvg(meta, rows) {
  rows = inEngine(rows, "chromium");
  const items = comparisons(rows);
  const width = 900;
  const left = 420;
  const barArea = width - left - 60;
  const rowHeight = 22;
  const height = 70 + items.length * rowHeight + 30;
  const min = 0.01;
  const max = 100;
  const x = (r) => left + (Math.log10(Math.min(max, Math.max(min, r))) - Math.log10(min)) / (Math.log10(max) - Math.log10(min)) * barArea;
  const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;");
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="22" font-size="15" font-weight="bold">ttlkv against each peer (same run; right of 1× = ttlkv better; log scale)</text>`,
    `<text x="10" y="40" fill="#555">${esc(meta.date.slice(0, 10))} · Node ${esc(meta.node)} · ${esc(meta.engines?.chromium ?? "")}${meta.smoke ? " · smoke sizes" : ""}</text>`,
  ];
  for (const t of [0.01, 0.1, 1, 10, 100]) {
    parts.push(`<line x1="${x(t)}" y1="55" x2="${x(t)}" y2="${height - 25}" stroke="${t === 1 ? "#000" : "#ddd"}"/>`);
    parts.push(`<text x="${x(t)}" y="${height - 10}" text-anchor="middle" fill="#555">${t}×</text>`);
  }
  items.forEach((c, i) => {
    const y = 60 + i * rowHeight;
    const x1 = x(1);
    const x2 = x(c.ratio);
    parts.push(`<text x="${left - 8}" y="${y + 14}" text-anchor="end">${esc(c.workload)} — ${esc(c.peer)}</text>`);
    parts.push(`<rect x="${Math.min(x1, x2)}" y="${y + 3}" width="${Math.max(1, Math.abs(x2 - x1))}" height="${rowHeight - 8}" fill="${c.ratio >= 1 ? "#2a9d8f" : "#e76f51"}"/>`);
    parts.push(`<text x="${Math.max(x1, x2) + 4}" y="${y + 14}" fill="#333">${c.ratio.toFixed(2)}×</text>`);
  });
  const churn = find(rows, "churn, stored bytes / live bytes", "ttlkv");
  if (churn?.samples?.length) parts.push(...churnChart(churn.samples, height, width, esc));
  parts.push(`</svg>`);
  const total = churn?.samples?.length ? height + CHURN_HEIGHT : height;
  parts[0] = parts[0].replace(`height="${height}"`, `height="${total}"`);
  return parts.join("\n") + "\n";
}

const CHURN_HEIGHT = 240;

/** The churn run over time: stored bytes (WAL + SSTs) and live bytes, below the ratio bars. */
function churnChart(samples, top, width, esc) {
  const left = 70;
  const plotW = width - left - 30;
  const plotTop = top + 40;
  const plotH = CHURN_HEIGHT - 80;
  const maxT = samples[samples.length - 1].atMs || 1;
  const maxB = Math.max(...samples.map((s) => s.storedBytes), 1);
  const x = (t) => left + (t / maxT) * plotW;
  const y = (b) => plotTop + plotH - (b / maxB) * plotH;
  const line = (pick, color) =>
    `<polyline fill="none" stroke="${color}" stroke-width="2" points="${samples.map((s) => `${x(s.atMs).toFixed(1)},${y(pick(s)).toFixed(1)}`).join(" ")}"/>`;
  return [
    `<rect y="${top}" width="100%" height="${CHURN_HEIGHT}" fill="white"/>`,
    `<text x="10" y="${top + 22}" font-size="15" font-weight="bold">${esc("Churn: bytes ttlkv stores vs live data over time (should plateau)")}</text>`,
    `<line x1="${left}" y1="${plotTop + plotH}" x2="${left + plotW}" y2="${plotTop + plotH}" stroke="#999"/>`,
    `<line x1="${left}" y1="${plotTop}" x2="${left}" y2="${plotTop + plotH}" stroke="#999"/>`,
    `<text x="${left - 6}" y="${plotTop + 4}" text-anchor="end" fill="#555">${(maxB / 1e6).toFixed(1)} MB</text>`,
    `<text x="${left - 6}" y="${plotTop + plotH}" text-anchor="end" fill="#555">0</text>`,
    `<text x="${left + plotW}" y="${plotTop + plotH + 16}" text-anchor="end" fill="#555">${(maxT / 1000).toFixed(0)} s</text>`,
    line((s) => s.storedBytes, "#e76f51"),
    line((s) => s.liveBytes, "#2a9d8f"),
    `<text x="${left + 10}" y="${top + CHURN_HEIGHT - 12}" fill="#e76f51">stored (WAL + SSTs)</text>`,
    `<text x="${left + 170}" y="${top + CHURN_HEIGHT - 12}" fill="#2a9d8f">live keys × (key + value)</text>`,
  ];
}
