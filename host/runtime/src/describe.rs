//! describe(): the WIT description in the shared types, and the checks a description must pass
//! before the host runs the plugin.

use wasm_operator_types::{self as shared, Description, KindRef, Mapping, Verb, is_dns_label};

use crate::bindings::{extensions as ext, reconciler as wit, targeting, types};

/// The shared form of a WIT description.
pub(crate) fn from_wit(d: wit::Description) -> Description {
    Description {
        name: d.name,
        version: d.version,
        field_manager: d.field_manager,
        primary: kind(d.primary),
        primary_predicates: d
            .primary_predicates
            .into_iter()
            .map(|p| match p {
                wit::Predicate::GenerationChanged => shared::Predicate::GenerationChanged,
                wit::Predicate::LabelsChanged => shared::Predicate::LabelsChanged,
            })
            .collect(),
        watches: d
            .watches
            .into_iter()
            .map(|w| shared::Watch::new(kind(w.kind), mapping(w.mapping)))
            .collect(),
        indexes: d.indexes.into_iter().map(field_index).collect(),
        permissions: d
            .permissions
            .into_iter()
            .map(|p| shared::Permission {
                kind: kind(p.kind),
                verbs: p.verbs.into_iter().map(verb).collect(),
            })
            .collect(),
        watched_indexes: Vec::new(),
        subresources: Vec::new(),
        admission: vec![],
        egress: Vec::new(),
        targets: Default::default(),
        primary_selector: None,
    }
}

/// Adds what a 1.1 plugin's `describe-extensions` returned.
pub(crate) fn extend(d: &mut Description, e: ext::DescriptionExtensions) {
    d.egress.extend(e.egress);
    d.watches
        .extend(e.watches.into_iter().map(|w| shared::Watch {
            kind: kind(w.kind),
            mapping: match w.mapping {
                ext::WatchMapping::Base(m) => mapping(m),
                ext::WatchMapping::Reference(path) => Mapping::Reference(path),
                ext::WatchMapping::Via(via) => Mapping::Via {
                    kind: kind(via.kind),
                    index: via.index,
                },
            },
            optional: w.optional,
        }));
    d.watched_indexes
        .extend(e.indexes.into_iter().map(|i| shared::KindIndex {
            kind: kind(i.kind),
            index: field_index(i.index),
        }));
    d.subresources.extend(
        e.subresources
            .into_iter()
            .map(|s| shared::SubresourcePermission {
                kind: kind(s.kind),
                subresource: s.subresource,
                verbs: s.verbs.into_iter().map(verb).collect(),
            }),
    );
}

/// What a 1.3 plugin's `describe-targets` returned.
pub(crate) fn targets(t: targeting::TargetDescription) -> shared::TargetDescription {
    shared::TargetDescription {
        owner_label_prefix: t.owner_label_prefix,
        watches: t.watches.into_iter().map(kind).collect(),
    }
}

fn mapping(m: wit::Mapping) -> Mapping {
    match m {
        wit::Mapping::Owner => Mapping::Owner,
        wit::Mapping::FieldIndex(name) => Mapping::FieldIndex(name),
        wit::Mapping::Label(label) => Mapping::Label(label),
    }
}

fn field_index(i: wit::FieldIndex) -> shared::FieldIndex {
    shared::FieldIndex {
        name: i.name,
        description: i.description,
    }
}

pub(crate) fn kind(k: types::KindRef) -> KindRef {
    KindRef {
        api_version: k.api_version,
        kind: k.kind,
        plural: k.plural,
        namespaced: k.namespaced,
    }
}

fn verb(v: wit::Verb) -> Verb {
    match v {
        wit::Verb::Get => Verb::Get,
        wit::Verb::List => Verb::List,
        wit::Verb::Watch => Verb::Watch,
        wit::Verb::Create => Verb::Create,
        wit::Verb::Update => Verb::Update,
        wit::Verb::Patch => Verb::Patch,
        wit::Verb::Delete => Verb::Delete,
        wit::Verb::UpdateStatus => Verb::UpdateStatus,
    }
}

/// Checks what the host relies on; the message names the first field at fault.
pub(crate) fn validate(d: &Description) -> Result<(), String> {
    let nonempty = |value: &str, field: &str| {
        if value.trim().is_empty() {
            Err(format!("{field} is empty"))
        } else {
            Ok(())
        }
    };
    nonempty(&d.name, "name")?;
    nonempty(&d.version, "version")?;
    semver::Version::parse(&d.version)
        .map_err(|e| format!("version {:?} is not semver: {e}", d.version))?;
    nonempty(&d.field_manager, "field-manager")?;
    if !is_dns_label(&d.name) {
        return Err(format!(
            "name {:?} is not a plugin name (lower-case letters, digits and '-', at most 63)",
            d.name
        ));
    }
    for (value, field) in [(&d.name, "name"), (&d.field_manager, "field-manager")] {
        if value == crate::backend::HOST_IDENTITY {
            return Err(format!("{field} {value:?} is the host's own"));
        }
    }
    check_kind(&d.primary, "primary")?;
    if let Some(selector) = &d.primary_selector {
        if selector.trim().is_empty() {
            return Err(
                "selection.primary-labels is empty (leave it out to be passed every primary)"
                    .into(),
            );
        }
        wasm_operator_types::LabelSelector::parse(selector)
            .map_err(|e| format!("selection.primary-labels: {e}"))?;
    }
    let declared = |k: &KindRef, verb: Verb| {
        d.permissions.iter().any(|p| {
            p.kind.api_version == k.api_version && p.kind.kind == k.kind && p.verbs.contains(&verb)
        })
    };
    for verb in [Verb::Get, Verb::List, Verb::Watch] {
        if !declared(&d.primary, verb) {
            return Err(format!(
                "permissions lack {} on the primary kind {}",
                verb.as_str(),
                d.primary
            ));
        }
    }
    for (i, w) in d.watches.iter().enumerate() {
        check_kind(&w.kind, &format!("watches[{i}].kind"))?;
        if !declared(&w.kind, Verb::List) || !declared(&w.kind, Verb::Watch) {
            return Err(format!(
                "watches[{i}]: permissions lack list and watch on {}",
                w.kind
            ));
        }
        match &w.mapping {
            Mapping::FieldIndex(name) if !d.indexes.iter().any(|x| &x.name == name) => {
                return Err(format!(
                    "watches[{i}].mapping names field index {name:?}, which indexes does not define"
                ));
            }
            Mapping::Reference(path) if !is_field_path(path) => {
                return Err(format!(
                    "watches[{i}].mapping.reference {path:?} is not a field path (dot-separated names, e.g. spec.keystoneRef.name)"
                ));
            }
            Mapping::Label(label) if label.trim().is_empty() => {
                return Err(format!("watches[{i}].mapping.label is empty"));
            }
            Mapping::Via { kind, index } => {
                let step = d.watches.iter().position(|v| same_kind(&v.kind, kind));
                match step {
                    None => {
                        return Err(format!(
                            "watches[{i}].mapping.via names {kind}, which the plugin does not watch"
                        ));
                    }
                    Some(j) if matches!(d.watches[j].mapping, Mapping::Via { .. }) => {
                        return Err(format!(
                            "watches[{i}].mapping.via names {kind}, whose own watch (watches[{j}]) maps via another kind: one intermediate step at most"
                        ));
                    }
                    Some(_) => {}
                }
                if !d
                    .watched_indexes
                    .iter()
                    .any(|x| same_kind(&x.kind, kind) && &x.index.name == index)
                {
                    return Err(format!(
                        "watches[{i}].mapping.via names index {index:?} on {kind}, which the plugin does not define"
                    ));
                }
            }
            _ => {}
        }
    }
    let mut names: Vec<&str> = d.indexes.iter().map(|x| x.name.as_str()).collect();
    for (i, x) in d.watched_indexes.iter().enumerate() {
        check_kind(&x.kind, &format!("watched-indexes[{i}].kind"))?;
        nonempty(&x.index.name, &format!("watched-indexes[{i}].name"))?;
        if !d.watches.iter().any(|w| same_kind(&w.kind, &x.kind)) {
            return Err(format!(
                "watched-indexes[{i}] is on {}, which the plugin does not watch",
                x.kind
            ));
        }
        names.push(&x.index.name);
    }
    names.sort_unstable();
    if let Some(pair) = names.windows(2).find(|p| p[0] == p[1]) {
        return Err(format!(
            "field index {:?} is defined twice (index names are unique over all kinds)",
            pair[0]
        ));
    }
    for (i, s) in d.subresources.iter().enumerate() {
        check_kind(&s.kind, &format!("subresources[{i}].kind"))?;
        if !is_dns_label(&s.subresource) {
            return Err(format!(
                "subresources[{i}].subresource {:?} is not a subresource name",
                s.subresource
            ));
        }
        if s.subresource == "status" {
            return Err(format!(
                "subresources[{i}]: the status subresource is written with update-status"
            ));
        }
        if s.verbs.is_empty()
            || s.verbs
                .iter()
                .any(|v| !matches!(v, Verb::Create | Verb::Get))
        {
            return Err(format!(
                "subresources[{i}].verbs: a subresource takes create and get only"
            ));
        }
    }
    for (i, p) in d.permissions.iter().enumerate() {
        check_kind(&p.kind, &format!("permissions[{i}].kind"))?;
    }
    crate::capabilities::http::AllowList::parse(&d.egress)?;
    crate::admission::validate(d)?;
    validate_targets(&d.targets, declared)
}

/// The owner label prefix is a DNS subdomain (a label key's prefix), and every kind watched on
/// targets is declared with list and watch.
fn validate_targets(
    t: &shared::TargetDescription,
    declared: impl Fn(&KindRef, Verb) -> bool,
) -> Result<(), String> {
    if !t.targets() {
        return match t.watches.first() {
            Some(k) => Err(format!(
                "targets.watches names {k}, but targets.owner-label-prefix is empty (the plugin writes to no target)"
            )),
            None => Ok(()),
        };
    }
    if !is_dns_subdomain(&t.owner_label_prefix) {
        return Err(format!(
            "targets.owner-label-prefix {:?} is not a DNS subdomain (a label key prefix, e.g. example.com)",
            t.owner_label_prefix
        ));
    }
    for (i, k) in t.watches.iter().enumerate() {
        check_kind(k, &format!("targets.watches[{i}]"))?;
        if !declared(k, Verb::List) || !declared(k, Verb::Watch) {
            return Err(format!(
                "targets.watches[{i}]: permissions lack list and watch on {k}"
            ));
        }
    }
    Ok(())
}

/// A kind reference names one served resource: no wildcard, no path separator, the shapes
/// Kubernetes gives API groups, versions, kinds and resources. (Whether the cluster serves
/// it, with this plural and scope, the operator checks through discovery at load.)
pub(crate) fn check_kind(k: &KindRef, field: &str) -> Result<(), String> {
    for (value, name) in [
        (&k.api_version, "api-version"),
        (&k.kind, "kind"),
        (&k.plural, "plural"),
    ] {
        if value.trim().is_empty() {
            return Err(format!("{field}.{name} is empty"));
        }
    }
    let (group, version) = match k.api_version.split_once('/') {
        Some((group, version)) => (Some(group), version),
        None => (None, k.api_version.as_str()),
    };
    let bad = |name: &str, value: &str, what: &str| {
        Err(format!("{field}.{name} {value:?} is not {what}"))
    };
    if let Some(group) = group
        && !is_dns_subdomain(group)
    {
        return bad(
            "api-version",
            &k.api_version,
            "group/version (no wildcard, one '/')",
        );
    }
    if !is_dns_label(version) {
        return bad(
            "api-version",
            &k.api_version,
            "group/version (no wildcard, one '/')",
        );
    }
    let kind_ok = k
        .kind
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && k.kind.chars().all(|c| c.is_ascii_alphanumeric());
    if !kind_ok {
        return bad("kind", &k.kind, "a kind name (letters and digits)");
    }
    if !is_dns_label(&k.plural) {
        return bad(
            "plural",
            &k.plural,
            "a resource name (lower-case letters, digits and '-'; no wildcard, no '/')",
        );
    }
    Ok(())
}

/// Two descriptions name the same kind.
pub(crate) fn same_kind(a: &KindRef, b: &KindRef) -> bool {
    a.api_version == b.api_version && a.kind == b.kind
}

/// A dot-separated path of JSON field names (letters, digits, `_`, `-`), e.g.
/// `spec.keystoneRef.name`.
fn is_field_path(path: &str) -> bool {
    !path.is_empty()
        && path.split('.').all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
}

/// An RFC 1123 subdomain: dot-separated labels, ≤ 253.
fn is_dns_subdomain(value: &str) -> bool {
    value.len() <= 253 && value.split('.').all(is_dns_label)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Secret};

    fn description() -> Description {
        Description {
            name: "p".into(),
            version: "1.0.0".into(),
            field_manager: "p".into(),
            primary: KindRef::of::<ConfigMap>(),
            primary_predicates: vec![],
            watches: vec![shared::Watch {
                kind: KindRef::of::<Secret>(),
                mapping: Mapping::FieldIndex("names".into()),
                optional: false,
            }],
            watched_indexes: vec![],
            subresources: vec![],
            admission: vec![],
            egress: vec![],
            indexes: vec![],
            permissions: vec![
                shared::Permission {
                    kind: KindRef::of::<ConfigMap>(),
                    verbs: vec![Verb::Get, Verb::List, Verb::Watch],
                },
                shared::Permission {
                    kind: KindRef::of::<Secret>(),
                    verbs: vec![Verb::List, Verb::Watch],
                },
            ],
            targets: Default::default(),
            primary_selector: None,
        }
    }

    #[test]
    fn a_primary_selector_must_parse_as_a_label_selector() {
        let cases = [
            // The one valid row.
            ("app=web,!skip", None),
            ("", Some("selection.primary-labels is empty")),
            (
                "tier in web",
                Some("selection.primary-labels: unable to parse requirement"),
            ),
        ];
        for (selector, error) in cases {
            let mut d = description();
            d.watches.clear();
            d.primary_selector = Some(selector.into());
            match (validate(&d), error) {
                (Ok(()), None) => {}
                (Err(e), Some(expected)) => assert!(e.starts_with(expected), "{selector:?}: {e}"),
                (result, _) => panic!("{selector:?}: {result:?}"),
            }
        }
    }

    #[test]
    fn a_watch_through_an_undefined_index_is_refused() {
        let err = validate(&description()).expect_err("undefined index");
        assert_eq!(
            err,
            "watches[0].mapping names field index \"names\", which indexes does not define"
        );
    }

    #[test]
    fn a_description_without_get_on_its_primary_is_refused() {
        let mut d = description();
        d.watches.clear();
        d.permissions[0].verbs = vec![Verb::List, Verb::Watch];
        assert_eq!(
            validate(&d).expect_err("no get"),
            "permissions lack get on the primary kind v1/ConfigMap"
        );
    }

    #[test]
    fn a_plugin_cannot_take_the_hosts_name_or_field_manager() {
        let mut d = description();
        d.name = "wasm-operator".into();
        assert_eq!(
            validate(&d).expect_err("the host's name"),
            "name \"wasm-operator\" is the host's own"
        );
        let mut d = description();
        d.field_manager = "wasm-operator".into();
        assert_eq!(
            validate(&d).expect_err("the host's field manager"),
            "field-manager \"wasm-operator\" is the host's own"
        );
        let mut d = description();
        d.name = "Rogue Plugin".into();
        assert!(
            validate(&d)
                .expect_err("not a name")
                .starts_with("name \"Rogue Plugin\" is not a plugin name")
        );
    }

    #[test]
    fn an_invalid_egress_pattern_is_refused_naming_its_entry() {
        let mut d = description();
        d.watches.clear();
        d.egress = vec!["*.svc.cluster.local:5000".into(), "*:443".into()];
        assert_eq!(
            validate(&d).expect_err("a bare wildcard"),
            "egress[1]: \"*:443\": host \"*\" is neither a DNS name nor '*.' and a DNS suffix"
        );
        d.egress.pop();
        assert_eq!(validate(&d), Ok(()));
    }

    #[test]
    fn a_complete_description_is_accepted() {
        let mut d = description();
        d.indexes.push(shared::FieldIndex {
            name: "names".into(),
            description: "declared names".into(),
        });
        assert_eq!(validate(&d), Ok(()));
    }

    #[test]
    fn a_kind_with_a_wildcard_a_slash_or_a_malformed_name_is_refused() {
        let kind = |api_version: &str, kind: &str, plural: &str| KindRef {
            api_version: api_version.into(),
            kind: kind.into(),
            plural: plural.into(),
            namespaced: true,
        };
        let cases = [
            (kind("v1", "ConfigMap", "configmaps"), None),
            (kind("apps/v1", "Deployment", "deployments"), None),
            (
                kind("*/v1", "ConfigMap", "configmaps"),
                Some("k.api-version \"*/v1\" is not group/version"),
            ),
            (
                kind("v1", "ConfigMap", "*"),
                Some("k.plural \"*\" is not a resource name"),
            ),
            (
                kind("v1", "ConfigMap", "secrets/status"),
                Some("k.plural \"secrets/status\" is not a resource name"),
            ),
            (
                kind("a/b/v1", "ConfigMap", "configmaps"),
                Some("k.api-version \"a/b/v1\" is not group/version"),
            ),
            (
                kind("v1", "Config*", "configmaps"),
                Some("k.kind \"Config*\" is not a kind name"),
            ),
            (kind("v1", "ConfigMap", ""), Some("k.plural is empty")),
        ];
        for (k, expected) in cases {
            match (check_kind(&k, "k"), expected) {
                (Ok(()), None) => {}
                (Err(message), Some(fragment)) => assert!(
                    message.starts_with(fragment),
                    "{k:?}: {message:?} does not start with {fragment:?}"
                ),
                (got, want) => panic!("{k:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn a_description_with_malformed_1_1_parts_is_refused_naming_the_field() {
        let satellite = KindRef {
            api_version: "example.com/v1".into(),
            kind: "Satellite".into(),
            plural: "satellites".into(),
            namespaced: true,
        };
        let valid = || {
            let mut d = description();
            d.watches = vec![
                shared::Watch::new(
                    satellite.clone(),
                    Mapping::Reference("spec.parentRef.name".into()),
                )
                .optional(),
                shared::Watch::new(
                    KindRef::of::<Secret>(),
                    Mapping::Via {
                        kind: satellite.clone(),
                        index: "by-secret".into(),
                    },
                ),
            ];
            d.watched_indexes = vec![shared::KindIndex {
                kind: satellite.clone(),
                index: shared::FieldIndex {
                    name: "by-secret".into(),
                    description: "the Secret a Satellite names".into(),
                },
            }];
            d.permissions.push(shared::Permission {
                kind: satellite.clone(),
                verbs: vec![Verb::List, Verb::Watch],
            });
            d.subresources = vec![shared::SubresourcePermission {
                kind: KindRef::of::<Secret>(),
                subresource: "token".into(),
                verbs: vec![Verb::Create],
            }];
            d
        };
        type Change = Box<dyn Fn(&mut Description)>;
        let cases: Vec<(Change, Option<&str>)> = vec![
            (Box::new(|_| {}), None),
            (
                Box::new(|d| d.watches[0].mapping = Mapping::Reference("spec..name".into())),
                Some("watches[0].mapping.reference \"spec..name\" is not a field path"),
            ),
            (
                Box::new(|d| {
                    d.watches.remove(0);
                }),
                Some(
                    "watches[0].mapping.via names example.com/v1/Satellite, which the plugin does not watch",
                ),
            ),
            (
                Box::new(|d| {
                    d.watches[1].mapping = Mapping::Via {
                        kind: d.watches[0].kind.clone(),
                        index: "missing".into(),
                    }
                }),
                Some(
                    "watches[1].mapping.via names index \"missing\" on example.com/v1/Satellite, which the plugin does not define",
                ),
            ),
            (
                Box::new(|d| {
                    d.watches[0].mapping = Mapping::Via {
                        kind: KindRef::of::<Secret>(),
                        index: "by-secret".into(),
                    }
                }),
                Some(
                    "watches[0].mapping.via names v1/Secret, whose own watch (watches[1]) maps via another kind",
                ),
            ),
            (
                Box::new(|d| {
                    d.watched_indexes.push(shared::KindIndex {
                        kind: KindRef::of::<ConfigMap>(),
                        index: shared::FieldIndex {
                            name: "other".into(),
                            description: String::new(),
                        },
                    })
                }),
                Some("watched-indexes[1] is on v1/ConfigMap, which the plugin does not watch"),
            ),
            (
                Box::new(|d| {
                    d.indexes.push(shared::FieldIndex {
                        name: "by-secret".into(),
                        description: String::new(),
                    })
                }),
                Some("field index \"by-secret\" is defined twice"),
            ),
            (
                Box::new(|d| d.subresources[0].subresource = "status".into()),
                Some("subresources[0]: the status subresource is written with update-status"),
            ),
            (
                Box::new(|d| d.subresources[0].verbs = vec![Verb::Delete]),
                Some("subresources[0].verbs: a subresource takes create and get only"),
            ),
        ];
        for (i, (change, expected)) in cases.into_iter().enumerate() {
            let mut d = valid();
            change(&mut d);
            match (validate(&d), expected) {
                (Ok(()), None) => {}
                (Err(message), Some(fragment)) => assert!(
                    message.starts_with(fragment),
                    "case {i}: {message:?} does not start with {fragment:?}"
                ),
                (got, want) => panic!("case {i}: got {got:?}, want {want:?}"),
            }
        }
    }
}
