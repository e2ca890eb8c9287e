//! The contract check: does a component speak the WIT packages this host serves?
//!
//! The host serves two packages, each with its own version: the platform's
//! `wasm-operator:plugin` (types, cluster, client, egress, logging, crypto, reconciler,
//! extensions) and the
//! GitLabSecrets planner's `gitlab:secretgen` (planner). A reconciler exports
//! `wasm-operator:plugin/reconciler@X.Y.Z`; a planner exports
//! `gitlab:secretgen/planner@X.Y.Z`; a planning reconciler is a reconciler that also imports
//! `gitlab:secretgen/planner@X.Y.Z`. For each package the host serves the same major version
//! as its own (a minor version only adds); any other is refused with both versions named.
//! Imports must be WASI or interfaces of these packages — anything else could never be
//! linked.

use wasmtime::Engine;
use wasmtime::component::Component;

use crate::bindings::{CONTRACT_PACKAGE, CONTRACT_VERSION, PLANNER_PACKAGE, PLANNER_VERSION};

/// What kind of plugin a component is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginKind {
    /// Exports `wasm-operator:plugin/reconciler`.
    Reconciler,
    /// Exports `gitlab:secretgen/planner`.
    Planner,
}

impl PluginKind {
    /// The WIT package of the interface a plugin of this kind exports: the package whose
    /// version is the plugin's contract version.
    pub fn package(self) -> &'static str {
        match self {
            PluginKind::Reconciler => CONTRACT_PACKAGE,
            PluginKind::Planner => PLANNER_PACKAGE,
        }
    }
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
    /// The version of the package the plugin exports from ([`PluginKind::package`]).
    pub version: semver::Version,
    /// Whether it imports the planner (and must be linked to a planner plugin).
    pub imports_planner: bool,
}

/// Why a component does not fit the contract.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContractError {
    /// It exports neither interface of a plugin.
    #[error("exports neither {CONTRACT_PACKAGE}/reconciler nor {PLANNER_PACKAGE}/planner (it exports: {})", list(.exports))]
    NotAPlugin { exports: Vec<String> },
    /// It speaks another major version of the platform package.
    #[error(
        "is built against contract {found}, but this host speaks {CONTRACT_PACKAGE}@{CONTRACT_VERSION} (major versions differ)"
    )]
    OtherMajor { found: semver::Version },
    /// It speaks another major version of the planner package.
    #[error(
        "is built against contract {found}, but this host speaks {PLANNER_PACKAGE}@{PLANNER_VERSION} (major versions differ)"
    )]
    OtherPlannerMajor { found: semver::Version },
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

/// A WIT package the host serves, and the interfaces a plugin may import from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Package {
    /// `wasm-operator:plugin`.
    Platform,
    /// `gitlab:secretgen`.
    Planner,
}

impl Package {
    fn name(self) -> &'static str {
        match self {
            Package::Platform => CONTRACT_PACKAGE,
            Package::Planner => PLANNER_PACKAGE,
        }
    }

    /// The version of the package this host speaks.
    fn host_version(self) -> semver::Version {
        let version = match self {
            Package::Platform => CONTRACT_VERSION,
            Package::Planner => PLANNER_VERSION,
        };
        semver::Version::parse(version).unwrap_or_else(|_| semver::Version::new(1, 0, 0))
    }

    /// The interfaces of the package a plugin may import.
    fn imports(self) -> &'static [&'static str] {
        match self {
            Package::Platform => &[
                "types", "cluster", "client", "egress", "logging", "crypto", "targets",
            ],
            Package::Planner => &["planner"],
        }
    }

    /// The refusal of `found`, a major version other than the host's.
    fn other_major(self, found: semver::Version) -> ContractError {
        match self {
            Package::Platform => ContractError::OtherMajor { found },
            Package::Planner => ContractError::OtherPlannerMajor { found },
        }
    }
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
        for (package, interface, kind) in [
            (Package::Platform, "reconciler", PluginKind::Reconciler),
            (Package::Planner, "planner", PluginKind::Planner),
        ] {
            if let Some(version) = interface_version(name, package.name(), interface) {
                found = Some((
                    package,
                    kind,
                    version.map_err(|()| ContractError::Unversioned { name: name.clone() })?,
                ));
            }
        }
    }
    let Some((package, kind, version)) = found else {
        return Err(ContractError::NotAPlugin { exports });
    };
    if version.major != package.host_version().major {
        return Err(package.other_major(version));
    }
    let mut imports_planner = false;
    for (name, _) in ty.imports(engine) {
        if name.starts_with("wasi:") {
            continue;
        }
        let ours = [Package::Platform, Package::Planner]
            .into_iter()
            .flat_map(|p| p.imports().iter().map(move |&i| (p, i)))
            .find_map(|(p, i)| interface_version(name, p.name(), i).map(|v| (p, i, v)));
        match ours {
            Some((package, interface, Ok(v))) if v.major == package.host_version().major => {
                imports_planner |= package == Package::Planner && interface == "planner";
            }
            Some((package, _, Ok(v))) => return Err(package.other_major(v)),
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

/// For `<package>/<interface>@<version>`: `Some(Ok(version))`; `Some(Err(()))` when the
/// version is missing or unreadable; `None` for any other name.
fn interface_version(
    name: &str,
    package: &str,
    interface: &str,
) -> Option<Result<semver::Version, ()>> {
    let rest = name
        .strip_prefix(package)?
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
            interface_version(
                "wasm-operator:plugin/reconciler@1.2.3",
                CONTRACT_PACKAGE,
                "reconciler"
            ),
            Some(Ok(semver::Version::new(1, 2, 3)))
        );
        assert_eq!(
            interface_version(
                "wasm-operator:plugin/reconciler",
                CONTRACT_PACKAGE,
                "reconciler"
            ),
            Some(Err(()))
        );
        assert_eq!(
            interface_version(
                "gitlab:secretgen/planner@1.0.0",
                CONTRACT_PACKAGE,
                "reconciler"
            ),
            None
        );
        assert_eq!(
            interface_version("wasi:cli/run@0.2.0", CONTRACT_PACKAGE, "reconciler"),
            None
        );
    }

    #[test]
    fn the_planner_is_named_by_its_own_package_only() {
        assert_eq!(
            interface_version("gitlab:secretgen/planner@1.4.0", PLANNER_PACKAGE, "planner"),
            Some(Ok(semver::Version::new(1, 4, 0)))
        );
        assert_eq!(
            interface_version("gitlab:secretgen/planner", PLANNER_PACKAGE, "planner"),
            Some(Err(()))
        );
        // The planner no longer lives in the platform package.
        assert_eq!(
            interface_version(
                "wasm-operator:plugin/planner@1.0.0",
                PLANNER_PACKAGE,
                "planner"
            ),
            None
        );
        assert!(!Package::Platform.imports().contains(&"planner"));
        assert_eq!(Package::Planner.imports(), ["planner"]);
    }

    #[test]
    fn each_package_is_refused_with_its_own_served_version() {
        assert_eq!(Package::Platform.host_version().major, 1);
        assert_eq!(Package::Planner.host_version().major, 1);
        let found = semver::Version::new(2, 0, 0);
        assert_eq!(
            Package::Platform.other_major(found.clone()).to_string(),
            "is built against contract 2.0.0, but this host speaks wasm-operator:plugin@1.4.0 (major versions differ)"
        );
        assert_eq!(
            Package::Planner.other_major(found).to_string(),
            "is built against contract 2.0.0, but this host speaks gitlab:secretgen@1.0.0 (major versions differ)"
        );
        assert_eq!(
            ContractError::NotAPlugin { exports: vec![] }.to_string(),
            "exports neither wasm-operator:plugin/reconciler nor gitlab:secretgen/planner (it exports: nothing)"
        );
    }
}
