//! Schema hooks: how lists and maps of a kind merge.
//!
//! Paths handed to the hooks are the paths of the list (or map) node
//! itself, with list items as [`PathElement::Key`]/[`PathElement::Value`]
//! elements along the way. [`BuiltinSchema`] matches them against patterns
//! written as dotted field names where `[*]` means "any item of this list":
//! `spec.template.spec.containers[*].env`.

use serde_json::Value;

use super::fieldset::PathElement;

/// How a list merges and is owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListType {
    /// Replaced and owned as a whole (`x-kubernetes-list-type: atomic`).
    Atomic,
    /// A set of scalars, items owned as `v:<value>`.
    Set,
    /// A list of objects identified by these key fields, items owned as
    /// `k:{...}` (`x-kubernetes-list-type: map`).
    Map(Vec<String>),
}

/// Per-kind merge knowledge the server provides.
pub(crate) trait MergeSchema {
    /// The type of the list at `path`.
    fn list_type(&self, path: &[PathElement]) -> ListType;

    /// True when the object at `path` is replaced and owned as a whole
    /// (`x-kubernetes-map-type: atomic`).
    fn map_is_atomic(&self, _path: &[PathElement]) -> bool {
        false
    }

    /// True when the last field of `path` is a key of a map, not a declared field: apply
    /// claims it even when its value is an empty object or list. Built-in kinds' maps
    /// (labels, annotations, data, selectors) hold strings, so only a schema says more.
    fn is_map_key(&self, _path: &[PathElement]) -> bool {
        false
    }

    /// The default of list-map key `key` of the list at `path`, used when
    /// an item omits it (kube defaults container port `protocol` to TCP).
    fn list_key_default(&self, _path: &[PathElement], _key: &str) -> Option<Value> {
        None
    }

    /// True when the kind has a status subresource: then `status` is not
    /// tracked (nor changed) by writes to the main resource, and writes to
    /// `status` own only `status`.
    fn status_is_subresource(&self) -> bool {
        true
    }
}

/// One segment of a path pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Field(String),
    AnyItem,
}

/// A path pattern such as `spec.containers[*].ports` (see module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathPattern(Vec<Segment>);

impl PathPattern {
    /// Parses a pattern; an empty string matches the root.
    pub(crate) fn parse(pattern: &str) -> Self {
        let mut segments = Vec::new();
        for part in pattern.split('.').filter(|p| !p.is_empty()) {
            let mut name = part;
            let mut items = 0;
            while let Some(stripped) = name.strip_suffix("[*]") {
                name = stripped;
                items += 1;
            }
            segments.push(Segment::Field(name.to_string()));
            segments.extend(std::iter::repeat_n(Segment::AnyItem, items));
        }
        PathPattern(segments)
    }

    /// True when `path` has exactly the pattern's shape.
    pub(crate) fn matches(&self, path: &[PathElement]) -> bool {
        self.0.len() == path.len()
            && self.0.iter().zip(path).all(|(seg, pe)| match (seg, pe) {
                (Segment::Field(name), PathElement::Field(f)) => name == f,
                (Segment::AnyItem, PathElement::Field(_)) => false,
                (Segment::AnyItem, _) => true,
                (Segment::Field(_), _) => false,
            })
    }
}

/// What a pattern says about the node it matches.
#[derive(Debug, Clone, PartialEq)]
enum Rule {
    List(ListType),
    AtomicMap,
    KeyDefault(String, Value),
}

/// Rules shared by every kind: ObjectMeta's associative lists (kube-apiserver
/// uses ObjectMeta's schema for custom resources too).
fn metadata_rules() -> Vec<(PathPattern, Rule)> {
    vec![
        (
            PathPattern::parse("metadata.finalizers"),
            Rule::List(ListType::Set),
        ),
        (
            PathPattern::parse("metadata.ownerReferences"),
            Rule::List(ListType::Map(vec!["uid".into()])),
        ),
    ]
}

fn lookup_list(rules: &[(PathPattern, Rule)], path: &[PathElement]) -> ListType {
    rules
        .iter()
        .find_map(|(p, r)| match r {
            Rule::List(lt) if p.matches(path) => Some(lt.clone()),
            _ => None,
        })
        .unwrap_or(ListType::Atomic)
}

/// The schema of a custom resource whose CRD declares no list types: every
/// list atomic (except ObjectMeta's finalizers set and ownerReferences map),
/// every object granular.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DefaultSchema {
    /// Whether the CRD enables the status subresource.
    pub status_subresource: bool,
}

impl Default for DefaultSchema {
    /// A CRD with the status subresource (the common case for operators).
    fn default() -> Self {
        DefaultSchema {
            status_subresource: true,
        }
    }
}

impl MergeSchema for DefaultSchema {
    fn list_type(&self, path: &[PathElement]) -> ListType {
        lookup_list(&metadata_rules(), path)
    }

    fn status_is_subresource(&self) -> bool {
        self.status_subresource
    }
}

/// Where the pod spec of a workload kind lives.
fn pod_spec_prefix(kind: &str) -> Option<&'static str> {
    match kind {
        "Pod" => Some("spec"),
        "PodTemplate" => Some("template.spec"),
        "Deployment"
        | "ReplicaSet"
        | "StatefulSet"
        | "DaemonSet"
        | "Job"
        | "ReplicationController" => Some("spec.template.spec"),
        "CronJob" => Some("spec.jobTemplate.spec.template.spec"),
        _ => None,
    }
}

/// The strategic-merge keys of the built-in kinds the operator uses.
///
/// Pod specs (in Pod, PodTemplate, Deployment, ReplicaSet, StatefulSet,
/// DaemonSet, Job, ReplicationController, CronJob):
/// `containers`/`initContainers`/`ephemeralContainers` keyed by `name`, their
/// `env` by `name`, `ports` by `containerPort`+`protocol` (protocol defaults
/// to `TCP`), `volumeMounts` by `mountPath`, `volumeDevices` by
/// `devicePath`; `volumes` and `imagePullSecrets` by `name`, `hostAliases`
/// by `ip`, `topologySpreadConstraints` by `topologyKey`+
/// `whenUnsatisfiable`; `nodeSelector` atomic. Workload `spec.selector` is
/// atomic. Service: `spec.ports` keyed by `port`+`protocol` (protocol
/// defaults to `TCP`), `spec.selector` atomic. All kinds:
/// `metadata.finalizers` a set, `metadata.ownerReferences` keyed by `uid`.
/// Everything else: lists atomic, maps granular (so Secret/ConfigMap `data`
/// is owned key by key).
#[derive(Debug, Clone)]
pub(crate) struct BuiltinSchema {
    rules: Vec<(PathPattern, Rule)>,
}

impl BuiltinSchema {
    /// The schema of built-in `kind` (unknown kinds get the metadata rules).
    pub(crate) fn new(kind: &str) -> Self {
        let mut rules = metadata_rules();
        let mut add =
            |pattern: String, rule: Rule| rules.push((PathPattern::parse(&pattern), rule));
        let map =
            |keys: &[&str]| Rule::List(ListType::Map(keys.iter().map(|k| k.to_string()).collect()));
        if let Some(p) = pod_spec_prefix(kind) {
            for c in ["containers", "initContainers", "ephemeralContainers"] {
                add(format!("{p}.{c}"), map(&["name"]));
                add(format!("{p}.{c}[*].env"), map(&["name"]));
                add(
                    format!("{p}.{c}[*].ports"),
                    map(&["containerPort", "protocol"]),
                );
                add(
                    format!("{p}.{c}[*].ports"),
                    Rule::KeyDefault("protocol".into(), Value::from("TCP")),
                );
                add(format!("{p}.{c}[*].volumeMounts"), map(&["mountPath"]));
                add(format!("{p}.{c}[*].volumeDevices"), map(&["devicePath"]));
            }
            add(format!("{p}.volumes"), map(&["name"]));
            add(format!("{p}.imagePullSecrets"), map(&["name"]));
            add(format!("{p}.hostAliases"), map(&["ip"]));
            add(
                format!("{p}.topologySpreadConstraints"),
                map(&["topologyKey", "whenUnsatisfiable"]),
            );
            add(format!("{p}.nodeSelector"), Rule::AtomicMap);
            if kind != "Pod" && kind != "PodTemplate" {
                add("spec.selector".into(), Rule::AtomicMap);
            }
        }
        if kind == "Service" {
            add("spec.ports".into(), map(&["port", "protocol"]));
            add(
                "spec.ports".into(),
                Rule::KeyDefault("protocol".into(), Value::from("TCP")),
            );
            add("spec.selector".into(), Rule::AtomicMap);
        }
        BuiltinSchema { rules }
    }
}

impl MergeSchema for BuiltinSchema {
    fn list_type(&self, path: &[PathElement]) -> ListType {
        lookup_list(&self.rules, path)
    }

    fn map_is_atomic(&self, path: &[PathElement]) -> bool {
        self.rules
            .iter()
            .any(|(p, r)| *r == Rule::AtomicMap && p.matches(path))
    }

    fn list_key_default(&self, path: &[PathElement], key: &str) -> Option<Value> {
        self.rules.iter().find_map(|(p, r)| match r {
            Rule::KeyDefault(k, v) if k == key && p.matches(path) => Some(v.clone()),
            _ => None,
        })
    }
}
