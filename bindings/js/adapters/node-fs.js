// `ttlkv/node-fs`: a page store over files in one directory, for Node apps that want their data
// to outlive the process: `open("sessions", { storage: fileStorage("./data/sessions") })`.
// Size: over 450 lines because it is one class, FileStorage, whose lock, journal and fsync steps
// are private methods over one directory's state (its path, lock token, call queue, and what is
// left to finish or tidy): a cut between them would have to expose that state across files.
//
// Layout of the directory:
//   w_<16 hex>, m_<16 hex>, d_<16 hex>_<8 hex>   one file per page (its key with "/" as "_")
//   MANIFEST      "ttlkv-manifest <version>\n" followed by the manifest's bytes
//   JOURNAL       while a commit is being applied: { renames: [[tmp, file]…], deletes: [file…] }
//   *.tmp         a commit's new files before its commit point
//   LOCK, LOCK.*  the lock that makes a commit atomic against other processes (below)
//
// A commit, atomic across a crash: its new pages and manifest are written to temporary files and
// fsynced, then the journal naming every step is written and fsynced as JOURNAL.tmp, the directory
// is fsynced (the temporary names are durable), and JOURNAL.tmp is renamed to JOURNAL: that rename
// is the commit point. After it the directory is fsynced again, the steps run (deletes, then the
// renames into place, the manifest last), the directory is fsynced, and the journal is removed.
// Whoever finds a JOURNAL later finishes it (the steps can run twice: a page a commit both deletes
// and puts is only renamed over); temporary files without one are removed by the next holder of
// the lock (below). So a crash leaves all of a commit or none of it. Out of room (ENOSPC, EDQUOT) before the commit
// point, the temporary files go again and the commit fails with code QUOTA_EXCEEDED: nothing of
// it was written.
//
// Fencing across processes. The engine fences an earlier writer by the manifest version: a commit
// states the version it expects, and must fail with FENCED if the stored one differs. Reading the
// version and reaching the commit point must be one atomic step, also against another process
// using the same directory, so both happen while this adapter holds the directory's lock (and,
// within the process, while no other call of this adapter does: its calls queue). The lock is
// the file LOCK, created whole or not at all: a record { pid, start, host, token } is written to
// a private file and hard-linked to LOCK, which fails if LOCK exists. The holder removes LOCK when
// the commit is done.
//
// A holder that died (killed, crashed) leaves LOCK behind. Its process is dead when `kill(pid, 0)`
// finds no such process, or, where there is a /proc, when the process with that pid started at
// another time (the pid was reused) or is a zombie. A process that finds the holder dead may not
// simply remove LOCK: two of them could both see the dead holder, and the second would remove
// the lock the first has just taken. So removing a dead holder's LOCK takes a marker named after
// that holder's token, `LOCK.<token>.break.<n>`, created whole or not at all like LOCK: its
// creator reads LOCK again and removes it only if it still names the dead token (tokens are never
// reused, and nobody else can remove that LOCK while the marker is held), then removes the marker.
// A marker whose creator died in between is passed over for the next number. Markers, records and
// temporary files of dead processes are tidied by the next holder of the lock.
//
// Limits: the processes sharing a directory must run on one host and see each other's pids
// (same PID namespace): a lock held by a process of another host (by the record's `host`) is
// never taken as dead, and waiting for it ends with an error after `lockTimeoutMs`. Use a local
// file system: network file systems do not all make link and rename atomic.
import { Buffer } from "node:buffer";
import { link, mkdir, open, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { badArgument, factoryOptions } from "./common/arguments.js";

const MANIFEST = "MANIFEST";
const JOURNAL = "JOURNAL";
const LOCK = "LOCK";
const TMP = ".tmp";
const MANIFEST_HEADER = "ttlkv-manifest ";
/** The page files, exactly: anything else in the directory is never listed or touched as a page. */
const PAGE_FILE = /^(?:[wm]_[0-9a-f]{16}|d_[0-9a-f]{16}_[0-9a-f]{8})$/;
/** How many files a commit writes (and fsyncs) at once. */
const PARALLEL = 16;
const DEFAULT_LOCK_TIMEOUT_MS = 30_000;
/** Waits between two looks at a lock held by a live process: from 1 ms, doubling up to this. */
const MAX_LOCK_POLL_MS = 50;
/** What `readRecord` gives for a file that is not there. */
const MISSING = Symbol("missing");

/**
 * A page store over files in `dir` (created on first use), for `open(name, { storage })`.
 * One directory holds one database; see the top of this file for the layout, the commit
 * protocol and the lock that fences other processes.
 *
 * @param {string | URL} dir
 * @param {{ lockTimeoutMs?: number }} [options]
 */
export function fileStorage(dir, options) {
  return new FileStorage(dir, options);
}

/** An error with a code the engine understands (FENCED, QUOTA_EXCEEDED, CORRUPTION, …) and its cause. */
function failure(code, message, cause) {
  const error = new Error(message, cause === undefined ? undefined : { cause });
  error.code = code;
  return error;
}

const outOfRoom = (e) => e?.code === "ENOSPC" || e?.code === "EDQUOT";
const describe = (e) => (e instanceof Error ? e.message : String(e));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A file a commit installs or deletes: a page's file or the manifest. */
const isStoreFile = (name) => typeof name === "string" && (PAGE_FILE.test(name) || name === MANIFEST);

/**
 * Throw unless `journal` is what a commit writes: `renames` of `[<file>.tmp, <file>]` and
 * `deletes` of files, each a page's file or the manifest. Any other name (`../x`, a path) would
 * make running it rename or delete outside the store's directory, or fail at every access.
 */
function checkJournal(journal) {
  const rename = (step) => Array.isArray(step) && step.length === 2 && isStoreFile(step[1]) && step[0] === step[1] + TMP;
  if (!Array.isArray(journal?.renames) || !journal.renames.every(rename)) throw new Error("its renames are not [<file>.tmp, <file>] pairs of the store's files");
  if (!Array.isArray(journal.deletes) || !journal.deletes.every(isStoreFile)) throw new Error("its deletes are not the store's files");
}

/** The file of page `key`, refusing anything that is not a page key. */
function fileOf(key) {
  const file = typeof key === "string" ? key.replaceAll("/", "_") : "";
  if (!PAGE_FILE.test(file)) throw failure("INVALID_ARGUMENT", `not a page key: ${String(key)}`);
  return file;
}

const keyOf = (file) => file.replaceAll("_", "/");

/**
 * Run `fn` on every item, at most `limit` at a time. After a failure no item is started, and the
 * ones running are waited for (a write still running could outlive the cleanup after it); then
 * it rejects with the first failure.
 */
async function eachLimit(items, limit, fn) {
  let next = 0;
  let failed;
  const worker = async () => {
    while (failed === undefined && next < items.length) {
      try {
        await fn(items[next++]);
      } catch (e) {
        failed ??= { e };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed !== undefined) throw failed.e;
}

/** `pid`'s state letter and start time from /proc, or null where there is none (or no such process). */
async function procStat(pid) {
  try {
    const text = await readFile(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count fields after its ")".
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0], start: fields[19] };
  } catch {
    return null;
  }
}

/** Whether the process of a lock record may still be running (when in doubt: yes). */
async function alive(record) {
  if (record.host !== hostname() || !Number.isSafeInteger(record.pid)) return true;
  try {
    process.kill(record.pid, 0);
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    if (e.code === "ESRCH") return false;
  }
  if (record.start === null || record.start === undefined) return true;
  // No /proc entry for a pid that kill() found: hidden from this user (hidepid), or it has just
  // exited. Either way the next look settles it.
  const stat = await procStat(record.pid);
  return stat === null || (stat.start === record.start && stat.state !== "Z");
}

class FileStorage {
  #dir;
  #lockTimeoutMs;
  #token;
  #me;
  /** The calls that hold the lock, one after the other. */
  #queue = Promise.resolve();
  #created;
  /** The first directory `mkdir` created whose parents are not synced yet (see `#create`). */
  #unsynced;
  /** Whether a journal left behind may still need finishing before a read. */
  #unsettled = true;
  /** Whether leftovers of dead processes (temporary files, lock records) may need tidying. */
  #untidy = true;

  constructor(dir, options) {
    if (dir instanceof URL) dir = fileURLToPath(dir);
    if (typeof dir !== "string" || dir.length === 0) {
      throw badArgument("fileStorage takes a directory: a non-empty string or a file: URL");
    }
    const { lockTimeoutMs = DEFAULT_LOCK_TIMEOUT_MS } = factoryOptions(options, ["lockTimeoutMs"], "fileStorage");
    if (!Number.isSafeInteger(lockTimeoutMs) || lockTimeoutMs <= 0) {
      const message = "fileStorage: lockTimeoutMs must be an integer greater than 0";
      throw badArgument(message, typeof lockTimeoutMs === "number" ? RangeError : TypeError);
    }
    this.#dir = path.resolve(dir);
    this.#lockTimeoutMs = lockTimeoutMs;
    this.#token = `${process.pid}-${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
  }

  async readManifest() {
    // Looked at every time: the engine reads the manifest to take the writer role, and another
    // process may have committed (and died before finishing) since this adapter last looked.
    await this.#settle(true);
    const bytes = await this.#readOrNull(MANIFEST);
    return bytes === null ? null : this.#decodeManifest(bytes);
  }

  async getPage(key) {
    const file = fileOf(key);
    await this.#settle();
    const bytes = await this.#readOrNull(file);
    return bytes === null ? null : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
  }

  async listPages(prefix) {
    const start = prefix.replaceAll("/", "_");
    await this.#settle();
    return (await this.#names()).filter((name) => name.startsWith(start) && PAGE_FILE.test(name)).map(keyOf).sort();
  }

  async commit({ expectedVersion, manifest, puts, deletes }) {
    // Of several puts of one page the last wins; a page both deleted and put is only renamed over,
    // so that running the journal twice (a crash while it runs) cannot delete the new page.
    const pages = new Map();
    for (const [key, bytes] of puts) pages.set(fileOf(key), bytes);
    const gone = [...new Set(deletes.map(fileOf))].filter((file) => !pages.has(file));
    return this.#locked(async () => {
      const stored = await this.#storedVersion();
      if (stored !== expectedVersion) {
        throw failure("FENCED", `the stored manifest is version ${stored}, not ${expectedVersion}: another writer took over ${this.#dir}`);
      }
      if (pages.size === 0 && gone.length === 0 && !manifest) return;
      const renames = [...pages.keys()].map((file) => [file + TMP, file]);
      if (manifest) renames.push([MANIFEST + TMP, MANIFEST]);
      const journal = { renames, deletes: gone };
      await this.#stage(pages, manifest, journal);
      await this.#apply(journal);
    });
  }

  /** Write every new file of a commit and its journal under temporary names, durably, then commit. */
  async #stage(pages, manifest, journal) {
    const written = [];
    const durably = async (name, bytes) => {
      written.push(name);
      await this.#writeDurably(name, bytes);
    };
    try {
      await eachLimit([...pages], PARALLEL, ([file, bytes]) => durably(file + TMP, bytes));
      if (manifest) await durably(MANIFEST + TMP, this.#encodeManifest(manifest));
      await durably(JOURNAL + TMP, JSON.stringify(journal));
      await this.#syncDir();
      await rename(this.#at(JOURNAL + TMP), this.#at(JOURNAL)); // the commit point
    } catch (e) {
      // Before the commit point nothing of the commit counts: remove what it wrote.
      this.#untidy = true;
      await Promise.all(written.map((name) => rm(this.#at(name), { force: true }))).catch(() => {});
      if (outOfRoom(e)) throw failure("QUOTA_EXCEEDED", `${this.#dir} is out of room (${describe(e)}); nothing of the commit was written`, e);
      throw failure("STORAGE", `writing a commit to ${this.#dir} failed (${describe(e)}); nothing of it was written`, e);
    }
  }

  /** Run the steps of a journal that has reached its commit point, then remove it. */
  async #apply(journal) {
    try {
      await this.#syncDir();
      const targets = new Set(journal.renames.map(([, to]) => to));
      const deletes = journal.deletes.filter((name) => !targets.has(name));
      await eachLimit(deletes, PARALLEL, (name) => rm(this.#at(name), { force: true }));
      const renames = journal.renames.filter(([, to]) => to !== MANIFEST);
      await eachLimit(renames, PARALLEL, ([from, to]) => this.#renameIfThere(from, to));
      // The manifest last: it never names a page that is not in place yet.
      for (const [from, to] of journal.renames) if (to === MANIFEST) await this.#renameIfThere(from, to);
      await this.#syncDir();
      await rm(this.#at(JOURNAL));
      // The journal's removal durable before the next commit stages files under the same
      // temporary names: a stale journal replayed after a power loss could install them.
      await this.#syncDir();
    } catch (e) {
      // The commit stands (JOURNAL is durable); the next call that reads or commits finishes it.
      this.#unsettled = true;
      throw failure("STORAGE", `a commit to ${this.#dir} is durable but applying it failed (${describe(e)}); the next access finishes it`, e);
    }
  }

  async #renameIfThere(from, to) {
    try {
      await rename(this.#at(from), this.#at(to));
    } catch (e) {
      // Renamed already, by a run of this journal that a crash interrupted.
      if (e.code !== "ENOENT") throw e;
    }
  }

  /**
   * Finish a journal a crash left behind: before the first read (or the first after a failed
   * apply), or `always`. Without a JOURNAL every file is whole (each change lands by a rename),
   * so reads need no lock, and a full disk (no room for a lock record) does not stop them.
   */
  async #settle(always = false) {
    if (!this.#unsettled && !always) return;
    await this.#create();
    if (await this.#exists(JOURNAL)) await this.#locked(async () => {});
    else this.#unsettled = false;
  }

  /** Run `fn` holding the directory's lock, after finishing what a dead holder left behind. */
  #locked(fn) {
    const run = this.#queue.then(async () => {
      await this.#create();
      await this.#lock();
      try {
        await this.#recover();
        return await fn();
      } finally {
        await this.#unlock();
      }
    });
    this.#queue = run.catch(() => {});
    return run;
  }

  async #recover() {
    const text = await this.#readOrNull(JOURNAL);
    if (text !== null) {
      let journal;
      try {
        journal = JSON.parse(text.toString("utf8"));
        checkJournal(journal);
      } catch (e) {
        throw failure("CORRUPTION", `${this.#at(JOURNAL)} cannot be read (${describe(e)})`, e);
      }
      await this.#apply(journal);
      this.#untidy = true;
    }
    this.#unsettled = false;
    if (this.#untidy) await this.#tidy();
  }

  /** Remove temporary files of commits that never reached their commit point, and dead processes' lock files. */
  async #tidy() {
    for (const name of await this.#names()) {
      const leftover = name.endsWith(TMP) || (name.startsWith(`${LOCK}.`) && (await this.#leftBehind(name)));
      if (leftover) await rm(this.#at(name), { force: true });
    }
    this.#untidy = false;
  }

  /** Whether lock file `name` (a record or a marker) belongs to a process that is gone. */
  async #leftBehind(name) {
    const record = await this.#readRecord(name);
    if (record === MISSING) return false;
    if (record !== null) return !(await alive(record));
    // A record its process did not finish writing (LOCK.<pid>-….new): its pid is in its name.
    const pid = Number(name.slice(LOCK.length + 1).split("-")[0]);
    return name.endsWith(".new") && !(await alive({ pid, host: hostname() }));
  }

  async #lock() {
    const deadline = Date.now() + this.#lockTimeoutMs;
    for (let wait = 1; ; wait = Math.min(wait * 2, MAX_LOCK_POLL_MS)) {
      if (await this.#place(LOCK)) return;
      const holder = await this.#readRecord(LOCK);
      if (holder === MISSING) continue; // released just now
      // Ours from a release that failed to remove it (see #unlock).
      if (holder?.token === this.#token) return;
      if (holder !== null && !(await alive(holder))) {
        // Another process may be breaking it already: then wait below, as for a live holder.
        if (await this.#breakLock(holder)) {
          this.#untidy = true;
          continue;
        }
      }
      if (Date.now() >= deadline) {
        const who = holder === null ? "an unreadable lock file (remove it if no process uses the directory)" : `process ${holder.pid} on ${holder.host}`;
        throw failure("STORAGE", `${this.#at(LOCK)} is still held after ${this.#lockTimeoutMs} ms by ${who}`);
      }
      await sleep(wait * (0.5 + Math.random()));
    }
  }

  async #unlock() {
    // A LOCK left behind by a failed removal still names this adapter: its next #lock takes it
    // back, and other processes see a live holder until then. The commit itself succeeded.
    await rm(this.#at(LOCK)).catch(() => {});
  }

  /**
   * Remove the LOCK of `dead`: `true` once it is gone, `false` if another process is breaking it
   * (a live breaker, or a marker that cannot be read): the caller then waits, within its timeout.
   */
  async #breakLock(dead) {
    for (let n = 0; ; n++) {
      const marker = `${LOCK}.${dead.token}.break.${n}`;
      if (await this.#place(marker)) {
        try {
          const holder = await this.#readRecord(LOCK);
          if (holder !== MISSING && holder?.token === dead.token) await rm(this.#at(LOCK), { force: true });
        } finally {
          await rm(this.#at(marker), { force: true });
        }
        return true;
      }
      const breaker = await this.#readRecord(marker);
      if (breaker === MISSING) n--; // its process is done with it: try that marker again
      else if (breaker === null || (await alive(breaker))) return false;
    }
  }

  /** Create file `name` holding this adapter's lock record, whole, unless it exists: whether it did. */
  async #place(name) {
    const record = { pid: process.pid, start: await this.#start(), host: hostname(), token: this.#token };
    const own = `${LOCK}.${this.#token}.new`;
    try {
      // Synced before it is linked: a power loss must not leave an empty LOCK that names no one.
      await this.#writeDurably(own, JSON.stringify(record));
      await link(this.#at(own), this.#at(name));
      return true;
    } catch (e) {
      if (e.code === "EEXIST") return false;
      if (outOfRoom(e)) throw failure("QUOTA_EXCEEDED", `${this.#dir} is out of room (${describe(e)}): the lock cannot be taken; nothing was written`, e);
      throw failure("STORAGE", `taking the lock of ${this.#dir} failed (${describe(e)})`, e);
    } finally {
      await rm(this.#at(own), { force: true }).catch(() => {});
    }
  }

  /** This process's start time from /proc (null where there is none), looked up once. */
  async #start() {
    this.#me ??= procStat(process.pid).then((stat) => stat?.start ?? null);
    return this.#me;
  }

  /** The lock record in file `name`: MISSING if there is no such file, null if it is no record. */
  async #readRecord(name) {
    const bytes = await this.#readOrNull(name);
    if (bytes === null) return MISSING;
    try {
      const record = JSON.parse(bytes.toString("utf8"));
      return record !== null && typeof record === "object" && typeof record.token === "string" ? record : null;
    } catch {
      return null;
    }
  }

  async #storedVersion() {
    const handle = await this.#openOrNull(MANIFEST);
    if (handle === null) return 0;
    try {
      const head = Buffer.alloc(64);
      const { bytesRead } = await handle.read(head, 0, head.length, 0);
      return this.#parseHeader(head.subarray(0, bytesRead)).version;
    } finally {
      await handle.close();
    }
  }

  #encodeManifest({ version, bytes }) {
    return Buffer.concat([Buffer.from(`${MANIFEST_HEADER}${version}\n`), bytes]);
  }

  #decodeManifest(file) {
    const { version, length } = this.#parseHeader(file);
    return { version, bytes: new Uint8Array(file.buffer, file.byteOffset + length, file.length - length) };
  }

  #parseHeader(bytes) {
    const end = bytes.indexOf(0x0a);
    const header = end < 0 ? "" : bytes.subarray(0, end).toString("latin1");
    const digits = header.startsWith(MANIFEST_HEADER) ? header.slice(MANIFEST_HEADER.length) : "";
    const version = /^\d{1,16}$/.test(digits) ? Number(digits) : NaN;
    if (!Number.isSafeInteger(version)) {
      throw failure("CORRUPTION", `${this.#at(MANIFEST)} does not start with a manifest header`);
    }
    return { version, length: end + 1 };
  }

  async #writeDurably(name, bytes) {
    const handle = await open(this.#at(name), "w");
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  /** Make the directory's entries durable: renames and new files (`syncDirectory`). */
  #syncDir() {
    return syncDirectory(this.#dir);
  }

  async #readOrNull(name) {
    try {
      return await readFile(this.#at(name));
    } catch (e) {
      if (e.code === "ENOENT") return null;
      throw failure("STORAGE", `reading ${this.#at(name)} failed (${describe(e)})`, e);
    }
  }

  async #exists(name) {
    try {
      await stat(this.#at(name));
      return true;
    } catch (e) {
      if (e.code === "ENOENT") return false;
      throw failure("STORAGE", `looking for ${this.#at(name)} failed (${describe(e)})`, e);
    }
  }

  async #openOrNull(name) {
    try {
      return await open(this.#at(name), "r");
    } catch (e) {
      if (e.code === "ENOENT") return null;
      throw failure("STORAGE", `reading ${this.#at(name)} failed (${describe(e)})`, e);
    }
  }

  async #names() {
    try {
      return await readdir(this.#dir);
    } catch (e) {
      throw failure("STORAGE", `listing ${this.#dir} failed (${describe(e)})`, e);
    }
  }

  /**
   * Create the directory and the parents it lacks, and make each new one's entry in its parent
   * durable (the directory's own entries are synced by each commit): else a power loss could take
   * the directory, with every commit in it, away.
   */
  #create() {
    this.#created ??= mkdir(this.#dir, { recursive: true })
      .then(async (first) => {
        // Kept until the syncs succeed: a retry after one failed finds the directories made, and
        // mkdir says nothing of them then.
        this.#unsynced ??= first;
        if (this.#unsynced === undefined) return;
        // From the store's directory up to the first one mkdir created: each one's parent.
        for (let dir = this.#dir; ; dir = path.dirname(dir)) {
          await syncDirectory(path.dirname(dir));
          if (dir === path.resolve(this.#unsynced) || path.dirname(dir) === dir) break;
        }
        this.#unsynced = undefined;
      })
      .catch((e) => {
        this.#created = undefined;
        throw failure(outOfRoom(e) ? "QUOTA_EXCEEDED" : "STORAGE", `creating ${this.#dir} failed (${describe(e)})`, e);
      });
    return this.#created;
  }

  #at(name) {
    return path.join(this.#dir, name);
  }
}

/**
 * Make directory `dir`'s entries durable: renames and new files or directories. Windows cannot
 * open a directory, and a file system that cannot sync one (EINVAL, ENOTSUP: some FUSE and network
 * ones) has no more to give: a commit still lands whole by its renames.
 */
async function syncDirectory(dir) {
  if (process.platform === "win32") return;
  let handle;
  try {
    handle = await open(dir, "r");
  } catch (e) {
    // A parent this process may write into but not read (mode 0333, say) cannot be opened to be
    // synced: it has no more to give, as above.
    if (e.code === "EACCES" || e.code === "EPERM") return;
    throw e;
  }
  try {
    await handle.sync();
  } catch (e) {
    if (!["EINVAL", "ENOTSUP", "EOPNOTSUPP"].includes(e.code)) throw e;
  } finally {
    await handle.close();
  }
}
