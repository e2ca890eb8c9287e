//! Server-side apply and `metadata.managedFields`, as pure functions over
//! `serde_json::Value`, with the semantics of structured-merge-diff v4 as
//! kube-apiserver uses it.
//!
//! Provides:
//! - [`FieldSet`] / [`PathElement`]: field paths and sets, parsed from and
//!   written to `fieldsV1` exactly as the server writes them
//!   (`f:`, `k:{..}`, `v:..`, `.`), and [`path_to_string`] for messages;
//! - [`MergeSchema`] with [`DefaultSchema`] (custom resources) and
//!   [`BuiltinSchema`] (strategic-merge keys of built-in kinds);
//! - [`apply`]: merge, conflict detection, force, removal of fields an
//!   applier stops applying, the applier's managedFields entry, and whether
//!   anything changed;
//! - [`update`]: ownership bookkeeping of every other write;
//! - [`ApplyError`] with kube's conflict message and 409 `details.causes`.
//!
//! Left to the caller: resourceVersion preconditions, defaulting,
//! validation, admission, conversion between versions, deciding that a
//! non-apply write is a no-op, and the 409/422 Status bodies (built from
//! [`Conflicts::causes`] and the error's `Display`).
//!
//! DECISIONs:
//! - Versions are not converted: every entry's fields are read against the
//!   object as stored, whatever its `apiVersion`.
//! - Fields a manager never owns: `apiVersion`, `kind`, the `metadata` node
//!   itself, `metadata.{name,namespace,uid,resourceVersion,generation,
//!   creationTimestamp,managedFields,selfLink}`; and `status` on the main
//!   resource when [`MergeSchema::status_is_subresource`]. On the `status`
//!   subresource only `status` is merged and owned; applied values outside
//!   the scope are dropped before merging (the strategy's reset).
//! - Applied sets (like structured-merge-diff's ToFieldSet) hold leaves, empty
//!   objects/lists and list items; non-empty objects are not members. The
//!   engine does not know declared fields from map keys, so it never adds
//!   the `.` kube adds for non-empty objects under `additionalProperties`.
//! - Update sets (like Compare) also own objects, lists and items that
//!   appear (`.`), e.g. `"f:labels":{".":{},"f:a":{}}` on create.
//! - Removal: a path the applier owned by Apply and no longer applies goes
//!   unless it, or something below it, is owned by anyone (the new applied
//!   set included); key fields of a surviving list-map item stay; objects
//!   and lists emptied by a removal go unless owned.
//! - Merged list order follows structured-merge-diff: live-only items keep
//!   their place, shared and new items follow the applied order.
//! - Undecodable managedFields are reset (treated as none), like kube.
//! - managedFields `[{}]` on a non-apply write strips them; `[]` or any
//!   other content is ignored (kube: an empty list does not reset).
//! - The applier's `time` is kept when neither its set nor the object
//!   changed, otherwise it becomes the given time (kube stamps every
//!   applier write that changes the object).

mod error;
mod fieldset;
mod managed;
mod merge;
mod schema;

#[cfg(test)]
mod tests;

pub(crate) use error::ApplyError;
pub(crate) use fieldset::PathElement;
pub(crate) use managed::{apply, update};
pub(crate) use schema::{BuiltinSchema, DefaultSchema, ListType, MergeSchema};
