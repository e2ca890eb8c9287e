//! CRD structural schemas: the checks kube-apiserver makes on a CRD's
//! `openAPIV3Schema`, and the pruning, defaulting and validation it applies
//! to custom resources, as pure functions over [`serde_json::Value`].
//!
//! # What it provides
//!
//! * [`check_structural`]: the 422 errors for a non-structural or otherwise
//!   refused schema, with paths under the CRD
//!   (`spec.versions[0].schema.openAPIV3Schema.properties[spec].type:
//!   Required value: must not be empty for specified object fields`).
//! * [`prune`]: drops undeclared fields, returns their paths; [`strict_error`]
//!   and [`warnings`] word them for `fieldValidation=Strict|Warn`.
//! * [`apply_defaults`]: non-nullable nulls without default removed, then
//!   `default`s applied, recursively.
//! * [`validate`]: kube-openapi's keyword checks plus
//!   `x-kubernetes-list-type` uniqueness, as [`FieldError`]s whose `Display`
//!   is apimachinery's `field.Error`; [`invalid_message`] and [`causes`]
//!   build the 422 `Status` message and `details.causes`.
//! * [`list_type_at`], [`map_type_at`], [`map_is_atomic`], [`schema_at`]:
//!   list/map semantics for server-side apply.
//!
//! The request pipeline kube runs for a custom resource is
//! `prune` → `apply_defaults` → `validate` (metadata is validated elsewhere).
//!
//! # What it leaves out
//!
//! * `anyOf`, `oneOf` and `not` are ignored when validating objects (`allOf`
//!   is applied). `x-kubernetes-validations` (CEL) are checked and evaluated by
//!   [`cel`].
//! * `uniqueItems` is refused at CRD level, so never checked on objects.
//! * Formats: only `date-time`, `date`, `byte`, `uuid`, `ipv4`, `ipv6` are
//!   checked; kube strips `int32`/`int64`/`float`/`double` and unknown names
//!   (so they never fail), and also checks `hostname`, `email`, `cidr`,
//!   `mac`, `uri`, … which pass unchecked here.
//! * CRD checks not done: validation of `default` values against their
//!   schema (and that they are pruned), the structural completeness rule
//!   (every field named in a value validation also specified outside it),
//!   the status-subresource root restriction,
//!   and Go-exact wording of invalid-regex errors (Rust's message follows).
//! * Ratcheting of unchanged invalid fields on update.
//!
//! # DECISIONs
//!
//! * Wording targets current kube (1.32+): `Too long: may not be more than N
//!   bytes` (length still counted in characters, as kube-openapi does),
//!   `FieldValueTypeInvalid` for type mismatches, `Too many: <actual>: must
//!   have at most N items` for maxItems/maxProperties.
//! * Error order inside one object is deterministic (members by key, then
//!   missing required fields in schema order); kube's is map order.
//! * `pattern` uses Go RE2 semantics for `\d \w \s \b` (ASCII) by rewriting
//!   them before compiling with `regex`.
//! * `additionalProperties: false` is treated as absent by pruning, and
//!   rejects undeclared members in validation (`… is a forbidden property`).

mod cel;
mod defaults;
mod errors;
mod formats;
mod listtypes;
mod node;
mod prune;
mod structural;
mod validate;

pub(crate) use cel::{check_rules, validate as validate_rules};
pub(crate) use defaults::apply_defaults;
pub(crate) use errors::{FieldError, FieldErrorKind, causes, invalid_message};
pub(crate) use listtypes::{ListType, PathElement, is_map_key, list_type_at, map_is_atomic};
pub(crate) use prune::{prune, strict_error, warnings};
pub(crate) use structural::check_structural;
pub(crate) use validate::validate;

#[cfg(test)]
mod gitlab_tests;
