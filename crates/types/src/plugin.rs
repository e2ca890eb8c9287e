//! What a plugin tells the host about itself ([`Description`]), and the request and
//! outcome of a pass.

use crate::object::KindRef;

/// A verb a plugin uses on a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verb {
    Get,
    List,
    Watch,
    Create,
    Update,
    Patch,
    Delete,
    /// Writes to the status subresource.
    UpdateStatus,
}

impl Verb {
    /// The verb as RBAC and the WIT spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::UpdateStatus => "update-status",
        }
    }
}

/// The verbs a plugin uses on one kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permission {
    pub kind: KindRef,
    pub verbs: Vec<Verb>,
}

/// How a change of a watched object maps back to primaries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mapping {
    /// Through the object's controller owner reference.
    Owner,
    /// To every primary whose value of this field index includes the object's key.
    FieldIndex(String),
    /// To the primary of the object's namespace named by this label's value.
    Label(String),
    /// To the primary of the object's namespace named by the string at this dot-separated
    /// field path of the object (e.g. `spec.keystoneRef.name`).
    Reference(String),
    /// Two steps: to the primaries that the watched objects of `kind` whose field index
    /// `index` includes the object's key map to, by their own watch's mapping.
    Via { kind: KindRef, index: String },
}

/// A kind watched besides the primary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watch {
    pub kind: KindRef,
    pub mapping: Mapping,
    /// While the cluster does not serve the kind, the watch waits for it instead of holding
    /// the host's readiness.
    pub optional: bool,
}

impl Watch {
    /// A required watch of `kind` mapped by `mapping`.
    pub fn new(kind: KindRef, mapping: Mapping) -> Self {
        Self {
            kind,
            mapping,
            optional: false,
        }
    }

    /// The same watch, optional: it waits while its kind is not served.
    pub fn optional(mut self) -> Self {
        self.optional = true;
        self
    }
}

/// A filter on changes of the primary; a change passes when any listed predicate holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Predicate {
    GenerationChanged,
    LabelsChanged,
}

/// A field index over the primary kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldIndex {
    pub name: String,
    pub description: String,
}

/// A field index over a watched kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindIndex {
    pub kind: KindRef,
    pub index: FieldIndex,
}

/// The verbs a plugin uses on one subresource of a kind (e.g. `create` on
/// ServiceAccounts' `token`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubresourcePermission {
    pub kind: KindRef,
    pub subresource: String,
    pub verbs: Vec<Verb>,
}

/// What the host needs to run a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Description {
    pub name: String,
    pub version: String,
    pub field_manager: String,
    pub primary: KindRef,
    pub primary_predicates: Vec<Predicate>,
    pub watches: Vec<Watch>,
    /// Field indexes over the primary kind.
    pub indexes: Vec<FieldIndex>,
    pub permissions: Vec<Permission>,
    /// Field indexes over watched kinds (contract 1.1).
    pub watched_indexes: Vec<KindIndex>,
    /// Verbs on subresources (contract 1.1).
    pub subresources: Vec<SubresourcePermission>,
    /// Where the plugin may send HTTP(S) requests: `host:port` patterns (contract 1.1).
    pub egress: Vec<String>,
    /// The kinds whose writes the plugin defaults and validates (contract 1.2).
    pub admission: Vec<crate::admission::AdmittedKind>,
    /// How the plugin writes children to target clusters (contract 1.3).
    pub targets: TargetDescription,
    /// A label selector (the API's text form) narrowing the primary watch: only the
    /// primaries it matches are cached and passed; `None`: every primary (contract 1.4).
    pub primary_selector: Option<String>,
}

/// How a plugin writes a primary's children to target clusters (contract 1.3).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetDescription {
    /// The prefix of the owner labels (`<prefix>/owner-kind`, `-name`, `-namespace`) the
    /// host writes on a child instead of an owner reference; empty when the plugin writes to
    /// no target.
    pub owner_label_prefix: String,
    /// Kinds watched on every engaged target, mapped to primaries by the owner labels.
    pub watches: Vec<crate::KindRef>,
}

impl TargetDescription {
    /// Whether the plugin may open targets.
    pub fn targets(&self) -> bool {
        !self.owner_label_prefix.is_empty()
    }

    /// The three owner label keys: kind, name, namespace.
    pub fn owner_labels(&self) -> [String; 3] {
        let p = &self.owner_label_prefix;
        [
            format!("{p}/owner-kind"),
            format!("{p}/owner-name"),
            format!("{p}/owner-namespace"),
        ]
    }
}

/// The primary object of one pass.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Request {
    pub namespace: Option<String>,
    pub name: String,
}

impl Request {
    /// The primary as an object of `kind`.
    pub fn object(&self, kind: &crate::KindRef) -> crate::ObjectRef {
        crate::ObjectRef {
            api_version: kind.api_version.clone(),
            kind: kind.kind.clone(),
            namespace: self.namespace.clone(),
            name: self.name.clone(),
        }
    }
}

/// How a successful pass ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outcome {
    /// Run again after this long; `None` waits for the next change.
    pub requeue_after: Option<std::time::Duration>,
}

impl Outcome {
    /// Wait for the next change.
    pub fn done() -> Self {
        Self {
            requeue_after: None,
        }
    }

    /// Run again after `after`.
    pub fn requeue(after: std::time::Duration) -> Self {
        Self {
            requeue_after: Some(after),
        }
    }
}
