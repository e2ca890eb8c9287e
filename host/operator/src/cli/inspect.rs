//! `wasm-operator plugin inspect FILE`: what a plugin describes, and its sha256.

use std::fmt::Write as _;

use wasm_operator_types::Mapping;

use wasm_operator_runtime::{Plugin, PluginKind};

/// The human-readable description of a loaded plugin.
pub fn render(plugin: &Plugin) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(out, "file:      {}", plugin.path().display());
    let _ = writeln!(out, "sha256:    {}", plugin.sha256());
    let _ = writeln!(out, "kind:      {}", plugin.kind());
    let _ = writeln!(
        out,
        "contract:  {}@{}",
        plugin.kind().package(),
        plugin.contract()
    );
    let Some(d) = plugin.description() else {
        if plugin.kind() == PluginKind::Planner {
            let _ = writeln!(out, "name:      {}", plugin.name());
            let _ = writeln!(out, "exports:   planner (plan, plan-certificates)");
        }
        return out;
    };
    let _ = writeln!(out, "name:      {}", d.name);
    let _ = writeln!(out, "version:   {}", d.version);
    let _ = writeln!(out, "manager:   {}", d.field_manager);
    let predicates: Vec<String> = d
        .primary_predicates
        .iter()
        .map(|p| format!("{p:?}"))
        .collect();
    let _ = writeln!(
        out,
        "primary:   {} ({}){}",
        d.primary,
        d.primary.plural,
        if predicates.is_empty() {
            ", on every change".to_owned()
        } else {
            format!(", on {}", predicates.join(" or "))
        }
    );
    if let Some(selector) = &d.primary_selector {
        let _ = writeln!(out, "selector:  {selector} (only the primaries it matches)");
    }
    for w in &d.watches {
        let mapping = match &w.mapping {
            Mapping::Owner => "owner reference".to_owned(),
            Mapping::FieldIndex(name) => format!("field index {name}"),
            Mapping::Label(label) => format!("label {label}"),
            Mapping::Reference(path) => format!("reference {path}"),
            Mapping::Via { kind, index } => format!("{kind} (field index {index})"),
        };
        let optional = if w.optional { " (optional)" } else { "" };
        let _ = writeln!(out, "watches:   {} via {mapping}{optional}", w.kind);
    }
    for i in &d.indexes {
        let _ = writeln!(out, "index:     {}: {}", i.name, i.description);
    }
    for i in &d.watched_indexes {
        let _ = writeln!(
            out,
            "index:     {} on {}: {}",
            i.index.name, i.kind, i.index.description
        );
    }
    for e in &d.egress {
        let _ = writeln!(out, "egress:    {e}");
    }
    for p in &d.permissions {
        let verbs: Vec<&str> = p.verbs.iter().map(|v| v.as_str()).collect();
        let _ = writeln!(
            out,
            "verbs:     {} ({}): {}",
            p.kind,
            p.kind.plural,
            verbs.join(", ")
        );
    }
    for sub in &d.subresources {
        let verbs: Vec<&str> = sub.verbs.iter().map(|v| v.as_str()).collect();
        let _ = writeln!(
            out,
            "subres:    {} ({}/{}): {}",
            sub.kind,
            sub.kind.plural,
            sub.subresource,
            verbs.join(", ")
        );
    }
    out
}
