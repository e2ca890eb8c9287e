//! The RBAC the loaded plugins need — nothing more.
//!
//! Each declared verb becomes the same RBAC verb on the kind's resource, except
//! `update-status`, which is `update` on `<plural>/status`. The host adds what it does for
//! the plugins: `list` and `watch` on the primary and watched kinds (its informers),
//! `get` on the primary and `update` on its status (failed passes are reported there),
//! `create` and `patch` on `events.k8s.io` events (its event recorder), and — with leader
//! election — `get`, `create` and `patch` on `coordination.k8s.io` leases.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule, Role};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use wasm_operator_types::{Description, KindRef, Verb};

/// The name of the generated ClusterRole or Role.
pub(crate) const ROLE_NAME: &str = "wasm-operator";

/// `(group, resource)` → verbs, with whether the resource is namespaced.
type Needs = BTreeMap<(String, String), (bool, BTreeSet<&'static str>)>;

fn need(needs: &mut Needs, kind: &KindRef, resource: String, verbs: &[&'static str]) {
    let entry = needs
        .entry((kind.group().to_owned(), resource))
        .or_insert_with(|| (kind.namespaced, BTreeSet::new()));
    entry.1.extend(verbs.iter().copied());
}

fn needs(descriptions: &[Description], leader_election: bool) -> Needs {
    let mut needs = Needs::new();
    for description in descriptions {
        for permission in &description.permissions {
            let kind = &permission.kind;
            for verb in &permission.verbs {
                match verb {
                    Verb::UpdateStatus => need(
                        &mut needs,
                        kind,
                        format!("{}/status", kind.plural),
                        &["update"],
                    ),
                    other => need(&mut needs, kind, kind.plural.clone(), &[other.as_str()]),
                }
            }
        }
        // Failed passes are reported on the primary's status (controller::report).
        let primary = &description.primary;
        need(&mut needs, primary, primary.plural.clone(), &["get"]);
        need(
            &mut needs,
            primary,
            format!("{}/status", primary.plural),
            &["update"],
        );
        let watched = std::iter::once(&description.primary)
            .chain(description.watches.iter().map(|w| &w.kind));
        for kind in watched {
            need(&mut needs, kind, kind.plural.clone(), &["list", "watch"]);
        }
    }
    let events = KindRef {
        api_version: "events.k8s.io/v1".into(),
        kind: "Event".into(),
        plural: "events".into(),
        namespaced: true,
    };
    need(&mut needs, &events, "events".into(), &["create", "patch"]);
    if leader_election {
        let leases = KindRef {
            api_version: "coordination.k8s.io/v1".into(),
            kind: "Lease".into(),
            plural: "leases".into(),
            namespaced: true,
        };
        need(
            &mut needs,
            &leases,
            "leases".into(),
            &["create", "get", "patch"],
        );
    }
    needs
}

/// One rule per `(group, resource)`, sorted.
fn rules<'a>(
    needs: impl Iterator<Item = (&'a (String, String), &'a BTreeSet<&'static str>)>,
) -> Vec<PolicyRule> {
    needs
        .map(|((group, resource), verbs)| PolicyRule {
            api_groups: Some(vec![group.clone()]),
            resources: Some(vec![resource.clone()]),
            verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
            ..PolicyRule::default()
        })
        .collect()
}

/// The ClusterRole the plugins need; with `namespace`, a Role in it for the namespaced
/// kinds, plus a ClusterRole only when a plugin uses a cluster-scoped kind.
pub(crate) fn render(
    descriptions: &[Description],
    namespace: Option<&str>,
    leader_election: bool,
) -> Result<String, serde_yaml_ng::Error> {
    let needs = needs(descriptions, leader_election);
    let all = || needs.iter().map(|(k, (_, verbs))| (k, verbs));
    let mut documents = Vec::new();
    match namespace {
        None => documents.push(serde_yaml_ng::to_string(&ClusterRole {
            metadata: ObjectMeta {
                name: Some(ROLE_NAME.into()),
                ..ObjectMeta::default()
            },
            rules: Some(rules(all())),
            ..ClusterRole::default()
        })?),
        Some(ns) => {
            let scoped = |namespaced: bool| {
                rules(
                    needs
                        .iter()
                        .filter(move |(_, (n, _))| *n == namespaced)
                        .map(|(k, (_, verbs))| (k, verbs)),
                )
            };
            documents.push(serde_yaml_ng::to_string(&Role {
                metadata: ObjectMeta {
                    name: Some(ROLE_NAME.into()),
                    namespace: Some(ns.into()),
                    ..ObjectMeta::default()
                },
                rules: Some(scoped(true)),
            })?);
            let cluster = scoped(false);
            if !cluster.is_empty() {
                documents.push(serde_yaml_ng::to_string(&ClusterRole {
                    metadata: ObjectMeta {
                        name: Some(ROLE_NAME.into()),
                        ..ObjectMeta::default()
                    },
                    rules: Some(cluster),
                    ..ClusterRole::default()
                })?);
            }
        }
    }
    Ok(documents.join("---\n"))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
    use wasm_operator_types::{Mapping, Permission, Watch};

    use super::*;

    fn plugin() -> Description {
        let cm = KindRef::of::<ConfigMap>();
        Description {
            name: "p".into(),
            version: "1.0.0".into(),
            field_manager: "p".into(),
            primary: cm.clone(),
            primary_predicates: vec![],
            watches: vec![Watch {
                kind: KindRef::of::<Secret>(),
                mapping: Mapping::Owner,
            }],
            indexes: vec![],
            permissions: vec![
                Permission {
                    kind: cm,
                    verbs: vec![Verb::Get, Verb::UpdateStatus],
                },
                Permission {
                    kind: KindRef::of::<Namespace>(),
                    verbs: vec![Verb::Get],
                },
            ],
        }
    }

    #[test]
    fn the_cluster_role_holds_the_declared_verbs_and_what_the_host_does_for_the_plugin() {
        let yaml = render(&[plugin()], None, true).expect("renders");
        let role: ClusterRole = serde_yaml_ng::from_str(&yaml).expect("one ClusterRole");
        let rules: Vec<(String, String, Vec<String>)> = role
            .rules
            .unwrap_or_default()
            .into_iter()
            .map(|r| {
                (
                    r.api_groups.unwrap_or_default().join(","),
                    r.resources.unwrap_or_default().join(","),
                    r.verbs,
                )
            })
            .collect();
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            rules,
            vec![
                ("".into(), "configmaps".into(), s(&["get", "list", "watch"])),
                ("".into(), "configmaps/status".into(), s(&["update"])),
                ("".into(), "namespaces".into(), s(&["get"])),
                ("".into(), "secrets".into(), s(&["list", "watch"])),
                (
                    "coordination.k8s.io".into(),
                    "leases".into(),
                    s(&["create", "get", "patch"])
                ),
                (
                    "events.k8s.io".into(),
                    "events".into(),
                    s(&["create", "patch"])
                ),
            ]
        );
    }

    #[test]
    fn with_a_namespace_the_namespaced_kinds_go_in_a_role_and_cluster_scoped_ones_stay_cluster_wide()
     {
        let yaml = render(&[plugin()], Some("ops"), false).expect("renders");
        let docs: Vec<&str> = yaml.split("---\n").collect();
        assert_eq!(docs.len(), 2, "{yaml}");
        let role: Role = serde_yaml_ng::from_str(docs[0]).expect("a Role");
        assert_eq!(role.metadata.namespace.as_deref(), Some("ops"));
        assert!(!docs[0].contains("namespaces"));
        assert!(
            !docs[0].contains("leases"),
            "no Lease rule without leader election"
        );
        let cluster: ClusterRole = serde_yaml_ng::from_str(docs[1]).expect("a ClusterRole");
        let rules = cluster.rules.unwrap_or_default();
        assert_eq!(rules.len(), 1);
        assert_eq!(
            rules[0].resources.as_deref(),
            Some(&["namespaces".to_owned()][..])
        );
    }
}
