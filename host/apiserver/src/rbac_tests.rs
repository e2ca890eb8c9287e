use serde_json::{Value, json};

use super::*;
use crate::store::StoreKey;

fn sa_user(namespace: &str, name: &str) -> User {
    User {
        name: format!("system:serviceaccount:{namespace}:{name}"),
        uid: None,
        groups: vec![
            "system:serviceaccounts".into(),
            format!("system:serviceaccounts:{namespace}"),
            "system:authenticated".into(),
        ],
    }
}

fn put(store: &mut Store, plural: &str, namespace: &str, object: Value) {
    let name = object["metadata"]["name"]
        .as_str()
        .expect("named")
        .to_owned();
    store
        .put(
            StoreKey {
                group: "rbac.authorization.k8s.io".into(),
                plural: plural.into(),
                namespace: namespace.into(),
                name,
            },
            object,
        )
        .expect("stored");
}

/// A store where ServiceAccount `ops/operator` may get and list ConfigMaps in `ops` (a Role),
/// update `deployments/status` anywhere and get only the Secret `token` in `ops` (a
/// ClusterRole bound in the namespace), and read `/metrics`.
fn store() -> Store {
    let mut store = Store::in_memory(16);
    put(
        &mut store,
        "roles",
        "ops",
        json!({"metadata": {"name": "config-reader", "namespace": "ops"},
               "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]}),
    );
    put(
        &mut store,
        "rolebindings",
        "ops",
        json!({"metadata": {"name": "config-reader", "namespace": "ops"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "config-reader"},
               "subjects": [{"kind": "ServiceAccount", "name": "operator"}]}),
    );
    put(
        &mut store,
        "clusterroles",
        "",
        json!({"metadata": {"name": "token-reader"},
               "rules": [{"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["token"], "verbs": ["get"]}]}),
    );
    put(
        &mut store,
        "rolebindings",
        "ops",
        json!({"metadata": {"name": "token-reader", "namespace": "ops"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "token-reader"},
               "subjects": [{"kind": "ServiceAccount", "name": "operator", "namespace": "ops"}]}),
    );
    put(
        &mut store,
        "clusterroles",
        "",
        json!({"metadata": {"name": "status-writer"},
               "rules": [{"apiGroups": ["apps"], "resources": ["*/status"], "verbs": ["update", "patch"]},
                         {"nonResourceURLs": ["/metrics*"], "verbs": ["get"]}]}),
    );
    put(
        &mut store,
        "clusterrolebindings",
        "",
        json!({"metadata": {"name": "status-writer"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "status-writer"},
               "subjects": [{"kind": "Group", "name": "system:serviceaccounts:ops"}]}),
    );
    store
}

fn resource<'a>(
    verb: &'a str,
    group: &'a str,
    resource: &'a str,
    subresource: Option<&'a str>,
    namespace: Option<&'a str>,
    name: Option<&'a str>,
) -> Request<'a> {
    Request::Resource {
        verb,
        group,
        resource,
        subresource,
        namespace,
        name,
    }
}

#[test]
fn rbac_allows_what_a_bound_rule_matches_and_nothing_else() {
    let store = store();
    let operator = sa_user("ops", "operator");
    let cases: &[(&str, Request<'_>, bool)] = &[
        (
            "a Role's rule in its namespace",
            resource("get", "", "configmaps", None, Some("ops"), Some("a")),
            true,
        ),
        (
            "a Role's verb it does not list",
            resource("delete", "", "configmaps", None, Some("ops"), Some("a")),
            false,
        ),
        (
            "a Role's rule in another namespace",
            resource("get", "", "configmaps", None, Some("apps"), Some("a")),
            false,
        ),
        (
            "a Role's rule across namespaces",
            resource("list", "", "configmaps", None, None, None),
            false,
        ),
        (
            "a subresource the rule does not name",
            resource(
                "get",
                "",
                "configmaps",
                Some("status"),
                Some("ops"),
                Some("a"),
            ),
            false,
        ),
        (
            "a resourceName the rule names",
            resource("get", "", "secrets", None, Some("ops"), Some("token")),
            true,
        ),
        (
            "another name",
            resource("get", "", "secrets", None, Some("ops"), Some("other")),
            false,
        ),
        (
            "a list under resourceNames",
            resource("list", "", "secrets", None, Some("ops"), None),
            false,
        ),
        (
            "*/status through a group subject",
            resource(
                "update",
                "apps",
                "deployments",
                Some("status"),
                Some("any"),
                Some("d"),
            ),
            true,
        ),
        (
            "the resource itself under */status",
            resource(
                "update",
                "apps",
                "deployments",
                None,
                Some("any"),
                Some("d"),
            ),
            false,
        ),
        (
            "another API group",
            resource("update", "", "pods", Some("status"), Some("any"), Some("p")),
            false,
        ),
        (
            "a non-resource URL prefix",
            Request::NonResource {
                verb: "get",
                path: "/metrics/cadvisor",
            },
            true,
        ),
        (
            "a non-resource URL outside it",
            Request::NonResource {
                verb: "get",
                path: "/logs",
            },
            false,
        ),
        (
            "discovery, for anyone authenticated",
            Request::NonResource {
                verb: "get",
                path: "/apis/apps/v1",
            },
            true,
        ),
        (
            "asking what one may do",
            resource(
                "create",
                "authorization.k8s.io",
                "selfsubjectaccessreviews",
                None,
                None,
                None,
            ),
            true,
        ),
    ];
    for (what, request, expected) in cases {
        assert_eq!(allowed(&store, &operator, request), *expected, "{what}");
    }
    let stranger = sa_user("apps", "operator");
    assert!(
        !allowed(
            &store,
            &stranger,
            &resource("get", "", "configmaps", None, Some("ops"), Some("a"))
        ),
        "a namespace-less ServiceAccount subject is one of the binding's namespace"
    );
    assert!(allowed(
        &store,
        &User::admin(),
        &resource("delete", "", "namespaces", None, None, Some("kube-system"))
    ));
}

#[test]
fn a_refusal_is_worded_as_kube_apiserver_words_it() {
    let user = sa_user("ops", "operator");
    let cases = [
        (
            resource("get", "", "configmaps", None, Some("ops"), Some("a")),
            r#"configmaps "a" is forbidden: User "system:serviceaccount:ops:operator" cannot get resource "configmaps" in API group "" in the namespace "ops""#,
        ),
        (
            resource("list", "apps", "deployments", None, None, None),
            r#"deployments.apps is forbidden: User "system:serviceaccount:ops:operator" cannot list resource "deployments" in API group "apps" at the cluster scope"#,
        ),
        (
            resource(
                "update",
                "apps",
                "deployments",
                Some("status"),
                Some("ops"),
                Some("d"),
            ),
            r#"deployments.apps "d" is forbidden: User "system:serviceaccount:ops:operator" cannot update resource "deployments/status" in API group "apps" in the namespace "ops""#,
        ),
        (
            Request::NonResource {
                verb: "get",
                path: "/logs",
            },
            r#"forbidden: User "system:serviceaccount:ops:operator" cannot get path "/logs""#,
        ),
    ];
    for (request, message) in cases {
        let refusal = forbidden(&user, &request);
        assert_eq!(refusal.code, 403);
        assert_eq!(refusal.reason, "Forbidden");
        assert_eq!(refusal.message, message);
    }
}

#[test]
fn a_remembered_decision_lasts_until_a_role_or_binding_changes() {
    let mut store = store();
    let mut decisions = Decisions::default();
    let user = sa_user("ops", "operator");
    let create = Request::Resource {
        verb: "create",
        group: "",
        resource: "configmaps",
        subresource: None,
        namespace: Some("ops"),
        name: None,
    };
    assert!(!decide(&store, &mut decisions, &user, &create));
    assert_eq!(decisions.made.len(), 1, "remembered");
    assert!(!decide(&store, &mut decisions, &user, &create));
    put(
        &mut store,
        "roles",
        "ops",
        json!({"metadata": {"name": "config-reader", "namespace": "ops"},
               "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]}]}),
    );
    assert!(
        decide(&store, &mut decisions, &user, &create),
        "the widened role is seen at once"
    );
    let other = sa_user("ops", "someone");
    assert!(!decide(&store, &mut decisions, &other, &create), "per user");
}
