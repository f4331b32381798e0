//! The reference tool set written with the Rust guest SDK: the same tools,
//! resource and prompt, with the same names, schemas and texts, as every
//! other SDK's examples/reference/<lang>. The shared suite
//! tests/reference_test.go runs `wasmcp check` on it and drives it over
//! stdio and HTTP; tests/rustsdk_test.go drives it directly.
//!
//! The schemas are derived from the serde types (input and output schemas
//! of `echo` and `sum`, `progress`'s with its bounds added by
//! `Tool::property`), so the set also checks the derivation against the
//! exact schemas the reference prescribes.

use serde::{Deserialize, Serialize};
use wasmcp_guest::{json, Context, Error, NoInput, Prompt, PromptMessage, PromptResult, Resource, ResourceContents, Server, Tool, ToolResult};

#[derive(Deserialize, Serialize)]
struct Text {
    text: String,
}

#[derive(Deserialize)]
struct Numbers {
    numbers: Vec<f64>,
}

#[derive(Deserialize, Serialize)]
struct Sum {
    sum: f64,
}

#[derive(Deserialize)]
struct Steps {
    steps: i64,
}

fn main() {
    let mut s = Server::new("reference", "1.0.0");

    s.tool(
        Tool::new("echo").description("Returns its text.").output_schema_of::<Text>(),
        |_cx: &Context, input: Text| -> Result<ToolResult, Error> { ToolResult::text(input.text.clone()).with_structured(&input) },
    );

    s.tool(
        Tool::new("sum").description("Adds up an array of numbers.").output_schema_of::<Sum>(),
        |_cx: &Context, input: Numbers| -> Result<ToolResult, Error> {
            let sum: f64 = input.numbers.iter().sum();
            // The text is the sum as a JSON number: 6, 2.5.
            ToolResult::text(json_number(sum)?).with_structured(&Sum { sum })
        },
    );

    s.tool(
        Tool::new("progress")
            .description("Reports progress in the given number of steps.")
            .property("steps", json!({"minimum": 1, "maximum": 20})),
        |cx: &Context, input: Steps| -> Result<String, Error> {
            for i in 1..=input.steps {
                cx.progress(i as f64, Some(input.steps as f64), None);
            }
            Ok(format!("done {}", input.steps))
        },
    );

    s.tool(Tool::new("ask").description("Asks the user for their name and greets them."), |cx: &Context, _: NoInput| -> Result<ToolResult, Error> {
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
        match cx.elicit_key("name", "What is your name?", schema) {
            Ok(r) => Ok(ToolResult::text(match (r.accepted(), r.get_str("name")) {
                (true, Some(name)) => format!("hello {}", name),
                _ => "no name given".to_string(),
            })),
            Err(e) => match e.client_error() {
                Some(c) => Ok(ToolResult::error(c.message.clone())),
                None => Err(e),
            },
        }
    });

    s.resource(Resource::new("ref://greeting", "greeting").mime_type("text/plain"), |_cx, _uri| {
        Ok(vec![ResourceContents::text("hello from the reference tools")])
    });

    s.prompt(
        Prompt::new("greet").description("Asks the assistant to greet someone.").argument("name", "who to greet", true),
        |_cx, args| Ok(PromptResult::new(vec![PromptMessage::user(format!("Say hello to {}.", args["name"]))])),
    );

    s.run();
}

/// A float as JSON writes it, with integers without a fraction (6, not
/// 6.0), as the reference's text requires.
fn json_number(x: f64) -> Result<String, Error> {
    if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
        return Ok(format!("{}", x as i64));
    }
    Ok(serde_json::to_string(&x)?)
}
