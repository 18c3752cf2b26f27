// The guard on the public surface: every failure of a public function or method is a TtlKvError.
// `guarded` wraps one function (open, destroy, init), `guardMethods` every method of a class the
// app holds (Db, Snapshot).

import { TtlKvError } from "./errors.js";
import { asTtlKvError } from "./engine.js";

/**
 * Every failure of a public function or method is a TtlKvError. Engine errors already are (the
 * engine makes them with this class), and so are those of storage and of loading the engine.
 * A trap of the engine itself is a STORAGE failure, and stops it (engine.js). What else can
 * escape comes from inspecting the caller's arguments (a getter or proxy that throws, an object
 * whose prototype cannot be read), so it is an INVALID_ARGUMENT, with the original as cause
 * either way.
 */
function asInputError(e) {
  if (e instanceof TtlKvError) return e;
  if (e instanceof WebAssembly.RuntimeError) return asTtlKvError(e);
  return new TtlKvError("INVALID_ARGUMENT", `the arguments could not be read: ${describe(e)}`, { cause: e });
}

export function describe(e) {
  try {
    return e instanceof Error ? e.message : String(e);
  } catch {
    return "an unprintable error";
  }
}

export function guarded(f) {
  return function (...args) {
    let out;
    try {
      out = f.apply(this, args);
    } catch (e) {
      throw asInputError(e);
    }
    return out instanceof Promise ? guardedPromise(out) : out;
  };
}

/** A failure as a rejection with a TtlKvError (see `asInputError`). */
export const rejectAsInputError = (e) => Promise.reject(asInputError(e));

/** `promise`, its rejection turned into a TtlKvError. */
export const guardedPromise = (promise) => promise.catch(rejectAsInputError);

/**
 * Guard every method of `cls` (each is replaced on the prototype by its `guarded` wrapper), but
 * those named in `selfGuarded`: hot methods that turn every failure into a TtlKvError themselves
 * (with `guardedPromise` and `rejectAsInputError`), so that a call makes no second Promise.
 */
export function guardMethods(cls, selfGuarded = []) {
  for (const name of Object.getOwnPropertyNames(cls.prototype)) {
    const d = Object.getOwnPropertyDescriptor(cls.prototype, name);
    if (name !== "constructor" && typeof d.value === "function" && !selfGuarded.includes(name)) {
      Object.defineProperty(cls.prototype, name, { ...d, value: guarded(d.value) });
    }
  }
}
