// Package replica is what the replicas of one wasmcp deployment share,
// through one Redis server (wasmcp serve --store redis://...):
//
//   - the task store (Redis implements tasks.Store and tasks.Shared):
//     records that expire with their TTL, the index of each owner's tasks,
//     the hash naming the replica that runs each working task, and the
//     change channel the other replicas follow;
//   - the replica lease: each replica keeps a lease key alive while it
//     lives (Renew, Drop); the tasks of a replica whose lease is gone are
//     found (Orphans) and taken over (Claim) by the task Manager of
//     another;
//   - the counters of the caps that hold across replicas (Limiter, a
//     limiter.Limiter): the task caps of the Manager and the per-principal
//     caps of the auth guard;
//   - secrets every replica must agree on (SharedKey), and channels
//     (Publish, Subscribe) for the other shared state of the server.
//
// The client is redigo (github.com/gomodule/redigo): a pool of
// connections, each idle one checked without a round trip before reuse,
// commands bounded by timeouts and the caller's context, scripts by
// EVALSHA with the fall back to EVAL, optimistic transactions by
// WATCH/MULTI/EXEC, and subscriptions that connect again after an outage.
//
// Nothing below the server (protocol, the transports, tasks) imports this
// package: they meet it through the tasks.Store, tasks.Shared and
// limiter.Limiter contracts, so a program that never shares state links
// no Redis client.
package replica
