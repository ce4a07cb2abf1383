/** @type {import('next').NextConfig} */
const nextConfig = {
  // Native module: load it with Node's require instead of bundling it.
  serverExternalPackages: ["better-sqlite3"],
  poweredByHeader: false,
  // Served to a browser on the same machine: gzip would only cost CPU, on every event-stream write too.
  compress: false,
  reactStrictMode: true,
  async headers() {
    return [
      {
        source: "/:path*",
        headers: [
          // The action buttons must not be clickable through another site's invisible frame (clickjacking).
          { key: "Content-Security-Policy", value: "frame-ancestors 'none'; object-src 'none'; base-uri 'none'; form-action 'self'" },
          { key: "X-Frame-Options", value: "DENY" },
          // A downloaded output is text, never sniffed into HTML.
          { key: "X-Content-Type-Options", value: "nosniff" },
          { key: "Referrer-Policy", value: "no-referrer" },
        ],
      },
    ];
  },
};

export default nextConfig;
