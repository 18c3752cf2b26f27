// The file page store the package ships (`ttlkv/node-fs`, bindings/js/adapters/node-fs.js), under
// the name the tests import it by: `fsAdapter(dir)` gives the adapter at once. Two kinds of test
// load this file: the package's Node tests (tests/js/) import it where it is, and the core's
// conformance suite in Node (adapter_conformance.rs) has wasm-bindgen copy it into a scratch
// directory and require() it there, where a relative import would find nothing and top-level
// await is not allowed. So the shipped module is required from the source tree: beside this file,
// or else from the Cargo package under test (bindings/web, whose directory cargo gives its tests).
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const shipped = "js/adapters/node-fs.js";
const beside = fileURLToPath(new URL(`../../../${shipped}`, import.meta.url));
const fromCargo = path.join(process.env.CARGO_MANIFEST_DIR ?? process.cwd(), "..", shipped);

export const { fileStorage: fsAdapter } = createRequire(import.meta.url)(existsSync(beside) ? beside : fromCargo);
