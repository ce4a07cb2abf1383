/** @type {import('next').NextConfig} */
const nextConfig = {
  // Native module: load it with Node's require instead of bundling it.
  serverExternalPackages: ["better-sqlite3"],
  poweredByHeader: false,
  // Served to a browser on the same machine: gzip would only cost CPU.
  compress: false,
  reactStrictMode: true,
  // The package's prebuilt dashboard is made from the standalone output (scripts/package-dashboard.mjs).
  output: "standalone",
  outputFileTracingRoot: import.meta.dirname,
  // preloadEntriesOnStart: false is set by the dashboard server (server/main.ts), not here.
  // The security headers and the Host check are the dashboard server's, on every response (lib/dashboard/dashboardListener.ts).
};

export default nextConfig;
