// Package scaleout holds the end-to-end tests of several wasmcp replicas
// behind one address: real `wasmcp serve` processes sharing their tasks in
// a real redis-server (--store), behind a real HAProxy that balances
// round-robin and keeps legacy sessions on their replica by
// Mcp-Session-Id (the configuration of docs/scale-out.md). Tasks created
// on one replica are read, updated and cancelled on another; a replica
// killed with SIGKILL has its running task failed by another within its
// lease; a Redis restart with persistence keeps finished results; a Redis
// outage during load produces only the documented errors. Without
// redis-server or haproxy the tests skip (fail when CI is set).
package scaleout
