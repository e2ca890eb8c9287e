//! The JSONPath subset CRD printer columns use (client-go's `jsonpath` with missing keys
//! allowed), parsed once per column and evaluated against each object.
//!
//! | syntax                          | selects                                          |
//! |---------------------------------|--------------------------------------------------|
//! | `.`                             | the object itself                                |
//! | `.a.b`, `['a']`, `["a"]`        | a field (`\.` escapes a dot in a name)           |
//! | `.*`, `[*]`                     | every element of an array or value of a map      |
//! | `[2]`, `[-1]`                   | an array element (negative: from the end)        |
//! | `[1:3]`, `[:2]`, `[1:]`         | a slice of an array                              |
//! | `..a`                           | every field `a` at any depth                     |
//! | `[?(@.a.b)]`                    | the array elements where `@.a.b` exists          |
//! | `[?(@.a=="x")]`, `[?(@.n>2)]`   | the elements whose `@.a` compares (`== != < <= > >=`) to a string (either quote), number or boolean |
//!
//! A key, index or filter that finds nothing selects nothing (never an error); values of the
//! wrong shape (a field of an array, an index of a map) likewise. Anything else does not
//! parse: [`JsonPathError`].

use serde_json::Value;

/// A printer column's JSONPath that does not parse.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("unrecognized column definition {path:?}: {reason}")]
pub(crate) struct JsonPathError {
    pub path: String,
    pub reason: String,
}

/// A parsed path.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JsonPath(Vec<Step>);

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(String),
    Descendants(String),
    All,
    Index(i64),
    Slice(Option<i64>, Option<i64>),
    Filter(Box<Filter>),
}

#[derive(Debug, Clone, PartialEq)]
struct Filter {
    left: JsonPath,
    /// `None`: an existence test.
    compare: Option<(Op, Value)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl JsonPath {
    /// Parses `path` (as a CRD's `jsonPath`, without the braces).
    pub(crate) fn parse(path: &str) -> Result<Self, JsonPathError> {
        let fail = |reason: &str| JsonPathError {
            path: path.to_owned(),
            reason: reason.to_owned(),
        };
        let mut parser = Parser {
            chars: path.chars().collect(),
            at: 0,
        };
        let steps = parser.steps(false).map_err(|r| fail(&r))?;
        if parser.at != parser.chars.len() {
            return Err(fail(&format!(
                "unexpected {:?} at {}",
                parser.chars[parser.at], parser.at
            )));
        }
        Ok(Self(steps))
    }

    /// Every value the path selects in `root`, in document order.
    pub(crate) fn find<'a>(&self, root: &'a Value) -> Vec<&'a Value> {
        let mut current = vec![root];
        for step in &self.0 {
            current = current.into_iter().flat_map(|v| step.apply(v)).collect();
        }
        current
    }
}

impl Step {
    fn apply<'a>(&self, value: &'a Value) -> Vec<&'a Value> {
        match (self, value) {
            (Step::Field(name), Value::Object(map)) => map.get(name).into_iter().collect(),
            (Step::Descendants(name), _) => {
                let mut out = Vec::new();
                descendants(value, name, &mut out);
                out
            }
            (Step::All, Value::Array(items)) => items.iter().collect(),
            (Step::All, Value::Object(map)) => map.values().collect(),
            (Step::Index(i), Value::Array(items)) => {
                let len = items.len() as i64;
                let at = if *i < 0 { len + i } else { *i };
                usize::try_from(at)
                    .ok()
                    .and_then(|at| items.get(at))
                    .into_iter()
                    .collect()
            }
            (Step::Slice(from, to), Value::Array(items)) => {
                let len = items.len() as i64;
                let clamp = |i: i64| (if i < 0 { len + i } else { i }).clamp(0, len) as usize;
                let (from, to) = (clamp(from.unwrap_or(0)), clamp(to.unwrap_or(len)));
                items
                    .get(from..to.max(from))
                    .unwrap_or_default()
                    .iter()
                    .collect()
            }
            (Step::Filter(filter), Value::Array(items)) => {
                items.iter().filter(|item| filter.holds(item)).collect()
            }
            _ => Vec::new(),
        }
    }
}

fn descendants<'a>(value: &'a Value, name: &str, out: &mut Vec<&'a Value>) {
    match value {
        Value::Object(map) => {
            if let Some(v) = map.get(name) {
                out.push(v);
            }
            for v in map.values() {
                descendants(v, name, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| descendants(v, name, out)),
        _ => {}
    }
}

impl Filter {
    /// DECISION: client-go fails the whole column when a filter compares values of
    /// different types or finds several; here such an element simply does not match.
    fn holds(&self, item: &Value) -> bool {
        let found = self.left.find(item);
        let Some((op, right)) = &self.compare else {
            return !found.is_empty();
        };
        let [left] = found.as_slice() else {
            return false;
        };
        let ordering = match (left, right) {
            (Value::Number(l), Value::Number(r)) => l
                .as_f64()
                .zip(r.as_f64())
                .and_then(|(l, r)| l.partial_cmp(&r)),
            (Value::String(l), Value::String(r)) => Some(l.cmp(r)),
            (Value::Bool(l), Value::Bool(r)) => Some(l.cmp(r)),
            _ => None,
        };
        let Some(ordering) = ordering else {
            return false;
        };
        match op {
            Op::Eq => ordering.is_eq(),
            Op::Ne => ordering.is_ne(),
            Op::Lt => ordering.is_lt(),
            Op::Le => ordering.is_le(),
            Op::Gt => ordering.is_gt(),
            Op::Ge => ordering.is_ge(),
        }
    }
}

struct Parser {
    chars: Vec<char>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn eat(&mut self, s: &str) -> bool {
        let matches = s
            .chars()
            .enumerate()
            .all(|(i, c)| self.chars.get(self.at + i) == Some(&c));
        if matches {
            self.at += s.chars().count();
        }
        matches
    }

    /// Steps until the end, or (in a filter) until an operator or `)`.
    fn steps(&mut self, in_filter: bool) -> Result<Vec<Step>, String> {
        let mut steps = Vec::new();
        if !in_filter && self.chars.as_slice() == ['.'] {
            self.at = 1;
            return Ok(steps);
        }
        while let Some(c) = self.peek() {
            match c {
                '.' if self.eat("..") => {
                    let name = self.name()?;
                    steps.push(Step::Descendants(name));
                }
                '.' => {
                    self.at += 1;
                    let name = self.name()?;
                    steps.push(if name == "*" {
                        Step::All
                    } else {
                        Step::Field(name)
                    });
                }
                '[' => {
                    self.at += 1;
                    steps.push(self.bracket()?);
                }
                _ if in_filter => break,
                other => return Err(format!("unexpected {other:?} at {}", self.at)),
            }
        }
        if steps.is_empty() && !in_filter {
            return Err("empty path".into());
        }
        Ok(steps)
    }

    /// A field name after `.`: up to the next unescaped `.` or `[` (or, in a filter, an
    /// operator, space or `)`).
    fn name(&mut self) -> Result<String, String> {
        let mut name = String::new();
        while let Some(c) = self.peek() {
            match c {
                '\\' if self.chars.get(self.at + 1) == Some(&'.') => {
                    name.push('.');
                    self.at += 2;
                    continue;
                }
                '.' | '[' | ']' | '(' | ')' | '=' | '!' | '<' | '>' | ' ' | '{' | '}' | '"'
                | '\'' | '@' | ',' => break,
                _ => name.push(c),
            }
            self.at += 1;
        }
        if name.is_empty() {
            return Err(format!("missing field name at {}", self.at));
        }
        Ok(name)
    }

    /// What follows `[`, up to and including `]`.
    fn bracket(&mut self) -> Result<Step, String> {
        let step = match self.peek() {
            Some('*') => {
                self.at += 1;
                Step::All
            }
            Some(q @ ('\'' | '"')) => Step::Field(self.quoted(q)?),
            Some('?') => {
                if !self.eat("?(@") {
                    return Err(format!("a filter must start with ?(@ at {}", self.at));
                }
                let left = JsonPath(self.steps(true)?);
                self.skip_spaces();
                let compare = match self.op() {
                    Some(op) => {
                        self.skip_spaces();
                        Some((op, self.literal()?))
                    }
                    None => None,
                };
                self.skip_spaces();
                if !self.eat(")") {
                    return Err(format!("unterminated filter at {}", self.at));
                }
                Step::Filter(Box::new(Filter { left, compare }))
            }
            _ => {
                let from = self.integer();
                if self.eat(":") {
                    Step::Slice(from, self.integer())
                } else {
                    Step::Index(from.ok_or_else(|| format!("bad index at {}", self.at))?)
                }
            }
        };
        if !self.eat("]") {
            return Err(format!("missing ] at {}", self.at));
        }
        Ok(step)
    }

    fn skip_spaces(&mut self) {
        while self.peek() == Some(' ') {
            self.at += 1;
        }
    }

    fn op(&mut self) -> Option<Op> {
        [
            ("==", Op::Eq),
            ("!=", Op::Ne),
            ("<=", Op::Le),
            (">=", Op::Ge),
            ("<", Op::Lt),
            (">", Op::Gt),
        ]
        .into_iter()
        .find(|(s, _)| self.eat(s))
        .map(|(_, op)| op)
    }

    fn integer(&mut self) -> Option<i64> {
        let start = self.at;
        if self.peek() == Some('-') {
            self.at += 1;
        }
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        let text: String = self.chars[start..self.at].iter().collect();
        let parsed = text.parse().ok();
        if parsed.is_none() {
            self.at = start;
        }
        parsed
    }

    fn quoted(&mut self, quote: char) -> Result<String, String> {
        self.at += 1;
        let mut text = String::new();
        loop {
            match self.peek() {
                None => return Err("unterminated string".into()),
                Some('\\') if self.chars.get(self.at + 1).is_some() => {
                    text.push(self.chars[self.at + 1]);
                    self.at += 2;
                }
                Some(c) if c == quote => {
                    self.at += 1;
                    return Ok(text);
                }
                Some(c) => {
                    text.push(c);
                    self.at += 1;
                }
            }
        }
    }

    /// The right side of a filter comparison: a quoted string, a number, `true` or `false`.
    fn literal(&mut self) -> Result<Value, String> {
        match self.peek() {
            Some(q @ ('\'' | '"')) => Ok(Value::String(self.quoted(q)?)),
            _ if self.eat("true") => Ok(Value::Bool(true)),
            _ if self.eat("false") => Ok(Value::Bool(false)),
            _ => {
                let start = self.at;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_digit() || matches!(c, '-' | '.' | 'e' | 'E' | '+'))
                {
                    self.at += 1;
                }
                let text: String = self.chars[start..self.at].iter().collect();
                serde_json::from_str::<serde_json::Number>(&text)
                    .map(Value::Number)
                    .map_err(|_| format!("bad literal {text:?} at {start}"))
            }
        }
    }
}

#[cfg(test)]
#[path = "jsonpath_tests.rs"]
mod tests;
