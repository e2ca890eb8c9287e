//! The RBAC the loaded plugins need — nothing more.
//!
//! Each declared verb becomes the same RBAC verb on the kind's resource, except
//! `update-status`, which is `update` on `<plural>/status`, and `patch`, which also brings
//! `create` (the host's server-side apply creates a missing object, and kube-apiserver
//! authorizes an apply that creates as `create`); a declared subresource verb is
//! that verb on `<plural>/<subresource>` (e.g. `create` on `serviceaccounts/token`). The
//! host adds what it does for
//! the plugins: `list` and `watch` on the primary and watched kinds (its informers),
//! `get` on the primary and `update` on its status (failed passes are reported there; not
//! for a built-in kind without a status subresource, such as a ConfigMap),
//! and `create` and `patch` on `events.k8s.io` events (its event recorder, which also
//! reports refused plugin files, so it is there with no plugin loaded); for a plugin with
//! an optional watch, `list` and `watch` on CustomResourceDefinitions (to start the watch
//! when its kind appears).
//!
//! Where: without `--namespace` the informers watch every namespace, so one ClusterRole
//! holds it all. With it, a Role in that namespace holds the namespaced rules; a plugin
//! `plugins.toml` grants other namespaces gets its declared verbs in a Role in each, or in
//! the ClusterRole when granted every namespace; cluster-scoped kinds (granted
//! `cluster_scoped`) go in the ClusterRole. Leader election gets its own Role in the
//! Lease's namespace: `get` and `patch` on that one Lease (`resourceNames`), `create` on
//! leases (RBAC cannot limit a create by name). The webhook server's managed certificate
//! (`run --webhook-secret NS/NAME`) gets a Role in the Secret's namespace: `get` and
//! `update` on that one Secret, `create` on secrets; and a ClusterRole to keep the managed
//! CA in the webhook configurations' `caBundle` (`list` and `update` on both kinds).
//! Off-cluster (no `--cluster-dns`) a plugin whose egress may name a Service gets Services
//! and EndpointSlices read (a ClusterRole). With `--service-account NS/NAME` every role is
//! followed by a binding of the same name to it, and with `--namespace` elsewhere than NS,
//! a Role on events in NS (the refusals are reported on the operator's Pod).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use wasm_operator_runtime::backend::access::{Access, Namespaces};
use wasm_operator_types::{Description, KindRef, Verb};

use super::status_subresource::may_have_status;

/// The name of the generated ClusterRole or Role.
pub(crate) const ROLE_NAME: &str = "wasm-operator";

/// The name of the leader election's Role.
pub(crate) const LEASE_ROLE_NAME: &str = "wasm-operator-leader-election";

/// The name of the webhook certificate Secret's Role.
pub(crate) const WEBHOOK_SECRET_ROLE_NAME: &str = "wasm-operator-webhook-certificate";

/// The name of the ClusterRole on the webhook configurations.
pub(crate) const WEBHOOK_CONFIGURATIONS_ROLE_NAME: &str = "wasm-operator-webhook-configurations";

/// The ClusterRole reading Services and their EndpointSlices, to resolve Service names
/// off-cluster.
pub(crate) const SERVICE_ENDPOINTS_ROLE_NAME: &str = "wasm-operator-service-endpoints";

/// The Role on target cluster registrations, in the clusters namespace.
pub(crate) const TARGET_CLUSTERS_ROLE_NAME: &str = "wasm-operator-target-clusters";

/// The Role that reads the target cluster registrations in `namespace` (every Secret
/// there: a registration is found by its label, which RBAC cannot select on).
fn target_clusters_role(namespace: &str) -> Role {
    role(
        TARGET_CLUSTERS_ROLE_NAME,
        namespace,
        vec![PolicyRule {
            api_groups: Some(vec![String::new()]),
            resources: Some(vec!["secrets".into()]),
            verbs: ["get", "list", "watch"].map(String::from).to_vec(),
            ..PolicyRule::default()
        }],
    )
}

/// A namespaced object by name: a Lease, a Secret, a ServiceAccount.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ObjectName<'a> {
    pub namespace: &'a str,
    pub name: &'a str,
}

/// `(group, resource)` → verbs, with whether the resource is namespaced.
type Needs = BTreeMap<(String, String), (bool, BTreeSet<&'static str>)>;

fn need(needs: &mut Needs, kind: &KindRef, resource: String, verbs: &[&'static str]) {
    let entry = needs
        .entry((kind.group().to_owned(), resource))
        .or_insert_with(|| (kind.namespaced, BTreeSet::new()));
    entry.1.extend(verbs.iter().copied());
}

fn merge(into: &mut Needs, from: &Needs) {
    for (key, (namespaced, verbs)) in from {
        let entry = into
            .entry(key.clone())
            .or_insert_with(|| (*namespaced, BTreeSet::new()));
        entry.1.extend(verbs.iter().copied());
    }
}

/// What the plugin declared.
fn declared(description: &Description) -> Needs {
    let mut needs = Needs::new();
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
                // The host lets `patch` server-side apply, which creates a missing object;
                // kube-apiserver authorizes that create as `create`.
                Verb::Patch => need(&mut needs, kind, kind.plural.clone(), &["create", "patch"]),
                other => need(&mut needs, kind, kind.plural.clone(), &[other.as_str()]),
            }
        }
    }
    for sub in &description.subresources {
        let verbs: Vec<&'static str> = sub.verbs.iter().map(|v| v.as_str()).collect();
        let resource = format!("{}/{}", sub.kind.plural, sub.subresource);
        need(&mut needs, &sub.kind, resource, &verbs);
    }
    needs
}

/// What the host does for the plugin: informers, failure reports, events.
fn hosted(description: &Description) -> Needs {
    let mut needs = Needs::new();
    // Failed passes are reported on the primary's status (controller::report), when it
    // can have one.
    let primary = &description.primary;
    need(&mut needs, primary, primary.plural.clone(), &["get"]);
    if may_have_status(primary) {
        need(
            &mut needs,
            primary,
            format!("{}/status", primary.plural),
            &["update"],
        );
    }
    let watched =
        std::iter::once(&description.primary).chain(description.watches.iter().map(|w| &w.kind));
    for kind in watched {
        need(&mut needs, kind, kind.plural.clone(), &["list", "watch"]);
    }
    // An optional watch starts when its CRD appears: the host watches CRDs to know when
    // (without this it asks discovery again every few seconds).
    if description.watches.iter().any(|w| w.optional) {
        let crds = KindRef {
            api_version: "apiextensions.k8s.io/v1".into(),
            kind: "CustomResourceDefinition".into(),
            plural: "customresourcedefinitions".into(),
            namespaced: false,
        };
        need(
            &mut needs,
            &crds,
            "customresourcedefinitions".into(),
            &["list", "watch"],
        );
    }
    needs
}

/// What the host's event recorder needs (for the plugins, and for refused files).
fn events() -> Needs {
    let mut needs = Needs::new();
    let events = KindRef {
        api_version: "events.k8s.io/v1".into(),
        kind: "Event".into(),
        plural: "events".into(),
        namespaced: true,
    };
    need(&mut needs, &events, "events".into(), &["create", "patch"]);
    needs
}

/// One rule per `(group, resource)`, sorted.
fn rules<'a>(
    needs: impl Iterator<Item = (&'a (String, String), &'a (bool, BTreeSet<&'static str>))>,
) -> Vec<PolicyRule> {
    needs
        .map(|((group, resource), (_, verbs))| PolicyRule {
            api_groups: Some(vec![group.clone()]),
            resources: Some(vec![resource.clone()]),
            verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
            ..PolicyRule::default()
        })
        .collect()
}

fn scoped(needs: &Needs, namespaced: bool) -> Needs {
    needs
        .iter()
        .filter(|(_, (n, _))| *n == namespaced)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn role(name: &str, namespace: &str, rules: Vec<PolicyRule>) -> Role {
    Role {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            ..ObjectMeta::default()
        },
        rules: Some(rules),
    }
}

/// The Role on the Secret the webhook server keeps its certificate in (`namespace`, `name`).
fn webhook_secret_role(secret: ObjectName<'_>) -> Role {
    let rule = |names: Option<Vec<String>>, verbs: &[&str]| PolicyRule {
        api_groups: Some(vec![String::new()]),
        resources: Some(vec!["secrets".into()]),
        resource_names: names,
        verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
        ..PolicyRule::default()
    };
    role(
        WEBHOOK_SECRET_ROLE_NAME,
        secret.namespace,
        vec![
            rule(None, &["create"]),
            rule(Some(vec![secret.name.to_owned()]), &["get", "update"]),
        ],
    )
}

/// The ClusterRole on the webhook configurations whose `caBundle` the host keeps.
fn webhook_configurations_role() -> ClusterRole {
    ClusterRole {
        metadata: ObjectMeta {
            name: Some(WEBHOOK_CONFIGURATIONS_ROLE_NAME.into()),
            ..ObjectMeta::default()
        },
        rules: Some(vec![PolicyRule {
            api_groups: Some(vec!["admissionregistration.k8s.io".into()]),
            resources: Some(vec![
                "mutatingwebhookconfigurations".into(),
                "validatingwebhookconfigurations".into(),
            ]),
            verbs: vec!["list".into(), "update".into()],
            ..PolicyRule::default()
        }]),
        ..ClusterRole::default()
    }
}

/// Whether an egress pattern (`HOST:PORT`, `HOST` possibly `*.SUFFIX`) may name a
/// Service: `{service}.{namespace}.svc[.cluster.local]`.
fn reaches_services(pattern: &str) -> bool {
    let host = pattern.rsplit_once(':').map_or(pattern, |(host, _)| host);
    let host = host.to_ascii_lowercase();
    let suffix = host.strip_prefix("*.").unwrap_or(&host);
    let names = ["svc", "svc.cluster.local"];
    names.iter().any(|name| {
        suffix == *name
            || suffix.ends_with(&format!(".{name}"))
            || (host.starts_with("*.") && name.ends_with(&format!(".{suffix}")))
    })
}

/// `get` on Services and `list` on EndpointSlices, cluster-wide (an egress pattern may
/// name any namespace's Services): what the off-cluster resolver reads.
fn service_endpoints_role() -> ClusterRole {
    let rule = |group: &str, resource: &str, verb: &str| PolicyRule {
        api_groups: Some(vec![group.into()]),
        resources: Some(vec![resource.into()]),
        verbs: vec![verb.into()],
        ..PolicyRule::default()
    };
    ClusterRole {
        metadata: ObjectMeta {
            name: Some(SERVICE_ENDPOINTS_ROLE_NAME.into()),
            ..ObjectMeta::default()
        },
        rules: Some(vec![
            rule("", "services", "get"),
            rule("discovery.k8s.io", "endpointslices", "list"),
        ]),
        ..ClusterRole::default()
    }
}

fn lease_role(lease: ObjectName<'_>) -> Role {
    let rule = |names: Option<Vec<String>>, verbs: &[&str]| PolicyRule {
        api_groups: Some(vec!["coordination.k8s.io".into()]),
        resources: Some(vec!["leases".into()]),
        resource_names: names,
        verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
        ..PolicyRule::default()
    };
    role(
        LEASE_ROLE_NAME,
        lease.namespace,
        vec![
            rule(None, &["create"]),
            rule(
                Some(vec![lease.name.to_owned()]),
                &["get", "patch", "update"],
            ),
        ],
    )
}

/// Where the rendered roles go and who they are bound to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout<'a> {
    /// A Role in this namespace instead of a ClusterRole (`run --namespace`).
    pub namespace: Option<&'a str>,
    /// Leader election's Lease.
    pub lease: Option<ObjectName<'a>>,
    /// The webhook server's managed certificate Secret.
    pub webhook_secret: Option<ObjectName<'a>>,
    /// The namespace of target cluster registrations.
    pub clusters_namespace: &'a str,
    /// Plugins' Service names are resolved from EndpointSlices (`run` without
    /// `--cluster-dns`): a plugin whose egress reaches Services gets them read.
    pub resolves_services: bool,
    /// The ServiceAccount the operator runs as: each role is followed by a binding of the
    /// same name to it, so the output applies as is.
    pub service_account: Option<ObjectName<'a>>,
}

#[cfg(test)]
impl<'a> Layout<'a> {
    /// One ClusterRole, no Lease, no webhook certificate, no bindings.
    pub(crate) fn cluster_wide(clusters_namespace: &'a str) -> Self {
        Self {
            namespace: None,
            lease: None,
            webhook_secret: None,
            clusters_namespace,
            resolves_services: false,
            service_account: None,
        }
    }
}

/// A rendered role.
enum Granted {
    Role(Role),
    ClusterRole(ClusterRole),
}

impl Granted {
    /// The role followed, with a ServiceAccount, by its binding to it.
    fn documents(
        self,
        account: Option<ObjectName<'_>>,
    ) -> Result<Vec<String>, serde_yaml_ng::Error> {
        let subject = account.map(|a| Subject {
            kind: "ServiceAccount".into(),
            name: a.name.into(),
            namespace: Some(a.namespace.into()),
            ..Subject::default()
        });
        let role_ref = |kind: &str, name: &Option<String>| RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: kind.into(),
            name: name.clone().unwrap_or_default(),
        };
        let mut out = Vec::new();
        match self {
            Granted::Role(role) => {
                out.push(serde_yaml_ng::to_string(&role)?);
                if let Some(subject) = subject {
                    out.push(serde_yaml_ng::to_string(&RoleBinding {
                        metadata: role.metadata.clone(),
                        role_ref: role_ref("Role", &role.metadata.name),
                        subjects: Some(vec![subject]),
                    })?);
                }
            }
            Granted::ClusterRole(role) => {
                out.push(serde_yaml_ng::to_string(&role)?);
                if let Some(subject) = subject {
                    out.push(serde_yaml_ng::to_string(&ClusterRoleBinding {
                        metadata: role.metadata.clone(),
                        role_ref: role_ref("ClusterRole", &role.metadata.name),
                        subjects: Some(vec![subject]),
                    })?);
                }
            }
        }
        Ok(out)
    }
}

/// The roles the plugins need, as YAML documents: see the module documentation for which
/// rule goes where.
pub(crate) fn render(
    plugins: &[(Description, Access)],
    layout: &Layout<'_>,
) -> Result<String, serde_yaml_ng::Error> {
    let mut documents = Vec::new();
    for granted in roles(plugins, layout) {
        documents.extend(granted.documents(layout.service_account)?);
    }
    Ok(format!(
        "{}{}",
        egress_comment(plugins),
        documents.join("---\n")
    ))
}

fn roles(plugins: &[(Description, Access)], layout: &Layout<'_>) -> Vec<Granted> {
    let mut roles = Vec::new();
    let mut cluster = Needs::new();
    match layout.namespace {
        None => {
            merge(&mut cluster, &events());
            for (description, _) in plugins {
                merge(&mut cluster, &declared(description));
                merge(&mut cluster, &hosted(description));
            }
        }
        Some(ns) => {
            let mut home = events();
            let mut elsewhere: BTreeMap<&str, Needs> = BTreeMap::new();
            if let Some(account) = layout.service_account.filter(|a| a.namespace != ns) {
                merge(elsewhere.entry(account.namespace).or_default(), &events());
            }
            for (description, access) in plugins {
                let own = declared(description);
                merge(&mut home, &scoped(&own, true));
                merge(&mut home, &scoped(&hosted(description), true));
                merge(&mut cluster, &scoped(&own, false));
                match &access.namespaces {
                    Namespaces::Primary => {}
                    Namespaces::All => merge(&mut cluster, &scoped(&own, true)),
                    Namespaces::Also(granted) => {
                        for other in granted.iter().filter(|g| g.as_str() != ns) {
                            merge(elsewhere.entry(other).or_default(), &scoped(&own, true));
                        }
                    }
                }
            }
            roles.push(Granted::Role(role(ROLE_NAME, ns, rules(home.iter()))));
            for (other, needs) in &elsewhere {
                roles.push(Granted::Role(role(ROLE_NAME, other, rules(needs.iter()))));
            }
        }
    }
    if layout.namespace.is_none() || !cluster.is_empty() {
        let role = Granted::ClusterRole(ClusterRole {
            metadata: ObjectMeta {
                name: Some(ROLE_NAME.into()),
                ..ObjectMeta::default()
            },
            rules: Some(rules(cluster.iter())),
            ..ClusterRole::default()
        });
        let at = if layout.namespace.is_none() {
            0
        } else {
            roles.len()
        };
        roles.insert(at, role);
    }
    if let Some(lease) = layout.lease {
        roles.push(Granted::Role(lease_role(lease)));
    }
    if let Some(secret) = layout.webhook_secret {
        roles.push(Granted::Role(webhook_secret_role(secret)));
        roles.push(Granted::ClusterRole(webhook_configurations_role()));
    }
    let reach_services =
        |(d, _): &(Description, Access)| d.egress.iter().any(|e| reaches_services(e));
    if layout.resolves_services && plugins.iter().any(reach_services) {
        roles.push(Granted::ClusterRole(service_endpoints_role()));
    }
    if plugins.iter().any(|(d, _)| d.targets.targets()) {
        roles.push(Granted::Role(target_clusters_role(
            layout.clusters_namespace,
        )));
    }
    roles
}

/// What the plugins send HTTP requests to, as YAML comments (RBAC does not govern egress;
/// a NetworkPolicy may, and the administrator sees here what it must allow).
fn egress_comment(plugins: &[(Description, Access)]) -> String {
    let mut out = String::new();
    for (description, _) in plugins {
        if description.egress.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "# plugin {} sends HTTP(S) requests to: {}\n",
            description.name,
            description.egress.join(", ")
        ));
    }
    out
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
                optional: false,
            }],
            watched_indexes: vec![],
            subresources: vec![],
            admission: vec![],
            egress: vec![],
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
            targets: Default::default(),
            primary_selector: None,
        }
    }

    fn rule_table(rules: Option<Vec<PolicyRule>>) -> Vec<(String, String, Vec<String>)> {
        rules
            .unwrap_or_default()
            .into_iter()
            .map(|r| {
                (
                    r.api_groups.unwrap_or_default().join(","),
                    r.resources.unwrap_or_default().join(","),
                    r.verbs,
                )
            })
            .collect()
    }

    /// The rules of the one ClusterRole `description` alone needs, as a table.
    fn cluster_role_table(description: Description) -> Vec<(String, String, Vec<String>)> {
        let yaml = render(
            &[(description, Access::default())],
            &Layout::cluster_wide("c5c3-clusters"),
        )
        .expect("renders");
        let role: ClusterRole = serde_yaml_ng::from_str(&yaml).expect("one ClusterRole");
        rule_table(role.rules)
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    const LEASE: ObjectName<'static> = ObjectName {
        namespace: "ops",
        name: "wasm-operator-leader",
    };

    #[test]
    fn the_host_asks_for_the_primary_status_only_where_a_status_subresource_can_be() {
        let mut configmaps = plugin();
        configmaps
            .permissions
            .retain(|p| p.kind.kind != "ConfigMap");
        let mut custom = configmaps.clone();
        custom.primary = KindRef {
            api_version: "example.com/v1".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
            namespaced: true,
        };
        let cases = [(configmaps, "configmaps", false), (custom, "widgets", true)];
        for (description, plural, expected) in cases {
            let rules = cluster_role_table(description);
            let status = format!("{plural}/status");
            assert!(
                rules
                    .iter()
                    .any(|(_, r, v)| *r == plural && v.contains(&"get".to_owned())),
                "{rules:?}"
            );
            assert_eq!(
                rules
                    .iter()
                    .any(|(_, r, v)| *r == status && *v == ["update"]),
                expected,
                "{rules:?}"
            );
        }
    }

    #[test]
    fn the_cluster_role_holds_the_declared_verbs_and_what_the_host_does_for_the_plugin() {
        assert_eq!(
            cluster_role_table(plugin()),
            vec![
                ("".into(), "configmaps".into(), s(&["get", "list", "watch"])),
                ("".into(), "configmaps/status".into(), s(&["update"])),
                ("".into(), "namespaces".into(), s(&["get"])),
                ("".into(), "secrets".into(), s(&["list", "watch"])),
                (
                    "events.k8s.io".into(),
                    "events".into(),
                    s(&["create", "patch"])
                ),
            ]
        );
    }

    #[test]
    fn a_plugin_with_an_optional_watch_may_watch_custom_resource_definitions() {
        let crds = (
            "apiextensions.k8s.io".to_owned(),
            "customresourcedefinitions".to_owned(),
            s(&["list", "watch"]),
        );
        let role = cluster_role_table;
        assert!(
            !role(plugin()).contains(&crds),
            "only with an optional watch"
        );
        let mut optional = plugin();
        optional.watches[0].optional = true;
        assert!(role(optional).contains(&crds));
    }

    #[test]
    fn a_declared_subresource_verb_is_that_verb_on_plural_slash_subresource() {
        let mut with_token = plugin();
        with_token
            .subresources
            .push(wasm_operator_types::SubresourcePermission {
                kind: KindRef::of::<k8s_openapi::api::core::v1::ServiceAccount>(),
                subresource: "token".into(),
                verbs: vec![Verb::Create],
            });
        let table = cluster_role_table(with_token);
        assert!(
            table.contains(&("".into(), "serviceaccounts/token".into(), s(&["create"]))),
            "{table:?}"
        );
        assert!(
            !table.iter().any(|(_, r, _)| r == "serviceaccounts"),
            "a subresource grants nothing on the kind: {table:?}"
        );
    }

    #[test]
    fn each_plugins_egress_is_named_in_a_comment_above_the_roles() {
        let mut p = plugin();
        p.egress = vec![
            "*.svc.cluster.local:5000".into(),
            "api.example.com:443".into(),
        ];
        let yaml = render(
            &[(p, Access::default()), (plugin(), Access::default())],
            &Layout::cluster_wide("c5c3-clusters"),
        )
        .expect("renders");
        assert!(
            yaml.starts_with(
                "# plugin p sends HTTP(S) requests to: *.svc.cluster.local:5000, api.example.com:443\n"
            ),
            "{yaml}"
        );
        assert_eq!(yaml.matches("sends HTTP(S)").count(), 1, "{yaml}");
        let role: ClusterRole = serde_yaml_ng::from_str(&yaml).expect("still one ClusterRole");
        assert!(role.rules.is_some_and(|r| !r.is_empty()));
    }

    #[test]
    fn the_webhook_certificate_gets_a_role_in_its_secrets_namespace_limited_to_its_secret() {
        let secret = ObjectName {
            namespace: "ops",
            name: "wasm-operator-webhook",
        };
        let yaml = render(
            &[(plugin(), Access::default())],
            &Layout {
                webhook_secret: Some(secret),
                ..Layout::cluster_wide("c5c3-clusters")
            },
        )
        .expect("renders");
        let docs: Vec<&str> = yaml.split("---\n").collect();
        assert_eq!(docs.len(), 3, "{yaml}");
        let configurations: ClusterRole = serde_yaml_ng::from_str(docs[2]).expect("a ClusterRole");
        assert_eq!(
            configurations.metadata.name.as_deref(),
            Some(WEBHOOK_CONFIGURATIONS_ROLE_NAME)
        );
        let rule = &configurations.rules.unwrap_or_default()[0];
        assert_eq!(rule.verbs, ["list", "update"]);
        assert!(
            !docs[0].contains("wasm-operator-webhook"),
            "the ClusterRole holds only the plugins' rules"
        );
        let role: Role = serde_yaml_ng::from_str(docs[1]).expect("a Role");
        assert_eq!(
            role.metadata.name.as_deref(),
            Some(WEBHOOK_SECRET_ROLE_NAME)
        );
        assert_eq!(role.metadata.namespace.as_deref(), Some("ops"));
        let rules: Vec<(Option<Vec<String>>, Vec<String>)> = role
            .rules
            .unwrap_or_default()
            .into_iter()
            .map(|r| (r.resource_names, r.verbs))
            .collect();
        assert_eq!(
            rules,
            vec![
                (None, vec!["create".to_owned()]),
                (
                    Some(vec!["wasm-operator-webhook".to_owned()]),
                    vec!["get".to_owned(), "update".to_owned()]
                ),
            ]
        );
    }

    #[test]
    fn leader_election_gets_a_role_in_the_leases_namespace_limited_to_its_lease() {
        let yaml = render(
            &[(plugin(), Access::default())],
            &Layout {
                lease: Some(LEASE),
                ..Layout::cluster_wide("c5c3-clusters")
            },
        )
        .expect("renders");
        let docs: Vec<&str> = yaml.split("---\n").collect();
        assert_eq!(docs.len(), 2, "{yaml}");
        assert!(
            !docs[0].contains("leases"),
            "no Lease rule in the ClusterRole"
        );
        let role: Role = serde_yaml_ng::from_str(docs[1]).expect("the Lease Role");
        assert_eq!(role.metadata.name.as_deref(), Some(LEASE_ROLE_NAME));
        assert_eq!(role.metadata.namespace.as_deref(), Some("ops"));
        let rules = role.rules.unwrap_or_default();
        let by_name: Vec<(Option<Vec<String>>, Vec<String>)> = rules
            .into_iter()
            .map(|r| (r.resource_names, r.verbs))
            .collect();
        assert_eq!(
            by_name,
            vec![
                (None, s(&["create"])),
                (
                    Some(s(&["wasm-operator-leader"])),
                    s(&["get", "patch", "update"])
                ),
            ]
        );
    }

    #[test]
    fn with_a_namespace_the_namespaced_kinds_go_in_a_role_and_cluster_scoped_ones_stay_cluster_wide()
     {
        let yaml = render(
            &[(plugin(), Access::default())],
            &Layout {
                namespace: Some("ops"),
                ..Layout::cluster_wide("c5c3-clusters")
            },
        )
        .expect("renders");
        let docs: Vec<&str> = yaml.split("---\n").collect();
        assert_eq!(docs.len(), 2, "{yaml}");
        let role: Role = serde_yaml_ng::from_str(docs[0]).expect("a Role");
        assert_eq!(role.metadata.namespace.as_deref(), Some("ops"));
        assert!(!docs[0].contains("namespaces"));
        let cluster: ClusterRole = serde_yaml_ng::from_str(docs[1]).expect("a ClusterRole");
        assert_eq!(
            rule_table(cluster.rules),
            vec![("".into(), "namespaces".into(), s(&["get"]))]
        );
    }

    #[test]
    fn granted_namespaces_get_a_role_each_with_the_declared_verbs() {
        let mut p = plugin();
        p.permissions.remove(1);
        let access = Access {
            namespaces: Namespaces::Also(BTreeSet::from(["shared".to_owned()])),
            cluster_scoped: false,
        };
        let yaml = render(
            &[(p.clone(), access)],
            &Layout {
                namespace: Some("ops"),
                ..Layout::cluster_wide("c5c3-clusters")
            },
        )
        .expect("renders");
        let docs: Vec<&str> = yaml.split("---\n").collect();
        assert_eq!(
            docs.len(),
            2,
            "a Role in ops and one in shared, no ClusterRole: {yaml}"
        );
        let shared: Role = serde_yaml_ng::from_str(docs[1]).expect("a Role");
        assert_eq!(shared.metadata.namespace.as_deref(), Some("shared"));
        assert_eq!(
            rule_table(shared.rules),
            vec![
                ("".into(), "configmaps".into(), s(&["get"])),
                ("".into(), "configmaps/status".into(), s(&["update"])),
            ]
        );
        let all = Access {
            namespaces: Namespaces::All,
            cluster_scoped: false,
        };
        let yaml = render(
            &[(p, all)],
            &Layout {
                namespace: Some("ops"),
                ..Layout::cluster_wide("c5c3-clusters")
            },
        )
        .expect("renders");
        let docs: Vec<&str> = yaml.split("---\n").collect();
        let cluster: ClusterRole = serde_yaml_ng::from_str(docs[1]).expect("a ClusterRole");
        assert_eq!(
            rule_table(cluster.rules),
            vec![
                ("".into(), "configmaps".into(), s(&["get"])),
                ("".into(), "configmaps/status".into(), s(&["update"])),
            ]
        );
    }

    #[test]
    fn a_plugin_writing_to_target_clusters_gets_a_role_reading_the_registrations() {
        let mut targeting = plugin();
        targeting.targets.owner_label_prefix = "example.com".into();
        let yaml = render(
            &[(targeting, Access::default())],
            &Layout::cluster_wide("edges"),
        )
        .expect("renders");
        let roles: Vec<&str> = yaml.split("---\n").collect();
        let role = roles
            .iter()
            .find(|d| d.contains(TARGET_CLUSTERS_ROLE_NAME))
            .expect("the registrations role");
        let role: Role = serde_yaml_ng::from_str(role).expect("a Role");
        assert_eq!(role.metadata.namespace.as_deref(), Some("edges"));
        assert_eq!(
            rule_table(role.rules),
            [(
                "".to_owned(),
                "secrets".to_owned(),
                s(&["get", "list", "watch"])
            )]
        );
        let plain = render(
            &[(plugin(), Access::default())],
            &Layout::cluster_wide("edges"),
        )
        .expect("renders");
        assert!(!plain.contains(TARGET_CLUSTERS_ROLE_NAME), "{plain}");
    }

    #[test]
    fn with_a_service_account_each_role_is_followed_by_a_binding_of_its_name_to_it() {
        let layout = Layout {
            namespace: Some("ops"),
            lease: Some(LEASE),
            service_account: Some(ObjectName {
                namespace: "ops",
                name: "wasm-operator",
            }),
            ..Layout::cluster_wide("c5c3-clusters")
        };
        let yaml = render(&[(plugin(), Access::default())], &layout).expect("renders");
        let docs: Vec<serde_json::Value> = yaml
            .split("---\n")
            .map(|d| serde_yaml_ng::from_str(d).expect("a document"))
            .collect();
        let summary: Vec<(String, String, String)> = docs
            .iter()
            .map(|d| {
                let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_owned();
                (
                    text(&d["kind"]),
                    text(&d["metadata"]["namespace"]),
                    text(&d["metadata"]["name"]),
                )
            })
            .collect();
        let row =
            |kind: &str, ns: &str, name: &str| (kind.to_owned(), ns.to_owned(), name.to_owned());
        assert_eq!(
            summary,
            [
                row("Role", "ops", ROLE_NAME),
                row("RoleBinding", "ops", ROLE_NAME),
                row("ClusterRole", "", ROLE_NAME),
                row("ClusterRoleBinding", "", ROLE_NAME),
                row("Role", "ops", LEASE_ROLE_NAME),
                row("RoleBinding", "ops", LEASE_ROLE_NAME),
            ]
        );
        let binding: RoleBinding = serde_json::from_value(docs[1].clone()).expect("a RoleBinding");
        assert_eq!(binding.role_ref.kind, "Role");
        assert_eq!(binding.role_ref.name, ROLE_NAME);
        let subjects = binding.subjects.unwrap_or_default();
        assert_eq!(subjects.len(), 1);
        assert_eq!(
            (
                subjects[0].kind.as_str(),
                subjects[0].namespace.as_deref(),
                subjects[0].name.as_str()
            ),
            ("ServiceAccount", Some("ops"), "wasm-operator")
        );
        let cluster: ClusterRoleBinding =
            serde_json::from_value(docs[3].clone()).expect("a ClusterRoleBinding");
        assert_eq!(cluster.role_ref.kind, "ClusterRole");
    }

    #[test]
    fn off_cluster_a_plugin_reaching_services_gets_them_and_their_endpoint_slices_read() {
        let table = [
            ("*.svc.cluster.local:5000", true),
            ("keystone.openstack.svc:5000", true),
            ("keystone.openstack.svc.cluster.local:443", true),
            ("*.cluster.local:80", true),
            ("*.openstack.svc:5000", true),
            ("api.example.com:443", false),
            ("*.example.com:443", false),
            ("svc.example.com:443", false),
        ];
        for (pattern, reaches) in table {
            assert_eq!(reaches_services(pattern), reaches, "{pattern}");
            let mut p = plugin();
            p.egress = vec![pattern.into()];
            let layout = Layout {
                resolves_services: true,
                ..Layout::cluster_wide("c5c3-clusters")
            };
            let yaml = render(&[(p.clone(), Access::default())], &layout).expect("renders");
            assert_eq!(
                yaml.contains(SERVICE_ENDPOINTS_ROLE_NAME),
                reaches,
                "{pattern}: {yaml}"
            );
            let in_cluster = render(
                &[(p, Access::default())],
                &Layout::cluster_wide("c5c3-clusters"),
            )
            .expect("renders");
            assert!(
                !in_cluster.contains(SERVICE_ENDPOINTS_ROLE_NAME),
                "{in_cluster}"
            );
        }
        let mut p = plugin();
        p.egress = vec!["*.svc.cluster.local:5000".into()];
        let layout = Layout {
            resolves_services: true,
            ..Layout::cluster_wide("c5c3-clusters")
        };
        let yaml = render(&[(p, Access::default())], &layout).expect("renders");
        let role: ClusterRole =
            serde_yaml_ng::from_str(yaml.split("---\n").last().expect("the last document"))
                .expect("a ClusterRole");
        assert_eq!(
            rule_table(role.rules),
            vec![
                ("".into(), "services".into(), s(&["get"])),
                (
                    "discovery.k8s.io".into(),
                    "endpointslices".into(),
                    s(&["list"])
                ),
            ]
        );
    }

    #[test]
    fn the_event_recorder_is_granted_with_no_plugin_and_in_the_operators_own_namespace() {
        let events = (
            "events.k8s.io".to_owned(),
            "events".to_owned(),
            s(&["create", "patch"]),
        );
        let yaml = render(&[], &Layout::cluster_wide("c5c3-clusters")).expect("renders");
        let role: ClusterRole = serde_yaml_ng::from_str(&yaml).expect("one ClusterRole");
        assert_eq!(rule_table(role.rules), vec![events.clone()]);
        let layout = Layout {
            namespace: Some("tenant"),
            service_account: Some(ObjectName {
                namespace: "ops",
                name: "wasm-operator",
            }),
            ..Layout::cluster_wide("c5c3-clusters")
        };
        let yaml = render(&[], &layout).expect("renders");
        let roles: Vec<Role> = yaml
            .split("---\n")
            .filter(|d| d.lines().any(|l| l == "kind: Role"))
            .map(|d| serde_yaml_ng::from_str(d).expect("a Role"))
            .collect();
        let namespaces: Vec<Option<&str>> = roles
            .iter()
            .map(|r| r.metadata.namespace.as_deref())
            .collect();
        assert_eq!(namespaces, [Some("tenant"), Some("ops")], "{yaml}");
        for role in roles {
            assert_eq!(rule_table(role.rules), vec![events.clone()]);
        }
    }
}
