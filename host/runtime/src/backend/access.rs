//! What a plugin may reach: the verbs it declared per kind, and the namespaces an
//! administrator granted it.
//!
//! A pass may use a namespaced kind only in its primary's namespace, unless `plugins.toml`
//! grants more ([`Access`]); it may use a cluster-scoped kind only when granted
//! `cluster_scoped`. A call across every namespace (a list without a namespace) needs the
//! grant of every namespace.

use std::collections::{BTreeMap, BTreeSet};

use wasm_operator_types::{self as shared, ApiError, Verb};

/// The namespaces a plugin may reach besides its primary's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Namespaces {
    /// Only the primary's namespace (the default).
    #[default]
    Primary,
    /// The primary's and these.
    Also(BTreeSet<String>),
    /// Every namespace.
    All,
}

/// What an administrator granted a plugin beyond its primary's namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Access {
    /// Namespaces besides the primary's.
    pub namespaces: Namespaces,
    /// Whether it may use the cluster-scoped kinds it declared.
    pub cluster_scoped: bool,
}

/// Where a call reaches: one namespace, or none (a cluster-scoped object, or every
/// namespace of a namespaced kind).
pub(crate) type Target<'a> = Option<&'a str>;

/// The declared verbs of one kind, with its scope.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Declared {
    namespaced: bool,
    verbs: BTreeSet<Verb>,
}

/// The verbs a plugin may use per `(apiVersion, kind)` and per `(apiVersion, kind,
/// subresource)`, and where.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Permissions {
    kinds: BTreeMap<(String, String), Declared>,
    subresources: BTreeMap<(String, String, String), Declared>,
    access: Access,
}

fn declare<'a, K: Ord>(
    map: &mut BTreeMap<K, Declared>,
    key: K,
    namespaced: bool,
    verbs: impl IntoIterator<Item = &'a Verb>,
) {
    map.entry(key)
        .or_insert_with(|| Declared {
            namespaced,
            verbs: BTreeSet::new(),
        })
        .verbs
        .extend(verbs.into_iter().copied());
}

impl Permissions {
    /// The permissions a plugin declared (verbs on kinds and on subresources), with the
    /// access it was granted.
    pub(crate) fn new(
        declared: &[shared::Permission],
        subresources: &[shared::SubresourcePermission],
        access: Access,
    ) -> Self {
        let mut kinds = BTreeMap::new();
        for p in declared {
            let key = (p.kind.api_version.clone(), p.kind.kind.clone());
            declare(&mut kinds, key, p.kind.namespaced, &p.verbs);
        }
        let mut subs = BTreeMap::new();
        for s in subresources {
            let key = (
                s.kind.api_version.clone(),
                s.kind.kind.clone(),
                s.subresource.clone(),
            );
            declare(&mut subs, key, s.kind.namespaced, &s.verbs);
        }
        Self {
            kinds,
            subresources: subs,
            access,
        }
    }

    /// The permissions `description` declares, with `access`.
    pub(crate) fn of(description: &shared::Description, access: Access) -> Self {
        Self::new(&description.permissions, &description.subresources, access)
    }

    /// Whether the plugin declared any verb on the kind.
    pub(crate) fn declares(&self, api_version: &str, kind: &str) -> bool {
        self.kinds
            .contains_key(&(api_version.to_owned(), kind.to_owned()))
    }

    /// The access it was granted.
    pub(crate) fn access(&self) -> &Access {
        &self.access
    }

    /// `Ok` when `verb` on the kind is declared and `target` is within reach of a pass whose
    /// primary lives in `home`; `forbidden` naming the plugin, the verb, the kind and the
    /// namespace otherwise.
    pub(crate) fn check(
        &self,
        plugin: &str,
        verb: Verb,
        (api_version, kind): (&str, &str),
        target: Target<'_>,
        home: Option<&str>,
    ) -> Result<(), ApiError> {
        let declared = self.kinds.get(&(api_version.to_owned(), kind.to_owned()));
        self.reach(
            plugin,
            verb,
            &format!("{api_version}/{kind}"),
            declared,
            target,
            home,
        )
    }

    /// As [`check`](Self::check), for `verb` on subresource `subresource` of the kind: the
    /// plugin must have declared it (`Description.subresources`; a verb on the kind itself
    /// does not count), and the same namespace reach applies.
    pub(crate) fn check_subresource(
        &self,
        plugin: &str,
        verb: Verb,
        (api_version, kind, subresource): (&str, &str, &str),
        target: Target<'_>,
        home: Option<&str>,
    ) -> Result<(), ApiError> {
        let key = (
            api_version.to_owned(),
            kind.to_owned(),
            subresource.to_owned(),
        );
        let what = format!("the {subresource} subresource of {api_version}/{kind}");
        self.reach(
            plugin,
            verb,
            &what,
            self.subresources.get(&key),
            target,
            home,
        )
    }

    /// `Ok` when `declared` holds `verb` and `target` is within reach; `what` names the kind
    /// or subresource in the refusal.
    fn reach(
        &self,
        plugin: &str,
        verb: Verb,
        what: &str,
        declared: Option<&Declared>,
        target: Target<'_>,
        home: Option<&str>,
    ) -> Result<(), ApiError> {
        let refuse = |reason: String| {
            tracing::warn!(plugin, verb = verb.as_str(), what, namespace = target, %reason, "refused a call");
            Err(ApiError::Forbidden(format!("plugin {plugin}: {reason}")))
        };
        let Some(declared) = declared.filter(|d| d.verbs.contains(&verb)) else {
            return refuse(format!(
                "did not declare verb {} on {what} in describe()",
                verb.as_str()
            ));
        };
        if !declared.namespaced {
            if let Some(ns) = target {
                // A cluster-scoped object has no namespace: a call naming one is on
                // another (namespaced) resource than the one declared.
                return refuse(format!(
                    "declared {what} cluster-scoped, but the call names namespace {ns:?}"
                ));
            }
            if self.access.cluster_scoped {
                return Ok(());
            }
            return refuse(format!(
                "{what} is cluster-scoped and plugins.toml does not grant cluster_scoped"
            ));
        }
        let within = match (target, &self.access.namespaces) {
            (_, Namespaces::All) => true,
            (None, _) => false,
            (Some(ns), Namespaces::Primary) => home == Some(ns),
            (Some(ns), Namespaces::Also(granted)) => home == Some(ns) || granted.contains(ns),
        };
        if within {
            return Ok(());
        }
        let reach = match home {
            Some(home) => format!("its primary's namespace {home:?}"),
            None => "no namespace (its primary is cluster-scoped)".to_owned(),
        };
        let granted = match &self.access.namespaces {
            Namespaces::Also(granted) => format!(
                " and the namespaces plugins.toml grants ({})",
                granted.iter().cloned().collect::<Vec<_>>().join(", ")
            ),
            _ => String::new(),
        };
        match target {
            Some(ns) => refuse(format!(
                "may not {} {what} in namespace {ns:?}: it may reach {reach}{granted}",
                verb.as_str()
            )),
            None => refuse(format!(
                "may not {} {what} in every namespace: it may reach {reach}{granted}",
                verb.as_str()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Namespace, Secret, ServiceAccount};
    use shared::KindRef;

    fn permissions(access: Access) -> Permissions {
        Permissions::new(
            &[
                shared::Permission {
                    kind: KindRef::of::<Secret>(),
                    verbs: vec![Verb::Get, Verb::List],
                },
                shared::Permission {
                    kind: KindRef::of::<Namespace>(),
                    verbs: vec![Verb::Get],
                },
            ],
            &[shared::SubresourcePermission {
                kind: KindRef::of::<ServiceAccount>(),
                subresource: "token".into(),
                verbs: vec![Verb::Create],
            }],
            access,
        )
    }

    const SECRET: (&str, &str) = ("v1", "Secret");

    #[test]
    fn an_undeclared_verb_or_kind_is_forbidden_naming_the_plugin_verb_and_kind() {
        let p = permissions(Access::default());
        assert_eq!(
            p.check("p", Verb::Get, SECRET, Some("a"), Some("a")),
            Ok(())
        );
        assert_eq!(
            p.check("p", Verb::Delete, SECRET, Some("a"), Some("a")),
            Err(ApiError::Forbidden(
                "plugin p: did not declare verb delete on v1/Secret in describe()".into()
            ))
        );
        assert_eq!(
            p.check("p", Verb::Get, ("v1", "ConfigMap"), Some("a"), Some("a")),
            Err(ApiError::Forbidden(
                "plugin p: did not declare verb get on v1/ConfigMap in describe()".into()
            ))
        );
    }

    #[test]
    fn a_call_outside_the_primarys_namespace_needs_a_grant() {
        let also = Access {
            namespaces: Namespaces::Also(BTreeSet::from(["shared".to_owned()])),
            cluster_scoped: false,
        };
        let all = Access {
            namespaces: Namespaces::All,
            cluster_scoped: false,
        };
        /// (access, verb, target, home, expected error fragment)
        type Case<'a> = (
            &'a Access,
            Verb,
            Target<'a>,
            Option<&'a str>,
            Option<&'a str>,
        );
        let cases: [Case<'_>; 7] = [
            (&Access::default(), Verb::Get, Some("a"), Some("a"), None),
            (
                &Access::default(),
                Verb::Get,
                Some("b"),
                Some("a"),
                Some(
                    "may not get v1/Secret in namespace \"b\": it may reach its primary's namespace \"a\"",
                ),
            ),
            (
                &Access::default(),
                Verb::List,
                None,
                Some("a"),
                Some("may not list v1/Secret in every namespace"),
            ),
            (&also, Verb::Get, Some("shared"), Some("a"), None),
            (
                &also,
                Verb::Get,
                Some("b"),
                Some("a"),
                Some("and the namespaces plugins.toml grants (shared)"),
            ),
            (&all, Verb::List, None, Some("a"), None),
            (
                &Access::default(),
                Verb::Get,
                Some("a"),
                None,
                Some("it may reach no namespace (its primary is cluster-scoped)"),
            ),
        ];
        for (access, verb, target, home, expected) in cases {
            let got = permissions(access.clone()).check("p", verb, SECRET, target, home);
            match (got, expected) {
                (Ok(()), None) => {}
                (Err(ApiError::Forbidden(message)), Some(fragment)) => assert!(
                    message.contains(fragment),
                    "{target:?} from {home:?}: {message:?} lacks {fragment:?}"
                ),
                (got, want) => panic!("{target:?} from {home:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn a_cluster_scoped_kind_needs_the_cluster_scoped_grant() {
        let namespace = ("v1", "Namespace");
        assert_eq!(
            permissions(Access::default()).check("p", Verb::Get, namespace, None, Some("a")),
            Err(ApiError::Forbidden(
                "plugin p: v1/Namespace is cluster-scoped and plugins.toml does not grant \
                 cluster_scoped"
                    .into()
            ))
        );
        let granted = Access {
            cluster_scoped: true,
            ..Access::default()
        };
        assert_eq!(
            permissions(granted).check("p", Verb::Get, namespace, None, Some("a")),
            Ok(())
        );
    }

    #[test]
    fn a_kind_declared_cluster_scoped_is_refused_a_namespace() {
        let granted = Access {
            cluster_scoped: true,
            namespaces: Namespaces::All,
        };
        let namespace = ("v1", "Namespace");
        assert_eq!(
            permissions(granted.clone()).check("p", Verb::Get, namespace, None, Some("a")),
            Ok(())
        );
        assert_eq!(
            permissions(granted).check("p", Verb::Get, namespace, Some("a"), Some("a")),
            Err(ApiError::Forbidden(
                "plugin p: declared v1/Namespace cluster-scoped, but the call names namespace \"a\""
                    .into()
            ))
        );
    }

    const TOKEN: (&str, &str, &str) = ("v1", "ServiceAccount", "token");

    #[test]
    fn a_subresource_verb_needs_its_own_declaration_and_the_namespace_reach() {
        let p = permissions(Access::default());
        assert_eq!(
            p.check_subresource("p", Verb::Create, TOKEN, Some("a"), Some("a")),
            Ok(())
        );
        /// (verb, subresource, target, expected error)
        type Refused<'a> = (Verb, (&'a str, &'a str, &'a str), Target<'a>, &'a str);
        let refused: [Refused<'_>; 4] = [
            (
                Verb::Get,
                TOKEN,
                Some("a"),
                "plugin p: did not declare verb get on the token subresource of \
                 v1/ServiceAccount in describe()",
            ),
            (
                Verb::Create,
                ("v1", "Secret", "token"),
                Some("a"),
                "plugin p: did not declare verb create on the token subresource of v1/Secret \
                 in describe()",
            ),
            (
                Verb::Create,
                ("v1", "ServiceAccount", "ephemeral"),
                Some("a"),
                "plugin p: did not declare verb create on the ephemeral subresource of \
                 v1/ServiceAccount in describe()",
            ),
            (
                Verb::Create,
                TOKEN,
                Some("b"),
                "plugin p: may not create the token subresource of v1/ServiceAccount in \
                 namespace \"b\": it may reach its primary's namespace \"a\"",
            ),
        ];
        for (verb, sub, target, expected) in refused {
            assert_eq!(
                p.check_subresource("p", verb, sub, target, Some("a")),
                Err(ApiError::Forbidden(expected.into())),
                "{sub:?} in {target:?}"
            );
        }
    }

    #[test]
    fn a_verb_on_the_kind_does_not_grant_its_subresource() {
        let p = Permissions::new(
            &[shared::Permission {
                kind: KindRef::of::<ServiceAccount>(),
                verbs: vec![Verb::Create, Verb::Get],
            }],
            &[],
            Access::default(),
        );
        assert!(matches!(
            p.check_subresource("p", Verb::Create, TOKEN, Some("a"), Some("a")),
            Err(ApiError::Forbidden(m)) if m.contains("did not declare verb create on the token subresource")
        ));
    }
}
