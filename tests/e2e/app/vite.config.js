// Built by the end-to-end test with this project's Vite, in a scratch project where "ttlkv" is
// the packed package installed from its tarball.
export default {
  base: "./",
  build: { outDir: "dist", emptyOutDir: true, target: "es2022" },
  worker: { format: "es" },
  logLevel: "warn",
};
