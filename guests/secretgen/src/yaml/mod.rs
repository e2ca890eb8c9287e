//! The YAML of `secrets.yml`: read an existing document into a tree that keeps what a reader
//! sees (values, tags, anchors, aliases, merge keys, scalar styles), change it, and write it
//! back by the rewrite rules of `gitlabsecrets-reconciler.txt` ("Generation").
//!
//! DECISION: the parser is libyaml itself (unsafe-libyaml, its Rust translation, which
//! serde_yaml and serde_yaml_ng parse with; Psych and hence Rails use the C library), read at
//! the event level (`events`), because every tree-level YAML crate drops what
//! the rules keep: serde_yaml_ng and saphyr's loader resolve aliases and forget anchors and
//! styles (an existing bare value must stay bare, a merge key must stay a merge key), and
//! saphyr's parser reports anchors only as numbers. libyaml-safer, a safe port with the same
//! events, was tried and dropped: fuzzing found inputs that make it panic (`[!!str, x]`),
//! and a panic aborts a wasm guest. The writer is this module's own (`emit`), because
//! libyaml's emitter writes block sequences unindented under a mapping key
//! while the Job's layout indents list items by 4 under a key at 2. To keep a hand-written
//! writer honest, every rewrite is parsed again with libyaml and compared with the tree it
//! was written from (`Document::same_as`); a mismatch fails the rewrite instead of storing
//! a document that reads differently.
//!
//! What a rewrite keeps and drops:
//! - Every value, tag, anchor and alias; existing scalar styles (plain stays plain, quoted
//!   stays quoted, `|` stays `|`). Folded (`>`) scalars are written with each paragraph
//!   joined on one line. Flow collections are written in block style (empty ones as `{}` and
//!   `[]`).
//! - Merge keys, written `!!merge <<:` (what a merge key is, spelled out).
//! - Comment lines before the document's content (all of them for a document of comments
//!   only); other comments, `---`, `...` and directives are dropped (the parser does not
//!   report comments inside the content).
//! - The output is indented by 2 (list items under a key by 2 more) and ends with a newline.

pub(crate) mod emit;
mod events;
pub(crate) mod resolve;
pub(crate) mod tree;

pub(crate) use tree::{Document, Kind, Node, NodeId, Style};

/// The deepest nesting a document may have (a bound for the recursive writer and checker).
pub(crate) const MAX_DEPTH: usize = 64;

/// Why a YAML document could not be read or rewritten.
#[derive(Debug, thiserror::Error)]
pub enum YamlError {
    /// The text is not YAML.
    #[error("it is not valid YAML: {0}")]
    Parse(String),
    /// The text holds more than one document.
    #[error("it holds more than one YAML document")]
    MultipleDocuments,
    /// An alias names no anchor defined before it.
    #[error("alias *{0} names no anchor before it")]
    UndefinedAlias(String),
    /// The document nests deeper than [`MAX_DEPTH`].
    #[error("it nests deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// The document has a construct the writer does not write (e.g. a mapping as a key).
    #[error("it has {0}, which a rewrite cannot keep")]
    Unsupported(&'static str),
    /// The written document would not read back as the tree it was written from.
    #[error("the rewritten document would not read back the same")]
    NotRoundTrip,
}
