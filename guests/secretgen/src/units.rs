//! What the entries of one Secret declare: its type and its units.
//!
//! A unit is the part of a Secret that is generated, and hence ready, as a whole:
//!
//! | generator | unit name | keys |
//! |---|---|---|
//! | random, bytes, rsa | the key | the key |
//! | static | the key (not data-bearing) | the key |
//! | x509 | `<certKey>+<keyKey>` | both |
//! | sshHostKeys | `ssh_host_rsa_key`, `ssh_host_ecdsa_key`, `ssh_host_ed25519_key` | the key and its `.pub` |
//! | railsSecrets | `<key>:<env>.<path>`, one per field | the key (shared) |
//!
//! Every unit but a static value is data-bearing: it holds generated material whose loss
//! cannot be undone, so it counts against the readyUnits a status entry holds. A static
//! value can always be written again.
//!
//! DECISION: entries that declare the same generator twice (e.g. two entries of the same
//! Secret) declare it once; two different generators of one key are an error.

use crate::entries::{
    Bytes, BytesEncoding, EntryError, Generator, RailsField, RailsSecrets, Random, RandomEncoding,
    Rsa, SecretEntry, Static, Wrap, X509,
};
use crate::generators::ssh::HostKey;

/// Where a unit's values come from.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Source<'e> {
    Random(&'e Random),
    Bytes(&'e Bytes),
    Static(&'e Static),
    Rsa(&'e Rsa),
    X509(&'e X509),
    HostKey(HostKey),
    /// One field of a railsSecrets generator; `generator` indexes
    /// [`Declaration::rails`].
    RailsField {
        generator: usize,
        field: &'e RailsField,
    },
}

/// One unit of a Secret.
#[derive(Clone, Debug)]
pub(crate) struct Unit<'e> {
    pub(crate) name: String,
    pub(crate) keys: Vec<String>,
    pub(crate) source: Source<'e>,
}

impl Unit<'_> {
    /// Whether the unit holds generated material.
    pub(crate) fn data_bearing(&self) -> bool {
        !matches!(self.source, Source::Static(_))
    }

    /// The bytes the unit's values take, where that is known before generating them (random,
    /// bytes and static values, which may be large); keys and documents count 0.
    pub(crate) fn predicted_size(&self) -> usize {
        let base64 = |n: u32| (n as usize).div_ceil(3) * 4;
        match self.source {
            Source::Random(r) => {
                let encoded = match r.encoding {
                    RandomEncoding::None => r.length as usize,
                    RandomEncoding::Base64 | RandomEncoding::Base64NoWrap => base64(r.length),
                };
                encoded + if r.wrap == Wrap::JsonArray { 4 } else { 0 }
            }
            Source::Bytes(b) => match b.encoding {
                BytesEncoding::Raw => b.length as usize,
                BytesEncoding::Base64 => base64(b.length),
            },
            Source::Static(s) => s.value.len(),
            _ => 0,
        }
    }
}

/// What the entries of one Secret declare.
#[derive(Debug)]
pub(crate) struct Declaration<'e> {
    /// The declared type.
    pub(crate) secret_type: String,
    /// The units, in declaration order.
    pub(crate) units: Vec<Unit<'e>>,
    /// The railsSecrets generators, in declaration order.
    pub(crate) rails: Vec<&'e RailsSecrets>,
}

impl Declaration<'_> {
    /// The names of the data-bearing units, in declaration order.
    pub(crate) fn data_bearing_units(&self) -> Vec<String> {
        self.units
            .iter()
            .filter(|u| u.data_bearing())
            .map(|u| u.name.clone())
            .collect()
    }
}

/// Reads the declaration of Secret `name` from its entries.
pub(crate) fn declare<'e>(
    name: &str,
    entries: &'e [SecretEntry],
) -> Result<Declaration<'e>, EntryError> {
    let first = entries.first().ok_or(EntryError::NoEntries)?;
    let mut declaration = Declaration {
        secret_type: first.secret_type.clone(),
        units: Vec::new(),
        rails: Vec::new(),
    };
    let mut seen: Vec<&Generator> = Vec::new();
    let mut owned: Vec<String> = Vec::new();
    for entry in entries {
        if entry.name != name {
            return Err(EntryError::OtherSecret(entry.name.clone()));
        }
        if entry.secret_type != declaration.secret_type {
            return Err(EntryError::ConflictingTypes(
                declaration.secret_type.clone(),
                entry.secret_type.clone(),
            ));
        }
        if entry.generators.is_empty() {
            return Err(EntryError::NoGenerators);
        }
        let has_rails = entry
            .generators
            .iter()
            .any(|g| matches!(g, Generator::RailsSecrets(_)));
        if has_rails && entry.generators.len() > 1 {
            return Err(EntryError::RailsNotAlone);
        }
        for generator in &entry.generators {
            crate::entries::validate(generator)?;
            if seen.contains(&generator) {
                continue;
            }
            seen.push(generator);
            for key in keys_of(generator) {
                if owned.contains(&key) {
                    return Err(EntryError::DuplicateKey(key));
                }
                owned.push(key);
            }
            declaration
                .units
                .extend(units_of(generator, &mut declaration.rails));
        }
    }
    Ok(declaration)
}

/// The keys one generator writes.
fn keys_of(generator: &Generator) -> Vec<String> {
    match generator {
        Generator::RailsSecrets(r) => vec![r.key.clone()],
        other => units_of(other, &mut Vec::new())
            .into_iter()
            .flat_map(|unit| unit.keys)
            .collect(),
    }
}

/// The units of one generator; a railsSecrets generator is also recorded in `rails`.
fn units_of<'e>(generator: &'e Generator, rails: &mut Vec<&'e RailsSecrets>) -> Vec<Unit<'e>> {
    let single = |key: &str, source| {
        vec![Unit {
            name: key.to_owned(),
            keys: vec![key.to_owned()],
            source,
        }]
    };
    match generator {
        Generator::Random(r) => single(&r.key, Source::Random(r)),
        Generator::Bytes(b) => single(&b.key, Source::Bytes(b)),
        Generator::Static(s) => single(&s.key, Source::Static(s)),
        Generator::Rsa(r) => single(&r.key, Source::Rsa(r)),
        Generator::X509(x) => vec![Unit {
            name: format!("{}+{}", x.cert_key, x.key_key),
            keys: vec![x.cert_key.clone(), x.key_key.clone()],
            source: Source::X509(x),
        }],
        Generator::SshHostKeys(_) => HostKey::ALL
            .iter()
            .map(|&kind| Unit {
                name: kind.private_file().to_owned(),
                keys: vec![kind.private_file().to_owned(), kind.public_file()],
                source: Source::HostKey(kind),
            })
            .collect(),
        Generator::RailsSecrets(r) => {
            rails.push(r);
            let index = rails.len() - 1;
            r.fields
                .iter()
                .map(|field| Unit {
                    name: format!("{}:{}.{}", r.key, r.env, field.path),
                    keys: vec![r.key.clone()],
                    source: Source::RailsField {
                        generator: index,
                        field,
                    },
                })
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(json: &str) -> Vec<SecretEntry> {
        crate::entries::decode_secret_entries(json).expect("decodes")
    }

    #[test]
    fn each_generator_declares_its_units() {
        let entries = entries(
            r#"[{"name":"s","generators":[
                {"type":"random","key":"r","charset":"hex","length":4},
                {"type":"static","key":"t","value":""},
                {"type":"x509","commonName":"c","bits":2048,"days":1,"certKey":"c.crt","keyKey":"c.key"},
                {"type":"sshHostKeys"}
            ]},{"name":"s","generators":[
                {"type":"railsSecrets","env":"production","fields":[
                    {"path":"a","shape":"scalar","charset":"hex","length":4},
                    {"path":"b","shape":"pem","bits":2048}]}
            ]}]"#,
        );
        let declaration = declare("s", &entries).expect("declares");
        assert_eq!(declaration.secret_type, "Opaque");
        let names: Vec<&str> = declaration.units.iter().map(|u| u.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "r",
                "t",
                "c.crt+c.key",
                "ssh_host_rsa_key",
                "ssh_host_ecdsa_key",
                "ssh_host_ed25519_key",
                "secrets.yml:production.a",
                "secrets.yml:production.b"
            ]
        );
        assert_eq!(
            declaration.data_bearing_units().len(),
            7,
            "static is not data-bearing"
        );
        assert_eq!(
            declaration.units[3].keys,
            ["ssh_host_rsa_key", "ssh_host_rsa_key.pub"]
        );
    }

    #[test]
    fn the_same_generator_declared_twice_is_declared_once() {
        let entries = entries(
            r#"[{"name":"s","generators":[{"type":"static","key":"a","value":"x"}]},
                {"name":"s","generators":[{"type":"static","key":"a","value":"x"}]}]"#,
        );
        assert_eq!(declare("s", &entries).expect("declares").units.len(), 1);
    }

    #[test]
    fn invalid_declarations_are_refused() {
        let cases = [
            ("no entries", "s", "[]"),
            (
                "another Secret",
                "s",
                r#"[{"name":"t","generators":[{"type":"static","key":"a"}]}]"#,
            ),
            (
                "conflicting types",
                "s",
                r#"[{"name":"s","generators":[{"type":"static","key":"a"}]},
                    {"name":"s","type":"kubernetes.io/tls","generators":[{"type":"static","key":"b"}]}]"#,
            ),
            ("no generators", "s", r#"[{"name":"s","generators":[]}]"#),
            (
                "railsSecrets not alone",
                "s",
                r#"[{"name":"s","generators":[{"type":"static","key":"a"},
                    {"type":"railsSecrets","env":"p","fields":[]}]}]"#,
            ),
            (
                "one key, two generators",
                "s",
                r#"[{"name":"s","generators":[{"type":"static","key":"a","value":"1"},
                    {"type":"static","key":"a","value":"2"}]}]"#,
            ),
            (
                "a host key file declared by another generator",
                "s",
                r#"[{"name":"s","generators":[{"type":"sshHostKeys"},
                    {"type":"static","key":"ssh_host_rsa_key.pub"}]}]"#,
            ),
            (
                "secrets.yml declared by two railsSecrets generators",
                "s",
                r#"[{"name":"s","generators":[{"type":"railsSecrets","env":"p","fields":[]}]},
                    {"name":"s","generators":[{"type":"railsSecrets","env":"q","fields":[]}]}]"#,
            ),
        ];
        for (name, secret, json) in cases {
            assert!(declare(secret, &entries(json)).is_err(), "{name}");
        }
    }
}
