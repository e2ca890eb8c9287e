//! The KV v2 secrets engine of a mount: `{mount}/data/{path}` (read, optionally
//! `?version=`; write with `options.cas`; soft delete of the latest version) and
//! `{mount}/metadata/{path}` (read, list of keys below a prefix, delete of every version).
//!
//! ACL: a read needs `read`, a list `list`, a write `create` on a new secret and `update`
//! on an existing one, a delete `delete`, each on the request's full path.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use super::api::{Answer, BaoError, Reply, Request, is_write, require};
use super::state::{Secret, Token, Vault, Version};

fn now() -> String {
    k8s_openapi::jiff::Timestamp::now().to_string()
}

fn version_metadata(number: usize, version: &Version) -> Value {
    json!({
        "created_time": version.created_time,
        "custom_metadata": null,
        "deletion_time": version.deletion_time,
        "destroyed": version.destroyed,
        "version": number,
    })
}

/// One KV v2 request against an existing mount.
pub(crate) fn serve(request: &Request, vault: &mut Vault, token: &Token) -> Reply {
    let full = request.path.clone();
    let mut parts = full.splitn(3, '/');
    let mount = parts.next().unwrap_or_default().to_owned();
    let area = parts.next().unwrap_or_default().to_owned();
    let key = parts.next().unwrap_or_default().to_owned();
    let exists = vault
        .kv
        .get(&mount)
        .and_then(|m| m.get(&key))
        .is_some_and(|s| !s.versions.is_empty());
    let capability = match (&request.method, request.list) {
        (_, true) => "list",
        (m, _) if *m == Method::GET => "read",
        (m, _) if *m == Method::DELETE => "delete",
        _ if is_write(request) && exists => "update",
        _ if is_write(request) => "create",
        _ => {
            return Err(BaoError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "unsupported operation",
            ));
        }
    };
    require(vault, token, &full, &[capability])?;
    let Some(secrets) = vault.kv.get_mut(&mount) else {
        return Err(BaoError::not_found());
    };
    match (area.as_str(), capability) {
        ("metadata", "list") => {
            let prefix = if key.is_empty() {
                String::new()
            } else {
                format!("{key}/")
            };
            let mut keys: Vec<String> = secrets
                .keys()
                .filter_map(|k| k.strip_prefix(&prefix))
                .map(|rest| match rest.split_once('/') {
                    Some((dir, _)) => format!("{dir}/"),
                    None => rest.to_owned(),
                })
                .collect();
            keys.dedup();
            if keys.is_empty() {
                return Err(BaoError::not_found());
            }
            Ok(Answer::Data(json!({"keys": keys})))
        }
        (_, "list") => Err(BaoError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "unsupported operation",
        )),
        ("data", "read") => {
            let secret = secrets.get(&key).ok_or_else(BaoError::not_found)?;
            let number = match request.query.iter().find(|(k, _)| k == "version") {
                Some((_, v)) => v
                    .parse::<usize>()
                    .map_err(|_| BaoError::bad_request("invalid version"))?,
                None => secret.versions.len(),
            };
            let version = number
                .checked_sub(1)
                .and_then(|i| secret.versions.get(i))
                .filter(|v| v.deletion_time.is_empty() && !v.destroyed)
                .ok_or_else(BaoError::not_found)?;
            Ok(Answer::Data(json!({
                "data": version.data,
                "metadata": version_metadata(number, version),
            })))
        }
        ("data", "create" | "update") => {
            let Some(data) = request.body.get("data").filter(|d| d.is_object()) else {
                return Err(BaoError::bad_request("no data provided"));
            };
            let secret = secrets.entry(key).or_insert_with(Secret::default);
            if let Some(cas) = request.body["options"]["cas"].as_u64()
                && usize::try_from(cas).ok() != Some(secret.versions.len())
            {
                return Err(BaoError::bad_request(
                    "check-and-set parameter did not match the current version",
                ));
            }
            let time = now();
            if secret.versions.is_empty() {
                secret.created_time.clone_from(&time);
            }
            secret.updated_time.clone_from(&time);
            secret.versions.push(Version {
                data: data.clone(),
                created_time: time,
                deletion_time: String::new(),
                destroyed: false,
            });
            let number = secret.versions.len();
            let version = &secret.versions[number - 1];
            Ok(Answer::Data(version_metadata(number, version)))
        }
        ("data", "delete") => {
            if let Some(latest) = secrets.get_mut(&key).and_then(|s| s.versions.last_mut())
                && latest.deletion_time.is_empty()
            {
                latest.deletion_time = now();
            }
            Ok(Answer::Empty)
        }
        ("metadata", "read") => {
            let secret = secrets.get(&key).ok_or_else(BaoError::not_found)?;
            let versions: serde_json::Map<String, Value> = secret
                .versions
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    (
                        (i + 1).to_string(),
                        json!({"created_time": v.created_time, "deletion_time": v.deletion_time,
                               "destroyed": v.destroyed}),
                    )
                })
                .collect();
            Ok(Answer::Data(json!({
                "cas_required": false,
                "created_time": secret.created_time,
                "current_version": secret.versions.len(),
                "custom_metadata": null,
                "delete_version_after": "0s",
                "max_versions": 0,
                "oldest_version": 1,
                "updated_time": secret.updated_time,
                "versions": versions,
            })))
        }
        ("metadata", "delete") => {
            secrets.remove(&key);
            Ok(Answer::Empty)
        }
        _ => Err(BaoError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "unsupported operation",
        )),
    }
}
