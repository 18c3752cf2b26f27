// How the storage adapters' factories refuse their arguments, one definition for the three
// (`fileStorage`, `denoKvStorage`, `durableObjectStorage`): an error with the code
// INVALID_ARGUMENT, of the class the kind of argument calls for. An adapter module does not load
// the package's core, so it makes no TtlKvError.

/** A refused argument: a `Type` (TypeError by default, RangeError) with code INVALID_ARGUMENT. */
export const badArgument = (message, Type = TypeError) => Object.assign(new Type(message), { code: "INVALID_ARGUMENT" });

/**
 * A factory's options (`what` names it): `{}` for none (undefined or null), else a plain object
 * with no field but those in `known`.
 */
export function factoryOptions(options, known, what) {
  if (options === undefined || options === null) return {};
  if (typeof options !== "object" || Array.isArray(options)) throw badArgument(`${what}: options must be an object`);
  const unknown = Object.keys(options).find((k) => !known.includes(k));
  if (unknown !== undefined) throw badArgument(`${what}: unknown option "${unknown}"`);
  return options;
}
