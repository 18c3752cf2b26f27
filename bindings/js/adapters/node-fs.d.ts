// TypeScript declarations for `ttlkv/node-fs` (bindings/js/adapters/node-fs.js): a page store
// over files in one directory, for Node.
import type { PageStoreAdapter } from "ttlkv";

/** Options of {@link fileStorage}. An unknown option is an `INVALID_ARGUMENT` error. */
export interface FileStorageOptions {
  /**
   * How long a commit (or an open that finds a crashed commit to finish) waits for the
   * directory's lock while another live process holds it, in ms (a safe integer > 0; default
   * 30,000). Past it the call fails with `STORAGE`, naming the process. A lock left by a process
   * that died is taken over at once, without waiting.
   */
  lockTimeoutMs?: number | undefined;
}

/**
 * A page store over files in `dir` (created on first use if missing), for
 * `open(name, { storage: fileStorage(dir) })`. One directory holds one database.
 *
 * - **Durable**: a write that resolved is on disk. Each commit writes its new files under
 *   temporary names and fsyncs them, then fsyncs a journal and renames it into place (the commit
 *   point), then applies it; a crash at any moment leaves all of a commit or none of it, and the
 *   next open finishes or drops it.
 * - **Fenced across processes**: a second process that opens the same directory takes the writer
 *   role, and the first one's writes fail with `FENCED` from then on. Commits check the stored
 *   manifest version under the directory's lock file (`LOCK`), taken over from a dead holder by
 *   its pid; the processes sharing a directory must run on one host and see each other's pids.
 * - **Out of room** (ENOSPC, EDQUOT): the write fails with `QUOTA_EXCEEDED`, nothing of it was
 *   written, and reads still work.
 *
 * Every error the store gives keeps the file-system error as `cause`. Use a local file system.
 * To delete the database, close it and remove the directory.
 *
 * @param dir - the directory: a path, or a `file:` URL.
 * @throws an error with `code: "INVALID_ARGUMENT"`, synchronously, for an empty `dir` or bad options.
 */
export declare function fileStorage(dir: string | URL, options?: FileStorageOptions): PageStoreAdapter;
