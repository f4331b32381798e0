// Package flagconf is the configuration of wasmcp serve beyond its command
// line. Every serve flag is also a key of the
// --config file (the flag's name, dashes or underscores) and an environment
// variable (WASMCP_ and the name in capitals with underscores: --max-body
// is max-body and WASMCP_MAX_BODY). The keys are derived from the flag set,
// so a new flag is a key at once. A setting comes from, first match wins:
//
//  1. the command line;
//  2. the environment (each one used is logged at start-up);
//  3. the --config file;
//  4. the flag's default.
//
// An unknown key in the file is an error naming the file, line and key.
package flagconf
