//! The typed controls a test holds on one OpenBao stand-in (the shared one or an
//! OpenBaoCluster's): what it serves from, seeding what an operator of OpenBao would have
//! configured, reading back what clients wrote, the sealed toggle.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::Value;

use super::state::{self, AppRole, KubernetesRole};
use super::{OpenBao, epoch_seconds};

/// Why a control was refused.
#[derive(Debug, thiserror::Error)]
pub enum OpenBaoControlError {
    #[error("policy {name:?}: {message}")]
    Policy { name: String, message: String },
    #[error("no KV v2 mount at {mount:?}")]
    NoMount { mount: String },
}

/// A test's hold on one OpenBao stand-in.
pub struct OpenBaoStandIn {
    pub(super) bao: Arc<OpenBao>,
}

impl OpenBaoStandIn {
    /// `https://127.0.0.1:<port>` (the API is under `/v1/`).
    pub fn url(&self) -> String {
        format!("https://{}", self.bao.addr)
    }

    /// The CA certificate (PEM) that signed the stand-in's server certificate: what a
    /// store's `caBundleSecretRef` Secret carries as `ca.crt`.
    pub fn ca_pem(&self) -> String {
        self.bao.ca_pem.clone()
    }

    /// A token with the `root` policy.
    pub fn root_token(&self) -> String {
        self.bao.root_token.clone()
    }

    /// Writes ACL policy `name` from policy-language text (`path "…" { capabilities = […] }`).
    pub fn set_policy(&self, name: &str, text: &str) -> Result<(), OpenBaoControlError> {
        let rules = state::parse_policy(text).map_err(|message| OpenBaoControlError::Policy {
            name: name.into(),
            message,
        })?;
        self.bao.lock().policies.insert(name.into(), rules);
        Ok(())
    }

    /// Creates (or replaces) AppRole `name` with `policies`, its secret-ids valid for
    /// `secret_id_ttl` seconds (0: forever); answers its role-id.
    pub fn set_approle(&self, name: &str, policies: &[&str], secret_id_ttl: i64) -> String {
        let mut vault = self.bao.lock();
        let role_id = vault
            .approles
            .get(name)
            .map_or_else(crate::objects::new_uid, |r| r.role_id.clone());
        vault.approles.insert(
            name.into(),
            AppRole {
                role_id: role_id.clone(),
                policies: policies.iter().map(|p| (*p).to_owned()).collect(),
                secret_id_ttl,
                token_ttl: 3600,
            },
        );
        role_id
    }

    /// A fresh secret-id of AppRole `role`, as `PUT auth/approle/role/{role}/secret-id`
    /// answers it (what an operator of OpenBao hands a brownfield store); `None` when
    /// there is no such role.
    pub fn mint_secret_id(&self, role: &str) -> Option<String> {
        match super::auth::mint_secret_id(&mut self.bao.lock(), role) {
            Ok(super::api::Answer::Data(data)) => data["secret_id"].as_str().map(str::to_owned),
            _ => None,
        }
    }

    /// Secret-ids minted for AppRole `role` so far (not expired).
    pub fn live_secret_ids(&self, role: &str) -> usize {
        let now = epoch_seconds();
        self.bao
            .lock()
            .secret_ids
            .values()
            .filter(|s| s.role == role && s.expires_at.is_none_or(|e| e > now))
            .count()
    }

    /// Creates (or replaces) Kubernetes auth role `name`: ServiceAccount names and
    /// namespaces it binds (`*`: any), the audience the JWT must carry, its policies.
    pub fn set_kubernetes_role(
        &self,
        name: &str,
        service_accounts: &[&str],
        namespaces: &[&str],
        audience: Option<&str>,
        policies: &[&str],
    ) {
        let owned = |l: &[&str]| l.iter().map(|s| (*s).to_owned()).collect();
        self.bao.lock().kubernetes_roles.insert(
            name.into(),
            KubernetesRole {
                service_account_names: owned(service_accounts),
                service_account_namespaces: owned(namespaces),
                audience: audience.map(str::to_owned),
                policies: owned(policies),
                token_ttl: 3600,
            },
        );
    }

    /// Enables a KV v2 engine at `mount` (no-op when enabled).
    pub fn enable_kv(&self, mount: &str) {
        self.bao.lock().kv.entry(mount.into()).or_default();
    }

    /// Writes a new version of `mount`/`path` with `data` (a JSON object).
    pub fn kv_put(&self, mount: &str, path: &str, data: Value) -> Result<(), OpenBaoControlError> {
        let mut vault = self.bao.lock();
        let secrets = vault
            .kv
            .get_mut(mount)
            .ok_or_else(|| OpenBaoControlError::NoMount {
                mount: mount.into(),
            })?;
        let time = k8s_openapi::jiff::Timestamp::now().to_string();
        let secret = secrets.entry(path.into()).or_default();
        if secret.versions.is_empty() {
            secret.created_time.clone_from(&time);
        }
        secret.updated_time.clone_from(&time);
        secret.versions.push(state::Version {
            data,
            created_time: time,
            deletion_time: String::new(),
            destroyed: false,
        });
        Ok(())
    }

    /// The latest live version of `mount`/`path`, and its number.
    pub fn kv_get(&self, mount: &str, path: &str) -> Option<(usize, Value)> {
        let vault = self.bao.lock();
        let secret = vault.kv.get(mount)?.get(path)?;
        let latest = secret.versions.last()?;
        (latest.deletion_time.is_empty() && !latest.destroyed)
            .then(|| (secret.versions.len(), latest.data.clone()))
    }

    /// While `sealed`, every request is answered 503 `Vault is sealed`.
    pub fn set_sealed(&self, sealed: bool) {
        self.bao.sealed.store(sealed, Ordering::Relaxed);
    }

    /// Requests served so far (also those answered 503).
    pub fn requests(&self) -> u64 {
        self.bao.requests.load(Ordering::Relaxed)
    }
}
