/** @type {import('next').NextConfig} */
const nextConfig = {
  // Native module: load it with Node's require instead of bundling it.
  serverExternalPackages: ["better-sqlite3"],
  poweredByHeader: false,
  // Served to a browser on the same machine: gzip would only cost CPU.
  compress: false,
  reactStrictMode: true,
  // Types are checked once, over the whole project, by `npm run typecheck` (the first step of npm test):
  // Next's own check repeated it in every build, a minute of the first `npm install` on a busy machine.
  typescript: { ignoreBuildErrors: true },
  // The package's prebuilt dashboard is made from the standalone output (scripts/package-dashboard.mjs).
  output: "standalone",
  outputFileTracingRoot: import.meta.dirname,
  // preloadEntriesOnStart: false is set by the dashboard server (server/main.ts), not here.
  // The security headers and the Host check are the dashboard server's, on every response (lib/dashboard/dashboardListener.ts).
};

export default nextConfig;
