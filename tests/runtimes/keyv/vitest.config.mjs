// vitest for suite.vitest.mjs: Node, one file, no watching.
export default { test: { include: ["suite.vitest.mjs"], environment: "node", watch: false } };
