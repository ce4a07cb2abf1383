import { defineConfig, globalIgnores } from "eslint/config";
import nextVitals from "eslint-config-next/core-web-vitals";
import nextTs from "eslint-config-next/typescript";

export default defineConfig([
  ...nextVitals,
  ...nextTs,
  globalIgnores([".next/**", "dist/**", "node_modules/**", ".toolchain/**", "test-results/**", "playwright-report/**", "next-env.d.ts"]),
  {
    // lib/ runs under plain Node (the CLI, the tests): it must not depend on Next or the UI.
    files: ["lib/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["next", "next/*", "server-only", "react", "@/app/*", "@/components/*", "../app/*", "../components/*"],
              message: "lib/ must run without Next.js.",
            },
          ],
        },
      ],
    },
  },
  {
    // Playwright fixtures call their callback `use`, which is not React's hook.
    files: ["tests/e2e/**/*.ts"],
    rules: { "react-hooks/rules-of-hooks": "off" },
  },
  {
    // CommonJS on purpose: the bin shim loads the bundled CLI with no loader in between, and the
    // test workers load the bundled library as a user would.
    files: ["bin/**/*.js", "**/*.cjs"],
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
]);
