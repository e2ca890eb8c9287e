//! Step 3 — the admin credentials the identity client authenticates with (facts §3.2
//! step 3): the Keystone's bootstrap admin user and the `password` key of its Secret
//! `spec.bootstrap.adminPasswordSecretRef.name` (the ref's `key` is not consulted, as on
//! the Keystone).
//!
//! | Case | DomainReady | Pass |
//! |---|---|---|
//! | the Secret is absent, has no `password` key, or it is empty | False `AdminSecretUnavailable` "Admin password Secret ns/name is missing or has no password key" (a True DomainReady stays) | ends, 15 s |
//! | reading the Secret fails otherwise | — | fails |
//! | the password is there | — | goes on with the credentials |
//!
//! DECISION: an empty password counts as missing: Keystone would refuse it anyway, and
//! the condition says what to fix. The password is never logged nor put in a message.

use std::ops::ControlFlow;

use k8s_openapi::api::core::v1::Secret;
use wasm_operator_sdk::{Cluster, ClusterExt};

use crate::conditions::{ADMIN_SECRET_UNAVAILABLE, DOMAIN_READY};
use crate::error::Error;
use crate::identity::Credentials;
use crate::keystone_ref::Keystone;
use crate::pass::{Flow, Pass, SECRET_POLLING};

/// The data key of the admin password.
pub(crate) const PASSWORD_KEY: &str = "password";

/// `namespace/name` of the Keystone's admin password Secret.
pub(crate) fn secret_key(keystone: &Keystone) -> String {
    let name = &keystone.spec.bootstrap.admin_password_secret_ref.name;
    format!("{}/{name}", keystone.namespace())
}

/// The admin credentials of `keystone`; `None` when the Secret or its password is missing.
pub(crate) fn read(
    cluster: &dyn Cluster,
    keystone: &Keystone,
) -> Result<Option<Credentials>, Error> {
    let name = &keystone.spec.bootstrap.admin_password_secret_ref.name;
    if name.is_empty() {
        return Ok(None);
    }
    let what = format!("reading the admin password Secret {}", secret_key(keystone));
    let secret: Option<Secret> = cluster
        .get_typed(Some(keystone.namespace()), name)
        .map_err(Error::cluster(what))?;
    let password = secret
        .and_then(|s| s.data)
        .and_then(|mut d| d.remove(PASSWORD_KEY))
        .map(|p| String::from_utf8_lossy(&p.0).into_owned())
        .filter(|p| !p.is_empty());
    Ok(password.map(|password| Credentials {
        user: keystone.admin_user().to_owned(),
        password,
    }))
}

/// Runs step 3: the credentials, or the condition saying the Secret is missing.
pub(crate) fn run(
    pass: &mut Pass<'_>,
    keystone: &Keystone,
    children: &dyn Cluster,
) -> Flow<Credentials> {
    match read(children, keystone)? {
        Some(credentials) => Ok(ControlFlow::Continue(credentials)),
        None => {
            let message = format!(
                "Admin password Secret {} is missing or has no password key",
                secret_key(keystone)
            );
            pass.condition(DOMAIN_READY, false, ADMIN_SECRET_UNAVAILABLE, &message);
            Ok(ControlFlow::Break(Some(SECRET_POLLING)))
        }
    }
}

#[cfg(test)]
#[path = "admin_credentials_tests.rs"]
mod tests;
