// The demo page: a session/cache store in IndexedDB, used through the npm package as an app would
// (the browser entry, bindings/js/dist/index.js, built by scripts/build-package.sh).
// Traffic writes sessions with TTLs; the page shows keys counting down, the LSM tree with each
// SST's expiry percentiles, what the engine does (flushes, purges, compactions), and the expire
// events that automatic maintenance fires. Everything shown is read back from the store.
import { open, destroy } from "../bindings/js/dist/index.js";

const NAME = "ttlkv-demo";
const $ = (id) => document.getElementById(id);
let db;
let paused = false;
let nextUser = 0;
let events = 0;
const knownSsts = new Map();

async function start() {
  db = await open(NAME, { maintenance: "auto" });
  db.on("expire", ({ key, value, expireAt }) => {
    events++;
    const late = Math.max(0, Date.now() - expireAt);
    prepend($("events"), `${key} · ${JSON.stringify(value).slice(0, 28)} · due ${late} ms ago`, 60);
    $("event-count").textContent = `${events} so far`;
  });
}

function prepend(list, text, keep) {
  const li = document.createElement("li");
  li.textContent = `${new Date().toLocaleTimeString()}  ${text}`;
  list.prepend(li);
  while (list.children.length > keep) list.lastChild.remove();
}

/** Traffic: a login every 0.4 s with a 4–25 s TTL; now and then an active user slides. */
async function traffic() {
  if (paused || !db) return;
  const user = nextUser++;
  const ttlMs = 4_000 + Math.floor(Math.random() * 21_000);
  await db.put(`session:${String(user).padStart(5, "0")}`, { user: `user-${user}`, cart: [] }, { ttlMs });
  if (user % 3 === 0 && user > 3) {
    const active = `session:${String(user - 3).padStart(5, "0")}`;
    await db.getEx(active, { ttlMs: 15_000 }); // sliding session: absent if it already expired
  }
}

async function renderKeys() {
  if (!db) return;
  const now = Date.now();
  const rows = [];
  for await (const entry of db.scan({ prefix: "session:", reverse: true, limit: 28 })) rows.push(entry);
  $("keys").replaceChildren(
    ...rows.map(({ key, expireAt }) => {
      const left = expireAt === null ? Infinity : expireAt - now;
      const li = document.createElement("li");
      const name = document.createElement("span");
      name.textContent = key;
      const bar = document.createElement("div");
      bar.className = "bar";
      const fill = document.createElement("div");
      fill.style.width = `${Math.max(0, Math.min(100, (left / 25_000) * 100))}%`;
      if (left < 3_000) fill.className = "low";
      bar.append(fill);
      const secs = document.createElement("span");
      secs.textContent = left === Infinity ? "∞" : `${(left / 1000).toFixed(1)} s`;
      li.append(name, bar, secs);
      return li;
    }),
  );
  let live = 0;
  for await (const _ of db.scan({ prefix: "session:" })) live++;
  $("key-count").textContent = `${live} live`;
}

async function renderLsm() {
  if (!db) return;
  const stats = await db.stats();
  const now = Date.now();
  const horizon = 60_000;
  const seen = new Set();
  let ssts = 0;
  const levels = stats.levels.map(({ level, ssts: list }) => {
    const div = document.createElement("div");
    div.className = "level";
    const name = document.createElement("div");
    name.className = "level-name";
    const bytes = list.reduce((n, s) => n + s.bytes, 0);
    name.textContent = `L${level}: ${list.length} SST${list.length === 1 ? "" : "s"}, ${(bytes / 1024).toFixed(1)} KiB`;
    const row = document.createElement("div");
    row.className = "ssts";
    for (const sst of list) {
      ssts++;
      seen.add(sst.id);
      if (!knownSsts.has(sst.id)) {
        knownSsts.set(sst.id, level);
        prepend($("activity"), `SST ${sst.id} written to L${level} (${sst.rows} rows, ${(sst.bytes / 1024).toFixed(1)} KiB)`, 40);
      }
      const box = document.createElement("div");
      box.className = "sst";
      box.style.width = `${Math.max(30, Math.min(300, sst.bytes / 256))}px`;
      const label = document.createElement("span");
      label.className = "label";
      label.textContent = `#${sst.id} · ${sst.rows} rows`;
      box.append(label);
      const p = sst.expiryPercentiles;
      if (p) {
        const dueShare = p.filter((t) => t <= now).length / p.length;
        if (dueShare >= 0.6) box.classList.add("due");
        for (const t of p) {
          const tick = document.createElement("div");
          tick.className = "tick";
          tick.style.left = `${Math.max(0, Math.min(98, ((t - now) / horizon) * 100))}%`;
          box.append(tick);
        }
      }
      row.append(box);
    }
    div.append(name, row);
    return div;
  });
  for (const [id, level] of knownSsts) {
    if (!seen.has(id)) {
      knownSsts.delete(id);
      prepend($("activity"), `SST ${id} left L${level} (compacted, or dropped whole once its rows expired)`, 40);
    }
  }
  $("lsm").replaceChildren(...levels);
  $("lsm-summary").textContent = `memtable ${(stats.memtableBytes / 1024).toFixed(1)} KiB · WAL ${(stats.walBytes / 1024).toFixed(1)} KiB · ${ssts} SSTs`;
}

function button(id, fn) {
  $(id).addEventListener("click", async () => {
    try {
      await fn();
    } catch (e) {
      prepend($("activity"), `${e.code ?? "error"}: ${e.message}`, 40);
    }
  });
}

button("pause", () => {
  paused = !paused;
  $("pause").textContent = paused ? "Resume traffic" : "Pause traffic";
});
button("burst", async () => {
  const ops = [];
  for (let i = 0; i < 2_000; i++) ops.push({ type: "put", key: `cache:${Date.now()}:${i}`, value: { page: i, html: "x".repeat(200) }, ttlMs: 5_000 + Math.floor(Math.random() * 35_000) });
  await db.batch(ops);
  prepend($("activity"), "2,000 cache keys written in one atomic batch", 40);
});
button("flush", async () => {
  await db.flush();
  prepend($("activity"), "flush: memtable written to an L0 SST", 40);
});
button("compact", async () => {
  await db.compact();
  prepend($("activity"), "compaction: expired rows and overwritten versions dropped", 40);
});
button("purge", async () => {
  const n = await db.purgeExpired();
  prepend($("activity"), `purge: ${n} due keys removed through the expiry index`, 40);
});
button("reset", async () => {
  await db.close();
  db = undefined;
  await destroy(NAME);
  knownSsts.clear();
  events = 0;
  for (const id of ["keys", "events", "activity", "lsm"]) $(id).replaceChildren();
  await start();
});

await start();
setInterval(() => traffic().catch(() => {}), 400);
setInterval(() => renderKeys().catch(() => {}), 250);
setInterval(() => renderLsm().catch(() => {}), 500);
window.demoReady = true;
