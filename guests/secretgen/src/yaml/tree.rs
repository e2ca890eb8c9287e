//! The document tree: an arena of nodes built from libyaml's events.

use super::events::{Event, Parser};
use super::resolve;
use super::{MAX_DEPTH, YamlError};

/// The lines of `text` as libyaml counts them: broken at LF, CR, CR LF, and YAML 1.1's
/// NEL, LS and PS.
fn yaml_lines(text: &str) -> impl Iterator<Item = &str> {
    text.split('\n').flat_map(|line| {
        line.strip_suffix('\r')
            .unwrap_or(line)
            .split(['\r', '\u{85}', '\u{2028}', '\u{2029}'])
    })
}

/// A node's index in its document.
pub(crate) type NodeId = usize;

/// The YAML tag of a merge key.
pub(crate) const MERGE_TAG: &str = "tag:yaml.org,2002:merge";
/// The YAML tag of null.
const NULL_TAG: &str = "tag:yaml.org,2002:null";
/// The tag of a string.
const STR_TAG: &str = "tag:yaml.org,2002:str";

/// How a scalar is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    /// `|`
    Literal,
    /// `>`
    Folded,
}

/// What a node is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Scalar {
        value: String,
        style: Style,
    },
    Sequence(Vec<NodeId>),
    Mapping(Vec<(NodeId, NodeId)>),
    /// `*anchor`, standing for the node `target` (never itself an alias).
    Alias {
        anchor: String,
        target: NodeId,
    },
}

/// One node with its properties. `tag` is the full tag as the parser resolved it (e.g.
/// `tag:yaml.org,2002:str`, `!local`), none for an untagged node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Node {
    pub(crate) anchor: Option<String>,
    pub(crate) tag: Option<String>,
    pub(crate) kind: Kind,
}

impl Node {
    /// An untagged, unanchored scalar.
    pub(crate) fn scalar(value: impl Into<String>, style: Style) -> Self {
        Self {
            anchor: None,
            tag: None,
            kind: Kind::Scalar {
                value: value.into(),
                style,
            },
        }
    }

    /// An untagged, unanchored collection.
    pub(crate) fn of(kind: Kind) -> Self {
        Self {
            anchor: None,
            tag: None,
            kind,
        }
    }
}

/// A parsed single-document YAML stream.
#[derive(Clone, Debug, Default)]
pub(crate) struct Document {
    nodes: Vec<Node>,
    root: Option<NodeId>,
    /// The comment lines before the content (or of a document without content).
    pub(crate) comments: Vec<String>,
}

/// A collection being filled while parsing.
enum Frame {
    Sequence(NodeId),
    Mapping { id: NodeId, key: Option<NodeId> },
}

impl Document {
    /// Parses `text`. A stream without a document, or whose document is an empty plain
    /// scalar, has no root.
    pub(crate) fn parse(text: &str) -> Result<Self, YamlError> {
        let mut parser = Parser::new(text)?;
        let mut doc = Self::default();
        let mut anchors: Vec<(String, NodeId)> = Vec::new();
        let mut stack: Vec<Frame> = Vec::new();
        let mut documents = 0;
        let mut root_line = None;

        loop {
            let (event, line) = parser.next_event()?;
            let (node, opens) = match event {
                Event::StreamEnd => break,
                Event::StreamStart | Event::DocumentEnd => continue,
                Event::DocumentStart => {
                    documents += 1;
                    if documents > 1 {
                        return Err(YamlError::MultipleDocuments);
                    }
                    continue;
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    stack.pop();
                    continue;
                }
                Event::Alias { anchor } => {
                    let target = anchors
                        .iter()
                        .rev()
                        .find(|(name, _)| *name == anchor)
                        .map(|(_, id)| *id)
                        .ok_or_else(|| YamlError::UndefinedAlias(anchor.clone()))?;
                    (Node::of(Kind::Alias { anchor, target }), false)
                }
                Event::Scalar {
                    anchor,
                    tag,
                    value,
                    style,
                } => {
                    let kind = Kind::Scalar { value, style };
                    (Node { anchor, tag, kind }, false)
                }
                Event::SequenceStart { anchor, tag } => {
                    let kind = Kind::Sequence(Vec::new());
                    (Node { anchor, tag, kind }, true)
                }
                Event::MappingStart { anchor, tag } => {
                    let kind = Kind::Mapping(Vec::new());
                    (Node { anchor, tag, kind }, true)
                }
            };
            root_line.get_or_insert(line);
            let id = doc.add(node);
            if let Some(anchor) = doc.nodes[id].anchor.clone() {
                anchors.push((anchor, id));
            }
            doc.attach(&mut stack, id)?;
            if opens {
                if stack.len() >= MAX_DEPTH {
                    return Err(YamlError::TooDeep);
                }
                stack.push(match doc.nodes[id].kind {
                    Kind::Sequence(_) => Frame::Sequence(id),
                    _ => Frame::Mapping { id, key: None },
                });
            }
        }

        if doc.root.is_some_and(|root| doc.is_empty_scalar(root)) {
            doc.root = None;
        }
        let before_root = |i: usize| match (doc.root, root_line) {
            (Some(_), Some(line)) => (i as u64) < line,
            _ => true,
        };
        doc.comments = yaml_lines(text)
            .enumerate()
            .filter(|(i, line)| before_root(*i) && line.trim_start().starts_with('#'))
            .map(|(_, line)| line.trim_end().to_owned())
            .collect();
        Ok(doc)
    }

    /// Puts a new node into its parent (or makes it the root). A plain untagged `<<` key is
    /// given the merge tag, which is what it means.
    fn attach(&mut self, stack: &mut [Frame], id: NodeId) -> Result<(), YamlError> {
        match stack.last_mut() {
            None => {
                if self.root.replace(id).is_some() {
                    return Err(YamlError::Parse("a second root node".into()));
                }
            }
            Some(Frame::Sequence(seq)) => {
                if let Kind::Sequence(items) = &mut self.nodes[*seq].kind {
                    items.push(id);
                }
            }
            Some(Frame::Mapping { id: map, key }) => match key.take() {
                Some(key) => {
                    if let Kind::Mapping(pairs) = &mut self.nodes[*map].kind {
                        pairs.push((key, id));
                    }
                }
                None => {
                    let node = &mut self.nodes[id];
                    if node.tag.is_none()
                        && matches!(&node.kind, Kind::Scalar { value, style: Style::Plain } if value == "<<")
                    {
                        node.tag = Some(MERGE_TAG.to_owned());
                    }
                    *key = Some(id);
                }
            },
        }
        Ok(())
    }

    /// Adds a node and returns its id.
    pub(crate) fn add(&mut self, node: Node) -> NodeId {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// The node `id`.
    pub(crate) fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }

    /// The node `id`, to change.
    pub(crate) fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id]
    }

    /// The root, if the document has content.
    pub(crate) fn root(&self) -> Option<NodeId> {
        self.root
    }

    /// Sets the root.
    pub(crate) fn set_root(&mut self, id: NodeId) {
        self.root = Some(id);
    }

    /// The node an alias stands for, or the node itself.
    pub(crate) fn resolve(&self, id: NodeId) -> NodeId {
        match self.nodes[id].kind {
            Kind::Alias { target, .. } => target,
            _ => id,
        }
    }

    /// Whether the node (through an alias) reads as null.
    pub(crate) fn is_null(&self, id: NodeId) -> bool {
        let node = &self.nodes[self.resolve(id)];
        match (&node.tag, &node.kind) {
            (Some(tag), _) => tag == NULL_TAG,
            (None, Kind::Scalar { value, style }) => {
                *style == Style::Plain && resolve::is_null(value)
            }
            _ => false,
        }
    }

    /// Whether the node (through an alias) is a quoted empty string, `''` or `""`.
    pub(crate) fn is_empty_string(&self, id: NodeId) -> bool {
        let node = &self.nodes[self.resolve(id)];
        let untagged_or_str = node.tag.as_deref().is_none_or(|t| t == STR_TAG);
        matches!(&node.kind, Kind::Scalar { value, style } if value.is_empty() && *style != Style::Plain)
            && untagged_or_str
    }

    /// Whether the node is an untagged empty plain scalar (an empty document).
    fn is_empty_scalar(&self, id: NodeId) -> bool {
        let node = &self.nodes[id];
        node.tag.is_none()
            && node.anchor.is_none()
            && matches!(&node.kind, Kind::Scalar { value, style: Style::Plain } if value.is_empty())
    }

    /// The text of a scalar node (through an alias), if it is one.
    pub(crate) fn scalar_text(&self, id: NodeId) -> Option<&str> {
        match &self.nodes[self.resolve(id)].kind {
            Kind::Scalar { value, .. } => Some(value),
            _ => None,
        }
    }

    /// Whether `self`'s node `a` reads exactly as `other`'s node `b`: same tags, anchors and
    /// aliases, equal collections, and scalars equal in value and in what they resolve to
    /// (a plain scalar that reads as a non-string differs from a quoted one).
    pub(crate) fn same_as(&self, a: Option<NodeId>, other: &Self, b: Option<NodeId>) -> bool {
        match (a, b) {
            (None, None) => true,
            (Some(a), Some(b)) => self.same_node(a, other, b, 0),
            _ => false,
        }
    }

    fn same_node(&self, a: NodeId, other: &Self, b: NodeId, depth: usize) -> bool {
        let (x, y) = (&self.nodes[a], &other.nodes[b]);
        if x.anchor != y.anchor || x.tag != y.tag || depth > MAX_DEPTH + 2 {
            return false;
        }
        match (&x.kind, &y.kind) {
            (Kind::Scalar { value: v, style: s }, Kind::Scalar { value: w, style: t }) => {
                let non_string = |value: &str, style: &Style| {
                    x.tag.is_none() && *style == Style::Plain && resolve::reads_as_non_string(value)
                };
                v == w && non_string(v, s) == non_string(w, t)
            }
            (Kind::Sequence(p), Kind::Sequence(q)) => {
                p.len() == q.len()
                    && p.iter()
                        .zip(q)
                        .all(|(&i, &j)| self.same_node(i, other, j, depth + 1))
            }
            (Kind::Mapping(p), Kind::Mapping(q)) => {
                p.len() == q.len()
                    && p.iter().zip(q).all(|(&(k, v), &(l, w))| {
                        self.same_node(k, other, l, depth + 1)
                            && self.same_node(v, other, w, depth + 1)
                    })
            }
            (Kind::Alias { anchor: m, .. }, Kind::Alias { anchor: n, .. }) => m == n,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_aliases_tags_and_styles_are_read() {
        let doc = Document::parse(
            "base: &b\n  a: 1\nprod:\n  <<: *b\n  c: 'q'\n  d: !!str 5\n  e: |\n    x\n",
        )
        .expect("parses");
        let root = doc.root().expect("root");
        let Kind::Mapping(pairs) = &doc.node(root).kind else {
            panic!("mapping")
        };
        assert_eq!(doc.node(pairs[0].1).anchor.as_deref(), Some("b"));
        let Kind::Mapping(prod) = &doc.node(pairs[1].1).kind else {
            panic!("mapping")
        };
        assert_eq!(doc.node(prod[0].0).tag.as_deref(), Some(MERGE_TAG));
        assert_eq!(doc.resolve(prod[0].1), pairs[0].1);
        let styles: Vec<Style> = prod[1..]
            .iter()
            .map(|&(_, v)| match doc.node(v).kind {
                Kind::Scalar { style, .. } => style,
                _ => panic!("scalar"),
            })
            .collect();
        assert_eq!(styles, [Style::SingleQuoted, Style::Plain, Style::Literal]);
        assert_eq!(
            doc.node(prod[2].1).tag.as_deref(),
            Some("tag:yaml.org,2002:str")
        );
    }

    #[test]
    fn documents_without_content_keep_their_comments_and_have_no_root() {
        let cases = [
            ("comments only", "# one\n\n# two\n"),
            ("markers and comments", "---\n# one\n# two\n...\n"),
            ("an empty document", "--- # x\n# one\n# two\n"),
        ];
        for (name, text) in cases {
            let doc = Document::parse(text).expect(name);
            assert!(doc.root().is_none(), "{name}");
            assert_eq!(doc.comments, ["# one", "# two"], "{name}");
        }
    }

    #[test]
    fn comments_before_the_content_are_kept_and_later_ones_are_not() {
        let doc = Document::parse("# head\n%YAML 1.1\n---\n# more\na: 1 # tail\n# end\n")
            .expect("parses");
        assert_eq!(doc.comments, ["# head", "# more"]);
    }

    #[test]
    fn unreadable_documents_are_errors() {
        let cases = [
            ("two documents", "a: 1\n---\nb: 2\n"),
            ("undefined alias", "a: *nope\n"),
            ("bad indentation", "a:\n  b: 1\n c: 2\n"),
            ("unterminated quote", "a: 'x\n"),
        ];
        for (name, text) in cases {
            assert!(Document::parse(text).is_err(), "{name}");
        }
    }

    #[test]
    fn inputs_that_crashed_a_parser_are_read_or_refused_without_panicking() {
        let cases = [
            "[!!str, x]\n",
            "b: &b {secret_key\", !!str)3, {q: |\n  lit\n}]\n",
            "{!!str : x}\n",
            "- !<tag:x> ,\n",
        ];
        for text in cases {
            let _ = Document::parse(text);
        }
        let doc = Document::parse("#c\r++:\n").expect("a CR ends a comment");
        assert_eq!(doc.comments, ["#c"]);
        let doc = Document::parse("[!!str, x]\n").expect("an empty tagged scalar");
        assert!(doc.root().is_some());
    }

    #[test]
    fn deep_nesting_is_refused() {
        let text = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(matches!(Document::parse(&text), Err(YamlError::TooDeep)));
    }
}
