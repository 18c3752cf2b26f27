// What a commit writes, laid out before anything is written: its pages and manifest placed as
// blobs in chunks of at most CHUNK_BYTES (`layoutOf`, `placeBlob`), the head it sets
// (`nextHead`), and the encoding of its journal (`encodeJournal`, `decodeJournal`).

import { corruption } from "./errors.js";

export const CHUNK_BYTES = 65_536;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Blob refs for a commit's pages and manifest: { steps: [pageKey, ref or null][], manifest, blobs }. */
export function layoutOf(plan, id) {
  const layout = { id, blobs: [], steps: [], manifest: null };
  layout.steps = plan.steps.map(([page, bytes]) => [page, bytes && placeBlob(layout, bytes)]);
  if (plan.manifest) layout.manifest = placeBlob(layout, plan.manifest.bytes);
  return layout;
}

export function placeBlob(layout, bytes) {
  const ref = { commit: layout.id, blob: layout.blobs.length, chunks: Math.ceil(bytes.length / CHUNK_BYTES), length: bytes.length };
  layout.blobs.push({ ref, bytes });
  return ref;
}

/** The new head: the commit's manifest if it has one, else the current one. */
export function nextHead(head, plan, manifestRef, pending, id) {
  const current = head.value;
  return {
    version: plan.manifest ? plan.manifest.version : versionOf(head),
    manifest: manifestRef ?? current?.manifest ?? null,
    pending,
    commit: id,
  };
}

/** The manifest version `head` holds (0 with no head yet); a damaged head is CORRUPTION, never a version that fences. */
export function versionOf(head) {
  if (head.value === null || head.value === undefined) return 0;
  const { version } = head.value;
  if (!Number.isSafeInteger(version) || version < 0) throw corruption("the stored head holds no manifest version");
  return version;
}

// A journal is JSON: one [pageKey] per delete, [pageKey, blob, chunks, length] per put (the
// blobs being the commit's own).
export function encodeJournal(steps) {
  return encoder.encode(JSON.stringify(steps.map(([page, ref]) => (ref ? [page, ref.blob, ref.chunks, ref.length] : [page]))));
}

export function decodeJournal(bytes, commit) {
  let rows;
  try {
    rows = JSON.parse(decoder.decode(bytes));
  } catch (e) {
    throw corruption(`the journal of commit ${commit} does not decode`, e);
  }
  return rows.map(([page, blob, chunks, length]) => [page, blob === undefined ? null : { commit, blob, chunks, length }]);
}
