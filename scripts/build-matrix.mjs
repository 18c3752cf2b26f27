// The npm package's build matrix (build.toml), read with a real TOML parser and printed for
// scripts/build-package.sh as shell-safe lines:
//   crate <path>
//   target <wasm-bindgen target> <out_dir> <cargo profile> <features, comma-separated, or ->
//          <the target's wasm-opt flags after the common ones, comma-separated, or ->
//                                                                 (one per [[target]])
//   wasm_opt <enabled: true|false> <tool>
//   wasm_opt_flag <flag>                                          (one per flag)
// A missing or mistyped field is an error that names it, not a silently empty build.
import { readFileSync } from "node:fs";
import { parse } from "smol-toml";

const file = new URL("../build.toml", import.meta.url);
const matrix = parse(readFileSync(file, "utf8"));

function field(table, key, type, where) {
  const value = table?.[key];
  if (typeof value !== type) throw new Error(`build.toml: ${where}.${key} must be a ${type}`);
  if (type === "string" && !/^[\w./@-]+$/.test(value)) throw new Error(`build.toml: ${where}.${key} has characters a path or name never needs: ${value}`);
  return value;
}

const lines = [`crate ${field(matrix.crate, "path", "string", "crate")}`];
const isFlags = (flags) => Array.isArray(flags) && flags.every((f) => typeof f === "string" && /^--?[\w=.-]+$/.test(f));
const targets = matrix.target;
if (!Array.isArray(targets) || targets.length === 0) throw new Error("build.toml: at least one [[target]]");
targets.forEach((t, i) => {
  const where = `target[${i}]`;
  const profile = t.profile === undefined ? "release" : field(t, "profile", "string", where);
  const features = t.features ?? [];
  if (!Array.isArray(features) || !features.every((f) => typeof f === "string" && /^[\w-]+$/.test(f))) {
    throw new Error(`build.toml: ${where}.features must be a list of cargo feature names`);
  }
  const extra = t.wasm_opt_flags ?? [];
  if (!isFlags(extra)) throw new Error(`build.toml: ${where}.wasm_opt_flags must be a list of command-line flags`);
  lines.push(`target ${field(t, "name", "string", where)} ${field(t, "out_dir", "string", where)} ${profile} ${features.join(",") || "-"} ${extra.join(",") || "-"}`);
});
const opt = matrix.wasm_opt;
lines.push(`wasm_opt ${field(opt, "enabled", "boolean", "wasm_opt")} ${field(opt, "tool", "string", "wasm_opt")}`);
const flags = opt.flags;
if (!isFlags(flags)) {
  throw new Error("build.toml: wasm_opt.flags must be a list of command-line flags");
}
for (const flag of flags) lines.push(`wasm_opt_flag ${flag}`);
console.log(lines.join("\n"));
