import Link from "next/link";

/** A session id that is not in this state directory (answered with 404). */
export default function SessionNotFound() {
  return (
    <>
      <h1>Session not found</h1>
      <p className="empty">
        There is no such session in this state directory.{" "}
        <Link prefetch={false} href="/sessions">
          All sessions
        </Link>
      </p>
    </>
  );
}
