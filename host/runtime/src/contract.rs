//! The contract check: does a component speak this host's `wasm-operator:plugin`?
//!
//! A plugin exports `wasm-operator:plugin/reconciler@X.Y.Z` or
//! `wasm-operator:plugin/planner@X.Y.Z`. The host serves the same major version as its own
//! (a minor version only adds); any other is refused with both versions named. Imports must
//! be WASI or this package's interfaces — anything else could never be linked.

use wasmtime::Engine;
use wasmtime::component::Component;

use crate::bindings::{CONTRACT_PACKAGE, CONTRACT_VERSION};

/// What kind of plugin a component is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginKind {
    /// Exports `reconciler`.
    Reconciler,
    /// Exports `planner`.
    Planner,
}

impl std::fmt::Display for PluginKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PluginKind::Reconciler => "reconciler",
            PluginKind::Planner => "planner",
        })
    }
}

/// What the contract check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Contract {
    pub kind: PluginKind,
    /// The contract version the plugin was built against.
    pub version: semver::Version,
    /// Whether it imports the planner (and must be linked to a planner plugin).
    pub imports_planner: bool,
}

/// Why a component does not fit the contract.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContractError {
    /// It exports neither interface of a plugin.
    #[error("exports neither {CONTRACT_PACKAGE}/reconciler nor {CONTRACT_PACKAGE}/planner (it exports: {})", list(.exports))]
    NotAPlugin { exports: Vec<String> },
    /// It speaks another major version.
    #[error(
        "is built against contract {found}, but this host speaks {CONTRACT_PACKAGE}@{CONTRACT_VERSION} (major versions differ)"
    )]
    OtherMajor { found: semver::Version },
    /// Its interface name carries no readable version.
    #[error("names the contract as {name:?}, which carries no semver version")]
    Unversioned { name: String },
    /// It imports something the host does not provide.
    #[error("imports {name}, which this host does not provide")]
    UnknownImport { name: String },
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "nothing".to_owned()
    } else {
        items.join(", ")
    }
}

/// The contract version of this host.
pub(crate) fn host_version() -> semver::Version {
    semver::Version::parse(CONTRACT_VERSION).unwrap_or_else(|_| semver::Version::new(1, 0, 0))
}

/// Checks `component`'s exports and imports against the contract.
pub(crate) fn check(engine: &Engine, component: &Component) -> Result<Contract, ContractError> {
    let ty = component.component_type();
    let exports: Vec<String> = ty
        .exports(engine)
        .map(|(name, _)| name.to_owned())
        .collect();
    let mut found = None;
    for name in &exports {
        for (interface, kind) in [
            ("reconciler", PluginKind::Reconciler),
            ("planner", PluginKind::Planner),
        ] {
            if let Some(version) = interface_version(name, interface) {
                found = Some((
                    kind,
                    version.map_err(|()| ContractError::Unversioned { name: name.clone() })?,
                ));
            }
        }
    }
    let Some((kind, version)) = found else {
        return Err(ContractError::NotAPlugin { exports });
    };
    if version.major != host_version().major {
        return Err(ContractError::OtherMajor { found: version });
    }
    let mut imports_planner = false;
    for (name, _) in ty.imports(engine) {
        if name.starts_with("wasi:") {
            continue;
        }
        let ours = ["types", "cluster", "logging", "crypto", "planner"]
            .into_iter()
            .find_map(|i| interface_version(name, i).map(|v| (i, v)));
        match ours {
            Some((interface, Ok(v))) if v.major == version.major => {
                imports_planner |= interface == "planner"
            }
            Some((_, Ok(v))) => return Err(ContractError::OtherMajor { found: v }),
            _ => {
                return Err(ContractError::UnknownImport {
                    name: name.to_owned(),
                });
            }
        }
    }
    Ok(Contract {
        kind,
        version,
        imports_planner,
    })
}

/// For `wasm-operator:plugin/<interface>@<version>`: `Some(Ok(version))`; `Some(Err(()))`
/// when the version is missing or unreadable; `None` for any other name.
fn interface_version(name: &str, interface: &str) -> Option<Result<semver::Version, ()>> {
    let rest = name
        .strip_prefix(CONTRACT_PACKAGE)?
        .strip_prefix('/')?
        .strip_prefix(interface)?;
    match rest.strip_prefix('@') {
        Some(v) => Some(semver::Version::parse(v).map_err(|_| ())),
        None if rest.is_empty() => Some(Err(())),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interface_name_yields_its_version() {
        assert_eq!(
            interface_version("wasm-operator:plugin/reconciler@1.2.3", "reconciler"),
            Some(Ok(semver::Version::new(1, 2, 3)))
        );
        assert_eq!(
            interface_version("wasm-operator:plugin/reconciler", "reconciler"),
            Some(Err(()))
        );
        assert_eq!(
            interface_version("wasm-operator:plugin/planner@1.0.0", "reconciler"),
            None
        );
        assert_eq!(interface_version("wasi:cli/run@0.2.0", "reconciler"), None);
    }
}
