// Package tasks keeps the MCP tasks of a server: the task record and its
// states, the Store contract that holds records (with Memory, in this
// process), and the Manager that enforces the rules around them — legal
// transitions (working ⇄ input_required → completed | failed | cancelled;
// terminal states never change), ownership (a task belongs to the
// principal that created it; anyone else is told it does not exist), the
// caps on active tasks per server and per principal, the time to live of
// records with a sweeper that deletes expired ones and stops their guests,
// waiting for a task to finish, and recovery after a restart (tasks that
// were working when the process died are marked failed with a status
// message).
//
// The package knows nothing of the wire: the protocol package encodes tasks
// for each MCP revision and runs the guests; it gives the Manager the cancel
// function of each task's guest, which the Manager calls on tasks/cancel, on
// expiry and at shutdown. Nor does it know the stores that keep records
// elsewhere: package tasks/boltstore keeps them in a bbolt file (they
// survive a restart) and package replica in a Redis shared by several
// replicas.
//
// A Store is a small key-value contract (create, get, read-modify-write,
// delete, list by owner, scan). A store shared by several replicas
// implements Shared: the Manager then recovers by lease (a task whose
// replica stopped renewing its lease is failed by another) instead of
// failing everything working at start-up, and applies the changes other
// replicas publish (waking waiters, stopping a guest cancelled elsewhere,
// telling its observer). The Manager's caps and cancel functions are per
// process unless Options.Limiter counts them across replicas.
package tasks
