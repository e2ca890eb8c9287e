use std::path::Path;

use super::key::CacheKey;
use super::{files, seal};

/// A key file of 32 `byte`s in `dir`, read as the cache of `cache` would.
fn key(dir: &Path, byte: u8, cache: &Path) -> CacheKey {
    let path = dir.join(format!("key-{byte}"));
    std::fs::write(&path, [byte; 32]).expect("key file");
    CacheKey::from_file(&path, cache).expect("a usable key")
}

/// A row: what it is, the key and context it is opened with, the file, what it opens to
/// (the artifact, or a fragment of the refusal).
type Case<'a> = (
    &'a str,
    &'a CacheKey,
    &'a seal::Context<'a>,
    &'a [u8],
    Result<&'a [u8], &'a str>,
);

#[test]
fn a_sealed_artifact_opens_only_with_its_key_engine_key_and_component() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let cache = scratch.path().join("cache");
    let (ours, theirs) = (
        key(scratch.path(), 1, &cache),
        key(scratch.path(), 2, &cache),
    );
    let context = seal::Context {
        engine_key: "engine",
        sha256: "aa",
    };
    let artifact = b"native code".as_slice();
    let sealed = [seal::header(&ours, &context, artifact).as_slice(), artifact].concat();
    let mut tampered = sealed.clone();
    if let Some(last) = tampered.last_mut() {
        *last ^= 1;
    }
    let other_engine = seal::Context {
        engine_key: "other",
        ..context
    };
    let other_component = seal::Context {
        sha256: "bb",
        ..context
    };
    let cases: [Case<'_>; 7] = [
        (
            "another key",
            &theirs,
            &context,
            &sealed,
            Err("does not verify"),
        ),
        (
            "another engine",
            &ours,
            &other_engine,
            &sealed,
            Err("does not verify"),
        ),
        (
            "another component",
            &ours,
            &other_component,
            &sealed,
            Err("does not verify"),
        ),
        (
            "a changed byte",
            &ours,
            &context,
            &tampered,
            Err("does not verify"),
        ),
        ("no header", &ours, &context, artifact, Err("too short")),
        (
            "a raw artifact",
            &ours,
            &context,
            &[0u8; 64],
            Err("not a sealed artifact"),
        ),
        (
            "the sealed artifact",
            &ours,
            &context,
            &sealed,
            Ok(artifact),
        ),
    ];
    for (case, key, context, file, expected) in cases {
        match (seal::open(key, context, file), expected) {
            (Ok(opened), Ok(want)) => assert_eq!(opened, want, "{case}"),
            (Err(reason), Err(fragment)) => assert!(reason.contains(fragment), "{case}: {reason}"),
            (got, _) => panic!("{case}: {got:?}"),
        }
    }
}

#[test]
fn a_fifo_in_place_of_an_artifact_is_refused_without_blocking() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("a.cwasm");
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("a C path");
    // SAFETY: `c_path` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0, "mkfifo");
    let regular = dir.path().join("b.cwasm");
    std::fs::write(&regular, b"bytes").expect("written");

    let error = files::read_nofollow(&fifo).expect_err("a FIFO is refused");

    assert!(error.to_string().contains("not a regular file"), "{error}");
    assert_eq!(
        files::read_nofollow(&regular).expect("a regular file is read"),
        Some(b"bytes".to_vec())
    );
    assert_eq!(
        files::read_nofollow(&dir.path().join("missing")).expect("no file"),
        None
    );
}
