//! CEL validation rules (`x-kubernetes-validations`) of CRD schemas, as kube-apiserver
//! runs them.
//!
//! * When a CRD is written, [`check_rules`] compiles every rule and `messageExpression`
//!   against the schema node it sits on (syntax, undefined fields, undeclared functions,
//!   a bool result), checks `reason`, `message`, `fieldPath`, `optionalOldSelf`, refuses
//!   `oldSelf` where no old value can be found, and refuses rules whose estimated cost is
//!   over the limits ([`cost`]). Errors carry kube's paths and wording.
//! * When a custom resource is written, [`validate`] evaluates the rules of every non-null
//!   value: `self` is the value, `oldSelf` the stored one on an update where it can be
//!   found (object members by name, `x-kubernetes-list-type: map` items by key); a
//!   transition rule is skipped on a create unless `optionalOldSelf` makes `oldSelf` an
//!   optional. A failed rule is `<path>: Invalid value: "<type>": <message>` (or the
//!   `reason`'s kind, at the `fieldPath`), with the `messageExpression`'s text when it
//!   yields one. A value the update did not change is ratcheted: its failures are warnings.
//!
//! # What it leaves out
//!
//! * The runtime cost budget: evaluation is not metered; the estimated cost checked at CRD
//!   time bounds what a rule can do.
//! * `format: date-time`/`duration` strings are strings (kube gives them CEL's
//!   timestamp/duration types); list equality is order-sensitive for `set`/`map` lists.
//! * The Kubernetes libraries listed in [`library`] as not provided.

mod check;
mod cost;
mod crd_check;
mod eval;
mod library;
mod rules;
mod values;

pub(crate) use crd_check::check_rules;
pub(crate) use eval::validate;

#[cfg(test)]
mod tests;
