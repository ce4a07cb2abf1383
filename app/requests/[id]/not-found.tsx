import Link from "next/link";

/** A request id that is not in this state directory (answered with 404). */
export default function RequestNotFound() {
  return (
    <>
      <h1>Request not found</h1>
      <p className="empty">
        There is no such request in this state directory. It may have been cleaned up: the{" "}
        <Link prefetch={false} href="/audit">
          audit log
        </Link>{" "}
        lists cleanups, and each can be undone.
      </p>
      <p>
        <Link prefetch={false} href="/requests">
          Back to the requests
        </Link>
      </p>
    </>
  );
}
