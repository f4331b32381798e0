//! The SDK's side of the ABI, natively: request lines in, lines out.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{Cursor, Write};
use std::sync::{Arc, Mutex};
use wasmcp_guest::*;

/// A writer whose bytes the test reads afterwards.
#[derive(Clone, Default)]
struct Out(Arc<Mutex<Vec<u8>>>);

impl Write for Out {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Serves stdin (lines) and returns the lines written, decoded.
fn serve(s: &Server, stdin: &[Value]) -> Vec<Value> {
    let mut input = String::new();
    for l in stdin {
        input.push_str(&l.to_string());
        input.push('\n');
    }
    let out = Out::default();
    s.serve(Box::new(Cursor::new(input.into_bytes())), Box::new(out.clone()), None).unwrap();
    let bytes = out.0.lock().unwrap().clone();
    String::from_utf8(bytes).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn call(name: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": args}})
}

fn last(lines: &[Value]) -> &Value {
    let l = lines.last().expect("no output");
    assert_eq!(l["id"], json!(7), "{}", l);
    l
}

#[derive(Deserialize, Serialize)]
struct Point {
    x: f64,
    y: f64,
    label: Option<String>,
}

#[derive(Deserialize)]
struct Query {
    text: String,
    #[serde(default)]
    limit: u32,
}

fn server() -> Server {
    let mut s = Server::new("t", "0.1.0");
    s.instructions("Use it.");
    s.tool(Tool::new("point").description("A point."), |_cx: &Context, p: Point| -> Result<Structured<Point>, Error> { Ok(Structured(p)) });
    s.tool(
        Tool::new("query").property("text", json!({"description": "What to find", "minLength": 1})),
        |cx: &Context, q: Query| -> Result<String, Error> {
            cx.log(Level::Info, json!({"limit": q.limit}));
            if q.text == "fail" {
                return Err(Error::msg("it failed"));
            }
            if q.text == "protocol" {
                return Err(Error::rpc(-32602, "bad request", Some(json!({"why": "test"}))));
            }
            if q.text == "parse" {
                let n: i32 = "x".parse()?;
                return Ok(n.to_string());
            }
            Ok(format!("{}:{}", q.text, q.limit))
        },
    );
    s.raw_tool(Tool::new("raw").input_schema(json!({"type": "object", "properties": {"a": {}}})), |_cx, args| Ok(ToolResult::text(args.to_string())));
    s.tool(Tool::new("ask2"), |cx: &Context, _: NoInput| -> Result<String, Error> {
        // Both questions first, then the answers, read in the other order.
        let a = cx.start_elicit("first", "A?", json!({"type": "object"}));
        let b = cx.start_list_roots("roots");
        cx.wait_all(&[&a, &b])?;
        let roots = b.roots()?;
        let ans = a.elicit()?;
        Ok(format!("{} {} {}", ans.action, roots.len(), roots[0].uri))
    });
    s.tool(Tool::new("sample"), |cx: &Context, _: NoInput| -> Result<String, Error> {
        let r = cx.sample(&SampleParams { messages: vec![SamplingMessage::user("hi")], max_tokens: 10, ..Default::default() })?;
        Ok(r.text().unwrap_or("").to_string())
    });
    s.tool(Tool::new("stateful"), |cx: &Context, _: NoInput| -> Result<String, Error> {
        let prev = cx.state().cloned();
        cx.set_state(&json!({"n": 1}))?;
        Ok(format!("{} {}", prev.map_or("none".to_string(), |v| v.to_string()), cx.client_capabilities().elicitation))
    });
    s.tool(Tool::new("fetch"), |cx: &Context, _: NoInput| -> Result<String, Error> {
        let mut headers = HashMap::new();
        headers.insert("Accept".to_string(), vec!["text/plain".to_string()]);
        let req = HttpRequest { url: "https://example.org/x".into(), headers, timeout_ms: Some(500), ..Default::default() };
        match cx.http(&req) {
            Ok(r) => Ok(format!("{} {}", r.status, String::from_utf8_lossy(&r.bytes()))),
            Err(e) => Ok(format!("failed: {:?}", http_failure_reason(&e))),
        }
    });
    s.tool(Tool::new("progress"), |cx: &Context, _: NoInput| -> Result<String, Error> {
        cx.progress(1.0, Some(2.0), Some("half"));
        cx.progress(2.0, None, None);
        Ok("ok".into())
    });
    s.tool(Tool::new("panics"), |_cx: &Context, _: NoInput| -> Result<String, Error> { panic!("boom") });
    s.resource(Resource::new("r://a", "a").mime_type("text/plain"), |_cx, _uri| Ok(vec![ResourceContents::text("A")]));
    s.resource_template(ResourceTemplate::new("notes://{id}", "notes").mime_type("text/markdown"), |_cx, uri, vars| {
        if vars["id"] == "missing" {
            return Err(Error::resource_not_found(uri));
        }
        Ok(vec![ResourceContents::text(format!("# {}", vars["id"]))])
    });
    s.prompt(Prompt::new("p").description("A prompt.").argument("who", "who", true), |_cx, args: &HashMap<String, String>| {
        Ok(PromptResult::new(vec![PromptMessage::user(format!("hi {}", args["who"]))]))
    });
    s.completion(CompletionRef::Prompt("p".into()), "who", |_cx, value, _| {
        Ok((0..150).map(|i| format!("{}{}", value, i)).collect())
    });
    s
}

#[test]
fn describe() {
    let s = server();
    let out = serve(&s, &[json!({"jsonrpc": "2.0", "id": 0, "method": "wasmcp/describe", "params": {"abiVersions": [1], "features": ["http"]}})]);
    assert_eq!(out.len(), 1);
    let d = &out[0]["result"];
    assert_eq!(d["abiVersion"], json!(1));
    assert_eq!(d["name"], json!("t"));
    assert_eq!(d["instructions"], json!("Use it."));
    assert_eq!(d["completions"], json!(true));
    let tools = d["tools"].as_array().unwrap();
    assert_eq!(tools[0]["name"], json!("point"));
    assert_eq!(
        tools[0]["inputSchema"],
        json!({"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}, "label": {"type": "string"}}, "required": ["x", "y"]})
    );
    assert_eq!(
        tools[0]["outputSchema"],
        json!({"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}, "label": {"type": ["string", "null"]}}, "required": ["x", "y"]})
    );
    assert_eq!(
        tools[1]["inputSchema"],
        json!({"type": "object", "properties": {"text": {"type": "string", "description": "What to find", "minLength": 1}, "limit": {"type": "integer", "minimum": 0}}, "required": ["text"]})
    );
    assert!(tools[1].get("outputSchema").is_none());
    assert_eq!(tools[2]["inputSchema"], json!({"type": "object", "properties": {"a": {}}}));
    assert_eq!(tools[3]["inputSchema"], json!({"type": "object"}));
    assert_eq!(d["resources"], json!([{"uri": "r://a", "name": "a", "mimeType": "text/plain"}]));
    assert_eq!(d["resourceTemplates"], json!([{"uriTemplate": "notes://{id}", "name": "notes", "mimeType": "text/markdown"}]));
    assert_eq!(d["prompts"], json!([{"name": "p", "description": "A prompt.", "arguments": [{"name": "who", "description": "who", "required": true}]}]));

    let out = serve(&s, &[json!({"jsonrpc": "2.0", "id": 0, "method": "wasmcp/describe", "params": {"abiVersions": [2]}})]);
    assert_eq!(out[0]["error"]["code"], json!(-32602));
}

#[test]
fn protocol_errors() {
    let s = server();
    let out = s.serve(Box::new(Cursor::new(b"{not json\n".to_vec())), Box::new(Out::default()), None);
    assert!(out.is_ok());
    let o = serve(&s, &[json!({"jsonrpc": "2.0", "id": "x", "method": "nope"})]);
    assert_eq!(o[0]["error"]["code"], json!(-32601));
    assert_eq!(o[0]["id"], json!("x"));
    let o = serve(&s, &[json!({"jsonrpc": "2.0", "method": "notifications/cancelled"})]);
    assert!(o.is_empty());
    let o = serve(&s, &[call("nope", json!({}))]);
    assert_eq!(last(&o)["error"]["code"], json!(-32602));
    assert!(s.serve(Box::new(Cursor::new(Vec::new())), Box::new(Out::default()), None).is_err());
}

#[test]
fn tool_results_and_errors() {
    let s = server();
    let o = serve(&s, &[call("point", json!({"x": 1, "y": 2.5}))]);
    let r = &last(&o)["result"];
    assert_eq!(r["structuredContent"], json!({"x": 1.0, "y": 2.5, "label": null}));
    assert_eq!(serde_json::from_str::<Value>(r["content"][0]["text"].as_str().unwrap()).unwrap(), r["structuredContent"]);

    let o = serve(&s, &[call("point", json!({"x": 1}))]);
    let r = &last(&o)["result"];
    assert_eq!(r["isError"], json!(true));
    assert!(r["content"][0]["text"].as_str().unwrap().contains("missing field `y`"), "{}", r);

    let o = serve(&s, &[call("query", json!({"text": "a", "limit": 3}))]);
    assert_eq!(o[0]["method"], json!("notifications/message"));
    assert_eq!(o[0]["params"], json!({"level": "info", "logger": "t", "data": {"limit": 3}}));
    assert_eq!(last(&o)["result"], json!({"content": [{"type": "text", "text": "a:3"}]}));

    let o = serve(&s, &[call("query", json!({"text": "fail"}))]);
    assert_eq!(last(&o)["result"], json!({"content": [{"type": "text", "text": "it failed"}], "isError": true}));
    let o = serve(&s, &[call("query", json!({"text": "parse"}))]);
    assert_eq!(last(&o)["result"]["content"][0]["text"], json!("invalid digit found in string"));
    let o = serve(&s, &[call("query", json!({"text": "protocol"}))]);
    assert_eq!(last(&o)["error"], json!({"code": -32602, "message": "bad request", "data": {"why": "test"}}));

    let o = serve(&s, &[call("raw", Value::Null)]);
    assert_eq!(last(&o)["result"]["content"][0]["text"], json!("{}"));

    let o = serve(&s, &[call("panics", json!({}))]);
    let r = &last(&o)["result"];
    assert_eq!(r["isError"], json!(true));
    assert!(r["content"][0]["text"].as_str().unwrap().contains("boom"));
}

#[test]
fn progress_needs_a_token() {
    let s = server();
    let o = serve(&s, &[call("progress", json!({}))]);
    assert_eq!(o.len(), 1);
    let mut req = call("progress", json!({}));
    req["params"]["_meta"] = json!({"progressToken": 5});
    let o = serve(&s, &[req]);
    assert_eq!(o.len(), 3);
    assert_eq!(o[0]["params"], json!({"progressToken": 5, "progress": 1.0, "total": 2.0, "message": "half"}));
    assert_eq!(o[1]["params"], json!({"progressToken": 5, "progress": 2.0}));
}

#[test]
fn requests_to_the_client() {
    let s = server();
    // The answers arrive in the other order, with a stray line between.
    let o = serve(
        &s,
        &[
            call("ask2", json!({})),
            json!({"jsonrpc": "2.0", "id": "roots", "result": {"roots": [{"uri": "file:///r"}]}}),
            json!({"jsonrpc": "2.0", "method": "notifications/whatever"}),
            json!({"jsonrpc": "2.0", "id": "first", "result": {"action": "accept", "content": {}}}),
        ],
    );
    assert_eq!(o[0], json!({"jsonrpc": "2.0", "id": "first", "method": "elicitation/create", "params": {"message": "A?", "requestedSchema": {"type": "object"}}}));
    assert_eq!(o[1], json!({"jsonrpc": "2.0", "id": "roots", "method": "roots/list", "params": {}}));
    assert_eq!(last(&o)["result"]["content"][0]["text"], json!("accept 1 file:///r"));

    // The SDK numbers its own requests.
    let o = serve(
        &s,
        &[call("sample", json!({})), json!({"jsonrpc": "2.0", "id": 1, "result": {"role": "assistant", "content": {"type": "text", "text": "yo"}, "model": "m"}})],
    );
    assert_eq!(o[0]["id"], json!(1));
    assert_eq!(o[0]["params"], json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 10}));
    assert_eq!(last(&o)["result"]["content"][0]["text"], json!("yo"));

    // A missing capability is the call's JSON-RPC error.
    let o = serve(
        &s,
        &[
            call("sample", json!({})),
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32021, "message": "no sampling", "data": {"requiredCapabilities": {"sampling": {}}}}}),
        ],
    );
    assert_eq!(last(&o)["error"], json!({"code": -32021, "message": "no sampling", "data": {"requiredCapabilities": {"sampling": {}}}}));

    // Another error is an error result naming it.
    let o = serve(&s, &[call("sample", json!({})), json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "refused"}})]);
    assert_eq!(last(&o)["result"]["content"][0]["text"], json!("sampling/createMessage failed: refused (code -1)"));

    // Stdin closed while waiting (the host's input_required).
    let o = serve(&s, &[call("sample", json!({}))]);
    assert_eq!(last(&o)["result"]["isError"], json!(true));
}

#[test]
fn outbound_http() {
    let s = server();
    let o = serve(
        &s,
        &[call("fetch", json!({})), json!({"jsonrpc": "2.0", "id": 1, "result": {"status": 200, "url": "https://example.org/x", "headers": {}, "bodyBase64": "aGk="}})],
    );
    assert_eq!(
        o[0],
        json!({"jsonrpc": "2.0", "id": 1, "method": "wasmcp/http", "params": {"url": "https://example.org/x", "headers": {"Accept": ["text/plain"]}, "timeoutMs": 500}})
    );
    assert_eq!(last(&o)["result"]["content"][0]["text"], json!("200 hi"));
    let o = serve(
        &s,
        &[call("fetch", json!({})), json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32040, "message": "refused", "data": {"reason": "policy_refused"}}})],
    );
    assert_eq!(last(&o)["result"]["content"][0]["text"], json!("failed: Some(\"policy_refused\")"));
}

#[test]
fn state_and_capabilities() {
    let s = server();
    let mut req = call("stateful", json!({}));
    req["params"]["_meta"] = json!({"wasmcp/state": {"n": 0}, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}});
    let o = serve(&s, &[req]);
    assert_eq!(o[0], json!({"jsonrpc": "2.0", "method": "wasmcp/state", "params": {"state": {"n": 1}}}));
    assert_eq!(last(&o)["result"]["content"][0]["text"], json!("{\"n\":0} true"));
    let o = serve(&s, &[call("stateful", json!({}))]);
    assert_eq!(last(&o)["result"]["content"][0]["text"], json!("none false"));
}

#[test]
fn resources_prompts_completions() {
    let s = server();
    let read = |uri: &str| serve(&s, &[json!({"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {"uri": uri}})]);
    assert_eq!(last(&read("r://a"))["result"], json!({"contents": [{"uri": "r://a", "mimeType": "text/plain", "text": "A"}]}));
    assert_eq!(last(&read("notes://x%20y"))["result"], json!({"contents": [{"uri": "notes://x%20y", "mimeType": "text/markdown", "text": "# x y"}]}));
    assert_eq!(last(&read("notes://missing"))["error"]["data"], json!({"uri": "notes://missing"}));
    assert_eq!(last(&read("other://x"))["error"]["code"], json!(-32602));

    let get = |args: Value| serve(&s, &[json!({"jsonrpc": "2.0", "id": 7, "method": "prompts/get", "params": {"name": "p", "arguments": args}})]);
    assert_eq!(
        last(&get(json!({"who": "me"})))["result"],
        json!({"description": "A prompt.", "messages": [{"role": "user", "content": {"type": "text", "text": "hi me"}}]})
    );
    assert_eq!(last(&get(json!({})))["error"]["code"], json!(-32602));

    let o = serve(
        &s,
        &[json!({"jsonrpc": "2.0", "id": 7, "method": "completion/complete", "params": {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "who", "value": "a"}}})],
    );
    let c = &last(&o)["result"]["completion"];
    assert_eq!(c["values"].as_array().unwrap().len(), 100);
    assert_eq!(c["values"][0], json!("a0"));
    assert_eq!(c["total"], json!(150));
    assert_eq!(c["hasMore"], json!(true));
}

#[test]
fn description_reports_underivable_schemas() {
    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Node {
        next: Vec<Node>,
    }
    let mut s = Server::new("t", "1");
    s.tool(Tool::new("rec"), |_cx: &Context, _n: Node| -> Result<String, Error> { Ok(String::new()) });
    let err = s.description().unwrap_err();
    assert!(err.contains("tool rec: inputSchema"), "{}", err);
}

#[test]
#[should_panic(expected = "duplicate tool")]
fn duplicate_tool_panics() {
    let mut s = Server::new("t", "1");
    s.raw_tool(Tool::new("a"), |_cx, _| Ok(ToolResult::default()));
    s.raw_tool(Tool::new("a"), |_cx, _| Ok(ToolResult::default()));
}

#[test]
#[should_panic(expected = "must be 1 to 128 characters")]
fn bad_tool_name_panics() {
    Server::new("t", "1").raw_tool(Tool::new("a b"), |_cx, _| Ok(ToolResult::default()));
}

/// The README's complete tool describes itself as the README says.
#[test]
fn readme_description() {
    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct CountIn {
        text: String,
        #[serde(default)]
        ignore_case: bool,
    }
    #[derive(Serialize, Deserialize)]
    struct CountOut {
        words: usize,
        distinct: usize,
    }
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme.find("```json\n").expect("a json block") + 8;
    let end = start + readme[start..].find("```").unwrap();
    let want: Value = serde_json::from_str(&readme[start..end]).unwrap();
    let src_start = readme.find("```rust,no_run\n").unwrap();
    assert!(readme[src_start..].contains("struct CountIn {\n    text: String,\n    #[serde(default)]\n    ignore_case: bool,\n}"));
    assert!(readme[src_start..].contains("struct CountOut {\n    words: usize,\n    distinct: usize,\n}"));
    let mut s = Server::new("wordcount", "1.0.0");
    s.tool(
        Tool::new("count_words")
            .description("Counts the words of a text, and the distinct ones.")
            .property("text", json!({"description": "The text to count", "maxLength": 100000})),
        |_cx: &Context, _input: CountIn| -> Result<Structured<CountOut>, Error> { Ok(Structured(CountOut { words: 0, distinct: 0 })) },
    );
    assert_eq!(s.description().unwrap()["tools"][0], want);
}
