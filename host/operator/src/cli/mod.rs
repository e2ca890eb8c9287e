//! The subcommands of the `wasm-operator` binary, as library functions (so tests call the
//! same code the binary runs).

pub mod check;
#[cfg(feature = "demo")]
pub mod control_plane;
#[cfg(feature = "demo")]
pub mod demo;
pub mod in_cluster;
pub mod inspect;
#[cfg(feature = "demo")]
pub mod operator_account;
pub mod run;
pub mod scaffold;
#[cfg(feature = "demo")]
pub mod scenario;

use std::path::PathBuf;

/// The CRD of the shipped GitLabSecrets reconciler (`wasm-operator crds`).
pub const GITLABSECRETS_CRD: &str =
    include_str!("../../../../crds/apps.gitlab.com_gitlabsecrets.yaml");

/// Where the plugins shipped with this build were compiled to (by the build script).
pub fn shipped_plugin_dir() -> PathBuf {
    PathBuf::from(env!("WASM_OPERATOR_PLUGIN_DIR"))
}

/// Where the test-only plugins of this build were compiled to (by the build script).
pub fn test_plugin_dir() -> PathBuf {
    PathBuf::from(env!("WASM_OPERATOR_TEST_PLUGIN_DIR"))
}

/// The actors `dev-cluster --actors [NAMES]` names: none without the flag, every one for
/// `all` (the flag alone), else those listed.
#[cfg(feature = "demo")]
pub fn actors(
    names: Option<&[String]>,
) -> Result<Vec<wasm_operator_apiserver::Actor>, wasm_operator_apiserver::UnknownActor> {
    match names {
        None => Ok(Vec::new()),
        Some([all]) if all == "all" => Ok(wasm_operator_apiserver::Actor::ALL.to_vec()),
        Some(names) => names.iter().map(|n| n.trim().parse()).collect(),
    }
}

/// A temporary plugin directory holding copies of `files` (under their own names) and of
/// `config` as its `plugins.toml`: what `demo` and `plugin test` run the operator over.
#[cfg(feature = "demo")]
pub(crate) fn temp_plugin_dir(
    files: &[PathBuf],
    config: Option<&std::path::Path>,
) -> anyhow::Result<tempfile::TempDir> {
    use anyhow::Context as _;
    let dir = tempfile::tempdir().context("a temporary plugin directory")?;
    for file in files {
        let name = file
            .file_name()
            .with_context(|| format!("{} names no file", file.display()))?;
        std::fs::copy(file, dir.path().join(name))
            .with_context(|| format!("cannot copy plugin {}", file.display()))?;
    }
    if let Some(config) = config {
        std::fs::copy(config, dir.path().join("plugins.toml"))
            .with_context(|| format!("cannot copy {}", config.display()))?;
    }
    Ok(dir)
}

/// The `.wasm` files of `dir`, sorted by name.
pub(crate) fn plugin_files(dir: &std::path::Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "wasm"))
        .collect();
    files.sort();
    Ok(files)
}
