//! RFC 6570 level-1 URI templates: `{name}` expressions in literal text.

use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq)]
enum Part {
    Literal(String),
    Var(String),
}

/// A parsed template.
#[derive(Clone, Debug)]
pub(crate) struct UriTemplate {
    parts: Vec<Part>,
}

impl UriTemplate {
    /// Parses a level-1 template; operators (`{+x}`, `{?q}`), adjacent
    /// expressions and unbalanced braces are refused.
    pub(crate) fn parse(t: &str) -> Result<UriTemplate, String> {
        let mut parts = Vec::new();
        let mut rest = t;
        while !rest.is_empty() {
            match rest.find(|c| c == '{' || c == '}') {
                None => {
                    parts.push(Part::Literal(rest.to_string()));
                    break;
                }
                Some(i) if rest.as_bytes()[i] == b'}' => return Err(format!("uri template {:?}: unbalanced '}}'", t)),
                Some(i) => {
                    if i > 0 {
                        parts.push(Part::Literal(rest[..i].to_string()));
                    }
                    let end = rest[i..].find('}').ok_or_else(|| format!("uri template {:?}: unclosed '{{'", t))? + i;
                    let name = &rest[i + 1..end];
                    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.') {
                        return Err(format!("uri template {:?}: {{{}}} is not a level-1 variable", t, name));
                    }
                    if let Some(Part::Var(_)) = parts.last() {
                        return Err(format!("uri template {:?}: adjacent expressions", t));
                    }
                    parts.push(Part::Var(name.to_string()));
                    rest = &rest[end + 1..];
                }
            }
        }
        Ok(UriTemplate { parts })
    }

    pub(crate) fn has_variables(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::Var(_)))
    }

    /// The variables' values if uri matches (a variable is one or more
    /// characters other than '/', '?' and '#', percent-decoded).
    pub(crate) fn matches(&self, uri: &str) -> Option<HashMap<String, String>> {
        let mut vars = HashMap::new();
        if match_parts(&self.parts, uri, &mut vars) {
            Some(vars)
        } else {
            None
        }
    }
}

fn match_parts(parts: &[Part], s: &str, vars: &mut HashMap<String, String>) -> bool {
    match parts.split_first() {
        None => s.is_empty(),
        Some((Part::Literal(l), rest)) => s.starts_with(l.as_str()) && match_parts(rest, &s[l.len()..], vars),
        Some((Part::Var(name), rest)) => {
            let max = s.find(|c| c == '/' || c == '?' || c == '#').unwrap_or(s.len());
            // Longest first, as a greedy regular expression would.
            for end in (1..=max).rev() {
                if !s.is_char_boundary(end) {
                    continue;
                }
                if match_parts(rest, &s[end..], vars) {
                    match percent_decode(&s[..end]) {
                        Some(v) => {
                            vars.insert(name.clone(), v);
                            return true;
                        }
                        None => return false,
                    }
                }
            }
            false
        }
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_level_one() {
        let t = UriTemplate::parse("notes://{folder}/{id}.txt").unwrap();
        let v = t.matches("notes://work/a%20b.c.txt").unwrap();
        assert_eq!(v["folder"], "work");
        assert_eq!(v["id"], "a b.c");
        assert!(t.matches("notes://work/.txt").is_none());
        assert!(t.matches("notes://a/b/c.txt").is_none());
        assert!(t.matches("notes://a/%zz.txt").is_none());
    }

    #[test]
    fn refuses_other_levels() {
        for bad in ["a://{+x}", "a://{?q}", "a://{x}{y}", "a://{x", "a://x}", "a://{}"] {
            assert!(UriTemplate::parse(bad).is_err(), "{}", bad);
        }
    }
}
