//! `secrets.yml`: the layout of the document the Job writes (one environment, fields
//! indented by 2, a PEM in a `|` block, list items indented by 4) and each field's value.

use serde_json::{Map, Value, json};

use super::IssueWindow;

/// The shape of a `secrets.yml` value laid out as the Job writes it; anything else is
/// described as a layout error.
pub fn shape(value: &[u8], window: &IssueWindow) -> Value {
    let text = String::from_utf8_lossy(value);
    let trailing_newline = text.ends_with('\n');
    let body = text.strip_suffix('\n').unwrap_or(&text);
    match fields(body, window) {
        Ok((env, indent, fields)) => json!({
            "kind": "railsSecrets",
            "env": env,
            "indent": indent,
            "fields": fields,
            "trailingNewline": trailing_newline,
        }),
        Err(e) => json!({"kind": "railsSecrets", "layout": e}),
    }
}

type Fields = (String, usize, Map<String, Value>);

fn fields(body: &str, window: &IssueWindow) -> Result<Fields, String> {
    let mut lines = body.split('\n').peekable();
    let first = lines.next().unwrap_or_default();
    let env = first
        .strip_suffix(':')
        .filter(|e| !e.starts_with(' ') && !e.contains(' '))
        .ok_or(format!("the first line is not `<env>:`: {first:?}"))?;
    let mut indent = None;
    let mut fields = Map::new();
    while let Some(line) = lines.next() {
        let spaces = leading_spaces(line);
        if *indent.get_or_insert(spaces) != spaces {
            return Err(format!("a field indented unlike the first: {line:?}"));
        }
        let (name, rest) = line[spaces..]
            .split_once(':')
            .ok_or(format!("not a field: {line:?}"))?;
        let rest = rest.trim_start();
        let nested: Vec<&str> = std::iter::from_fn(|| {
            lines.next_if(|l| {
                leading_spaces(l) > spaces || (rest.is_empty() && l.trim_start().starts_with("- "))
            })
        })
        .collect();
        let field = match rest {
            "" => list(&nested)?,
            "|" | "|-" | "|+" => block(rest, &nested, window),
            scalar => {
                json!({"kind": "scalar", "style": style(scalar), "value": super::text(unquoted(scalar).as_bytes())})
            }
        };
        fields.insert(name.to_owned(), field);
    }
    Ok((env.to_owned(), indent.unwrap_or(0), fields))
}

fn leading_spaces(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn style(scalar: &str) -> &'static str {
    match scalar.chars().next() {
        Some('"') => "double-quoted",
        Some('\'') => "single-quoted",
        _ => "plain",
    }
}

fn unquoted(scalar: &str) -> &str {
    scalar
        .strip_prefix(['"', '\''])
        .and_then(|s| s.strip_suffix(['"', '\'']))
        .unwrap_or(scalar)
}

/// A literal block: its indicator, its indentation and the PEM it holds.
fn block(indicator: &str, lines: &[&str], window: &IssueWindow) -> Value {
    let indent = lines.first().map_or(0, |l| leading_spaces(l));
    let mut content: String = lines
        .iter()
        .map(|l| format!("{}\n", l.get(indent..).unwrap_or_default()))
        .collect();
    if indicator == "|-" {
        content.pop();
    }
    json!({
        "kind": "block",
        "style": indicator,
        "indent": indent,
        "value": super::pem::shape(content.as_bytes(), window),
    })
}

/// A block sequence of plain scalars.
fn list(lines: &[&str]) -> Result<Value, String> {
    let indent = lines.first().map_or(0, |l| leading_spaces(l));
    let items = lines
        .iter()
        .map(|l| {
            let item = l
                .trim_start()
                .strip_prefix("- ")
                .ok_or(format!("not a list item: {l:?}"))?;
            Ok(json!({"kind": "scalar", "style": style(item), "value": super::text(unquoted(item).as_bytes())}))
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(json!({"kind": "list", "itemIndent": indent, "items": items}))
}
