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
    pool: "forks",
  },
});
