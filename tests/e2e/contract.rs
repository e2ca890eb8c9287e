//! The contract check on real component files: a plugin built against another major
//! version, a component of another world, and files that are not components at all are
//! refused with one error naming the file and the reason.

use std::path::{Path, PathBuf};

use wasm_operator_e2e::runtime_with_cache;
use wasm_operator_runtime::LoadError;
use wasm_operator_runtime::contract::ContractError;

/// The host's WIT, as the guests are built against it.
fn host_wit() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit/plugin.wit");
    std::fs::read_to_string(&path).expect("wit/plugin.wit")
}

/// A component of `world` in `wit` whose functions trap if called — enough for load-time
/// checks, which never call it.
fn component_for(wit: &str, world: &str) -> Vec<u8> {
    let mut resolve = wit_parser::Resolve::default();
    let package = resolve.push_str("plugin.wit", wit).expect("the WIT parses");
    let world = resolve
        .select_world(&[package], Some(world))
        .expect("the world exists");
    let mut module =
        wit_component::dummy_module(&resolve, world, wit_parser::ManglingAndAbi::Standard32);
    wit_component::embed_component_metadata(
        &mut module,
        &resolve,
        world,
        wit_component::StringEncoding::UTF8,
    )
    .expect("metadata embeds");
    wit_component::ComponentEncoder::default()
        .module(&module)
        .expect("the module encodes")
        .validate(true)
        .encode()
        .expect("the component encodes")
}

fn write(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("write");
    path
}

#[tokio::test]
async fn a_plugin_built_against_another_major_contract_version_is_refused_naming_both_versions() {
    let (cache, files) = (
        tempfile::tempdir().expect("tempdir"),
        tempfile::tempdir().expect("tempdir"),
    );
    let wit = host_wit().replace("wasm-operator:plugin@1.4.0", "wasm-operator:plugin@2.0.0");
    let path = write(&files, "v2.wasm", &component_for(&wit, "reconciler-plugin"));

    let err = runtime_with_cache(&cache)
        .load(&path, None)
        .await
        .err()
        .expect("refused");

    assert!(
        matches!(&err, LoadError::Contract { source: ContractError::OtherMajor { found }, .. } if found.major == 2),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{}: is built against contract 2.0.0, but this host speaks wasm-operator:plugin@1.4.0 (major versions differ)",
            path.display()
        )
    );
}

#[tokio::test]
async fn a_component_of_another_world_is_refused_naming_its_exports() {
    let (cache, files) = (
        tempfile::tempdir().expect("tempdir"),
        tempfile::tempdir().expect("tempdir"),
    );
    let wit = "package test:other@1.0.0;\ninterface greet { hello: func() -> string; }\nworld other { export greet; }\n";
    let path = write(&files, "other.wasm", &component_for(wit, "other"));

    let err = runtime_with_cache(&cache)
        .load(&path, None)
        .await
        .err()
        .expect("refused");

    assert_eq!(
        err.to_string(),
        format!(
            "{}: exports neither wasm-operator:plugin/reconciler nor gitlab:secretgen/planner (it exports: test:other/greet@1.0.0)",
            path.display()
        )
    );
}

#[tokio::test]
async fn a_plugin_of_the_same_major_version_passes_the_contract_check() {
    let (cache, files) = (
        tempfile::tempdir().expect("tempdir"),
        tempfile::tempdir().expect("tempdir"),
    );
    let path = write(
        &files,
        "same.wasm",
        &component_for(&host_wit(), "reconciler-plugin"),
    );

    let err = runtime_with_cache(&cache)
        .load(&path, None)
        .await
        .err()
        .expect("its describe() traps");

    // The contract and link checks pass; the dummy's describe() is `unreachable`.
    assert!(matches!(err, LoadError::Describe { .. }), "{err:?}");
}

#[tokio::test]
async fn files_that_are_not_components_are_refused_with_the_reason() {
    let (cache, files) = (
        tempfile::tempdir().expect("tempdir"),
        tempfile::tempdir().expect("tempdir"),
    );
    let runtime = runtime_with_cache(&cache);
    let text = write(&files, "notes.wasm", b"not wasm at all");
    let core = write(&files, "core.wasm", &[0, b'a', b's', b'm', 1, 0, 0, 0]);
    let missing = files.path().join("missing.wasm");

    let cases = [
        (
            text.clone(),
            format!("{}: not a WebAssembly file", text.display()),
        ),
        (
            core.clone(),
            format!(
                "{}: a core WebAssembly module, not a component (build for wasm32-wasip2)",
                core.display()
            ),
        ),
    ];
    for (path, expected) in cases {
        let err = runtime.load(&path, None).await.err().expect("refused");
        assert_eq!(err.to_string(), expected);
    }
    let err = runtime.load(&missing, None).await.err().expect("refused");
    assert!(
        err.to_string()
            .starts_with(&format!("{}: cannot read:", missing.display())),
        "{err}"
    );
}

/// The fixture as it was built against an earlier minor version, never rebuilt:
/// `tests/fixtures/contract-1.0/` from the fixture's source at commit 943e2b3 (it imports
/// `cluster@1.0.0` and exports only `reconciler@1.0.0`), `tests/fixtures/contract-1.1/` at
/// commit 7220ddd (it imports `client@1.1.0` and exports `extensions@1.1.0`, no `admission`),
/// `tests/fixtures/contract-1.2/` at commit cea2891 (it exports `admission@1.2.0`, imports no
/// `targets` and exports no `targeting`), `tests/fixtures/contract-1.3/` at commit d15a61b
/// (it exports `targeting@1.3.0`, no `selection`).
fn fixture_built_against(version: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
        "fixtures/contract-{version}/fixture-{version}.0.wasm"
    ))
}

#[tokio::test]
async fn plugins_built_against_contracts_1_0_to_1_3_load_and_pass_on_the_1_4_host() {
    use serde_json::json;
    use wasm_operator_e2e::{cluster_with, config_map};
    let cache = tempfile::tempdir().expect("tempdir");
    let runtime = runtime_with_cache(&cache);
    for version in ["1.0", "1.1", "1.2", "1.3"] {
        let plugin = runtime
            .load(&fixture_built_against(version), None)
            .await
            .unwrap_or_else(|e| panic!("the {version} fixture loads on the 1.4 host: {e}"));
        assert_eq!(plugin.contract().to_string(), format!("{version}.0"));
        let description = plugin.description().expect("a reconciler");
        assert_eq!(
            (description.name.as_str(), description.watches.len()),
            ("fixture", 2),
            "its {version} description, watches included, is read as before"
        );
        assert!(
            plugin.admitted().is_empty(),
            "a {version} plugin admits nothing"
        );
        assert_eq!(
            description.primary_selector, None,
            "a {version} plugin is passed every primary"
        );
        let cluster = cluster_with(&[config_map("ns", "a", json!({"k": "v"}), None)]).await;

        plugin
            .reconcile(
                &runtime,
                cluster.backend(),
                &wasm_operator_sdk::Request {
                    namespace: Some("ns".into()),
                    name: "a".into(),
                },
            )
            .await
            .unwrap_or_else(|e| panic!("the {version} plugin's pass succeeds: {e}"));

        let echo = cluster
            .get("v1", "ConfigMap", "ns", "a-echo")
            .await
            .expect("the echo exists");
        assert_eq!(
            echo["data"],
            json!({"k": "v", "served-by": "0.1.0"}),
            "{version}"
        );
    }
}
