//! The invariants the soak checks, read off the cluster and the operators' logs.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, ListParams};
use serde_json::Value;
use wasm_operator::informer::api_resource;

use crate::cluster::gitlabsecrets_kind;

/// Every Secret and GitLabSecrets of the GitLabSecrets' namespaces, by kind and key: the
/// acknowledged state.
pub(super) async fn acknowledged(client: &kube::Client) -> anyhow::Result<BTreeMap<String, Value>> {
    let mut objects = BTreeMap::new();
    let secrets = api_resource(&wasm_operator_types::KindRef {
        api_version: "v1".into(),
        kind: "Secret".into(),
        plural: "secrets".into(),
        namespaced: true,
    });
    for (kind, resource) in [
        ("Secret", secrets),
        ("GitLabSecrets", api_resource(&gitlabsecrets_kind())),
    ] {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        for object in api.list(&ListParams::default()).await?.items {
            if !in_guarded(object.metadata.namespace.as_deref()) {
                continue;
            }
            let value = serde_json::to_value(&object)?;
            let key = format!(
                "{kind} {}/{}",
                object.metadata.namespace.unwrap_or_default(),
                object.metadata.name.unwrap_or_default()
            );
            objects.insert(key, value);
        }
    }
    Ok(objects)
}

/// Who holds the leader Lease, if anyone.
pub(super) async fn lease_holder(client: &kube::Client) -> Option<String> {
    let leases: Api<k8s_openapi::api::coordination::v1::Lease> =
        Api::namespaced(client.clone(), "default");
    let lease = leases.get_opt("wasm-operator-leader").await.ok()??;
    lease.spec?.holder_identity.filter(|h| !h.is_empty())
}

/// Every Secret value: (namespace/name, key) → the stored (base64) value.
pub(super) type Values = BTreeMap<(String, String), Vec<u8>>;

/// Whether `namespace` is one of the GitLabSecrets' (`soak-…`), whose Secrets and objects
/// the invariants hold; the Keystones' Secrets rotate and their actors write on their own.
fn in_guarded(namespace: Option<&str>) -> bool {
    namespace.is_some_and(|n| n.starts_with("soak-"))
}

/// The Secret values of the GitLabSecrets' namespaces.
pub(super) async fn values(client: &kube::Client) -> anyhow::Result<Values> {
    values_where(client, |namespace| in_guarded(Some(namespace))).await
}

/// The Secret values of the namespaces `keep` keeps.
pub(super) async fn values_where(
    client: &kube::Client,
    keep: impl Fn(&str) -> bool,
) -> anyhow::Result<Values> {
    let api: Api<Secret> = Api::all(client.clone());
    let mut values = Values::new();
    for secret in api.list(&ListParams::default()).await?.items {
        if !keep(secret.metadata.namespace.as_deref().unwrap_or_default()) {
            continue;
        }
        let name = format!(
            "{}/{}",
            secret.metadata.namespace.unwrap_or_default(),
            secret.metadata.name.unwrap_or_default()
        );
        for (key, value) in secret.data.unwrap_or_default() {
            values.insert((name.clone(), key), value.0);
        }
    }
    Ok(values)
}

/// Checks that every value in `seen` is still in `now`, unchanged; adds the new ones.
pub(super) fn check_values(
    seen: &mut Values,
    now: &Values,
    when: &str,
    violations: &mut Vec<String>,
) {
    for ((secret, key), value) in seen.iter() {
        match now.get(&(secret.clone(), key.clone())) {
            None => violations.push(format!("{when}: Secret {secret} lost key {key}")),
            Some(current) if current != value => {
                violations.push(format!("{when}: Secret {secret} key {key} changed"))
            }
            Some(_) => {}
        }
    }
    for (k, v) in now {
        seen.entry(k.clone()).or_insert_with(|| v.clone());
    }
}

/// How many passes the operator whose log is `log` finished.
pub(super) fn passes_logged(log: &Path) -> anyhow::Result<usize> {
    let text =
        std::fs::read_to_string(log).with_context(|| format!("cannot read {}", log.display()))?;
    Ok(text
        .lines()
        .filter(|l| l.contains("plugin_controller") && l.contains(" pass "))
        .count())
}

/// A pass as its log line tells it: the object, and when it started and ended.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PassInterval {
    object: String,
    start: k8s_openapi::jiff::Timestamp,
    end: k8s_openapi::jiff::Timestamp,
}

/// The passes an operator's log `log` tells of (its `pass` debug lines: the time at the
/// end, `namespace`, `name` and `elapsed`).
pub(super) fn pass_intervals(log: &Path) -> anyhow::Result<Vec<PassInterval>> {
    let text =
        std::fs::read_to_string(log).with_context(|| format!("cannot read {}", log.display()))?;
    Ok(text.lines().filter_map(parse_pass).collect())
}

pub(super) fn parse_pass(line: &str) -> Option<PassInterval> {
    let line = strip_ansi(line);
    if !(line.contains("plugin_controller") && line.contains(" pass ")) {
        return None;
    }
    let field = |name: &str| -> Option<String> {
        let rest = line.split(&format!(" {name}=")).nth(1)?;
        Some(rest.split(' ').next()?.trim_matches('"').to_owned())
    };
    let end: k8s_openapi::jiff::Timestamp = line.split(' ').next()?.parse().ok()?;
    let elapsed = parse_duration(&field("elapsed")?)?;
    let start = end
        .checked_sub(k8s_openapi::jiff::SignedDuration::try_from(elapsed).ok()?)
        .ok()?;
    Some(PassInterval {
        object: format!("{}/{}", field("namespace")?, field("name")?),
        start,
        end,
    })
}

/// A `Duration` as its `Debug` writes it (`12.8ms`, `850µs`, `1.2s`, `3ns`).
pub(super) fn parse_duration(text: &str) -> Option<Duration> {
    let (number, unit) = ["ns", "µs", "ms", "s"]
        .iter()
        .find_map(|unit| Some((text.strip_suffix(unit)?, *unit)))?;
    let value: f64 = number.parse().ok()?;
    let seconds = match unit {
        "ns" => value / 1e9,
        "µs" => value / 1e6,
        "ms" => value / 1e3,
        _ => value,
    };
    Duration::try_from_secs_f64(seconds).ok()
}

pub(super) fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The objects passed by `a` and `b` at overlapping times.
pub(super) fn overlaps(a: &[PassInterval], b: &[PassInterval]) -> Vec<String> {
    let mut found: Vec<String> = a
        .iter()
        .filter(|x| {
            b.iter()
                .any(|y| x.object == y.object && x.start < y.end && y.start < x.end)
        })
        .map(|x| x.object.clone())
        .collect();
    found.dedup();
    found
}

/// Counts the log lines under `dir` and names each file holding a Secret value of `seen`
/// (as stored in base64, or decoded when it is 16 bytes or more).
pub(super) fn scan_logs(dir: &Path, seen: &Values) -> anyhow::Result<(usize, Vec<String>)> {
    use base64::Engine as _;
    let needles: Vec<(String, String)> = seen
        .iter()
        .flat_map(|((secret, key), value)| {
            let label = format!("Secret {secret} key {key}");
            let stored = base64::engine::general_purpose::STANDARD.encode(value);
            let decoded = String::from_utf8(value.clone()).ok();
            [Some(stored), decoded]
                .into_iter()
                .flatten()
                .filter(|n| n.len() >= 16)
                .map(move |n| (label.clone(), n))
        })
        .collect();
    let mut lines = 0;
    let mut leaks = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        lines += text.lines().count();
        for (label, needle) in &needles {
            if text.contains(needle.as_str()) {
                leaks.push(format!("a value of {label} is in {}", path.display()));
            }
        }
    }
    Ok((lines, leaks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_or_lost_value_is_a_violation_named_without_the_value() {
        let key = |s: &str, k: &str| (s.to_owned(), k.to_owned());
        let mut seen = Values::from([
            (key("ns/a", "k"), b"one".to_vec()),
            (key("ns/b", "k"), b"two".to_vec()),
        ]);
        let now = Values::from([
            (key("ns/a", "k"), b"changed".to_vec()),
            (key("ns/c", "k"), b"new".to_vec()),
        ]);
        let mut violations = Vec::new();
        check_values(&mut seen, &now, "t", &mut violations);
        assert_eq!(
            violations,
            ["t: Secret ns/a key k changed", "t: Secret ns/b lost key k"]
        );
        assert!(
            seen.contains_key(&key("ns/c", "k")),
            "new values are tracked"
        );
        assert!(
            violations
                .iter()
                .all(|v| !v.contains("changed\"") && !v.contains("one"))
        );
    }

    #[test]
    fn a_value_in_a_log_is_a_violation_naming_the_file_and_the_secret_not_the_value() {
        let dir = tempfile::tempdir().expect("a directory");
        let value = b"s3cr3t-value-of-32-characters-xx".to_vec();
        let seen = Values::from([(("ns/a".to_owned(), "k".to_owned()), value.clone())]);
        std::fs::write(dir.path().join("clean.log"), "a line\nanother\n").expect("log");
        let (lines, leaks) = scan_logs(dir.path(), &seen).expect("scanned");
        assert_eq!((lines, leaks.len()), (2, 0));
        std::fs::write(
            dir.path().join("leaky.log"),
            "WARN body: czNjcjN0LXZhbHVlLW9mLTMyLWNoYXJhY3RlcnMteHg=\n",
        )
        .expect("log");
        let (_, leaks) = scan_logs(dir.path(), &seen).expect("scanned");
        assert_eq!(leaks.len(), 1, "{leaks:?}");
        assert!(
            leaks[0].starts_with("a value of Secret ns/a key k is in "),
            "{leaks:?}"
        );
        assert!(leaks[0].ends_with("leaky.log"));
    }

    #[test]
    fn passes_are_read_from_their_log_lines_and_overlaps_found_per_object() {
        let line = "\u{1b}[2m2026-12-05T04:19:59.850764Z\u{1b}[0m DEBUG wasm_operator::controller::plugin_controller: pass plugin=\"gitlabsecrets\" version=\"0.1.0\" namespace=\"soak-0\" name=\"demo\" elapsed=12.5ms outcome=Ok(None)";
        let pass = parse_pass(line).expect("a pass line");
        assert_eq!(pass.object, "soak-0/demo");
        assert_eq!(
            pass.end.duration_since(pass.start),
            k8s_openapi::jiff::SignedDuration::from_micros(12_500)
        );
        assert_eq!(parse_pass("DEBUG something else"), None);
        assert_eq!(parse_duration("850µs"), Some(Duration::from_micros(850)));
        assert_eq!(parse_duration("1.5s"), Some(Duration::from_millis(1500)));
        let at = |object: &str, from: i64, to: i64| PassInterval {
            object: object.into(),
            start: k8s_openapi::jiff::Timestamp::from_second(from).expect("a time"),
            end: k8s_openapi::jiff::Timestamp::from_second(to).expect("a time"),
        };
        let a = [at("ns/x", 0, 2), at("ns/y", 0, 2)];
        let b = [at("ns/x", 1, 3), at("ns/y", 2, 4), at("ns/z", 0, 9)];
        assert_eq!(overlaps(&a, &b), ["ns/x"]);
    }
}
