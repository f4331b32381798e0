//! The Rust SDK for wasmcp tool modules: WebAssembly guests that the
//! wasmcp host runs to serve MCP tools, resources, resource templates,
//! prompts and completions. It implements the guest side of the wasmcp
//! guest ABI v1 (`abi/README.md` in the wasmcp repository) — the same
//! surface as the Go SDK (`guest-sdk/go`) — and depends on serde and
//! serde_json only.
//!
//! # A module
//!
//! ```no_run
//! use serde::Deserialize;
//! use wasmcp_guest::{Context, Error, Server, Tool};
//!
//! #[derive(Deserialize)]
//! struct GreetIn {
//!     name: String,
//! }
//!
//! fn main() {
//!     let mut s = Server::new("hello", "1.0.0");
//!     s.tool(
//!         Tool::new("greet").description("Greets someone."),
//!         |_cx: &Context, input: GreetIn| -> Result<String, Error> { Ok(format!("Hello, {}!", input.name)) },
//!     );
//!     s.run();
//! }
//! ```
//!
//! Build it with `cargo build --release --target wasm32-wasi` (Rust
//! before 1.78; `wasm32-wasip1` after): the result is a WASI preview 1
//! command module, the shape the ABI's one request per instance wants —
//! `main` registers everything, [`Server::run`] serves the single request
//! and returns, and the module exits 0.
//!
//! # How a request is served
//!
//! [`Server::run`] reads one JSON-RPC request line from stdin and writes
//! one response line to stdout. `wasmcp/describe` is answered with the
//! module's description, built from what was registered (schemas are
//! derived then, not on every call). `tools/call`, `resources/read`,
//! `prompts/get` and `completion/complete` go to the registered handlers;
//! other methods get `-32601`. Before the response a handler may send
//! notifications ([`Context::progress`], [`Context::log`]) and requests to
//! the client ([`Context::elicit`], [`Context::sample`],
//! [`Context::list_roots`], [`Context::http`]), whose answers the host
//! writes back on stdin. Stderr is free text for the host's log.
//!
//! Everything goes through [`Server::serve`], which takes any reader and
//! writer: a module is unit-tested natively by feeding it request lines.
//!
//! # Errors
//!
//! Handlers return `Result<_, `[`Error`]`>`; any `std::error::Error`
//! converts with `?`. A tool's error becomes an error result
//! (`isError: true`) the model sees, except [`Error::rpc`] errors and a
//! client's "missing capability" answer, which become JSON-RPC errors.
//! Resource, prompt and completion errors are JSON-RPC errors (`-32603`
//! unless made with [`Error::rpc`]). A panic inside a handler is caught
//! where unwinding exists (native tests); on `wasm32-wasi` a panic aborts
//! the instance and the host answers the client an error naming the trap.
//!
//! # Input across round trips (MCP 2026-07-28)
//!
//! Under MCP 2026-07-28 a server never sends requests to the client: the
//! host turns the requests a guest waits for into an `input_required`
//! result, and the client's retry runs the guest again from the start,
//! answering every request whose key (its JSON-RPC id) it has answered. So
//! a guest asks the same questions under the same keys on every run
//! ([`Context::elicit_key`], [`Context::sample_key`],
//! [`Context::list_roots_key`]; the SDK's own numbering is stable for a
//! guest that asks in a fixed order), and sends every question it can
//! before waiting for any ([`Context::start_elicit`],
//! [`Context::start_sample`], [`Context::start_list_roots`],
//! [`Context::wait_all`]). A guest that needs more than its answers carries
//! its own state ([`Context::set_state`], [`Context::state`]).
//! [`Context::client_capabilities`] tells what the client declared.
//!
//! # Schemas from types
//!
//! [`Server::tool`] derives the input schema from the input type's serde
//! `Deserialize` implementation, and [`Structured`] outputs their output
//! schema from the output type — see [`schema::derive`] for what it sees
//! and what it cannot. Add descriptions and other keywords with
//! [`Tool::property`], or declare a schema with [`Tool::input_schema`] and
//! [`Tool::output_schema`].

#![deny(missing_docs)]

mod context;
mod error;
pub mod schema;
mod server;
mod types;
mod uritemplate;

pub use context::{
    http_failure_reason, ClientCapabilities, Context, ElicitResult, HttpRequest, HttpResponse, Level, Pending, Root, SampleParams,
    SampleResult, SamplingMessage,
};
pub use error::{
    ClientError, Error, RpcError, CODE_HTTP_FAILED, CODE_INTERNAL_ERROR, CODE_INVALID_PARAMS, CODE_INVALID_REQUEST, CODE_METHOD_NOT_FOUND,
    CODE_MISSING_CAPABILITY, CODE_PARSE_ERROR,
};
pub use server::{
    CompletionRef, Prompt, PromptArgument, Resource, ResourceTemplate, Server, Skill, SkillFile, Tool, ABI_VERSION,
};
pub use types::{
    base64_decode, base64_encode, Annotations, Content, IntoToolResult, PromptMessage, PromptResult, ResourceContents, Structured,
    ToolResult,
};

/// The input of a tool without arguments: any object is accepted and
/// ignored; its schema is `{"type": "object"}`.
#[derive(Clone, Copy, Debug, Default, serde::Deserialize)]
pub struct NoInput {}

pub use serde_json::{json, Value};

/// The README's Rust code, compiled by `cargo test` as a doc test so that
/// the complete tool it shows keeps building.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
