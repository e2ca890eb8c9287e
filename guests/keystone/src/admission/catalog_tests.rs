#[cfg(not(target_arch = "wasm32"))]
use std::path::Path;
#[cfg(not(target_arch = "wasm32"))]
use std::process::Command;

use super::*;

fn zed() -> Catalog {
    for_release(Release {
        year: 2022,
        minor: 2,
    })
    .expect("reads")
    .expect("embedded")
}

#[test]
fn every_embedded_catalog_reads_and_names_its_release() {
    for (release, _) in CATALOGS {
        let parsed = super::super::release::parse(release).expect("a release name");
        let catalog = for_release(parsed).expect("reads").expect("embedded");
        assert_eq!(catalog.release(), *release);
        assert!(
            catalog.sections.len() > 10,
            "{release}: {} sections",
            catalog.sections.len()
        );
    }
    let missing = Release {
        year: 2010,
        minor: 1,
    };
    assert!(for_release(missing).expect("nothing to read").is_none());
}

#[test]
fn a_catalog_tells_options_deprecated_options_and_unknown_names_apart() {
    let catalog = zed();
    let log_config = ["[DEFAULT] log_config_append".to_owned()];
    let bind_host = [
        "[eventlet_server] admin_bind_host".to_owned(),
        "[eventlet_server] public_bind_host".to_owned(),
    ];
    let sql = ["[database] connection".to_owned()];
    let table: &[(&str, &str, Lookup<'_>)] = &[
        ("DEFAULT", "debug", Lookup::Known),
        ("token", "provider", Lookup::Known),
        ("Token", "provider", Lookup::Known),
        (
            "oslo_middleware",
            "enable_proxy_headers_parsing",
            Lookup::Known,
        ),
        ("cache", "memcache_servers", Lookup::Known),
        ("token", "cache_on_issue", Lookup::DeprecatedForRemoval),
        ("DEFAULT", "log_config", Lookup::DeprecatedName(&log_config)),
        ("DEFAULT", "bind_host", Lookup::DeprecatedName(&bind_host)),
        ("sql", "connection", Lookup::DeprecatedName(&sql)),
        ("DEFAULT", "log-config-append", Lookup::UnknownOption),
        ("token", "Provider", Lookup::UnknownOption),
        ("DEFAULT", "no_such_option", Lookup::UnknownOption),
        ("default", "debug", Lookup::UnknownSection),
        ("no_such_section", "debug", Lookup::UnknownSection),
    ];
    for (section, key, expected) in table {
        assert_eq!(catalog.lookup(section, key), *expected, "[{section}] {key}");
    }
}

#[test]
fn sections_are_keyed_as_oslo_config_reads_them() {
    let table = [
        ("DEFAULT", "DEFAULT"),
        ("default", "default"),
        ("Default", "default"),
        ("token", "token"),
        ("OSLO_Policy", "oslo_policy"),
    ];
    for (section, key) in table {
        assert_eq!(section_key(section), key, "{section}");
    }
}

/// Reruns `catalogs/generate.sh` (oslo-config-generator of the installed python3-keystone)
/// and compares its output with the committed catalog. Without the generator the script,
/// and so this test, fails.
#[cfg(not(target_arch = "wasm32"))]
#[test]
fn the_committed_catalog_is_what_the_generator_makes_of_the_installed_keystone() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = crate_dir.join("catalogs/generate.sh");
    let output = std::env::temp_dir().join(format!(
        "keystone-catalog-{}-{:?}.json",
        std::process::id(),
        std::thread::current().id()
    ));
    let run = Command::new("sh")
        .arg(&script)
        .arg(&output)
        .output()
        .expect("sh runs");
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(
        run.status.success(),
        "{} failed: {stderr}",
        script.display()
    );
    let generated = std::fs::read_to_string(&output).expect("the generated catalog");
    let _ = std::fs::remove_file(&output);
    for (release, committed) in CATALOGS {
        if generated.contains(&format!("\"release\": \"{release}\"")) {
            assert!(
                generated == *committed,
                "catalogs/{release}.json is not what {} makes now; rerun it",
                script.display()
            );
            return;
        }
    }
    panic!("the generator made a catalog of a release none is committed for: {stderr}");
}
