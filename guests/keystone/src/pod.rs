//! What every Keystone pod shares (facts §2.4, §2.6, §2.10, §2.14, §2.16): the config,
//! database-connection, database-TLS and domains volumes and env, and the restricted
//! security context.

use k8s_openapi::api::core::v1::{
    Capabilities, ConfigMapVolumeSource, EnvVar, EnvVarSource, KeyToPath, PodSecurityContext,
    ProjectedVolumeSource, SeccompProfile, SecretKeySelector, SecretProjection, SecretVolumeSource,
    SecurityContext, Volume, VolumeMount, VolumeProjection,
};

use crate::pass::Pass;
use crate::steps::db_connection::{CONNECTION_KEY, DB_TLS_DIR, secret_name};

/// The uid and gid Keystone runs as, and the pods' fsGroup.
pub(crate) const KEYSTONE_UID: i64 = 42424;
/// Where the config ConfigMap is mounted (`--config-dir`).
pub(crate) const CONFIG_DIR: &str = "/etc/keystone/keystone.conf.d/";
/// Where the LDAP domain configs are mounted.
pub(crate) const DOMAINS_DIR: &str = "/etc/keystone/domains";
/// The env var oslo.config reads the database connection from.
pub(crate) const DB_CONNECTION_ENV: &str = "OS_DATABASE__CONNECTION";

/// The restricted security context of every container.
pub(crate) fn restricted() -> SecurityContext {
    SecurityContext {
        allow_privilege_escalation: Some(false),
        run_as_non_root: Some(true),
        run_as_user: Some(KEYSTONE_UID),
        run_as_group: Some(KEYSTONE_UID),
        read_only_root_filesystem: Some(true),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".into()]),
            ..Default::default()
        }),
        seccomp_profile: Some(SeccompProfile {
            type_: "RuntimeDefault".into(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The pods' security context: fsGroup 42424.
pub(crate) fn pod_security() -> PodSecurityContext {
    PodSecurityContext {
        fs_group: Some(KEYSTONE_UID),
        ..Default::default()
    }
}

/// `OS_DATABASE__CONNECTION` from `{name}-db-connection`.
pub(crate) fn db_connection_env(keystone: &str) -> EnvVar {
    EnvVar {
        name: DB_CONNECTION_ENV.into(),
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: secret_name(keystone),
                key: CONNECTION_KEY.into(),
                optional: None,
            }),
            ..Default::default()
        }),
        value: None,
    }
}

/// A Secret volume with mode `mode`.
pub(crate) fn secret_volume(name: &str, secret: &str, mode: i32) -> Volume {
    Volume {
        name: name.into(),
        secret: Some(SecretVolumeSource {
            secret_name: Some(secret.into()),
            default_mode: Some(mode),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A read-only mount of volume `name` at `path`.
pub(crate) fn read_only(name: &str, path: &str) -> VolumeMount {
    VolumeMount {
        name: name.into(),
        mount_path: path.into(),
        read_only: Some(true),
        ..Default::default()
    }
}

/// The `config` volume of the config ConfigMap, mounted read-only at [`CONFIG_DIR`].
pub(crate) fn config(config_map: &str) -> (Volume, VolumeMount) {
    let volume = Volume {
        name: "config".into(),
        config_map: Some(ConfigMapVolumeSource {
            name: config_map.into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    (volume, read_only("config", CONFIG_DIR))
}

/// The `db-tls` projected volume (mode 0400: `ca.crt` of the CA bundle Secret, `tls.crt`
/// and `tls.key` of the client Secret) at `/etc/keystone/db-tls/`, when TLS is on.
pub(crate) fn db_tls(pass: &Pass<'_>) -> Option<(Volume, VolumeMount)> {
    let tls = pass.keystone.spec.database.tls.as_ref()?;
    if !tls.is_enabled() {
        return None;
    }
    let items = |keys: &[&str]| {
        keys.iter()
            .map(|k| KeyToPath {
                key: (*k).into(),
                path: (*k).into(),
                ..Default::default()
            })
            .collect()
    };
    let source = |secret: &str, keys: &[&str]| VolumeProjection {
        secret: Some(SecretProjection {
            name: secret.into(),
            items: Some(items(keys)),
            optional: None,
        }),
        ..Default::default()
    };
    let volume = Volume {
        name: "db-tls".into(),
        projected: Some(ProjectedVolumeSource {
            default_mode: Some(0o400),
            sources: Some(vec![
                source(&tls.ca_bundle_secret_ref.name, &["ca.crt"]),
                source(&tls.client_cert_secret_ref.name, &["tls.crt", "tls.key"]),
            ]),
            ..Default::default()
        }),
        ..Default::default()
    };
    Some((volume, read_only("db-tls", DB_TLS_DIR)))
}

/// The `domains` volume of the projected LDAP domains Secret (mode 0400) at
/// [`DOMAINS_DIR`], when one is projected.
pub(crate) fn domains(pass: &Pass<'_>) -> Option<(Volume, VolumeMount)> {
    if pass.domains_secret_name.is_empty() {
        return None;
    }
    Some((
        secret_volume("domains", &pass.domains_secret_name, 0o400),
        read_only("domains", DOMAINS_DIR),
    ))
}

/// The volumes and mounts a database-connected pod of this pass carries: `config`, then
/// `db-tls` and `domains` when they apply.
pub(crate) fn keystone_volumes(
    pass: &Pass<'_>,
    config_map: &str,
) -> (Vec<Volume>, Vec<VolumeMount>) {
    let mut volumes = Vec::new();
    let mut mounts = Vec::new();
    for (volume, mount) in std::iter::once(config(config_map))
        .chain(db_tls(pass))
        .chain(domains(pass))
    {
        volumes.push(volume);
        mounts.push(mount);
    }
    (volumes, mounts)
}

/// The volumes and mounts of a pod that also reads both key repositories (the API
/// Deployment, the trust-flush CronJob): `config`, `fernet-keys` and `credential-keys`
/// (the key Secrets, mode 0400, mounted at `/etc/keystone/{fernet,credential}-keys`
/// followed by `dir_end`), then `db-tls` and `domains` when they apply.
pub(crate) fn key_volumes(
    pass: &Pass<'_>,
    config_map: &str,
    dir_end: &str,
) -> (Vec<Volume>, Vec<VolumeMount>) {
    let name = pass.name();
    let (config_volume, config_mount) = config(config_map);
    let mut volumes = vec![config_volume];
    let mut mounts = vec![config_mount];
    for keys in ["fernet-keys", "credential-keys"] {
        volumes.push(secret_volume(keys, &format!("{name}-{keys}"), 0o400));
        mounts.push(read_only(keys, &format!("/etc/keystone/{keys}{dir_end}")));
    }
    for (volume, mount) in db_tls(pass).into_iter().chain(domains(pass)) {
        volumes.push(volume);
        mounts.push(mount);
    }
    (volumes, mounts)
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use wasm_operator_sdk::testing::FakeCluster;

    use super::*;
    use crate::testing::{keystone_with, pass};

    #[test]
    fn a_pod_mounts_config_then_db_tls_and_domains_when_they_apply() {
        let cluster = FakeCluster::new();
        let mut plain = pass(&cluster, &keystone_with(json!({})));
        let (volumes, mounts) = keystone_volumes(&plain, "ks-config-1");
        assert_eq!(volumes.len(), 1);
        assert_eq!(mounts[0].mount_path, "/etc/keystone/keystone.conf.d/");
        plain.domains_secret_name = "ks-domains-2".into();
        let tls = json!({"database": {"tls": {"mode": "require",
            "caBundleSecretRef": {"name": "ca"}, "clientCertSecretRef": {"name": "client"}}}});
        let mut full = pass(&cluster, &keystone_with(tls));
        full.domains_secret_name = "ks-domains-2".into();
        let (volumes, mounts) = keystone_volumes(&full, "ks-config-1");
        let names: Vec<&str> = volumes.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["config", "db-tls", "domains"]);
        let tls = serde_json::to_value(&volumes[1]).expect("encodes");
        assert_eq!(
            tls["projected"],
            json!({"defaultMode": 0o400, "sources": [
                {"secret": {"name": "ca", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"secret": {"name": "client", "items": [
                    {"key": "tls.crt", "path": "tls.crt"}, {"key": "tls.key", "path": "tls.key"}]}}]})
        );
        assert_eq!(mounts[1].mount_path, "/etc/keystone/db-tls/");
        assert_eq!(mounts[2].mount_path, "/etc/keystone/domains");
        assert_eq!(
            volumes[2].secret.as_ref().and_then(|s| s.default_mode),
            Some(0o400)
        );
        assert!(mounts.iter().all(|m| m.read_only == Some(true)));
    }

    #[test]
    fn the_restricted_context_drops_everything_and_runs_as_42424() {
        let context = serde_json::to_value(restricted()).expect("encodes");
        assert_eq!(
            context,
            json!({"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]},
                "readOnlyRootFilesystem": true, "runAsGroup": 42424, "runAsNonRoot": true,
                "runAsUser": 42424, "seccompProfile": {"type": "RuntimeDefault"}})
        );
        let env = serde_json::to_value(db_connection_env("ks")).expect("encodes");
        assert_eq!(
            env,
            json!({"name": "OS_DATABASE__CONNECTION", "valueFrom": {"secretKeyRef":
                {"name": "ks-db-connection", "key": "connection"}}})
        );
    }
}
