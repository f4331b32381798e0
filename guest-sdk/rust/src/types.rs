//! MCP objects a module declares and answers: content blocks, tool results,
//! resource contents, prompt messages.

use crate::error::Error;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

fn is_false(b: &bool) -> bool {
    !*b
}

/// MCP annotations of a content block or resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Annotations {
    /// Who the content is for: `"user"`, `"assistant"`.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub audience: Vec<String>,
    /// From 0 (least) to 1 (most important).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub priority: Option<f64>,
    /// An ISO 8601 timestamp.
    #[serde(rename = "lastModified", skip_serializing_if = "Option::is_none", default)]
    pub last_modified: Option<String>,
}

/// One MCP content block of a tool result or a prompt message. Build them
/// with [`Content::text`], [`Content::image`], [`Content::audio`],
/// [`Content::resource`] and [`Content::resource_link`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
        /// Optional annotations.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        annotations: Option<Annotations>,
    },
    /// An image, base64 in `data`.
    Image {
        /// The image, base64-encoded.
        data: String,
        /// Its MIME type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Optional annotations.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        annotations: Option<Annotations>,
    },
    /// Audio, base64 in `data`.
    Audio {
        /// The audio, base64-encoded.
        data: String,
        /// Its MIME type, e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Optional annotations.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        annotations: Option<Annotations>,
    },
    /// An embedded resource.
    Resource {
        /// The resource's contents.
        resource: ResourceContents,
        /// Optional annotations.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        annotations: Option<Annotations>,
    },
    /// A link to a resource.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its name.
        name: String,
        /// Its description.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        description: Option<String>,
        /// Its MIME type.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none", default)]
        mime_type: Option<String>,
        /// Optional annotations.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        annotations: Option<Annotations>,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Content {
        Content::Text { text: text.into(), annotations: None }
    }
    /// An image block; data is the raw image.
    pub fn image(data: &[u8], mime_type: impl Into<String>) -> Content {
        Content::Image { data: base64_encode(data), mime_type: mime_type.into(), annotations: None }
    }
    /// An audio block; data is the raw audio.
    pub fn audio(data: &[u8], mime_type: impl Into<String>) -> Content {
        Content::Audio { data: base64_encode(data), mime_type: mime_type.into(), annotations: None }
    }
    /// A block embedding a resource's contents.
    pub fn resource(contents: ResourceContents) -> Content {
        Content::Resource { resource: contents, annotations: None }
    }
    /// A block linking to a resource.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Content {
        Content::ResourceLink { uri: uri.into(), name: name.into(), description: None, mime_type: None, annotations: None }
    }
    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text, .. } => Some(text),
            _ => None,
        }
    }
}

/// The contents of one resource, as a resource handler answers them or a
/// content block embeds them: `text`, or `blob` (base64). A handler may
/// leave `uri` and `mime_type` empty: the SDK fills in the requested URI
/// and the resource's or template's MIME type.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// Its MIME type.
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none", default)]
    pub mime_type: Option<String>,
    /// The contents as text (sent when `blob` is None).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub text: Option<String>,
    /// The contents as base64 (see [`ResourceContents::blob`]).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub blob: Option<String>,
    /// The contents' `_meta`.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none", default)]
    pub meta: Option<Map<String, Value>>,
}

impl ResourceContents {
    /// Text contents (URI and MIME type filled in by the SDK).
    pub fn text(text: impl Into<String>) -> ResourceContents {
        ResourceContents { text: Some(text.into()), ..Default::default() }
    }
    /// Binary contents, sent base64-encoded.
    pub fn blob(data: &[u8]) -> ResourceContents {
        ResourceContents { blob: Some(base64_encode(data)), ..Default::default() }
    }
    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> ResourceContents {
        self.mime_type = Some(mime_type.into());
        self
    }
}

/// An MCP `CallToolResult`. Handlers that need full control (several
/// blocks, images, an error result with structured content) return it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ToolResult {
    /// The content blocks.
    pub content: Vec<Content>,
    /// The structured result, checked by the host against the tool's
    /// output schema.
    #[serde(rename = "structuredContent", skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// The tool failed; the content says why.
    #[serde(rename = "isError", skip_serializing_if = "is_false")]
    pub is_error: bool,
    /// The result's `_meta`.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl ToolResult {
    /// A result with one text block.
    pub fn text(text: impl Into<String>) -> ToolResult {
        ToolResult { content: vec![Content::text(text)], ..Default::default() }
    }
    /// A failed result (`isError`) with one text block saying why.
    /// Returning an error from a tool handler has the same effect.
    pub fn error(text: impl Into<String>) -> ToolResult {
        ToolResult { content: vec![Content::text(text)], is_error: true, ..Default::default() }
    }
    /// A result whose structured content is value, with its JSON also as a
    /// text block (for clients that read only text).
    pub fn structured<T: Serialize>(value: &T) -> Result<ToolResult, Error> {
        let v = serde_json::to_value(value)?;
        if !v.is_object() {
            return Err(Error::msg("structured content must be a JSON object"));
        }
        Ok(ToolResult { content: vec![Content::text(v.to_string())], structured_content: Some(v), ..Default::default() })
    }
    /// This result with value as its structured content, the content
    /// blocks unchanged: `ToolResult::text("6").with_structured(&Sum { sum
    /// })`. Declare the output schema with
    /// [`Tool::output_schema_of`](crate::Tool::output_schema_of).
    pub fn with_structured<T: Serialize>(mut self, value: &T) -> Result<ToolResult, Error> {
        let v = serde_json::to_value(value)?;
        if !v.is_object() {
            return Err(Error::msg("structured content must be a JSON object"));
        }
        self.structured_content = Some(v);
        Ok(self)
    }
}

/// What a typed tool handler may return: a [`ToolResult`] as is, a
/// `String` or `&'static str` as one text block, or [`Structured`] — a
/// value that becomes the structured content and gives the tool its output
/// schema.
pub trait IntoToolResult {
    /// Converts the handler's value into the call's result.
    fn into_tool_result(self) -> Result<ToolResult, Error>;
    /// The output schema the type declares, if any (derived once, when the
    /// module is described).
    fn output_schema() -> Option<Result<Value, String>> {
        None
    }
}

impl IntoToolResult for ToolResult {
    fn into_tool_result(self) -> Result<ToolResult, Error> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<ToolResult, Error> {
        Ok(ToolResult::text(self))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<ToolResult, Error> {
        Ok(ToolResult::text(self))
    }
}

/// A typed tool's structured result: `T` serialized is the result's
/// `structuredContent` (its JSON also a text block), and the tool declares
/// an output schema derived from `T` (see [`crate::schema::derive`]; fields
/// of type `Option` are typed nullable) unless the [`crate::Tool`] declares
/// one. `T` must serialize to a JSON object.
pub struct Structured<T>(pub T);

impl<T: Serialize + DeserializeOwned> IntoToolResult for Structured<T> {
    fn into_tool_result(self) -> Result<ToolResult, Error> {
        ToolResult::structured(&self.0)
    }
    fn output_schema() -> Option<Result<Value, String>> {
        Some(crate::schema::derive::<T>(true))
    }
}

/// One message of a prompt's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// `"user"` or `"assistant"`.
    pub role: String,
    /// The message's content block.
    pub content: Content,
}

impl PromptMessage {
    /// A text message from the user.
    pub fn user(text: impl Into<String>) -> PromptMessage {
        PromptMessage { role: "user".into(), content: Content::text(text) }
    }
    /// A text message from the assistant.
    pub fn assistant(text: impl Into<String>) -> PromptMessage {
        PromptMessage { role: "assistant".into(), content: Content::text(text) }
    }
}

/// An MCP `GetPromptResult`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PromptResult {
    /// Defaults to the prompt's description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
    /// The result's `_meta`.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl PromptResult {
    /// A result with these messages.
    pub fn new(messages: Vec<PromptMessage>) -> PromptResult {
        PromptResult { messages, ..Default::default() }
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 (with padding), as MCP sends binary data.
pub fn base64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity((data.len() + 2) / 3 * 4);
    for chunk in data.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64 (padding optional); None if text is not base64.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let t = text.trim_end_matches('=');
    if text.len() - t.len() > 2 || t.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(t.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in t.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = acc << 6 | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn base64_round_trip() {
        for (raw, enc) in [(&b""[..], ""), (b"f", "Zg=="), (b"fo", "Zm8="), (b"foo", "Zm9v"), (b"foob", "Zm9vYg=="), (&[0xff, 0xfe, 0x00][..], "//4A")] {
            assert_eq!(base64_encode(raw), enc);
            assert_eq!(base64_decode(enc).unwrap(), raw);
        }
        assert!(base64_decode("a").is_none());
        assert!(base64_decode("a$==").is_none());
    }

    #[test]
    fn content_wire_forms() {
        assert_eq!(serde_json::to_value(Content::text("hi")).unwrap(), json!({"type": "text", "text": "hi"}));
        assert_eq!(
            serde_json::to_value(Content::image(b"foo", "image/png")).unwrap(),
            json!({"type": "image", "data": "Zm9v", "mimeType": "image/png"})
        );
        assert_eq!(
            serde_json::to_value(Content::resource_link("a://b", "b")).unwrap(),
            json!({"type": "resource_link", "uri": "a://b", "name": "b"})
        );
        assert_eq!(serde_json::to_value(ToolResult::error("no")).unwrap(), json!({"content": [{"type": "text", "text": "no"}], "isError": true}));
    }
}
