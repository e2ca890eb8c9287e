//! One LDAP backend's domain file `keystone.<domain>.conf` and its CA bundle (facts §3.2,
//! "Rendered LDAP file"), rendered as the SDK renders INI: sections and keys sorted.
//!
//! | `[ldap]` option | From |
//! |---|---|
//! | `url`, `suffix`, `user_tree_dn` | the spec, always |
//! | `user`, `password` | the bind Secret's `username` / `password`, trailing CR/LF trimmed |
//! | `user_filter`, `user_objectclass`, `user_{id,name,mail}_attribute` | `users`, when set |
//! | `group_tree_dn`; `group_filter`, `group_objectclass`, `group_{id,name,member}_attribute` | `groups`, when present; the optional ones when set |
//! | `tls_cacertfile` = `/etc/keystone/domains/<domain>-ca.pem` | `tls`; data key `<domain>-ca.pem` = the CA Secret's `ca.crt` |
//! | `use_pool`, `pool_size` | `pool`; `pool_size` when set |
//! | `user_enabled_invert = true`, `user_enabled_default = false` | unless an extra option starts with `user_enabled_` |
//! | `{user,group}_allow_{create,update,delete} = false` | `readOnly` true or absent |
//! | extra options | verbatim, last |
//!
//! A missing Secret or key, a value that is not text, a CR or LF in any option name or
//! value, or (DECISION) an LDAP backend without its `ldap` block is a [`Fault`] of this
//! backend alone: the step skips it and goes on. The error texts name Secrets, keys and
//! option names, never a value.

use std::collections::BTreeMap;

use wasm_operator_sdk::Cluster;
use wasm_operator_sdk::blocks::config::{Sections, render_ini};
use wasm_operator_sdk::blocks::secrets::{self, get_secret_value};

use crate::error::Error;
use crate::identity_backend::IdentityBackend;
use crate::pod::DOMAINS_DIR;

/// The options `readOnly` forces to false.
const READ_ONLY_FORCED: [&str; 6] = [
    "user_allow_create",
    "user_allow_update",
    "user_allow_delete",
    "group_allow_create",
    "group_allow_update",
    "group_allow_delete",
];

/// The data key of a domain's config file.
pub(crate) fn conf_key(domain: &str) -> String {
    format!("keystone.{domain}.conf")
}

/// The data key of a domain's CA bundle (not a `keystone.*.conf`, so Keystone's domain
/// scanner never reads it as INI).
pub(crate) fn ca_key(domain: &str) -> String {
    format!("{domain}-ca.pem")
}

/// One backend's rendered files.
#[derive(Debug, PartialEq)]
pub(crate) struct Rendered {
    /// `keystone.<domain>.conf`.
    pub(crate) conf: String,
    /// `<domain>-ca.pem`, with TLS.
    pub(crate) ca: Option<String>,
}

impl Rendered {
    /// The bytes this backend adds to the domains Secret.
    pub(crate) fn size(&self) -> usize {
        self.conf.len() + self.ca.as_ref().map_or(0, String::len)
    }
}

/// Why one backend cannot be rendered; it alone is skipped.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Fault {
    /// A Secret or one of its keys is missing, or a value is not text.
    #[error(transparent)]
    Secret(secrets::Error),
    /// An option name or value would inject lines into the file.
    #[error(
        "[ldap] option {option:?}: [ldap] option name or value contains a newline or \
         carriage-return character"
    )]
    ControlCharacter { option: String },
    /// The backend has no `spec.ldap` block (a bypassed admission).
    #[error("backend has type {type_:?} but no ldap block")]
    NoLdapBlock { type_: String },
}

/// Renders `backend`'s files, reading its Secrets in `namespace`: a [`Fault`] skips it, an
/// `Err` (a failed read) fails the pass.
pub(crate) fn render(
    cluster: &dyn Cluster,
    namespace: &str,
    backend: &IdentityBackend,
) -> Result<Result<Rendered, Fault>, Error> {
    let Some(l) = &backend.spec.ldap else {
        return Ok(Err(Fault::NoLdapBlock {
            type_: backend.spec.type_.clone(),
        }));
    };
    let read = |secret: &str, key: &str| -> Result<Result<String, Fault>, Error> {
        match get_secret_value(cluster, namespace, secret, key) {
            Ok(value) => Ok(Ok(value)),
            Err(e @ secrets::Error::Get { .. }) => Err(Error::Secrets {
                what: format!("rendering the domain config of backend {}", backend.name()),
                source: e,
            }),
            Err(e) => Ok(Err(Fault::Secret(e))),
        }
    };
    let bind = &l.bind_credentials_secret_ref.name;
    let user = match read(bind, "username")? {
        Ok(v) => v,
        Err(fault) => return Ok(Err(fault)),
    };
    let password = match read(bind, "password")? {
        Ok(v) => v,
        Err(fault) => return Ok(Err(fault)),
    };
    let trim = |v: &str| v.trim_end_matches(['\r', '\n']).to_owned();
    let mut ldap = BTreeMap::from([
        ("url".to_owned(), l.url.clone()),
        ("suffix".to_owned(), l.suffix.clone()),
        ("user".to_owned(), trim(&user)),
        ("password".to_owned(), trim(&password)),
        ("user_tree_dn".to_owned(), l.users.tree_dn.clone()),
    ]);
    let mut set_if = |key: &str, value: &str| {
        if !value.is_empty() {
            ldap.insert(key.to_owned(), value.to_owned());
        }
    };
    let u = &l.users;
    set_if("user_filter", &u.filter);
    set_if("user_objectclass", &u.object_class);
    set_if("user_id_attribute", &u.id_attribute);
    set_if("user_name_attribute", &u.name_attribute);
    set_if("user_mail_attribute", &u.mail_attribute);
    if let Some(g) = &l.groups {
        set_if("group_filter", &g.filter);
        set_if("group_objectclass", &g.object_class);
        set_if("group_id_attribute", &g.id_attribute);
        set_if("group_name_attribute", &g.name_attribute);
        set_if("group_member_attribute", &g.member_attribute);
        ldap.insert("group_tree_dn".to_owned(), g.tree_dn.clone());
    }
    let domain = &backend.spec.domain.name;
    let mut ca = None;
    if let Some(tls) = &l.tls {
        match read(&tls.ca_bundle_secret_ref.name, "ca.crt")? {
            Ok(pem) => ca = Some(pem),
            Err(fault) => return Ok(Err(fault)),
        }
        ldap.insert(
            "tls_cacertfile".to_owned(),
            format!("{DOMAINS_DIR}/{}", ca_key(domain)),
        );
    }
    if let Some(pool) = &l.pool {
        ldap.insert("use_pool".to_owned(), pool.enabled.to_string());
        if let Some(size) = pool.size {
            ldap.insert("pool_size".to_owned(), size.to_string());
        }
    }
    let extra = &backend.spec.extra_options;
    if !extra.keys().any(|k| k.starts_with("user_enabled_")) {
        ldap.insert("user_enabled_invert".to_owned(), "true".to_owned());
        ldap.insert("user_enabled_default".to_owned(), "false".to_owned());
    }
    if l.read_only.unwrap_or(true) {
        for option in READ_ONLY_FORCED {
            ldap.insert(option.to_owned(), "false".to_owned());
        }
    }
    ldap.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
    let injected = |s: &str| s.contains(['\r', '\n']);
    if let Some((option, _)) = ldap.iter().find(|(k, v)| injected(k) || injected(v)) {
        return Ok(Err(Fault::ControlCharacter {
            option: option.clone(),
        }));
    }
    let sections: Sections = BTreeMap::from([
        (
            "identity".to_owned(),
            BTreeMap::from([("driver".to_owned(), "ldap".to_owned())]),
        ),
        ("ldap".to_owned(), ldap),
    ]);
    Ok(Ok(Rendered {
        conf: render_ini(&sections),
        ca,
    }))
}

#[cfg(test)]
#[path = "ldap_tests.rs"]
mod tests;
