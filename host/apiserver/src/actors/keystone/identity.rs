//! One Keystone's data: domains, projects, groups, roles, users, the federation objects,
//! role assignments and issued tokens, seeded as `keystone-manage bootstrap` leaves a
//! fresh Keystone (domain `default`/`Default`, project `admin`, roles `admin` ⊃ `member` ⊃
//! `reader`, user `admin` holding `admin` on project `admin`).
//!
//! Objects are kept as Keystone renders them, without `links` (added per request, from the
//! address the client used).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{Value, json};

/// A collection of the Identity API that `POST /v3/{plural}` creates into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Kind {
    Domain,
    Project,
    Group,
    Role,
    IdentityProvider,
    Mapping,
}

impl Kind {
    /// The member name of a request or answer body (`domain`).
    pub(crate) fn singular(self) -> &'static str {
        match self {
            Kind::Domain => "domain",
            Kind::Project => "project",
            Kind::Group => "group",
            Kind::Role => "role",
            Kind::IdentityProvider => "identity_provider",
            Kind::Mapping => "mapping",
        }
    }

    /// The collection name of a list answer and of the path (`domains`).
    pub(crate) fn plural(self) -> &'static str {
        match self {
            Kind::Domain => "domains",
            Kind::Project => "projects",
            Kind::Group => "groups",
            Kind::Role => "roles",
            Kind::IdentityProvider => "identity_providers",
            Kind::Mapping => "mappings",
        }
    }

    /// How Keystone names the kind in a 404 message (`Could not find domain: x.`).
    pub(crate) fn display(self) -> &'static str {
        match self {
            Kind::IdentityProvider => "Identity Provider",
            Kind::Mapping => "Mapping",
            other => other.singular(),
        }
    }

    /// The path of the collection below `/v3`.
    pub(crate) fn path(self) -> String {
        match self {
            Kind::IdentityProvider | Kind::Mapping => format!("OS-FEDERATION/{}", self.plural()),
            other => other.plural().to_owned(),
        }
    }
}

/// Who a role is assigned to.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Actor {
    User(String),
    Group(String),
}

/// Where a role is assigned.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Target {
    Project(String),
    Domain(String),
}

/// One role assignment.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Assignment {
    pub actor: Actor,
    pub target: Target,
    pub role: String,
}

/// An issued token: who, scoped to which project, until when (epoch seconds).
#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub user_id: String,
    pub project_id: String,
    pub issued_at: i64,
    pub expires_at: i64,
    pub audit_id: String,
}

/// A user (only what password authentication reads).
#[derive(Clone, Debug)]
pub(crate) struct User {
    pub id: String,
    pub name: String,
    pub domain_id: String,
    /// `None` until the bootstrap sets it: no password authenticates.
    pub password: Option<String>,
}

/// One Keystone's data.
pub(crate) struct Identity {
    pub objects: BTreeMap<Kind, BTreeMap<String, Value>>,
    /// Protocols by (identity provider id, protocol id).
    pub protocols: BTreeMap<(String, String), Value>,
    pub users: Vec<User>,
    pub assignments: BTreeSet<Assignment>,
    pub tokens: HashMap<String, Token>,
    /// The catalog's identity endpoint URL and region, as the bootstrap registers them.
    pub endpoint: Option<(String, String)>,
}

/// A fresh 32-hex-digit id, as Keystone's uuid4().hex.
pub(crate) fn new_id() -> String {
    let bytes: [u8; 16] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The name of the user the bootstrap creates (no `--bootstrap-username` is passed).
pub(crate) const ADMIN_USER: &str = "admin";
/// The project the bootstrap creates.
pub(crate) const ADMIN_PROJECT: &str = "admin";
/// The id of the domain every Keystone starts with.
pub(crate) const DEFAULT_DOMAIN: &str = "default";

/// Roles each role implies, as the bootstrap sets them up (`admin` → `member` → `reader`).
const IMPLIED: [(&str, &str); 2] = [("admin", "member"), ("member", "reader")];

impl Identity {
    /// A Keystone as `keystone-manage bootstrap` leaves it, the admin without a password.
    pub(crate) fn bootstrapped() -> Self {
        let mut identity = Self {
            objects: BTreeMap::new(),
            protocols: BTreeMap::new(),
            users: Vec::new(),
            assignments: BTreeSet::new(),
            tokens: HashMap::new(),
            endpoint: None,
        };
        identity.insert(
            Kind::Domain,
            json!({"id": DEFAULT_DOMAIN, "name": "Default", "description": "The default domain",
                   "enabled": true, "tags": [], "options": {}}),
        );
        let project = new_id();
        identity.insert(
            Kind::Project,
            json!({"id": project, "name": ADMIN_PROJECT, "domain_id": DEFAULT_DOMAIN,
                   "description": "Bootstrap project for initializing the cloud.",
                   "enabled": true, "parent_id": DEFAULT_DOMAIN, "is_domain": false,
                   "tags": [], "options": {}}),
        );
        let mut admin_role = String::new();
        for name in ["admin", "member", "reader"] {
            let id = new_id();
            if name == "admin" {
                admin_role.clone_from(&id);
            }
            identity.insert(
                Kind::Role,
                json!({"id": id, "name": name, "domain_id": null, "description": null,
                       "options": {"immutable": true}}),
            );
        }
        let user = new_id();
        identity.users.push(User {
            id: user.clone(),
            name: ADMIN_USER.into(),
            domain_id: DEFAULT_DOMAIN.into(),
            password: None,
        });
        identity.assignments.insert(Assignment {
            actor: Actor::User(user),
            target: Target::Project(project),
            role: admin_role,
        });
        identity
    }

    /// Stores `object` under its `id`.
    pub(crate) fn insert(&mut self, kind: Kind, object: Value) {
        let id = object["id"].as_str().unwrap_or_default().to_owned();
        self.objects.entry(kind).or_default().insert(id, object);
    }

    /// The object of `kind` with `id`.
    pub(crate) fn get(&self, kind: Kind, id: &str) -> Option<&Value> {
        self.objects.get(&kind)?.get(id)
    }

    /// Every object of `kind`, by id.
    pub(crate) fn all(&self, kind: Kind) -> impl Iterator<Item = &Value> {
        self.objects.get(&kind).into_iter().flat_map(|m| m.values())
    }

    /// The domain with `name`, compared as Keystone's sqlite/MySQL backends do (exactly).
    pub(crate) fn domain_named(&self, name: &str) -> Option<&Value> {
        self.all(Kind::Domain).find(|d| d["name"] == name)
    }

    /// Sets the admin user's password.
    pub(crate) fn set_admin_password(&mut self, password: &str) {
        if let Some(admin) = self
            .users
            .iter_mut()
            .find(|u| u.name == ADMIN_USER && u.domain_id == DEFAULT_DOMAIN)
        {
            admin.password = Some(password.to_owned());
        }
    }

    /// The names and ids of the roles `user` holds on `project`, with the implied ones.
    pub(crate) fn effective_roles(&self, user: &str, project: &str) -> Vec<(String, String)> {
        let direct: Vec<&str> = self
            .assignments
            .iter()
            .filter(|a| a.actor == Actor::User(user.into()))
            .filter(|a| a.target == Target::Project(project.into()))
            .map(|a| a.role.as_str())
            .collect();
        let mut names: Vec<String> = direct
            .iter()
            .filter_map(|id| self.get(Kind::Role, id))
            .filter_map(|r| r["name"].as_str().map(str::to_owned))
            .collect();
        let mut i = 0;
        while i < names.len() {
            for (from, to) in IMPLIED {
                if names[i] == from && !names.iter().any(|n| n == to) {
                    names.push(to.to_owned());
                }
            }
            i += 1;
        }
        names
            .into_iter()
            .filter_map(|name| {
                self.all(Kind::Role)
                    .find(|r| r["name"] == name.as_str())
                    .and_then(|r| r["id"].as_str())
                    .map(|id| (id.to_owned(), name))
            })
            .collect()
    }
}
