import { defineConfig } from "vitest/config";

export default defineConfig({
  // The browser's modules (components/data) import lib/ as "@/lib/...", as Next resolves it.
  resolve: { tsconfigPaths: true },
  test: {
    include: ["tests/unit/**/*.test.ts", "tests/integration/**/*.test.ts"],
    // The child processes of the integration tests run the bundled library (dist/); build it first.
    globalSetup: ["tests/helpers/buildLib.ts"],
    setupFiles: ["tests/helpers/cacheDir.ts"],
    testTimeout: 30_000,
    // A hook that removes or makes a folder of files waits on the disk: on a busy machine that is
    // not 10 s, and a hook that times out fails its tests for the machine's speed alone.
    hookTimeout: 60_000,
    pool: "forks",
    // Four files at a time whatever the cores (vitest's default is one fewer than the cores: one, on
    // two): the integration tests spend their time waiting on the processes, clients and servers they start.
    maxWorkers: 4,
  },
});
