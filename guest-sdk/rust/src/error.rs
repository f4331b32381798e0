//! Errors: what a handler returns, and what the client answered.

use serde_json::Value;
use std::fmt;

/// JSON-RPC error code of a request line that is not JSON.
pub const CODE_PARSE_ERROR: i64 = -32700;
/// JSON-RPC error code of a message that is not a request.
pub const CODE_INVALID_REQUEST: i64 = -32600;
/// JSON-RPC error code of a method the module does not handle.
pub const CODE_METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC error code of an unknown tool, prompt or resource, or a missing
/// argument.
pub const CODE_INVALID_PARAMS: i64 = -32602;
/// JSON-RPC error code of a handler that failed or panicked.
pub const CODE_INTERNAL_ERROR: i64 = -32603;
/// JSON-RPC error code of a request to the client whose capability the
/// client did not declare; the error's data is
/// `{"requiredCapabilities": {...}}` (MCP's MissingRequiredClientCapability).
pub const CODE_MISSING_CAPABILITY: i64 = -32021;
/// JSON-RPC error code of an outbound HTTP request the host did not
/// complete (`wasmcp/http`, ABI 1.1); the data is `{"reason": ...}`.
pub const CODE_HTTP_FAILED: i64 = -32040;

/// The client's (or the host's) error answer to a request the guest sent:
/// `elicitation/create`, `sampling/createMessage`, `roots/list` or
/// `wasmcp/http`.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientError {
    /// The request the guest sent, e.g. `elicitation/create`.
    pub method: String,
    /// The JSON-RPC error code of the answer.
    pub code: i64,
    /// The error message of the answer.
    pub message: String,
    /// The error data of the answer, if any.
    pub data: Option<Value>,
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} failed: {} (code {})", self.method, self.message, self.code)
    }
}

/// A JSON-RPC error object, as answered to the host.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcError {
    /// The JSON-RPC error code.
    pub code: i64,
    /// A short human-readable text.
    pub message: String,
    /// Optional data, sent as the error's `data`.
    pub data: Option<Value>,
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Message(String),
    Rpc(RpcError),
    Client(ClientError),
}

/// The error of every handler and of every request to the client.
///
/// What becomes of it depends on where it ends:
///
/// - from a **tool** handler: a `CallToolResult` with `isError: true` and
///   the error's text, which the model sees — except an error made with
///   [`Error::rpc`] (answered as that JSON-RPC error) and a [`ClientError`]
///   with [`CODE_MISSING_CAPABILITY`] (answered as that JSON-RPC error,
///   which is what MCP prescribes for a server that cannot do without the
///   capability);
/// - from a **resource, prompt or completion** handler: an [`Error::rpc`]
///   error as is, anything else as `-32603` with the error's text.
///
/// Any `std::error::Error` converts into it with `?`, and so does a
/// [`ClientError`] (the client refused a request).
#[derive(Clone, Debug, PartialEq)]
pub struct Error(Kind);

impl Error {
    /// An ordinary failure with the given text.
    pub fn msg(text: impl Into<String>) -> Error {
        Error(Kind::Message(text.into()))
    }

    /// A JSON-RPC error answered as is, from any handler. For a tool, use
    /// it for errors about the request itself, not about the tool's work
    /// (the model should see the latter, as an error result).
    pub fn rpc(code: i64, message: impl Into<String>, data: Option<Value>) -> Error {
        Error(Kind::Rpc(RpcError { code, message: message.into(), data }))
    }

    /// A `-32602` (invalid params) JSON-RPC error.
    pub fn invalid_params(message: impl Into<String>) -> Error {
        Error::rpc(CODE_INVALID_PARAMS, message, None)
    }

    /// The error the ABI prescribes for an unknown resource: `-32602` with
    /// data `{"uri": uri}`. A template handler returns it when the URI
    /// matched the template but names nothing.
    pub fn resource_not_found(uri: &str) -> Error {
        Error::rpc(
            CODE_INVALID_PARAMS,
            format!("resource not found: {}", uri),
            Some(serde_json::json!({ "uri": uri })),
        )
    }

    /// The client's error answer, if this error is one.
    pub fn client_error(&self) -> Option<&ClientError> {
        match &self.0 {
            Kind::Client(c) => Some(c),
            _ => None,
        }
    }

    /// The JSON-RPC error, if this error was made with [`Error::rpc`].
    pub fn rpc_error(&self) -> Option<&RpcError> {
        match &self.0 {
            Kind::Rpc(r) => Some(r),
            _ => None,
        }
    }

    /// Whether the client did not declare the capability a request needs
    /// ([`CODE_MISSING_CAPABILITY`]). A guest may then fall back to another
    /// kind of input, or return the error.
    pub fn is_missing_capability(&self) -> bool {
        matches!(&self.0, Kind::Client(c) if c.code == CODE_MISSING_CAPABILITY)
    }

    /// The JSON-RPC error a tool handler's error stands for; None for an
    /// ordinary failure (an error result).
    pub(crate) fn tool_rpc_error(&self) -> Option<RpcError> {
        match &self.0 {
            Kind::Rpc(r) => Some(r.clone()),
            Kind::Client(c) if c.code == CODE_MISSING_CAPABILITY => Some(RpcError {
                code: c.code,
                message: c.message.clone(),
                data: c.data.clone(),
            }),
            _ => None,
        }
    }

    /// The JSON-RPC error a resource, prompt or completion handler's error
    /// is answered with.
    pub(crate) fn into_rpc_error(self) -> RpcError {
        if let Some(r) = self.tool_rpc_error() {
            return r;
        }
        RpcError { code: CODE_INTERNAL_ERROR, message: self.to_string(), data: None }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Kind::Message(m) => f.write_str(m),
            Kind::Rpc(r) => r.fmt(f),
            Kind::Client(c) => c.fmt(f),
        }
    }
}

impl<E: std::error::Error> From<E> for Error {
    fn from(e: E) -> Error {
        Error::msg(e.to_string())
    }
}

impl From<ClientError> for Error {
    fn from(e: ClientError) -> Error {
        Error(Kind::Client(e))
    }
}

impl From<RpcError> for Error {
    fn from(e: RpcError) -> Error {
        Error(Kind::Rpc(e))
    }
}
