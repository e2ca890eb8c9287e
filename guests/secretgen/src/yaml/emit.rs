//! Writes a [`Document`] in block style, indented by 2, by the rules in the module docs of
//! `yaml`. Each scalar keeps its style when the style can hold its value on the lines this
//! writer uses, and is double-quoted otherwise (which every value fits). Callers check the
//! output by parsing it again ([`Document::same_as`]).

use super::tree::{Document, Kind, Node, NodeId, Style};
use super::{MAX_DEPTH, YamlError};

/// The longest implicit key YAML allows.
const MAX_KEY_LENGTH: usize = 1024;

/// Writes `doc`: its comments, then its content, ending with a newline.
pub(crate) fn write(doc: &Document) -> Result<String, YamlError> {
    let mut writer = Writer {
        doc,
        out: String::new(),
    };
    for comment in &doc.comments {
        writer.out.push_str(comment);
        writer.out.push('\n');
    }
    if let Some(root) = doc.root() {
        writer.root(root)?;
    }
    Ok(writer.out)
}

struct Writer<'a> {
    doc: &'a Document,
    out: String,
}

impl Writer<'_> {
    fn root(&mut self, id: NodeId) -> Result<(), YamlError> {
        let node = self.doc.node(id);
        let props = properties(node)?;
        if !props.is_empty() {
            self.out.push_str(&props);
            self.out.push('\n');
        }
        match &node.kind {
            Kind::Mapping(pairs) if !pairs.is_empty() => self.pairs(pairs, 0, false, 0),
            Kind::Sequence(items) if !items.is_empty() => self.items(items, 0, false, 0),
            _ => Err(YamlError::Unsupported(
                "a document that is not a block collection",
            )),
        }
    }

    fn indent(&mut self, indent: usize) {
        self.out.extend(std::iter::repeat_n(' ', indent));
    }

    /// Writes the pairs of a block mapping at column `indent`; with `inline_first` the first
    /// key continues the current line (after `- `).
    fn pairs(
        &mut self,
        pairs: &[(NodeId, NodeId)],
        indent: usize,
        inline_first: bool,
        depth: usize,
    ) -> Result<(), YamlError> {
        for (i, &(key, value)) in pairs.iter().enumerate() {
            if !(inline_first && i == 0) {
                self.indent(indent);
            }
            if self.is_null_key(key) {
                // An empty (null) key needs the explicit form: `?`, then `:` on its own line.
                self.out.push('?');
                let props = properties(self.doc.node(key))?;
                if !props.is_empty() {
                    self.out.push(' ');
                    self.out.push_str(&props);
                }
                self.out.push('\n');
                self.indent(indent);
            } else {
                self.key(key)?;
            }
            self.out.push(':');
            self.after_indicator(value, indent + 2, depth + 1)?;
        }
        Ok(())
    }

    /// Writes the items of a block sequence with their `-` at column `indent`.
    fn items(
        &mut self,
        items: &[NodeId],
        indent: usize,
        inline_first: bool,
        depth: usize,
    ) -> Result<(), YamlError> {
        for (i, &item) in items.iter().enumerate() {
            if !(inline_first && i == 0) {
                self.indent(indent);
            }
            self.out.push('-');
            self.item(item, indent, depth + 1)?;
        }
        Ok(())
    }

    /// Writes a sequence item after its `-` at column `dash`. A collection without
    /// properties starts on the dash's line (`- a: 1`, `- - x`).
    fn item(&mut self, id: NodeId, dash: usize, depth: usize) -> Result<(), YamlError> {
        let node = self.doc.node(id);
        if node.anchor.is_none() && node.tag.is_none() {
            match &node.kind {
                Kind::Mapping(pairs) if !pairs.is_empty() => {
                    self.out.push(' ');
                    return self.pairs(pairs, dash + 2, true, depth);
                }
                Kind::Sequence(items) if !items.is_empty() => {
                    self.out.push(' ');
                    return self.items(items, dash + 2, true, depth);
                }
                _ => {}
            }
        }
        self.after_indicator(id, dash + 2, depth)
    }

    /// Writes a node after `key:` or `-`: the rest of the line, then any lines of its own,
    /// with children and block scalar lines at column `indent`.
    fn after_indicator(
        &mut self,
        id: NodeId,
        indent: usize,
        depth: usize,
    ) -> Result<(), YamlError> {
        if depth > MAX_DEPTH + 4 {
            return Err(YamlError::TooDeep);
        }
        let node = self.doc.node(id);
        let props = properties(node)?;
        if !props.is_empty() {
            self.out.push(' ');
            self.out.push_str(&props);
        }
        match &node.kind {
            Kind::Alias { anchor, .. } => {
                self.out.push_str(" *");
                self.out.push_str(anchor);
                self.out.push('\n');
            }
            Kind::Mapping(pairs) if pairs.is_empty() => self.out.push_str(" {}\n"),
            Kind::Sequence(items) if items.is_empty() => self.out.push_str(" []\n"),
            Kind::Mapping(pairs) => {
                self.out.push('\n');
                self.pairs(pairs, indent, false, depth)?;
            }
            Kind::Sequence(items) => {
                self.out.push('\n');
                self.items(items, indent, false, depth)?;
            }
            Kind::Scalar { value, style } => match scalar(value, *style, false) {
                Written::Inline(text) => {
                    if !text.is_empty() {
                        self.out.push(' ');
                        self.out.push_str(&text);
                    }
                    self.out.push('\n');
                }
                Written::MultiLine { first, rest } => {
                    self.out.push(' ');
                    self.out.push_str(first);
                    self.out.push('\n');
                    for line in rest {
                        if !line.is_empty() {
                            self.indent(indent);
                            self.out.push_str(line);
                        }
                        self.out.push('\n');
                    }
                }
                Written::Block { header, lines } => {
                    self.out.push(' ');
                    self.out.push_str(&header);
                    self.out.push('\n');
                    for line in lines {
                        if !line.is_empty() {
                            self.indent(indent);
                            self.out.push_str(line);
                        }
                        self.out.push('\n');
                    }
                }
            },
        }
        Ok(())
    }

    /// Whether a key is an empty plain scalar.
    fn is_null_key(&self, id: NodeId) -> bool {
        matches!(&self.doc.node(id).kind, Kind::Scalar { value, style: Style::Plain } if value.is_empty())
    }

    /// Writes a mapping key (without its `:`).
    fn key(&mut self, id: NodeId) -> Result<(), YamlError> {
        let node = self.doc.node(id);
        match &node.kind {
            Kind::Alias { anchor, .. } => {
                // The space keeps a reader from taking `:` into the alias name.
                self.out.push('*');
                self.out.push_str(anchor);
                self.out.push(' ');
            }
            Kind::Scalar { value, style } => {
                let Written::Inline(text) = scalar(value, *style, true) else {
                    return Err(YamlError::Unsupported("a block scalar as a key"));
                };
                if text.is_empty() {
                    return Err(YamlError::Unsupported("an empty key"));
                }
                if text.len() > MAX_KEY_LENGTH {
                    return Err(YamlError::Unsupported("a key longer than 1024 characters"));
                }
                let props = properties(node)?;
                if !props.is_empty() {
                    self.out.push_str(&props);
                    self.out.push(' ');
                }
                self.out.push_str(&text);
            }
            Kind::Mapping(_) | Kind::Sequence(_) => {
                return Err(YamlError::Unsupported("a collection as a key"));
            }
        }
        Ok(())
    }
}

/// A scalar as written: on the current line, as a plain scalar continued on more lines, or
/// as a block scalar's header and lines.
enum Written<'v> {
    Inline(String),
    MultiLine { first: &'v str, rest: Vec<&'v str> },
    Block { header: String, lines: Vec<&'v str> },
}

/// Writes a scalar in its style when that style holds the value here, else double-quoted.
fn scalar(value: &str, style: Style, key: bool) -> Written<'_> {
    match style {
        Style::Plain if value.is_empty() && !key => Written::Inline(String::new()),
        Style::Plain if plain_fits(value) => Written::Inline(value.to_owned()),
        // A key is always followed by `:`, so a colon may end it (`a::` is the key `a:`).
        Style::Plain if key && value.strip_suffix(':').is_some_and(plain_fits) => {
            Written::Inline(value.to_owned())
        }
        Style::Plain if !key && multi_line_plain_fits(value) => {
            let mut lines = folded_lines(value);
            let first = lines.remove(0);
            Written::MultiLine { first, rest: lines }
        }
        Style::SingleQuoted if single_line_fits(value) => {
            Written::Inline(format!("'{}'", value.replace('\'', "''")))
        }
        Style::Literal if !key && literal_fits(value) => block(value, '|', literal_lines),
        Style::Folded if !key && folded_fits(value) => block(value, '>', folded_lines),
        _ => Written::Inline(double_quoted(value)),
    }
}

/// A block scalar: the indicator with the chomping that keeps the value's trailing line
/// breaks (`-` none, clip one, `+` more), then the content lines and the extra breaks.
fn block<'v>(value: &'v str, indicator: char, lines: fn(&'v str) -> Vec<&'v str>) -> Written<'v> {
    let content = value.trim_end_matches('\n');
    let breaks = value.len() - content.len();
    let chomping = match breaks {
        0 => "-",
        1 => "",
        _ => "+",
    };
    let mut lines = lines(content);
    lines.extend(std::iter::repeat_n("", breaks.saturating_sub(1)));
    Written::Block {
        header: format!("{indicator}{chomping}"),
        lines,
    }
}

fn literal_lines(content: &str) -> Vec<&str> {
    content.split('\n').collect()
}

/// Folded content: paragraphs separated by `n` line breaks are written with `n` empty
/// lines between them (a single break between two lines would fold into a space).
fn folded_lines(content: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut pending = 0;
    for segment in content.split('\n') {
        if segment.is_empty() {
            pending += 1;
            continue;
        }
        if !lines.is_empty() {
            lines.extend(std::iter::repeat_n("", pending + 1));
        }
        lines.push(segment);
        pending = 0;
    }
    lines
}

/// Whether a character may appear unescaped in a YAML 1.1 stream (`c-printable`), other
/// than as a line break.
fn printable_inline(c: char) -> bool {
    matches!(c, ' '..='~' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
        && c != '\u{FEFF}'
}

/// Whether a value can be written plain on one line in block context and read back as the
/// same text. Conservative: anything doubtful is quoted, which a caller's check accepts
/// only where the quoted value resolves as the plain one did.
fn plain_fits(value: &str) -> bool {
    let mut chars = value.chars();
    let (Some(first), second) = (chars.next(), chars.next()) else {
        return false;
    };
    let first_ok = match first {
        '-' | '?' | ':' => second.is_some_and(|c| c != ' '),
        ',' | '[' | ']' | '{' | '}' | '#' | '&' | '*' | '!' | '|' | '>' | '\'' | '"' | '%'
        | '@' | '`' | ' ' | '\t' => false,
        _ => true,
    };
    first_ok
        && value.chars().all(|c| c == '\t' || printable_inline(c))
        && !value.ends_with([' ', '\t', ':'])
        && !value.contains(": ")
        && !value.contains(":\t")
        && !value.contains(" #")
        && !value.contains("\t#")
        && !value.starts_with("---")
        && !value.starts_with("...")
}

/// Whether a value with line breaks can be a plain scalar continued on more lines (folded
/// like a `>` block): every line fits plain on its own and none starts a comment.
fn multi_line_plain_fits(value: &str) -> bool {
    value.contains('\n')
        && !value.starts_with('\n')
        && !value.ends_with('\n')
        && value
            .split('\n')
            .filter(|line| !line.is_empty())
            .all(plain_fits)
}

/// Whether a value can be single-quoted on one line.
fn single_line_fits(value: &str) -> bool {
    value.chars().all(printable_inline)
}

/// Whether a value can be a literal block: text whose first line does not start with
/// white space (which would need an indentation indicator), without trailing white space
/// on any line, of printable characters and tabs.
fn literal_fits(value: &str) -> bool {
    let content = value.trim_end_matches('\n');
    !content.is_empty()
        && content.split('\n').all(|line| {
            !line.ends_with([' ', '\t']) && line.chars().all(|c| c == '\t' || printable_inline(c))
        })
        && content
            .split('\n')
            .find(|line| !line.is_empty())
            .is_some_and(|line| !line.starts_with([' ', '\t']))
}

/// Whether a value can be a folded block with the paragraphs joined: no line starts or
/// ends with white space (more-indented lines are not folded), and it starts with text.
fn folded_fits(value: &str) -> bool {
    let content = value.trim_end_matches('\n');
    !content.is_empty()
        && !content.starts_with('\n')
        && content.split('\n').all(|line| {
            !line.starts_with([' ', '\t'])
                && !line.ends_with([' ', '\t'])
                && line.chars().all(printable_inline)
        })
}

/// A double-quoted scalar, escaping what YAML 1.1 readers (Psych) and 1.2 readers need.
fn double_quoted(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            '\u{07}' => out.push_str("\\a"),
            '\u{08}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{0B}' => out.push_str("\\v"),
            '\u{0C}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '\u{1B}' => out.push_str("\\e"),
            '\u{85}' => out.push_str("\\N"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if printable_inline(c) => out.push(c),
            c if u32::from(c) <= 0xFF => out.push_str(&format!("\\x{:02X}", u32::from(c))),
            c if u32::from(c) <= 0xFFFF => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push_str(&format!("\\U{:08X}", u32::from(c))),
        }
    }
    out.push('"');
    out
}

/// A node's anchor and tag as written before it (`&a !!str`), or nothing.
fn properties(node: &Node) -> Result<String, YamlError> {
    let mut props = Vec::new();
    if let Some(anchor) = &node.anchor {
        if anchor.is_empty()
            || !anchor
                .chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
        {
            return Err(YamlError::Unsupported("an anchor name it cannot spell"));
        }
        props.push(format!("&{anchor}"));
    }
    if let Some(tag) = &node.tag {
        props.push(tag_text(tag)?);
    }
    Ok(props.join(" "))
}

/// A tag in its shortest spelling: `!!suffix` for YAML's own, `!local`, or `!<verbatim>`.
fn tag_text(tag: &str) -> Result<String, YamlError> {
    let tag_char = |c: char| c.is_ascii_alphanumeric() || "-#;/?:@&=+$_.~*'()%".contains(c);
    let uri_char = |c: char| c.is_ascii_alphanumeric() || "-#;/?:@&=+$,_.!~*'()[]%".contains(c);
    if let Some(suffix) = tag.strip_prefix("tag:yaml.org,2002:")
        && !suffix.is_empty()
        && suffix.chars().all(tag_char)
    {
        return Ok(format!("!!{suffix}"));
    }
    if tag == "!" {
        return Ok(tag.to_owned());
    }
    if let Some(local) = tag.strip_prefix('!')
        && !local.is_empty()
        && local.chars().all(tag_char)
    {
        return Ok(tag.to_owned());
    }
    if !tag.is_empty() && tag.chars().all(uri_char) {
        return Ok(format!("!<{tag}>"));
    }
    Err(YamlError::Unsupported("a tag it cannot spell"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses, writes, and checks that the output reads back the same.
    fn rewrite(text: &str) -> String {
        let doc = Document::parse(text).expect("parses");
        let out = write(&doc).expect("writes");
        let again = Document::parse(&out).unwrap_or_else(|e| panic!("{e}:\n{out}"));
        assert!(
            doc.same_as(doc.root(), &again, again.root()),
            "reads differently:\n{text}\n---\n{out}"
        );
        assert_eq!(doc.comments, again.comments);
        out
    }

    #[test]
    fn documents_are_rewritten_by_the_rules() {
        let cases = [
            (
                "indent 2, list items under a key indented by 2 more",
                "production:\n    a: 1\n    list:\n    - x\n    - y\n",
                "production:\n  a: 1\n  list:\n    - x\n    - y\n",
            ),
            (
                "document markers are dropped",
                "%YAML 1.1\n---\na: b\n...\n",
                "a: b\n",
            ),
            (
                "folded scalars are joined",
                "a: >\n  one\n  two\n\n  three\n",
                "a: >\n  one two\n\n  three\n",
            ),
            (
                "merge keys are tagged",
                "base: &b\n  x: 1\nprod:\n  <<: *b\n  y: 2\n",
                "base: &b\n  x: 1\nprod:\n  !!merge <<: *b\n  y: 2\n",
            ),
            (
                "bare values stay bare and quoted ones quoted",
                "a: 123\nb: '123'\nc: \"x\"\nd: yes\ne: ~\nf:\n",
                "a: 123\nb: '123'\nc: \"x\"\nd: yes\ne: ~\nf:\n",
            ),
            (
                "a PEM stays a | block",
                "k: |\n  -----BEGIN X-----\n  abc\n  -----END X-----\n",
                "k: |\n  -----BEGIN X-----\n  abc\n  -----END X-----\n",
            ),
            (
                "flow collections become block ones, empty ones stay flow",
                "a: {x: 1, y: [p, q]}\nb: []\nc: {}\n",
                "a:\n  x: 1\n  y:\n    - p\n    - q\nb: []\nc: {}\n",
            ),
            (
                "comments before the content are kept",
                "# keep me\n---\na: 1 # dropped\n",
                "# keep me\na: 1\n",
            ),
            (
                "tags and anchors keep their spelling",
                "a: !!str 1\nb: !local x\nc: &x !!binary aGk=\nd: *x\n",
                "a: !!str 1\nb: !local x\nc: &x !!binary aGk=\nd: *x\n",
            ),
            (
                "mappings and lists in lists are compact",
                "l:\n- a: 1\n  b: 2\n- - x\n  - y\n",
                "l:\n  - a: 1\n    b: 2\n  - - x\n    - y\n",
            ),
        ];
        for (name, text, expected) in cases {
            assert_eq!(rewrite(text), expected, "{name}");
        }
    }

    #[test]
    fn awkward_scalars_are_quoted_and_read_back_the_same() {
        let cases = [
            "a: \"line\\nbreak\"\n",
            "a: \"tab\\there\"\n",
            "a: tab\tinside plain\n",
            "a: \"bell\\a nel\\N ls\\L bom\\uFEFF\"\n",
            "a: ' leading and trailing '\n",
            "a: \"- dash\"\n",
            "a: \"#hash\"\n",
            "a: \"colon: space\"\n",
            "a: \"--- marker\"\n",
            "\"key: with colon\": 1\n",
            "a: |2\n   indented first line\n",
            "a: |\n  trailing space \n",
            "a: |+\n  keep\n\n\nb: 1\n",
            "a: |-\n  strip\n",
            "a: >\n  folded\n   more indented\n  back\n",
            "a: plain\n  multi line\n\n  scalar\n",
            "JJ -:\n\n ::::5\n\n JJ\n",
            ":c::\n",
            "- 12\n\n  34\n",
            "? complex\n: value\n",
            "?\n",
            "? &n\n: v\nk: *n\n",
            "- ? \n  : x\n",
            "a: 'it''s'\n",
            "- top\n- level\n- list\n",
            "a: \"\\U0001F600 emoji and \\x7F del\"\n",
            "*a : 1\n",
        ];
        for text in cases {
            let text = if text.starts_with('*') {
                "x: &a k\ny:\n  *a : 1\n"
            } else {
                text
            };
            rewrite(text);
        }
    }

    #[test]
    fn collections_as_keys_are_refused() {
        let doc = Document::parse("? [a, b]\n: c\n").expect("parses");
        assert!(matches!(write(&doc), Err(YamlError::Unsupported(_))));
    }
}
