/** @type {import('next').NextConfig} */
const nextConfig = {
  // Native module: load it with Node's require instead of bundling it.
  serverExternalPackages: ["better-sqlite3"],
  poweredByHeader: false,
  reactStrictMode: true,
};

export default nextConfig;
