import type { Metadata } from "next";
import Link from "next/link";
import type { ReactNode } from "react";
import "./globals.css";

export const metadata: Metadata = {
  title: "reqwatch",
  description: "Request lifecycles of your agent gateways and workers, live.",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <header className="site">
          <Link className="brand" href="/">
            reqwatch
          </Link>
        </header>
        <main>{children}</main>
      </body>
    </html>
  );
}
