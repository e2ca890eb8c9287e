//! Step 2, managed, after ProvisioningReady: the store's AppRole credentials Secret
//! `{store}-approle` (keys `role-id`, `secret-id`; facts §3.6), minted through the
//! provisioner's session and checked with an AppRole login.
//!
//! The Secret carries when its secret ID was minted and how long it lives —
//! `barbican.c5c3.io/secret-id-minted-at` (RFC 3339) and
//! `barbican.c5c3.io/secret-id-ttl-seconds` — since OpenBao never reads a secret ID back.
//! With `age` = now − minted-at and `ttl` its TTL (0: does not expire); every False row
//! emits a Warning event named after its reason and retries after 30 s:
//!
//! | Case | Action | CredentialsReady | Requeue |
//! |---|---|---|---|
//! | no Secret; a stamp missing or unreadable; `role-id` or `secret-id` empty | mint | (below) | |
//! | `ttl` > 0 and `age` > 2/3 `ttl` | mint (proactive) | (below) | |
//! | otherwise: the login with the Secret's pair is accepted | — | True `CredentialsAvailable` "Secret ns/s-approle carries AppRole credentials the server accepts" | the 2/3-`ttl` point (≥ 30 s; `ttl` 0: 15 min) |
//! | … rejected (400, 403), `age` ≥ 10 min | mint (reactive) | (below) | |
//! | … rejected, `age` < 10 min | — | False `InvalidCredentials` "the server rejects the AppRole credentials of Secret ns/s-approle, which were minted 4m0s ago; a fresh secret ID is minted at most once every 10m0s, so the rejection is reported rather than re-minted: …" | 30 s |
//! | … fails otherwise | — | False `OpenBaoUnreachable` (the error) | 30 s |
//! | mint: generating the secret ID is denied (403) / fails otherwise | — | False `ProvisioningDenied` / `OpenBaoUnreachable` (the error) | 30 s |
//! | mint: the Secret written (role ID, secret ID, stamps; owned by the store), then the login with the new pair: accepted | — | True (as above) | the 2/3-`ttl` point |
//! | … denied (403) / fails otherwise (400 included, as CobaltCore) | — | False `InvalidCredentials` / `OpenBaoUnreachable` | 30 s |
//! | reading or writing the Secret fails | — | unchanged | error |
//!
//! The probe's session is revoked at once. A converged store (stamps fresh, login
//! accepted) writes nothing. The AppRole is shared instance state and is never revoked.
//! DECISION: as in CobaltCore, every pass re-checks the instance (ProvisioningReady), so a
//! converged pass still makes the provisioner's TokenRequest — a create on a subresource
//! that stores nothing.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use wasm_operator_sdk::blocks::apply::ensure_object;
use wasm_operator_sdk::{ClusterExt, Owner};

use crate::conditions::{
    CREDENTIALS_AVAILABLE, CREDENTIALS_READY, INVALID_CREDENTIALS, OPENBAO_UNREACHABLE,
    PROVISIONING_DENIED,
};
use crate::error::Error;
use crate::instance::STORE_APPROLE;
use crate::openbao::{self, Client};
use crate::pass::{Gate, Pass, SECRET_STORE_RETRY, SECRET_STORE_REVALIDATE};
use crate::types::{APPROLE_SECRET_SUFFIX, ROLE_ID_KEY, SECRET_ID_KEY};

/// When the secret ID was minted (RFC 3339).
pub(crate) const MINTED_AT_ANNOTATION: &str = "barbican.c5c3.io/secret-id-minted-at";
/// Its TTL in seconds (0: does not expire).
pub(crate) const TTL_ANNOTATION: &str = "barbican.c5c3.io/secret-id-ttl-seconds";
/// The least age of credentials a rejection re-mints.
pub(crate) const REACTIVE_REMINT_COOLDOWN: Duration = Duration::from_secs(10 * 60);

/// The age at which a secret ID is re-minted: two thirds of its TTL.
pub(crate) fn proactive_threshold(ttl: Duration) -> Duration {
    ttl * 2 / 3
}

/// How long after `now` credentials minted at `minted_at` with `ttl` are due: the 2/3
/// point, at least 30 s; 15 min for a TTL of 0.
pub(crate) fn remint_requeue(minted_at: Timestamp, ttl: Duration, now: Timestamp) -> Duration {
    if ttl.is_zero() {
        return SECRET_STORE_REVALIDATE;
    }
    let remaining = proactive_threshold(ttl).saturating_sub(age(minted_at, now));
    remaining.max(SECRET_STORE_RETRY)
}

/// `now` − `minted_at` (0 when the stamp lies in the future).
fn age(minted_at: Timestamp, now: Timestamp) -> Duration {
    Duration::try_from(now.duration_since(minted_at)).unwrap_or(Duration::ZERO)
}

/// A duration as Go prints one truncated to seconds: `0s`, `45s`, `4m0s`, `1h2m5s`.
pub(crate) fn go_duration(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, min, sec) => format!("{min}m{sec}s"),
        (h, min, sec) => format!("{h}h{min}m{sec}s"),
    }
}

/// The mint stamp of `secret`: when, and the TTL; `None` when either is missing or does
/// not parse.
pub(crate) fn stamp(secret: &Secret) -> Option<(Timestamp, Duration)> {
    let annotations = secret.metadata.annotations.as_ref()?;
    let minted_at = annotations.get(MINTED_AT_ANNOTATION)?.parse().ok()?;
    let ttl: u64 = annotations.get(TTL_ANNOTATION)?.parse().ok()?;
    Some((minted_at, Duration::from_secs(ttl)))
}

fn value(secret: &Secret, key: &str) -> String {
    secret
        .data
        .as_ref()
        .and_then(|d| d.get(key))
        .map(|v| String::from_utf8_lossy(&v.0).into_owned())
        .unwrap_or_default()
}

/// Runs the credentials part of step 2 with the provisioner's session; `url` is the
/// instance's, `role_id` the AppRole's.
pub(crate) fn run(
    pass: &mut Pass<'_>,
    provisioner: &Client<'_>,
    url: &str,
    role_id: &str,
) -> Result<Gate, Error> {
    let name = format!("{}{APPROLE_SECRET_SUFFIX}", pass.store.name());
    let key = pass.key(&name);
    let namespace = pass.store.namespace().to_owned();
    let current: Option<Secret> =
        pass.cluster
            .get_typed(Some(&namespace), &name)
            .map_err(|source| Error::Cluster {
                what: format!("fetching the AppRole credentials Secret {key}"),
                source,
            })?;
    let held = current.as_ref().and_then(|s| {
        let (minted_at, ttl) = stamp(s)?;
        let pair = (value(s, ROLE_ID_KEY), value(s, SECRET_ID_KEY));
        (!pair.0.is_empty() && !pair.1.is_empty()).then_some((minted_at, ttl, pair))
    });
    let Some((minted_at, ttl, (held_role, held_secret))) = held else {
        return mint(pass, provisioner, url, role_id, &name);
    };
    let age = age(minted_at, pass.now);
    if !ttl.is_zero() && age > proactive_threshold(ttl) {
        return mint(pass, provisioner, url, role_id, &name);
    }
    match probe(pass, url, &held_role, &held_secret) {
        Ok(()) => Ok(ready(pass, &key, minted_at, ttl)),
        Err(e) if e.is_invalid_credentials() && age >= REACTIVE_REMINT_COOLDOWN => {
            mint(pass, provisioner, url, role_id, &name)
        }
        Err(e) if e.is_invalid_credentials() => {
            let message = format!(
                "the server rejects the AppRole credentials of Secret {key}, which were minted \
                 {} ago; a fresh secret ID is minted at most once every {}, so the rejection \
                 is reported rather than re-minted: {e}",
                go_duration(age),
                go_duration(REACTIVE_REMINT_COOLDOWN)
            );
            Ok(pass.fail(CREDENTIALS_READY, INVALID_CREDENTIALS, &message))
        }
        Err(e) => Ok(pass.fail(CREDENTIALS_READY, OPENBAO_UNREACHABLE, &e.to_string())),
    }
}

/// A login with the pair, its session handed back at once.
fn probe(pass: &Pass<'_>, url: &str, role_id: &str, secret_id: &str) -> openbao::Result<()> {
    let client = Client::new(pass.transport, url, "");
    let result = client.login_approle(role_id, secret_id);
    pass.revoke(&client);
    result
}

/// CredentialsReady True, looking again at the 2/3-TTL point.
fn ready(pass: &mut Pass<'_>, key: &str, minted_at: Timestamp, ttl: Duration) -> Gate {
    let message = format!("Secret {key} carries AppRole credentials the server accepts");
    pass.set(CREDENTIALS_READY, true, CREDENTIALS_AVAILABLE, &message);
    Gate::Passed(remint_requeue(minted_at, ttl, pass.now))
}

/// Mints a secret ID, writes the Secret `name` and checks the new pair.
fn mint(
    pass: &mut Pass<'_>,
    provisioner: &Client<'_>,
    url: &str,
    role_id: &str,
    name: &str,
) -> Result<Gate, Error> {
    let (secret_id, ttl_seconds) = match provisioner.generate_secret_id(STORE_APPROLE) {
        Ok(minted) => minted,
        Err(e) => return Ok(pass.fail_openbao(CREDENTIALS_READY, PROVISIONING_DENIED, &e)),
    };
    // RFC 3339 to the second, as the stamp is read back.
    let minted_at = Timestamp::from_second(pass.now.as_second()).unwrap_or(pass.now);
    let key = pass.key(name);
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(pass.store.namespace().to_owned()),
            annotations: Some(BTreeMap::from([
                (MINTED_AT_ANNOTATION.to_owned(), minted_at.to_string()),
                (TTL_ANNOTATION.to_owned(), ttl_seconds.to_string()),
            ])),
            ..ObjectMeta::default()
        },
        type_: Some("Opaque".to_owned()),
        data: Some(BTreeMap::from([
            (
                ROLE_ID_KEY.to_owned(),
                ByteString(role_id.as_bytes().to_vec()),
            ),
            (SECRET_ID_KEY.to_owned(), ByteString(secret_id.into_bytes())),
        ])),
        ..Secret::default()
    };
    let what = || format!("writing the AppRole credentials Secret {key}");
    let owner = Owner::of(&*pass.store).map_err(|e| Error::Cluster {
        what: what(),
        source: e.into(),
    })?;
    ensure_object(pass.cluster, &owner, &secret).map_err(|source| Error::Cluster {
        what: what(),
        source,
    })?;
    let secret_id = value(&secret, SECRET_ID_KEY);
    if let Err(e) = probe(pass, url, role_id, &secret_id) {
        return Ok(pass.fail_openbao(CREDENTIALS_READY, INVALID_CREDENTIALS, &e));
    }
    Ok(ready(
        pass,
        &key,
        minted_at,
        Duration::from_secs(ttl_seconds),
    ))
}

#[cfg(test)]
#[path = "minting_tests.rs"]
mod tests;
