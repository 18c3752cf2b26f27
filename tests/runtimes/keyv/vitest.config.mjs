// vitest for suite.test.mjs: Node, one file, no watching.
export default { test: { include: ["suite.test.mjs"], environment: "node", watch: false } };
