import Link from "next/link";

/** A path the dashboard has no page for (answered with 404), in its own style, with the ways back. */
export default function PageNotFound() {
  return (
    <>
      <h1>Page not found</h1>
      <p className="empty">
        The dashboard has no page at this address. Go to the{" "}
        <Link prefetch={false} href="/">
          overview
        </Link>
        , the{" "}
        <Link prefetch={false} href="/requests">
          requests
        </Link>{" "}
        or the{" "}
        <Link prefetch={false} href="/sessions">
          sessions
        </Link>
        .
      </p>
    </>
  );
}
