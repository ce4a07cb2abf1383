/**
 * Version 1 of the shared store's schema: a request's record as `jsonb` beside the columns its
 * queries use, every claim (an attempt) with its liveness, and the transitions: the history and
 * the change feed, in commit order of a global position.
 */
export const V1 = `
CREATE TABLE requests (
  request_id text PRIMARY KEY,
  workspace text NOT NULL,
  state text NOT NULL,
  created_at bigint NOT NULL,
  last_updated_at bigint NOT NULL,
  state_since bigint NOT NULL,
  not_before bigint,
  version integer NOT NULL,
  record jsonb NOT NULL
);
-- Claims take the oldest ready request: a partial index holds the queue alone.
CREATE INDEX requests_queued ON requests (state_since, request_id) WHERE state = 'queued';
CREATE INDEX requests_recent ON requests (last_updated_at DESC, request_id DESC);
CREATE INDEX requests_by_workspace ON requests (workspace, state);

CREATE TABLE claims (
  token text PRIMARY KEY,
  request_id text NOT NULL REFERENCES requests ON DELETE CASCADE,
  attempt integer NOT NULL,
  worker text NOT NULL,
  host text NOT NULL,
  pid integer NOT NULL,
  claimed_at bigint NOT NULL,
  heartbeat_at bigint NOT NULL,
  ended_at bigint,
  ended_state text,
  -- The worker's result, written before it reports (recordResult): a monitor applies it if the worker dies first.
  result jsonb
);
-- At most one live claim per request; the monitor scans the live ones by heartbeat.
CREATE UNIQUE INDEX claims_live ON claims (request_id) WHERE ended_at IS NULL;
CREATE INDEX claims_heartbeat ON claims (heartbeat_at) WHERE ended_at IS NULL;

CREATE TABLE transitions (
  position bigserial PRIMARY KEY,
  request_id text NOT NULL REFERENCES requests ON DELETE CASCADE,
  from_state text,
  to_state text NOT NULL,
  at bigint NOT NULL,
  token text,
  dropped boolean NOT NULL DEFAULT false,
  entry jsonb NOT NULL
);
CREATE INDEX transitions_by_request ON transitions (request_id, position);
`;
