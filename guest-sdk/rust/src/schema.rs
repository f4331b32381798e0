//! JSON Schema from serde types.
//!
//! A type's `Deserialize` implementation (derived or written by hand) says,
//! as it runs, what it asks its deserializer for: a struct with these
//! fields, a string, a sequence of something, an optional value. [`derive`]
//! runs it against a deserializer that records those requests instead of
//! reading JSON, and turns the record into a schema. Whether a field is
//! required is found the same way: the type is deserialized again without
//! the field; if that succeeds (an `Option`, a `#[serde(default)]`) the
//! field is optional.
//!
//! What it cannot see: doc comments (add descriptions with
//! [`Tool::property`](crate::Tool::property)), validation a type does after
//! deserializing, `#[serde(flatten)]`, enums with data and untagged or
//! internally tagged enums (their schema is `{}`, any value), recursive
//! types. For those, declare the schema.

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor};
use serde_json::{json, Map, Value};
use std::cell::RefCell;
use std::fmt;

/// How deep types may nest before the derivation gives up (a recursive
/// type never ends).
const MAX_DEPTH: usize = 32;

/// Derives the JSON Schema of `T` from its `Deserialize` implementation.
/// For an output schema (`output` true) fields of type `Option<T>` are
/// typed `[T, "null"]`, since serializing `None` writes `null`. Errors say
/// why no schema could be derived.
pub fn derive<T: DeserializeOwned>(output: bool) -> Result<Value, String> {
    let cx = Cx { output, skip: None, props: RefCell::new(Vec::new()) };
    let mut root = Value::Null;
    T::deserialize(Tracer { cx: &cx, path: Vec::new(), out: &mut root })
        .map_err(|e| format!("cannot derive a JSON Schema for {}: {}", std::any::type_name::<T>(), e.msg))?;
    let props = cx.props.into_inner();
    for path in props {
        let cx = Cx { output, skip: Some(path.clone()), props: RefCell::new(Vec::new()) };
        let mut scratch = Value::Null;
        let optional = T::deserialize(Tracer { cx: &cx, path: Vec::new(), out: &mut scratch }).is_ok();
        if !optional {
            let (field, parent) = path.split_last().expect("a property path is never empty");
            if let Some(Value::Object(obj)) = node(&mut root, parent) {
                if let Value::Array(req) = obj.entry("required").or_insert_with(|| Value::Array(Vec::new())) {
                    req.push(Value::String(field.clone()));
                }
            }
        }
    }
    Ok(root)
}

/// The schema node at path (inside properties, items, additionalProperties
/// and prefixItems).
fn node<'v>(mut v: &'v mut Value, path: &[String]) -> Option<&'v mut Value> {
    for p in path {
        v = if p == "[]" {
            v.get_mut("items")?
        } else if p == "{}" {
            v.get_mut("additionalProperties")?
        } else if let Some(i) = p.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            v.get_mut("prefixItems")?.get_mut(i.parse::<usize>().ok()?)?
        } else {
            v.get_mut("properties")?.get_mut(p.as_str())?
        };
    }
    Some(v)
}

struct Cx {
    output: bool,
    /// The property path to leave out of the input (finding requiredness).
    skip: Option<Vec<String>>,
    /// The path of every struct field met.
    props: RefCell<Vec<Vec<String>>>,
}

/// The error of a traced deserialization.
#[derive(Debug)]
pub(crate) struct TraceError {
    msg: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for TraceError {}

impl de::Error for TraceError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        TraceError { msg: msg.to_string() }
    }
}

fn too_deep() -> TraceError {
    TraceError { msg: format!("types nest more than {} levels deep (a recursive type?); declare the schema", MAX_DEPTH) }
}

/// A deserializer that records what it is asked for into out.
struct Tracer<'a> {
    cx: &'a Cx,
    path: Vec<String>,
    out: &'a mut Value,
}

impl<'a> Tracer<'a> {
    fn set(&mut self, v: Value) {
        *self.out = v;
    }
    fn child<'b>(&'b self, seg: &str, out: &'b mut Value) -> Result<Tracer<'b>, TraceError> {
        if self.path.len() >= MAX_DEPTH {
            return Err(too_deep());
        }
        let mut path = self.path.clone();
        path.push(seg.to_string());
        Ok(Tracer { cx: self.cx, path, out })
    }
}

macro_rules! scalar {
    ($($method:ident => $schema:expr, $visit:ident($val:expr);)*) => {$(
        fn $method<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, TraceError> {
            self.set($schema);
            visitor.$visit($val)
        }
    )*};
}

impl<'de, 'a> de::Deserializer<'de> for Tracer<'a> {
    type Error = TraceError;

    fn deserialize_any<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, TraceError> {
        self.set(json!({}));
        visitor.visit_unit()
    }

    scalar! {
        deserialize_bool => json!({"type": "boolean"}), visit_bool(false);
        deserialize_i8 => json!({"type": "integer"}), visit_i64(1);
        deserialize_i16 => json!({"type": "integer"}), visit_i64(1);
        deserialize_i32 => json!({"type": "integer"}), visit_i64(1);
        deserialize_i64 => json!({"type": "integer"}), visit_i64(1);
        deserialize_u8 => json!({"type": "integer", "minimum": 0}), visit_u64(1);
        deserialize_u16 => json!({"type": "integer", "minimum": 0}), visit_u64(1);
        deserialize_u32 => json!({"type": "integer", "minimum": 0}), visit_u64(1);
        deserialize_u64 => json!({"type": "integer", "minimum": 0}), visit_u64(1);
        deserialize_f32 => json!({"type": "number"}), visit_f64(1.0);
        deserialize_f64 => json!({"type": "number"}), visit_f64(1.0);
        deserialize_char => json!({"type": "string", "minLength": 1, "maxLength": 1}), visit_char('a');
        deserialize_str => json!({"type": "string"}), visit_str("");
        deserialize_string => json!({"type": "string"}), visit_str("");
        deserialize_bytes => json!({"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 255}}), visit_bytes(&[]);
        deserialize_byte_buf => json!({"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 255}}), visit_bytes(&[]);
    }

    fn deserialize_unit<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, TraceError> {
        self.set(json!({"type": "null"}));
        visitor.visit_unit()
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, TraceError> {
        self.set(json!({}));
        visitor.visit_unit()
    }

    fn deserialize_i128<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, TraceError> {
        self.set(json!({"type": "integer"}));
        visitor.visit_i64(1)
    }

    fn deserialize_u128<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, TraceError> {
        self.set(json!({"type": "integer", "minimum": 0}));
        visitor.visit_u64(1)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TraceError> {
        let output = self.cx.output;
        let Tracer { cx, path, out } = self;
        let v = visitor.visit_some(Tracer { cx, path, out: &mut *out })?;
        if output {
            nullable(out);
        }
        Ok(v)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(mut self, _name: &'static str, visitor: V) -> Result<V::Value, TraceError> {
        self.set(json!({"type": "null"}));
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, TraceError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, TraceError> {
        self.set(json!({"type": "array", "items": {}}));
        let Tracer { cx, path, out } = self;
        let parent = Tracer { cx, path, out: &mut Value::Null };
        let items = out.get_mut("items").expect("just set");
        visitor.visit_seq(Seq { parent: &parent, slots: vec![("[]".to_string(), items)].into_iter() })
    }

    fn deserialize_tuple<V: Visitor<'de>>(mut self, len: usize, visitor: V) -> Result<V::Value, TraceError> {
        self.set(json!({"type": "array", "prefixItems": vec![json!({}); len], "minItems": len, "maxItems": len}));
        let Tracer { cx, path, out } = self;
        let parent = Tracer { cx, path, out: &mut Value::Null };
        let items = match out.get_mut("prefixItems") {
            Some(Value::Array(a)) => a,
            _ => unreachable!(),
        };
        let slots: Vec<(String, &mut Value)> =
            items.iter_mut().enumerate().map(|(i, v)| (format!("[{}]", i), v)).collect();
        visitor.visit_seq(Seq { parent: &parent, slots: slots.into_iter() })
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(self, _name: &'static str, len: usize, visitor: V) -> Result<V::Value, TraceError> {
        self.deserialize_tuple(len, visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, TraceError> {
        self.set(json!({"type": "object", "additionalProperties": {}}));
        let Tracer { cx, path, out } = self;
        let parent = Tracer { cx, path, out: &mut Value::Null };
        let value = out.get_mut("additionalProperties").expect("just set");
        visitor.visit_map(Fields { parent: &parent, fields: vec![("key", "{}".to_string(), value)].into_iter(), next: None })
    }

    fn deserialize_struct<V: Visitor<'de>>(mut self, _name: &'static str, fields: &'static [&'static str], visitor: V) -> Result<V::Value, TraceError> {
        let mut props = Map::new();
        for f in fields {
            props.insert(f.to_string(), json!({}));
        }
        self.set(if fields.is_empty() { json!({"type": "object"}) } else { json!({"type": "object", "properties": props}) });
        let Tracer { cx, path, out } = self;
        let mut none = Map::new();
        let props = match out.get_mut("properties") {
            Some(Value::Object(m)) => m,
            _ => &mut none,
        };
        // In declaration order, so that "required" lists fields in it.
        let mut entries: Vec<(usize, &mut Value)> = props
            .iter_mut()
            .map(|(name, v)| (fields.iter().position(|f| *f == name.as_str()).expect("a declared field"), v))
            .collect();
        entries.sort_by_key(|e| e.0);
        let mut slots = Vec::new();
        for (i, v) in entries {
            let name: &'static str = fields[i];
            let mut p = path.clone();
            p.push(name.to_string());
            if cx.skip.as_ref() == Some(&p) {
                continue;
            }
            if cx.skip.is_none() {
                cx.props.borrow_mut().push(p);
            }
            slots.push((name, name.to_string(), v));
        }
        let parent = Tracer { cx, path, out: &mut Value::Null };
        visitor.visit_map(Fields { parent: &parent, fields: slots.into_iter(), next: None })
    }

    fn deserialize_enum<V: Visitor<'de>>(mut self, _name: &'static str, variants: &'static [&'static str], visitor: V) -> Result<V::Value, TraceError> {
        if variants.is_empty() {
            return Err(de::Error::custom("an enum without variants has no value"));
        }
        self.set(json!({"type": "string", "enum": variants}));
        let Tracer { cx, path, out } = self;
        visitor.visit_enum(Enum { cx, path, out, variant: variants[0] })
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TraceError> {
        self.deserialize_str(visitor)
    }
}

/// Makes a schema also accept null.
fn nullable(v: &mut Value) {
    if let Some(obj) = v.as_object_mut() {
        match obj.get_mut("type") {
            Some(Value::String(t)) => {
                let t = t.clone();
                if t != "null" {
                    obj.insert("type".into(), json!([t, "null"]));
                }
            }
            Some(Value::Array(ts)) => {
                if !ts.iter().any(|t| t == "null") {
                    ts.push(json!("null"));
                }
            }
            _ => {} // {} already accepts null
        }
    }
}

/// The elements of a traced sequence or tuple: one slot each.
struct Seq<'p, 'a, I: Iterator<Item = (String, &'p mut Value)>> {
    parent: &'p Tracer<'a>,
    slots: I,
}

impl<'de, 'p, 'a, I: Iterator<Item = (String, &'p mut Value)>> de::SeqAccess<'de> for Seq<'p, 'a, I> {
    type Error = TraceError;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, TraceError> {
        match self.slots.next() {
            None => Ok(None),
            Some((seg, out)) => seed.deserialize(self.parent.child(&seg, out)?).map(Some),
        }
    }
}

/// The entries of a traced struct or map: (key, path segment, schema slot).
struct Fields<'p, 'a, I: Iterator<Item = (&'static str, String, &'p mut Value)>> {
    parent: &'p Tracer<'a>,
    fields: I,
    next: Option<(String, &'p mut Value)>,
}

impl<'de, 'p, 'a, I: Iterator<Item = (&'static str, String, &'p mut Value)>> de::MapAccess<'de> for Fields<'p, 'a, I> {
    type Error = TraceError;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, TraceError> {
        match self.fields.next() {
            None => Ok(None),
            Some((key, seg, out)) => {
                self.next = Some((seg, out));
                let d: de::value::StrDeserializer<TraceError> = key.into_deserializer();
                seed.deserialize(d).map(Some)
            }
        }
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, TraceError> {
        let (seg, out) = self.next.take().ok_or_else(|| de::Error::custom("value before key"))?;
        seed.deserialize(self.parent.child(&seg, out)?)
    }
}

/// A traced enum: its first variant is visited. A variant with data makes
/// the schema `{}` (any value): the derivation sees one variant only.
struct Enum<'a> {
    cx: &'a Cx,
    path: Vec<String>,
    out: &'a mut Value,
    variant: &'static str,
}

impl<'de, 'a> de::EnumAccess<'de> for Enum<'a> {
    type Error = TraceError;
    type Variant = Enum<'a>;
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Enum<'a>), TraceError> {
        let d: de::value::StrDeserializer<TraceError> = self.variant.into_deserializer();
        Ok((seed.deserialize(d)?, self))
    }
}

impl<'de, 'a> de::VariantAccess<'de> for Enum<'a> {
    type Error = TraceError;
    fn unit_variant(self) -> Result<(), TraceError> {
        Ok(())
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, TraceError> {
        *self.out = json!({});
        let mut scratch = Value::Null;
        seed.deserialize(Tracer { cx: self.cx, path: self.path, out: &mut scratch })
    }
    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, TraceError> {
        *self.out = json!({});
        let mut scratch = Value::Null;
        de::Deserializer::deserialize_tuple(Tracer { cx: self.cx, path: self.path, out: &mut scratch }, len, visitor)
    }
    fn struct_variant<V: Visitor<'de>>(self, fields: &'static [&'static str], visitor: V) -> Result<V::Value, TraceError> {
        *self.out = json!({});
        let mut scratch = Value::Null;
        de::Deserializer::deserialize_struct(Tracer { cx: self.cx, path: self.path, out: &mut scratch }, "", fields, visitor)
    }
}

/// Merges the keywords of patch into the schema (objects merge key by key,
/// anything else replaces).
pub(crate) fn merge(schema: &mut Value, patch: &Value) {
    match (schema.as_object_mut(), patch.as_object()) {
        (Some(s), Some(p)) => {
            for (k, v) in p {
                match s.get_mut(k) {
                    Some(existing) if existing.is_object() && v.is_object() => merge(existing, v),
                    _ => {
                        s.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        _ => *schema = patch.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use std::collections::HashMap;

    #[allow(dead_code)]
    #[derive(Deserialize)]
    struct Inner {
        x: f64,
        #[serde(default)]
        y: Vec<String>,
    }

    #[allow(dead_code)]
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    enum Mode {
        Fast,
        SlowButSure,
    }

    #[allow(dead_code)]
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct In {
        text: String,
        count: Option<u32>,
        max_items: i64,
        flags: HashMap<String, bool>,
        inner: Inner,
        list: Vec<Inner>,
        pair: (String, i32),
        mode: Mode,
        any: Value,
    }

    #[test]
    fn derives_struct_schema() {
        let got = derive::<In>(false).unwrap();
        let want = json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "count": {"type": "integer", "minimum": 0},
                "maxItems": {"type": "integer"},
                "flags": {"type": "object", "additionalProperties": {"type": "boolean"}},
                "inner": {"type": "object", "properties": {
                    "x": {"type": "number"},
                    "y": {"type": "array", "items": {"type": "string"}}}, "required": ["x"]},
                "list": {"type": "array", "items": {"type": "object", "properties": {
                    "x": {"type": "number"},
                    "y": {"type": "array", "items": {"type": "string"}}}, "required": ["x"]}},
                "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "minItems": 2, "maxItems": 2},
                "mode": {"type": "string", "enum": ["fast", "slowButSure"]},
                "any": {}
            },
            "required": ["text", "maxItems", "flags", "inner", "list", "pair", "mode", "any"]
        });
        assert_eq!(got, want);
    }

    #[test]
    fn output_schema_types_options_nullable() {
        #[allow(dead_code)]
        #[derive(Deserialize)]
        struct Out {
            a: Option<String>,
            b: u8,
        }
        let got = derive::<Out>(true).unwrap();
        assert_eq!(
            got,
            json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}, "b": {"type": "integer", "minimum": 0}}, "required": ["b"]})
        );
    }

    #[test]
    fn recursive_type_is_an_error() {
        #[allow(dead_code)]
        #[derive(Deserialize)]
        struct Node {
            children: Vec<Node>,
        }
        let err = derive::<Node>(false).unwrap_err();
        assert!(err.contains("recursive"), "{}", err);
    }

    #[test]
    fn merge_patches_keywords() {
        let mut s = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}});
        merge(&mut s, &json!({"properties": {"n": {"minimum": 1, "maximum": 20}}}));
        assert_eq!(s, json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 20}}}));
    }
}
