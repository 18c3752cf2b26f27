// The byte length of the engine's WebAssembly memory, for the memory workloads. Import this
// module before the package: the package keeps its WebAssembly instance to itself (the glue's
// `wasm.memory` is not exported from the bundle), so the instance is caught as the package's own
// load makes it: on its way out of WebAssembly.instantiate, or out of the WebAssembly.Instance
// constructor (the Node entry instantiates synchronously). The package is loaded as it ships and
// nothing else changes.
const instances = [];
const instantiate = WebAssembly.instantiate;
WebAssembly.instantiate = async function (...args) {
  const result = await instantiate.apply(this, args);
  instances.push(result instanceof WebAssembly.Instance ? result : result.instance);
  return result;
};
WebAssembly.Instance = new Proxy(WebAssembly.Instance, {
  construct(target, args, newTarget) {
    const instance = Reflect.construct(target, args, newTarget);
    instances.push(instance);
    return instance;
  },
});

/** The byte length of ttlkv's linear memory (its one instance's exported `memory`). */
export function engineMemoryBytes() {
  const memories = instances.map((i) => i.exports.memory).filter((m) => m instanceof WebAssembly.Memory);
  if (memories.length !== 1) throw new Error(`expected the engine's one WebAssembly memory, found ${memories.length}`);
  return memories[0].buffer.byteLength;
}
