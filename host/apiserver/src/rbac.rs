//! Authorization: RBAC over the stored Roles, ClusterRoles and their bindings, with
//! kube-apiserver's semantics and wording.
//!
//! A request is allowed when the user is in `system:masters`, when kube-apiserver's
//! bootstrap policy grants every authenticated user the request (discovery, and asking what
//! one may do), or when a rule of a role bound to the user matches it: a ClusterRoleBinding's
//! ClusterRole anywhere, a RoleBinding's Role or ClusterRole in the binding's namespace.
//! Subjects match by user name, group, or ServiceAccount (a RoleBinding's ServiceAccount
//! without a namespace is one of the binding's namespace). A rule matches when its verbs,
//! apiGroups and resources (`*`, `resource`, `resource/subresource`, `*/subresource`) hold
//! the request's and, when it names resourceNames, the request's name is one of them; a
//! request for a path outside the resource API matches `nonResourceURLs` (`*`, the path, or a
//! prefix ending in `*`). Aggregated ClusterRoles are not composed.

use serde_json::{Value, json};

use crate::authn::{MASTERS, User};
use crate::status::ApiError;
use crate::store::Store;

/// What a request asks to do, as RBAC sees it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Request<'a> {
    Resource {
        verb: &'a str,
        group: &'a str,
        resource: &'a str,
        subresource: Option<&'a str>,
        namespace: Option<&'a str>,
        name: Option<&'a str>,
    },
    NonResource {
        verb: &'a str,
        path: &'a str,
    },
}

/// What kube-apiserver's `system:basic-user` role grants every authenticated user.
const BASIC_USER: &[(&str, &str)] = &[
    ("authorization.k8s.io", "selfsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectrulesreviews"),
    ("authentication.k8s.io", "selfsubjectreviews"),
];

/// What `system:discovery` and `system:public-info-viewer` grant every authenticated user.
const DISCOVERY: &[&str] = &[
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/openapi",
    "/openapi/*",
    "/version",
    "/healthz",
    "/livez",
    "/readyz",
];

/// The decisions made since the roles and bindings last changed: a client repeats the same
/// few requests, and each decision otherwise reads every binding of the cluster and the
/// namespace (as kube-apiserver's RBAC authorizer does). Any write of a Role, ClusterRole or
/// binding empties it.
#[derive(Default)]
pub(crate) struct Decisions {
    /// The count of RBAC writes the decisions were made at.
    generation: u64,
    made: std::collections::HashMap<String, bool>,
}

/// At most this many decisions are kept; a full cache is emptied.
const DECISIONS: usize = 16_384;

/// How many writes the roles and bindings have had (a plural of another group with the same
/// name counts too: that only empties the cache more often).
fn rbac_generation(store: &Store) -> u64 {
    let stored = store.stored();
    [
        "roles",
        "rolebindings",
        "clusterroles",
        "clusterrolebindings",
    ]
    .iter()
    .map(|plural| stored.get(*plural).copied().unwrap_or(0))
    .sum()
}

/// [`allowed`], remembered in `decisions` until a role or binding changes.
pub(crate) fn decide(
    store: &Store,
    decisions: &mut Decisions,
    user: &User,
    request: &Request<'_>,
) -> bool {
    if user.in_group(MASTERS) || bootstrap_allows(request) {
        return true;
    }
    let generation = rbac_generation(store);
    if decisions.generation != generation || decisions.made.len() >= DECISIONS {
        decisions.made.clear();
        decisions.generation = generation;
    }
    let key = format!("{}\0{}\0{request:?}", user.name, user.groups.join(","));
    if let Some(decided) = decisions.made.get(&key) {
        return *decided;
    }
    let decided = allowed(store, user, request);
    decisions.made.insert(key, decided);
    decided
}

/// Whether `user` may do `request`.
pub(crate) fn allowed(store: &Store, user: &User, request: &Request<'_>) -> bool {
    if user.in_group(MASTERS) || bootstrap_allows(request) {
        return true;
    }
    let namespace = match request {
        Request::Resource { namespace, .. } => *namespace,
        Request::NonResource { .. } => None,
    };
    held_rules(store, user, namespace).any(|rule| rule_allows(rule, request))
}

/// The rules of every role bound to `user`: by ClusterRoleBindings, and by the
/// RoleBindings of `namespace`.
fn held_rules<'s>(
    store: &'s Store,
    user: &'s User,
    namespace: Option<&'s str>,
) -> impl Iterator<Item = &'s Value> {
    let from_cluster = store
        .list("rbac.authorization.k8s.io", "clusterrolebindings", None)
        .map(|(_, b)| b)
        .filter(|b| binds(b, user, None))
        .filter_map(|b| role_of(store, b, None));
    let from_namespace = namespace
        .into_iter()
        .flat_map(|ns| store.list("rbac.authorization.k8s.io", "rolebindings", Some(ns)))
        .map(|(_, b)| b)
        .filter(move |b| binds(b, user, namespace))
        .filter_map(move |b| role_of(store, b, namespace));
    from_cluster
        .chain(from_namespace)
        .flat_map(|role| role["rules"].as_array().into_iter().flatten())
}

/// Every rule `user` holds in `namespace`, as a SelfSubjectRulesReview reports them:
/// `(resourceRules, nonResourceRules)`, each rule with `verbs` and either `apiGroups`,
/// `resources` and `resourceNames` or `nonResourceURLs`. `system:masters` holds `*`.
pub(crate) fn rules_of(store: &Store, user: &User, namespace: &str) -> (Vec<Value>, Vec<Value>) {
    if user.in_group(MASTERS) {
        return (
            vec![json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]})],
            vec![json!({"verbs": ["*"], "nonResourceURLs": ["*"]})],
        );
    }
    // `system:basic-user`'s grants, one rule per API group, in the order of BASIC_USER.
    let mut resource: Vec<Value> = Vec::new();
    for (group, plural) in BASIC_USER {
        match resource.iter_mut().find(|r| r["apiGroups"][0] == *group) {
            Some(rule) => {
                if let Some(resources) = rule["resources"].as_array_mut() {
                    resources.push(json!(plural));
                }
            }
            None => resource
                .push(json!({"verbs": ["create"], "apiGroups": [group], "resources": [plural]})),
        }
    }
    let mut non_resource = vec![json!({"verbs": ["get"], "nonResourceURLs": DISCOVERY})];
    for rule in held_rules(store, user, Some(namespace)) {
        if rule.get("nonResourceURLs").is_some() {
            non_resource
                .push(json!({"verbs": rule["verbs"], "nonResourceURLs": rule["nonResourceURLs"]}));
        } else {
            let mut kept = json!({"verbs": rule["verbs"], "apiGroups": rule["apiGroups"],
                "resources": rule["resources"]});
            if let Some(names) = rule.get("resourceNames") {
                kept["resourceNames"] = names.clone();
            }
            resource.push(kept);
        }
    }
    (resource, non_resource)
}

/// kube-apiserver's escalation check on writing RBAC objects: a Role or ClusterRole may only
/// be written by a user who holds every permission it grants (where it grants them: the
/// Role's namespace, cluster-wide for a ClusterRole) or may `escalate` it; a RoleBinding or
/// ClusterRoleBinding only by one who holds every permission of the role it refers to (a
/// missing role grants nothing one could hold) or may `bind` that role. `object` is the
/// object as it would be stored, so creates, updates, patches and applies are all checked.
pub(crate) fn check_escalation(
    store: &Store,
    user: &User,
    rt: &crate::registry::ResourceType,
    object: &Value,
) -> Result<(), ApiError> {
    if rt.group != "rbac.authorization.k8s.io" || user.in_group(MASTERS) {
        return Ok(());
    }
    let namespace = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str);
    let name = object.pointer("/metadata/name").and_then(Value::as_str);
    let may = |verb: &'static str, resource: &'static str, name: Option<&str>| {
        let request = Request::Resource {
            verb,
            group: "rbac.authorization.k8s.io",
            resource,
            subresource: None,
            namespace,
            name,
        };
        allowed(store, user, &request)
    };
    let (rules, exempt) = match rt.plural.as_str() {
        "roles" => (object.clone(), may("escalate", "roles", name)),
        "clusterroles" => (object.clone(), may("escalate", "clusterroles", name)),
        "rolebindings" | "clusterrolebindings" => {
            let role_name = object.pointer("/roleRef/name").and_then(Value::as_str);
            let (resource, role) = match object.pointer("/roleRef/kind").and_then(Value::as_str) {
                Some("Role") => ("roles", role_of(store, object, namespace)),
                _ => ("clusterroles", role_of(store, object, None)),
            };
            let bind = may("bind", resource, role_name);
            match role {
                Some(role) => (role.clone(), bind),
                None if bind => return Ok(()),
                None => {
                    return Err(escalation(
                        user,
                        rt,
                        name,
                        format!(
                            "the {resource} {:?} it refers to does not exist",
                            role_name.unwrap_or_default()
                        ),
                    ));
                }
            }
        }
        _ => return Ok(()),
    };
    if exempt {
        return Ok(());
    }
    match rules["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|rule| !held(store, user, rule, namespace))
    {
        Some(rule) => Err(escalation(
            user,
            rt,
            name,
            format!("it grants permissions the user does not hold: {rule}"),
        )),
        None => Ok(()),
    }
}

/// Whether `user` holds everything `rule` grants, in `namespace` (`None`: cluster-wide).
/// A wildcard is held only by a wildcard.
fn held(store: &Store, user: &User, rule: &Value, namespace: Option<&str>) -> bool {
    let strings = |field: &str| rule_strings(rule, field);
    let verbs = strings("verbs");
    let urls = strings("nonResourceURLs");
    if !urls.is_empty() {
        return urls.iter().all(|path| {
            verbs
                .iter()
                .all(|verb| allowed(store, user, &Request::NonResource { verb, path }))
        });
    }
    let names = strings("resourceNames");
    let names: Vec<Option<&str>> = if names.is_empty() {
        vec![None]
    } else {
        names.into_iter().map(Some).collect()
    };
    let groups = strings("apiGroups");
    let resources = strings("resources");
    groups.iter().all(|group| {
        resources.iter().all(|combined| {
            let (resource, subresource) = match combined.split_once('/') {
                Some((r, s)) => (r, Some(s)),
                None => (*combined, None),
            };
            verbs.iter().all(|verb| {
                names.iter().all(|name| {
                    let request = Request::Resource {
                        verb,
                        group,
                        resource,
                        subresource,
                        namespace,
                        name: *name,
                    };
                    allowed(store, user, &request)
                })
            })
        })
    })
}

fn escalation(
    user: &User,
    rt: &crate::registry::ResourceType,
    name: Option<&str>,
    why: String,
) -> ApiError {
    ApiError::forbidden_message(
        format!(
            "{}.{} {:?} is forbidden: user {:?} (groups={:?}) is attempting to grant RBAC \
             permissions not currently held: {why}",
            rt.plural,
            rt.group,
            name.unwrap_or_default(),
            user.name,
            user.groups,
        ),
        Some(serde_json::json!({"name": name, "group": rt.group, "kind": rt.plural})),
    )
}

/// The 403 kube-apiserver answers a request RBAC refused.
pub(crate) fn forbidden(user: &User, request: &Request<'_>) -> ApiError {
    match request {
        Request::NonResource { verb, path } => ApiError::forbidden_message(
            format!(
                "forbidden: User {:?} cannot {verb} path {path:?}",
                user.name
            ),
            None,
        ),
        Request::Resource {
            verb,
            group,
            resource,
            subresource,
            namespace,
            name,
        } => {
            let qualified = if group.is_empty() {
                (*resource).to_owned()
            } else {
                format!("{resource}.{group}")
            };
            let asked = match subresource {
                Some(sub) => format!("{resource}/{sub}"),
                None => (*resource).to_owned(),
            };
            let scope = match namespace {
                Some(ns) => format!("in the namespace {ns:?}"),
                None => "at the cluster scope".into(),
            };
            let reason = format!(
                "User {:?} cannot {verb} resource {asked:?} in API group {group:?} {scope}",
                user.name
            );
            let message = match name {
                Some(name) => format!("{qualified} {name:?} is forbidden: {reason}"),
                None => format!("{qualified} is forbidden: {reason}"),
            };
            let mut details = serde_json::json!({"kind": resource});
            if let Some(name) = name {
                details["name"] = (*name).into();
            }
            if !group.is_empty() {
                details["group"] = (*group).into();
            }
            ApiError::forbidden_message(message, Some(details))
        }
    }
}

fn bootstrap_allows(request: &Request<'_>) -> bool {
    match request {
        Request::Resource {
            verb: "create",
            group,
            resource,
            subresource: None,
            ..
        } => BASIC_USER.contains(&(*group, *resource)),
        Request::Resource { .. } => false,
        Request::NonResource { verb, path } => {
            *verb == "get" && DISCOVERY.iter().any(|url| url_matches(url, path))
        }
    }
}

/// Whether `binding` (in `namespace`, for a RoleBinding) names `user` among its subjects.
fn binds(binding: &Value, user: &User, namespace: Option<&str>) -> bool {
    binding["subjects"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|subject| {
            let name = subject["name"].as_str().unwrap_or_default();
            match subject["kind"].as_str() {
                Some("User") => user.name == name,
                Some("Group") => user.in_group(name),
                Some("ServiceAccount") => {
                    let of = subject["namespace"]
                        .as_str()
                        .filter(|ns| !ns.is_empty())
                        .or(namespace);
                    user.service_account() == of.map(|ns| (ns, name))
                }
                _ => false,
            }
        })
}

/// The role `binding` refers to: a ClusterRole, or a Role of the RoleBinding's namespace.
fn role_of<'s>(store: &'s Store, binding: &Value, namespace: Option<&str>) -> Option<&'s Value> {
    let name = binding.pointer("/roleRef/name")?.as_str()?;
    let (plural, namespace) = match binding.pointer("/roleRef/kind")?.as_str()? {
        "ClusterRole" => ("clusterroles", ""),
        "Role" => ("roles", namespace?),
        _ => return None,
    };
    store.get(&crate::store::StoreKey {
        group: "rbac.authorization.k8s.io".into(),
        plural: plural.into(),
        namespace: namespace.into(),
        name: name.into(),
    })
}

fn rule_allows(rule: &Value, request: &Request<'_>) -> bool {
    let strings = |field: &str| rule_strings(rule, field);
    let has = |field: &str, wanted: &str| strings(field).iter().any(|s| *s == "*" || *s == wanted);
    match request {
        Request::NonResource { verb, path } => {
            has("verbs", verb)
                && strings("nonResourceURLs")
                    .iter()
                    .any(|url| url_matches(url, path))
        }
        Request::Resource {
            verb,
            group,
            resource,
            subresource,
            name,
            ..
        } => {
            let names = strings("resourceNames");
            has("verbs", verb)
                && has("apiGroups", group)
                && resource_matches(&strings("resources"), resource, *subresource)
                && (names.is_empty() || name.is_some_and(|n| names.contains(&n)))
        }
    }
}

/// The strings of a rule's list `field` (verbs, apiGroups, resources, ...).
fn rule_strings<'r>(rule: &'r Value, field: &str) -> Vec<&'r str> {
    rule[field]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

fn resource_matches(rule: &[&str], resource: &str, subresource: Option<&str>) -> bool {
    let combined = match subresource {
        Some(sub) => format!("{resource}/{sub}"),
        None => resource.to_owned(),
    };
    rule.iter().any(|r| {
        *r == "*"
            || *r == combined
            || subresource.is_some_and(|sub| r.strip_prefix("*/") == Some(sub))
    })
}

fn url_matches(rule: &str, path: &str) -> bool {
    rule == "*"
        || rule == path
        || rule
            .strip_suffix('*')
            .is_some_and(|prefix| path.starts_with(prefix))
}

#[cfg(test)]
#[path = "rbac_tests.rs"]
mod tests;
