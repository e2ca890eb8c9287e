//! `plan`: what to add to one Secret of spec.secrets.
//!
//! The rules, in the order they are applied (`gitlabsecrets-reconciler.txt`, "Generation";
//! the schema's fill-missing contract):
//!
//! 1. A unit whose keys are all present is complete; an existing key is never changed (the
//!    one exception is `secrets.yml`, whose missing fields are filled in).
//! 2. A unit none of whose keys is present is generated (a static value is written);
//!    this includes a unit that was ready before and whose keys were deleted. A unit with
//!    some of its keys is reported: its parts belong together (a certificate and its key, a
//!    host key and its `.pub`).
//! 3. A Secret that declares more data-bearing units than a status entry holds
//!    ([`MAX_READY_UNITS`]) is reported.
//! 4. An immutable Secret that lacks a key is reported.
//! 5. Without `generate`, a Secret that needs a generated value is reported as such.
//! 6. A Secret whose values would exceed [`MAX_SECRET_BYTES`] is reported.
//! 7. A reported Secret gains nothing. An existing Secret keeps its type (`type_kept` notes
//!    the difference). A Secret is ready when it is not reported; the next readyUnits are
//!    then the declared data-bearing units, and otherwise the readyUnits it had minus those
//!    no longer declared.

use std::time::SystemTime;

use crate::Clock;
use crate::api::{Entry, PlanError, SecretPlan, SecretRequest};
use crate::entries;
use crate::generators::rails::{FieldValue, SecretsYml};
use crate::generators::{self, GenerateError};
use crate::keys::KeySource;
use crate::secret::{self, ExistingSecret, MAX_SECRET_BYTES};
use crate::units::{self, Declaration, Source, Unit};

/// The most readyUnits a status entry holds (the CRD's `maxItems` of
/// `status.secrets[].readyUnits`).
pub const MAX_READY_UNITS: usize = 64;

/// Plans the keys to add to one Secret. Key generation goes through `keys`.
///
/// Errors are for what no state of the Secret could fix (malformed entries or Secret JSON,
/// a failed key generation); everything about the Secret's state is a report in the plan.
pub fn plan(request: &SecretRequest, keys: &dyn KeySource) -> Result<SecretPlan, PlanError> {
    plan_with_clock(request, keys, &SystemTime::now)
}

/// [`plan`] at a given time (the x509 generator's validity starts then).
#[cfg(test)]
pub(crate) fn plan_at(
    request: &SecretRequest,
    keys: &dyn KeySource,
    now: SystemTime,
) -> Result<SecretPlan, PlanError> {
    plan_with_clock(request, keys, &move || now)
}

/// [`plan`] with the time read from `clock`, only when a value that needs it (an x509
/// certificate) is generated: a plan that generates nothing reads nothing but its request.
fn plan_with_clock(
    request: &SecretRequest,
    keys: &dyn KeySource,
    clock: Clock<'_>,
) -> Result<SecretPlan, PlanError> {
    let fail = |cause: crate::api::PlanFailure| PlanError {
        subject: request.name.clone(),
        cause,
    };
    let entries = entries::decode_secret_entries(&request.entries).map_err(|e| fail(e.into()))?;
    let declaration = units::declare(&request.name, &entries).map_err(|e| fail(e.into()))?;
    let existing =
        ExistingSecret::from_optional(request.existing.as_deref()).map_err(|e| fail(e.into()))?;
    let (secret_type, type_kept) =
        secret::planned_type(existing.as_ref(), &declaration.secret_type);
    let declared_units = declaration.data_bearing_units();

    let mut reports = Vec::new();
    if declared_units.len() > MAX_READY_UNITS {
        reports.push(format!(
            "declares {} data-bearing units, more than the {MAX_READY_UNITS} a status entry holds",
            declared_units.len()
        ));
    }
    let needs = Needs::of(&declaration, existing.as_ref(), &mut reports);

    let missing_keys = needs.missing_keys(&declaration);
    if existing.as_ref().is_some_and(|s| s.immutable) && !missing_keys.is_empty() {
        reports.push(format!(
            "is immutable and lacks {}",
            missing_keys.join(", ")
        ));
    }
    let to_generate = needs.generated_units(&declaration);
    if !request.generate && !to_generate.is_empty() {
        reports.push(format!("needs generating: {}", to_generate.join(", ")));
    }

    // Large values are known to be too large before they are generated.
    let predicted = existing.as_ref().map_or(0, ExistingSecret::size)
        + needs
            .units
            .iter()
            .map(|&i| declaration.units[i].predicted_size())
            .sum::<usize>();
    if predicted > MAX_SECRET_BYTES {
        reports.push(too_large(predicted));
    }

    let mut add = Vec::new();
    if reports.is_empty() {
        add = generate(&declaration, &needs, keys, clock).map_err(|e| fail(e.into()))?;
        let size = secret::size_after(existing.as_ref(), &add);
        if size > MAX_SECRET_BYTES {
            reports.push(too_large(size));
            add.clear();
        }
    }

    let ready = reports.is_empty();
    let next_ready_units = if ready {
        declared_units.clone()
    } else {
        request
            .ready_units
            .iter()
            .filter(|u| declared_units.contains(u))
            .cloned()
            .collect()
    };
    Ok(SecretPlan {
        name: request.name.clone(),
        secret_type,
        add,
        reports: reports
            .into_iter()
            .map(|r| format!("Secret {}: {r}", request.name))
            .collect(),
        declared_units,
        next_ready_units,
        type_kept,
        ready,
    })
}

/// What a Secret lacks.
struct Needs {
    /// Indexes of the (non-rails) units none of whose keys is present.
    units: Vec<usize>,
    /// Per railsSecrets generator: the document and the indexes of its missing fields.
    rails: Vec<Option<(SecretsYml, Vec<usize>)>>,
}

impl Needs {
    /// Finds what `existing` lacks; partial units and unreadable documents are reported.
    fn of(
        declaration: &Declaration<'_>,
        existing: Option<&ExistingSecret>,
        reports: &mut Vec<String>,
    ) -> Self {
        let has = |key: &str| existing.is_some_and(|s| s.has(key));
        let mut units = Vec::new();
        for (index, unit) in declaration.units.iter().enumerate() {
            if matches!(unit.source, Source::RailsField { .. }) {
                continue;
            }
            let (present, absent): (Vec<&String>, Vec<&String>) =
                unit.keys.iter().partition(|k| has(k));
            if present.is_empty() {
                units.push(index);
            } else if !absent.is_empty() {
                reports.push(format!(
                    "unit {} holds {} but lacks {}; restore or delete its keys",
                    unit.name,
                    join(&present),
                    join(&absent)
                ));
            }
        }
        let rails = declaration
            .rails
            .iter()
            .map(|generator| {
                let value = existing.and_then(|s| s.get(&generator.key));
                let read = SecretsYml::read(value).and_then(|yml| {
                    let missing = yml.missing(generator)?;
                    Ok((yml, missing))
                });
                match read {
                    Ok((_, missing)) if missing.is_empty() => None,
                    Ok((yml, missing)) => {
                        let indexes = missing
                            .iter()
                            .filter_map(|m| {
                                generator.fields.iter().position(|f| std::ptr::eq(f, *m))
                            })
                            .collect();
                        Some((yml, indexes))
                    }
                    Err(e) => {
                        reports.push(format!("key {}: {e}", generator.key));
                        None
                    }
                }
            })
            .collect();
        Self { units, rails }
    }

    /// The keys that would be added, in declaration order.
    fn missing_keys(&self, declaration: &Declaration<'_>) -> Vec<String> {
        let mut keys: Vec<String> = self
            .units
            .iter()
            .flat_map(|&i| declaration.units[i].keys.clone())
            .collect();
        for (generator, needs) in declaration.rails.iter().zip(&self.rails) {
            if needs.is_some() {
                keys.push(format!("fields of {}", generator.key));
            }
        }
        keys
    }

    /// The data-bearing units that would be generated.
    fn generated_units(&self, declaration: &Declaration<'_>) -> Vec<String> {
        let mut names: Vec<String> = self
            .units
            .iter()
            .map(|&i| &declaration.units[i])
            .filter(|u| u.data_bearing())
            .map(|u| u.name.clone())
            .collect();
        for unit in &declaration.units {
            if let Source::RailsField { generator, field } = unit.source
                && let Some((_, fields)) = &self.rails[generator]
                && fields
                    .iter()
                    .any(|&i| std::ptr::eq(&declaration.rails[generator].fields[i], field))
            {
                names.push(unit.name.clone());
            }
        }
        names
    }
}

fn too_large(size: usize) -> String {
    format!("would hold {size} bytes, more than the {MAX_SECRET_BYTES} the API server stores")
}

fn join(keys: &[&String]) -> String {
    keys.iter()
        .map(|k| k.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Generates every needed value, in declaration order.
fn generate(
    declaration: &Declaration<'_>,
    needs: &Needs,
    keys: &dyn KeySource,
    clock: Clock<'_>,
) -> Result<Vec<Entry>, GenerateError> {
    let mut add = Vec::new();
    let mut rails = needs.rails.iter().map(|n| n.as_ref()).collect::<Vec<_>>();
    for (index, unit) in declaration.units.iter().enumerate() {
        if let Source::RailsField { generator, .. } = unit.source {
            // A generator's document is written once, where its first field is declared.
            if let Some((yml, fields)) = rails[generator].take() {
                let rails_generator = declaration.rails[generator];
                let mut values = Vec::new();
                for &i in fields {
                    let field = &rails_generator.fields[i];
                    values.push((field, generators::rails::generate_field(keys, field)?));
                }
                add.push(Entry {
                    key: rails_generator.key.clone(),
                    value: fill(yml, rails_generator, values)?,
                });
            }
        } else if needs.units.contains(&index) {
            add.extend(generate_unit(unit, keys, clock)?);
        }
    }
    Ok(add)
}

/// Fills a secrets.yml; a document that cannot be rewritten was found by `missing` already,
/// so this failing means the rewrite would not read back the same.
fn fill(
    yml: &SecretsYml,
    generator: &crate::entries::RailsSecrets,
    values: Vec<(&crate::entries::RailsField, FieldValue)>,
) -> Result<Vec<u8>, GenerateError> {
    yml.clone()
        .fill(generator, values)
        .map(String::into_bytes)
        .map_err(|e| GenerateError::encode("secrets.yml", e))
}

/// Generates the keys of one unit.
fn generate_unit(
    unit: &Unit<'_>,
    keys: &dyn KeySource,
    clock: Clock<'_>,
) -> Result<Vec<Entry>, GenerateError> {
    let entry = |key: &str, value: Vec<u8>| Entry {
        key: key.to_owned(),
        value,
    };
    Ok(match unit.source {
        Source::Random(r) => vec![entry(&r.key, generators::random::generate(r))],
        Source::Bytes(b) => vec![entry(&b.key, generators::bytes::generate(b))],
        Source::Static(s) => vec![entry(&s.key, s.value.clone().into_bytes())],
        Source::Rsa(r) => vec![entry(
            &r.key,
            generators::rsa::generate(keys, r.bits)?.into_bytes(),
        )],
        Source::X509(x) => {
            let issued = generators::x509::generate(keys, x, clock())?;
            vec![
                entry(&x.cert_key, issued.certificate.into_bytes()),
                entry(&x.key_key, issued.key.into_bytes()),
            ]
        }
        Source::HostKey(kind) => {
            let files = generators::ssh::generate(keys, kind)?;
            vec![
                entry(kind.private_file(), files.private.into_bytes()),
                entry(&kind.public_file(), files.public.into_bytes()),
            ]
        }
        Source::RailsField { .. } => Vec::new(),
    })
}

#[cfg(test)]
mod tests;
