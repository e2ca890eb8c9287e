//! The precompiled-artifact cache as an attacker who can write to it sees it: a planted
//! artifact or a symlink is never loaded as native code, the real component runs instead;
//! the cache directory and its files are private to the operator, and a directory others
//! can write to is refused at start.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use wasm_operator_e2e::{fixture_wasm, runtime_with_cache};
use wasm_operator_runtime::{CacheOutcome, Runtime, RuntimeConfig};

fn fixture_next_wasm() -> PathBuf {
    wasm_operator::cli::test_plugin_dir().join("fixture-next.wasm")
}

/// The one file of `dir` (a cache that has stored one artifact).
fn only_file(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the cache directory")
        .map(|e| e.expect("an entry").path())
        .collect();
    assert_eq!(
        files.len(),
        1,
        "one artifact in {}: {files:?}",
        dir.display()
    );
    files.into_iter().next().expect("one file")
}

/// The version the plugin's `describe()` returned.
fn version(plugin: &wasm_operator_runtime::Plugin) -> &str {
    &plugin.description().expect("a reconciler").version
}

/// A cache directory holding the fixture's artifact, and that artifact's path; and a second
/// one holding fixture-next's (the artifact an attacker plants).
async fn fixture_and_next_artifacts() -> (tempfile::TempDir, PathBuf, tempfile::TempDir, PathBuf) {
    let cache = tempfile::tempdir().expect("tempdir");
    let loaded = runtime_with_cache(&cache)
        .load(&fixture_wasm(), None)
        .await
        .expect("the fixture loads");
    assert_eq!(version(&loaded), "0.1.0");
    let looked_up = only_file(cache.path());
    let other = tempfile::tempdir().expect("tempdir");
    let next = runtime_with_cache(&other)
        .load(&fixture_next_wasm(), None)
        .await
        .expect("fixture-next loads");
    assert_eq!(version(&next), "0.2.0");
    let planted = only_file(other.path());
    (cache, looked_up, other, planted)
}

/// Loads the fixture with a fresh runtime over `cache`, and asserts that the real
/// component runs after the one artifact found under its name was refused and recompiled.
async fn loads_the_fixture_refusing_one_artifact(cache: &tempfile::TempDir) {
    let runtime = runtime_with_cache(cache);

    let plugin = runtime
        .load(&fixture_wasm(), None)
        .await
        .expect("the fixture loads");

    assert_eq!(version(&plugin), "0.1.0", "the real component runs");
    assert_eq!(plugin.cache_outcome(), CacheOutcome::Recompiled);
    assert_eq!(runtime.artifacts_rejected(), 1);
}

#[tokio::test]
async fn an_artifact_of_another_component_planted_under_the_looked_up_name_is_not_loaded() {
    let (cache, looked_up, _other, planted) = fixture_and_next_artifacts().await;
    std::fs::copy(&planted, &looked_up).expect("planted");
    loads_the_fixture_refusing_one_artifact(&cache).await;
    let again = runtime_with_cache(&cache)
        .load(&fixture_wasm(), None)
        .await
        .expect("the fixture loads again");
    assert_eq!(
        again.cache_outcome(),
        CacheOutcome::Loaded,
        "the planted file was replaced by the fixture's own artifact"
    );
}

#[tokio::test]
async fn a_symlink_in_place_of_an_artifact_is_not_followed() {
    let (cache, looked_up, _other, planted) = fixture_and_next_artifacts().await;
    let planted_bytes = std::fs::read(&planted).expect("the planted artifact");
    std::fs::remove_file(&looked_up).expect("removed");
    std::os::unix::fs::symlink(&planted, &looked_up).expect("symlinked");
    loads_the_fixture_refusing_one_artifact(&cache).await;
    let replaced = std::fs::symlink_metadata(&looked_up).expect("the artifact");
    assert!(replaced.file_type().is_file(), "the symlink is replaced");
    assert_eq!(
        std::fs::read(&planted).expect("the symlink's target"),
        planted_bytes,
        "the symlink's target is not written through"
    );
}

#[tokio::test]
async fn an_artifact_stored_under_another_key_is_recompiled() {
    let keys = tempfile::tempdir().expect("tempdir");
    let (first, second) = (keys.path().join("first"), keys.path().join("second"));
    std::fs::write(&first, [1u8; 32]).expect("key");
    std::fs::write(&second, [2u8; 32]).expect("key");
    let cache = tempfile::tempdir().expect("tempdir");
    let with_key = |key: &Path| {
        Runtime::new(RuntimeConfig {
            cache_dir: Some(cache.path().to_owned()),
            cache_key_file: Some(key.to_owned()),
            ..RuntimeConfig::default()
        })
        .expect("the runtime starts")
    };
    let mut outcomes = Vec::new();
    for key in [&first, &first, &second] {
        let runtime = with_key(key);
        let plugin = runtime.load(&fixture_wasm(), None).await.expect("loads");
        outcomes.push((plugin.cache_outcome(), runtime.artifacts_rejected()));
    }

    assert_eq!(
        outcomes,
        [
            (CacheOutcome::Compiled, 0),
            (CacheOutcome::Loaded, 0),
            (CacheOutcome::Recompiled, 1),
        ]
    );
}

#[tokio::test]
async fn the_cache_dir_is_created_0700_and_its_artifacts_0600() {
    let parent = tempfile::tempdir().expect("tempdir");
    let dir = parent.path().join("cache");
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(dir.clone()),
        ..RuntimeConfig::default()
    })
    .expect("the runtime starts");
    runtime
        .load(&fixture_wasm(), None)
        .await
        .expect("the fixture loads");

    let mode = |p: &Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
    assert_eq!(format!("{:o}", mode(&dir)), "700");
    assert_eq!(format!("{:o}", mode(&only_file(&dir))), "600");
}

#[test]
fn a_cache_dir_writable_by_its_group_or_others_is_refused_at_start() {
    for (mode, refused) in [(0o777, true), (0o770, true), (0o702, true), (0o700, false)] {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(mode)).expect("chmod");
        let started = Runtime::new(RuntimeConfig {
            cache_dir: Some(dir.path().to_owned()),
            ..RuntimeConfig::default()
        });
        match (started, refused) {
            (Ok(_), false) => {}
            (Err(error), true) => {
                assert!(
                    matches!(
                        &error,
                        wasm_operator_runtime::RuntimeError::Cache(
                            wasm_operator_runtime::CacheError::UnsafeDir { path, .. }
                        ) if path == dir.path()
                    ),
                    "{mode:o}: {error:?}"
                );
                let message = error.to_string();
                assert!(
                    message.contains(&dir.path().display().to_string())
                        && message.contains("writable by its group or by others"),
                    "{mode:o}: {message}"
                );
            }
            (Ok(_), true) => panic!("a cache directory of mode {mode:o} was accepted"),
            (Err(error), false) => panic!("mode {mode:o} was refused: {error}"),
        }
    }
}

#[test]
fn a_cache_dir_owned_by_another_user_is_refused_at_start() {
    // As root a directory is given away; otherwise `/` (owned by root, not writable by
    // others) is a directory of another user.
    let scratch = tempfile::tempdir().expect("tempdir");
    let uid = std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m));
    let dir = if uid.ok() == Some(0) {
        std::os::unix::fs::chown(scratch.path(), Some(65534), Some(65534)).expect("chown");
        scratch.path().to_owned()
    } else {
        PathBuf::from("/")
    };

    let error = Runtime::new(RuntimeConfig {
        cache_dir: Some(dir.clone()),
        ..RuntimeConfig::default()
    })
    .err()
    .expect("the directory is refused");

    assert!(
        matches!(
            &error,
            wasm_operator_runtime::RuntimeError::Cache(
                wasm_operator_runtime::CacheError::UnsafeDir { path, .. }
            ) if *path == dir
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("owned by uid"), "{error}");
}

#[test]
fn a_cache_key_file_that_cannot_be_trusted_is_refused_at_start() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let cache = scratch.path().join("cache");
    std::fs::create_dir(&cache).expect("cache dir");
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let inside = cache.join("key");
    let short = scratch.path().join("short");
    let writable = scratch.path().join("writable");
    let good = scratch.path().join("good");
    std::fs::write(&inside, [7u8; 32]).expect("key");
    std::fs::write(&short, [7u8; 8]).expect("key");
    std::fs::write(&writable, [7u8; 32]).expect("key");
    std::fs::set_permissions(&writable, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    std::fs::write(&good, [7u8; 32]).expect("key");
    let missing = scratch.path().join("missing");
    let cases = [
        (&inside, Some("inside the cache directory")),
        (&short, Some("at least 32 bytes")),
        (&writable, Some("writable by its group or by others")),
        (&missing, Some("cannot read")),
        (&good, None),
    ];
    for (key, expected) in cases {
        let started = Runtime::new(RuntimeConfig {
            cache_dir: Some(cache.clone()),
            cache_key_file: Some(key.clone()),
            ..RuntimeConfig::default()
        });
        match (started, expected) {
            (Ok(_), None) => {}
            (Err(error), Some(fragment)) => {
                assert!(
                    matches!(
                        &error,
                        wasm_operator_runtime::RuntimeError::Cache(
                            wasm_operator_runtime::CacheError::Key { path, .. }
                        ) if path == key
                    ),
                    "{}: {error:?}",
                    key.display()
                );
                assert!(error.to_string().contains(fragment), "{error}");
            }
            (Ok(_), Some(fragment)) => panic!("{} was accepted ({fragment})", key.display()),
            (Err(error), None) => panic!("{} was refused: {error}", key.display()),
        }
    }
}
