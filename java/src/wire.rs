//! What crosses the JNI boundary as text: builder options in, fields (health snapshots, error
//! data) out. The separator is the ASCII unit separator, which no option value or message holds
//! (a value that does is refused by the core's parsers like any other bad text).

use polyflake::{Error, Result, Value};

/// The separator between tokens (ASCII unit separator, U+001F).
pub const SEP: char = '\u{1f}';

/// Fields as one string: `name SEP value SEP ...`, each value tagged by its first character:
/// `i` an integer, `f` a float, `b` a flag (`btrue`/`bfalse`), `s` text, `n` absent, `r<count>`
/// a nested record of `count` fields that follow.
pub fn encode_fields(fields: &[(&'static str, Value)]) -> String {
    let mut out = String::new();
    push_fields(&mut out, fields);
    out
}

fn push_fields(out: &mut String, fields: &[(&'static str, Value)]) {
    for (name, value) in fields {
        push(out, name);
        match value {
            Value::Int(v) => push(out, &format!("i{v}")),
            Value::Float(v) => push(out, &format!("f{v:?}")),
            Value::Bool(v) => push(out, &format!("b{v}")),
            Value::Text(v) => push(out, &format!("s{v}")),
            Value::Null => push(out, "n"),
            Value::Fields(inner) => {
                push(out, &format!("r{}", inner.len()));
                push_fields(out, inner);
            }
        }
    }
}

fn push(out: &mut String, token: &str) {
    if !out.is_empty() {
        out.push(SEP);
    }
    out.push_str(token);
}

/// Builder options as the Java side sends them: `key SEP value` pairs, in the order set.
pub struct Options(Vec<(String, String)>);

impl Options {
    /// Split `text` into its pairs (an empty string has none).
    pub fn parse(text: &str) -> Result<Options> {
        if text.is_empty() {
            return Ok(Options(Vec::new()));
        }
        let tokens: Vec<&str> = text.split(SEP).collect();
        if tokens.len() % 2 != 0 {
            return Err(bad(
                "options",
                format!("{} tokens, not pairs", tokens.len()),
            ));
        }
        let pairs = tokens
            .chunks(2)
            .map(|p| (p[0].to_string(), p[1].to_string()))
            .collect();
        Ok(Options(pairs))
    }

    /// The last value of `key`, taken out (a key set twice keeps its last value).
    pub fn take(&mut self, key: &str) -> Option<String> {
        let last = self.0.iter().rposition(|(k, _)| k == key)?;
        let value = self.0.remove(last).1;
        self.0.retain(|(k, _)| k != key);
        Some(value)
    }

    /// Every value of `key`, in order, taken out.
    pub fn take_all(&mut self, key: &str) -> Vec<String> {
        let (all, rest) = std::mem::take(&mut self.0)
            .into_iter()
            .partition(|(k, _)| k == key);
        self.0 = rest;
        all.into_iter().map(|(_, v)| v).collect()
    }

    /// `key` as a number of type `T` (out of its range: the core's `InvalidArgument`).
    pub fn number<T: std::str::FromStr>(&mut self, key: &'static str) -> Result<Option<T>> {
        self.take(key)
            .map(|v| v.parse::<T>().map_err(|_| Error::too_wide(key, &v)))
            .transpose()
    }

    /// Refuse a key nothing took (a Java builder and this file out of step).
    pub fn finish(self) -> Result<()> {
        match self.0.first() {
            Some((k, v)) => Err(bad("options", format!("unknown option {k:?} = {v:?}"))),
            None => Ok(()),
        }
    }
}

/// The core's `InvalidArgument` for setting `name`.
pub(crate) fn bad(name: &'static str, reason: String) -> Error {
    Error::InvalidArgument { name, reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_nest_and_tag() {
        let f = vec![
            ("a", Value::Int(-3)),
            ("l", Value::Fields(vec![("x", Value::Null)])),
            ("w", Value::Float(5.0)),
        ];
        assert_eq!(
            encode_fields(&f),
            "a\u{1f}i-3\u{1f}l\u{1f}r1\u{1f}x\u{1f}n\u{1f}w\u{1f}f5.0"
        );
    }

    #[test]
    fn options_take_last_and_refuse_leftovers() {
        let mut o = Options::parse("a\u{1f}1\u{1f}a\u{1f}2\u{1f}b\u{1f}x").unwrap();
        assert_eq!(o.take("a").as_deref(), Some("2"));
        assert!(o.finish().is_err());
        assert!(Options::parse("a").is_err());
    }
}
