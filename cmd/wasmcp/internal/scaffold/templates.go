package scaffold

// Each template is expanded, between {% and %}, with .Name (the tool), .Dir (where it goes)
// and .SDK (the wasmcp checkout, compiled languages only).

const policyStub = `# {%.Name%}.policy.toml — what {%.Name%} may use beyond the server's defaults
# (docs/policy.md). A module gets nothing it is not granted here: no files,
# no environment variables, no network. Uncomment what the tool needs.

# Limits of one call (each call runs in a fresh instance).
# memory = "64MiB"
# timeout = "10s"

# Environment variables the guest sees (nothing else is):
# [env]
# UNITS = "metric"

# Outbound HTTP, to these destinations only:
# [[http.allow]]
# host = "api.example.com"

# A directory the guest may read: host path → guest path.
# [[mount]]
# host = "data"
# guest = "/data"
`

const tsSource = `// {%.Name%}.ts — a wasmcp tool in TypeScript. No build: put this file in the
// tools directory. Check it, call it once, then serve the directory:
//
//	wasmcp check {%.Name%}.ts
//	wasmcp call {%.Name%}.ts {%.Name%} '{"text": "hello"}'
//	wasmcp serve --tools .
//
// The API is typed by guest-sdk/js/wasmcp.d.ts (docs/typescript.md).
import { McpServer } from "wasmcp";

const server = new McpServer({ name: "{%.Name%}", version: "0.1.0" });

server.registerTool("{%.Name%}", {
	description: "Echoes a text back, with its length.",
	inputSchema: {
		type: "object",
		properties: { text: { type: "string", description: "The text to echo" } },
		required: ["text"],
	},
}, async ({ text }: { text: string }) => ` + "`${text} (${text.length} characters)`" + `);
`

const jsSource = `// {%.Name%}.js — a wasmcp tool in JavaScript. No build: put this file in the
// tools directory. Check it, call it once, then serve the directory:
//
//	wasmcp check {%.Name%}.js
//	wasmcp call {%.Name%}.js {%.Name%} '{"text": "hello"}'
//	wasmcp serve --tools .
const { McpServer } = require("wasmcp");

const server = new McpServer({ name: "{%.Name%}", version: "0.1.0" });

server.registerTool("{%.Name%}", {
	description: "Echoes a text back, with its length.",
	inputSchema: {
		type: "object",
		properties: { text: { type: "string", description: "The text to echo" } },
		required: ["text"],
	},
}, async ({ text }) => ` + "`${text} (${text.length} characters)`" + `);
`

const goMod = `module example.com/{%.Name%}

go 1.26

require github.com/wasmcp/wasmcp/guest-sdk/go v0.1.0

require github.com/wasmcp/wasmcp/abi v0.1.0 // indirect

// The Go SDK is used from a wasmcp checkout (it is not published).
replace (
	github.com/wasmcp/wasmcp/abi => {%.SDK%}/abi
	github.com/wasmcp/wasmcp/guest-sdk/go => {%.SDK%}/guest-sdk/go
)
`

const goSource = `// Command {%.Name%} is a wasmcp tool module in Go, built as a reactor: the
// host runs every call from a snapshot of its start-up. Build and check it:
//
//	./build.sh && wasmcp check {%.Name%}.wasm
package main

import (
	"fmt"
	"unicode/utf8"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
	"github.com/wasmcp/wasmcp/guest-sdk/go/reactor"
)

// In is the tool's input; its JSON Schema is derived from this type.
type In struct {
	Text string ` + "`json:\"text\" jsonschema:\"description=The text to echo\"`" + `
}

func newServer() *guest.Server {
	s := guest.New("{%.Name%}", "0.1.0")
	guest.AddTool(s, guest.Tool{
		Name:        "{%.Name%}",
		Description: "Echoes a text back, with its length.",
	}, func(_ *guest.Context, in In) (string, error) {
		return fmt.Sprintf("%s (%d characters)", in.Text, utf8.RuneCountInString(in.Text)), nil
	})
	return s
}

func init() { reactor.Serve(newServer()) }

func main() {}
`

const goBuild = `#!/bin/sh
# Builds {%.Name%}.wasm, a reactor for WASI preview 1, with Go 1.26 or later.
set -eu
cd "$(dirname "$0")"
GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o {%.Name%}.wasm .
`

const rustCargo = `[package]
name = "{%.Name%}"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
wasmcp-guest = { path = "{%.SDK%}/guest-sdk/rust" }
serde = { version = "1.0.100", features = ["derive"] }
serde_json = "1.0.40"

[profile.release]
opt-level = "s"
lto = true
strip = true
`

const rustSource = `//! {%.Name%}: a wasmcp tool module in Rust. Build and check it:
//!
//!     ./build.sh && wasmcp check {%.Name%}.wasm
use serde::Deserialize;
use wasmcp_guest::{json, Context, Error, Server, Tool};

/// The tool's input: its schema is derived from this type.
#[derive(Deserialize)]
struct In {
    text: String,
}

fn main() {
    let mut s = Server::new("{%.Name%}", "0.1.0");
    s.tool(
        Tool::new("{%.Name%}")
            .description("Echoes a text back, with its length.")
            .property("text", json!({"description": "The text to echo"})),
        |_cx: &Context, input: In| -> Result<String, Error> {
            Ok(format!("{} ({} characters)", input.text, input.text.chars().count()))
        },
    );
    s.run();
}
`

const rustBuild = `#!/bin/sh
# Builds {%.Name%}.wasm for wasm32-wasi: with Debian's Rust (rustc, cargo,
# libstd-rust-dev-wasm32, librust-serde-dev, librust-serde-derive-dev,
# librust-serde-json-dev) crates come from /usr/share/cargo/registry, no
# network; with rustup (rustup target add wasm32-wasip1) from crates.io.
set -eu
cd "$(dirname "$0")"
sdk={%.SDK%}/guest-sdk/rust
if [ -x /usr/bin/cargo ] && [ -d /usr/lib/rustlib/wasm32-wasi ] && [ -d /usr/share/cargo/registry ]; then
	RUSTC=/usr/bin/rustc /usr/bin/cargo --config "$sdk/debian-cargo.toml" build --quiet --release --target wasm32-wasi
	cp target/wasm32-wasi/release/{%.Name%}.wasm {%.Name%}.wasm
else
	cargo build --quiet --release --target wasm32-wasip1
	cp target/wasm32-wasip1/release/{%.Name%}.wasm {%.Name%}.wasm
fi
`

const cSource = `/*
 * {%.Name%} — a wasmcp tool module in C, with the C guest SDK
 * (guest-sdk/c). Build and check it:
 *
 *     ./build.sh && wasmcp check {%.Name%}.wasm
 */
#include "wasmcp.h"

#include <stdlib.h>

/* The description the host asks for at load time (abi/README.md). */
static const char description[] =
    "{\"abiVersion\":1,\"name\":\"{%.Name%}\",\"version\":\"0.1.0\",\"tools\":[{"
    "\"name\":\"{%.Name%}\",\"description\":\"Echoes a text back, with its length.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{"
    "\"text\":{\"type\":\"string\",\"description\":\"The text to echo\"}},\"required\":[\"text\"]}}]}";

static void echo(wasmcp_call *call, wasmcp_json args) {
	wasmcp_json text;
	size_t n;
	char *s;
	if (!wasmcp_json_get(args, "text", &text) || (s = wasmcp_json_string(text, &n)) == NULL) {
		wasmcp_tool_error(call, "text must be a string");
		return;
	}
	wasmcp_buf out = {0};
	wasmcp_buf_cstr(&out, s);
	wasmcp_buf_cstr(&out, " (");
	wasmcp_buf_int(&out, (int64_t)n);
	wasmcp_buf_cstr(&out, " bytes)");
	free(s);
	if (out.oom)
		wasmcp_tool_error(call, "out of memory");
	else
		wasmcp_result_text(call, out.data, out.len);
	wasmcp_buf_free(&out);
}

int main(void) {
	static const wasmcp_tool tools[] = {{"{%.Name%}", echo}};
	return wasmcp_run(description, tools, sizeof tools / sizeof *tools);
}
`

const cBuild = `#!/bin/sh
# Builds {%.Name%}.wasm with clang and wasi-libc (Debian: apt-get install
# clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32).
set -eu
cd "$(dirname "$0")"
sdk={%.SDK%}/guest-sdk/c
CC=${CC:-clang-14}
"$CC" --target=wasm32-wasi --sysroot="${WASI_SYSROOT:-/usr}" -O2 -std=c99 -Wall -Wextra \
	-I "$sdk" -o {%.Name%}.wasm {%.Name%}.c "$sdk/wasmcp.c"
`
