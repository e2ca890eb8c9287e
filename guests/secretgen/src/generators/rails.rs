//! `railsSecrets`: the fields of one environment of `secrets.yml`, reconciled per field.
//!
//! A field is generated when it is absent, null or an empty string, in the environment's
//! own keys and in what its merge keys bring in, as the Job does (the reconciler page's
//! "Behavior of the Job", which wins over the schema page's absent-or-null); every other
//! value is kept as it is, an empty list included. Lists are never shortened or reordered. The document is rewritten only
//! when a field is added, by the rules of `yaml`; a generated value that YAML would read as
//! another type is double-quoted, a PEM is a `|` block, a list field is a one-element list.
//!
//! `path` names a key directly under the environment, as the schema's
//! `<env>: {<path>: value, ...}` says.

use super::GenerateError;
use super::random::random_string;
use crate::entries::{RailsField, RailsSecrets, Shape};
use crate::keys::KeySource;
use crate::yaml::resolve::reads_as_non_string;
use crate::yaml::tree::MERGE_TAG;
use crate::yaml::{self, Document, Kind, Node, NodeId, Style, YamlError};

/// How deep merge keys are followed when looking a key up.
const MAX_MERGE_DEPTH: usize = 8;

/// Why an existing secrets.yml cannot take the declared fields; the Secret is reported.
#[derive(Debug, thiserror::Error)]
pub enum RailsError {
    /// The value is not UTF-8.
    #[error("it is not UTF-8 text")]
    NotUtf8,
    /// The YAML cannot be read or rewritten.
    #[error(transparent)]
    Yaml(#[from] YamlError),
    /// The document is not a mapping.
    #[error("its document is not a mapping")]
    RootNotMapping,
    /// The environment is not a mapping.
    #[error("{0} is not a mapping")]
    EnvNotMapping(String),
    /// The environment comes only from a merge key, which a rewrite would hide.
    #[error("{0} comes from a merge key; add it to the document itself")]
    EnvMerged(String),
}

/// A generated field value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FieldValue {
    Scalar(String),
    Pem(String),
    List(String),
}

/// Generates the value of one field.
pub(crate) fn generate_field(
    keys: &dyn KeySource,
    field: &RailsField,
) -> Result<FieldValue, GenerateError> {
    let random = || {
        // Validation guarantees both for scalar and list fields.
        let charset = field
            .charset
            .unwrap_or(crate::entries::Charset::Alphanumeric);
        random_string(charset, field.length.unwrap_or(0) as usize)
    };
    Ok(match field.shape {
        Shape::Scalar => FieldValue::Scalar(random()),
        Shape::List => FieldValue::List(random()),
        Shape::Pem => FieldValue::Pem(super::rsa::generate(keys, field.bits.unwrap_or(0))?),
    })
}

/// Where a key was found in a mapping.
struct Found {
    value: NodeId,
    /// The pair's index when it is one of the mapping's own keys, none when it comes from a
    /// merge key.
    own: Option<usize>,
}

/// An existing secrets.yml (or none), read for one generator.
#[derive(Clone)]
pub(crate) struct SecretsYml {
    doc: Document,
}

impl SecretsYml {
    /// Reads the existing value; none reads as an empty document.
    pub(crate) fn read(existing: Option<&[u8]>) -> Result<Self, RailsError> {
        let text = match existing {
            None => "",
            Some(bytes) => std::str::from_utf8(bytes).map_err(|_| RailsError::NotUtf8)?,
        };
        Ok(Self {
            doc: Document::parse(text)?,
        })
    }

    /// The declared fields to generate, in declaration order.
    pub(crate) fn missing<'g>(
        &self,
        generator: &'g RailsSecrets,
    ) -> Result<Vec<&'g RailsField>, RailsError> {
        let Some(env) = self.env_mapping(generator)? else {
            return Ok(generator.fields.iter().collect());
        };
        Ok(generator
            .fields
            .iter()
            .filter(|field| {
                lookup(&self.doc, env, &field.path)
                    .is_none_or(|f| self.doc.is_null(f.value) || self.doc.is_empty_string(f.value))
            })
            .collect())
    }

    /// The environment's mapping, none when the environment is absent or null.
    fn env_mapping(&self, generator: &RailsSecrets) -> Result<Option<NodeId>, RailsError> {
        let Some(root) = self.doc.root() else {
            return Ok(None);
        };
        if !matches!(self.doc.node(root).kind, Kind::Mapping(_)) {
            return Err(RailsError::RootNotMapping);
        }
        match lookup(&self.doc, root, &generator.env) {
            None => Ok(None),
            Some(found) if self.doc.is_null(found.value) => Ok(None),
            Some(found) => {
                let env = self.doc.resolve(found.value);
                match self.doc.node(env).kind {
                    Kind::Mapping(_) => Ok(Some(env)),
                    _ => Err(RailsError::EnvNotMapping(generator.env.clone())),
                }
            }
        }
    }

    /// Writes `values` (the missing fields, generated) into the document and returns its
    /// new text, checked to read back as the changed tree.
    pub(crate) fn fill(
        mut self,
        generator: &RailsSecrets,
        values: Vec<(&RailsField, FieldValue)>,
    ) -> Result<String, RailsError> {
        let env = self.env_for_writing(generator)?;
        for (field, value) in values {
            let value = self.value_node(value);
            let own = lookup(&self.doc, env, &field.path).and_then(|f| f.own);
            match own {
                Some(index) => self.replace_value(env, index, value),
                None => {
                    let key = self.key_node(&field.path);
                    self.push_pair(env, key, value);
                }
            }
        }
        let text = yaml::emit::write(&self.doc)?;
        let again = Document::parse(&text)?;
        if !self.doc.same_as(self.doc.root(), &again, again.root())
            || self.doc.comments != again.comments
        {
            return Err(YamlError::NotRoundTrip.into());
        }
        Ok(text)
    }

    /// The mapping to add fields to: the environment's own mapping, or a new one put where
    /// the environment is absent or null, or a new one that merges the mapping an alias
    /// stood for.
    fn env_for_writing(&mut self, generator: &RailsSecrets) -> Result<NodeId, RailsError> {
        let env_name = &generator.env;
        let root = match self.doc.root() {
            Some(root) => root,
            None => {
                let root = self.doc.add(Node::of(Kind::Mapping(Vec::new())));
                self.doc.set_root(root);
                root
            }
        };
        if !matches!(self.doc.node(root).kind, Kind::Mapping(_)) {
            return Err(RailsError::RootNotMapping);
        }
        let Some(found) = lookup(&self.doc, root, env_name) else {
            let key = self.key_node(env_name);
            let env = self.doc.add(Node::of(Kind::Mapping(Vec::new())));
            self.push_pair(root, key, env);
            return Ok(env);
        };
        let Some(index) = found.own else {
            return Err(RailsError::EnvMerged(env_name.clone()));
        };
        if self.doc.is_null(found.value) {
            let env = self.doc.add(Node::of(Kind::Mapping(Vec::new())));
            self.replace_value(root, index, env);
            return Ok(env);
        }
        match self.doc.node(found.value).kind {
            Kind::Mapping(_) => Ok(found.value),
            Kind::Alias { .. } => {
                let merge = self.doc.add(Node {
                    anchor: None,
                    tag: Some(MERGE_TAG.to_owned()),
                    kind: Kind::Scalar {
                        value: "<<".into(),
                        style: Style::Plain,
                    },
                });
                let env = self
                    .doc
                    .add(Node::of(Kind::Mapping(vec![(merge, found.value)])));
                self.replace_value(root, index, env);
                Ok(env)
            }
            _ => Err(RailsError::EnvNotMapping(env_name.clone())),
        }
    }

    /// A key: plain unless YAML would read it as another type.
    fn key_node(&mut self, text: &str) -> NodeId {
        self.doc.add(Node::scalar(text, generated_style(text)))
    }

    /// The node of a generated value.
    fn value_node(&mut self, value: FieldValue) -> NodeId {
        match value {
            FieldValue::Scalar(text) => {
                let style = generated_style(&text);
                self.doc.add(Node::scalar(text, style))
            }
            FieldValue::Pem(pem) => self.doc.add(Node::scalar(pem, Style::Literal)),
            FieldValue::List(text) => {
                let style = generated_style(&text);
                let item = self.doc.add(Node::scalar(text, style));
                self.doc.add(Node::of(Kind::Sequence(vec![item])))
            }
        }
    }

    /// Replaces the value of pair `index` of `map`; the new value takes over the old one's
    /// anchor, so aliases of a null stand for the generated value.
    fn replace_value(&mut self, map: NodeId, index: usize, value: NodeId) {
        let Kind::Mapping(pairs) = &self.doc.node(map).kind else {
            return;
        };
        let Some(&(_, old)) = pairs.get(index) else {
            return;
        };
        let anchor = self.doc.node_mut(old).anchor.take();
        self.doc.node_mut(value).anchor = anchor;
        if let Kind::Mapping(pairs) = &mut self.doc.node_mut(map).kind {
            pairs[index].1 = value;
        }
    }

    fn push_pair(&mut self, map: NodeId, key: NodeId, value: NodeId) {
        if let Kind::Mapping(pairs) = &mut self.doc.node_mut(map).kind {
            pairs.push((key, value));
        }
    }
}

/// The style of a generated string: plain, or double-quoted when YAML would read it as
/// another type.
fn generated_style(text: &str) -> Style {
    if reads_as_non_string(text) {
        Style::DoubleQuoted
    } else {
        Style::Plain
    }
}

/// Looks `key` up in mapping `map` the way a reader sees it: the last own pair with that
/// key, else the first merged mapping (in merge order) that has it. Each mapping is searched
/// at most once, so aliases that merge the same mapping many times cost nothing extra.
fn lookup(doc: &Document, map: NodeId, key: &str) -> Option<Found> {
    let mut searched = Vec::new();
    lookup_in(doc, map, key, 0, &mut searched)
}

fn lookup_in(
    doc: &Document,
    map: NodeId,
    key: &str,
    depth: usize,
    searched: &mut Vec<NodeId>,
) -> Option<Found> {
    let map = doc.resolve(map);
    if searched.contains(&map) {
        return None;
    }
    searched.push(map);
    let Kind::Mapping(pairs) = &doc.node(map).kind else {
        return None;
    };
    let own = pairs
        .iter()
        .rposition(|&(k, _)| !is_merge_key(doc, k) && doc.scalar_text(k) == Some(key));
    if let Some(index) = own {
        return Some(Found {
            value: pairs[index].1,
            own: Some(index),
        });
    }
    if depth >= MAX_MERGE_DEPTH {
        return None;
    }
    let merged = pairs
        .iter()
        .filter(|&&(k, _)| is_merge_key(doc, k))
        .flat_map(|&(_, v)| match &doc.node(doc.resolve(v)).kind {
            Kind::Sequence(items) => items.clone(),
            _ => vec![v],
        });
    for merged in merged {
        if let Some(found) = lookup_in(doc, merged, key, depth + 1, searched) {
            return Some(Found {
                value: found.value,
                own: None,
            });
        }
    }
    None
}

fn is_merge_key(doc: &Document, key: NodeId) -> bool {
    doc.node(key).tag.as_deref() == Some(MERGE_TAG)
}

#[cfg(test)]
mod tests;
