use serde_json::json;

use super::*;

fn key(name: &str) -> StoreKey {
    StoreKey {
        group: String::new(),
        plural: "configmaps".into(),
        namespace: "ns".into(),
        name: name.into(),
    }
}

fn object(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns"}, "data": {"greeting": "grüß dich"}})
}

fn names(live: &BTreeMap<StoreKey, Value>) -> Vec<String> {
    live.keys().map(|k| k.name.clone()).collect()
}

fn log_path(dir: &Path) -> PathBuf {
    dir.join("objects.wal")
}

/// Where the last line of `bytes` (which ends with a newline) starts.
fn last_line_start(bytes: &[u8]) -> usize {
    let body = &bytes[..bytes.len() - 1];
    body.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1)
}

/// Changes the first checksum digit of the line starting at `start`.
fn break_checksum(bytes: &mut [u8], start: usize) {
    bytes[start] = if bytes[start] == b'0' { b'1' } else { b'0' };
}

/// How a case tears the bytes of a log.
type Tear = fn(&mut Vec<u8>);

/// A log of `a` (rv 2) and `b` (rv 3), torn by `tear`.
fn torn_log(tear: Tear) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a directory");
    {
        let (mut wal, _, _) = Wal::open(dir.path()).expect("a new log");
        wal.put(2, &key("a"), &object("a")).expect("a");
        wal.put(3, &key("b"), &object("b")).expect("b");
    }
    let path = log_path(dir.path());
    let mut bytes = std::fs::read(&path).expect("the log");
    tear(&mut bytes);
    std::fs::write(&path, &bytes).expect("torn");
    dir
}

#[test]
fn a_torn_last_record_is_cut_away_and_every_later_acknowledged_write_survives() {
    let cases: [(&str, Tear); 3] = [
        ("cut mid-record", |bytes| {
            let len = bytes.len();
            bytes.truncate(len - 20);
        }),
        ("cut inside a UTF-8 sequence", |bytes| {
            let start = last_line_start(bytes);
            let lead = bytes[start..]
                .iter()
                .position(|b| *b == 0xc3)
                .expect("the ü of the last record");
            bytes.truncate(start + lead + 1);
        }),
        ("a whole last line failing its checksum", |bytes| {
            let start = last_line_start(bytes);
            break_checksum(bytes, start);
        }),
    ];
    for (case, tear) in cases {
        let dir = torn_log(tear);
        {
            let (mut wal, live, rv) =
                Wal::open(dir.path()).unwrap_or_else(|e| panic!("{case}: {e}"));
            assert_eq!(names(&live), ["a"], "{case}");
            assert_eq!(rv, 2, "{case}");
            wal.put(4, &key("c"), &object("c")).expect("c");
            wal.put(5, &key("d"), &object("d")).expect("d");
        }
        let (_, live, rv) = Wal::open(dir.path()).unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(names(&live), ["a", "c", "d"], "{case}");
        assert_eq!(rv, 5, "{case}");
    }
}

#[test]
fn a_bad_record_before_the_last_refuses_the_start_naming_its_line_and_why() {
    let dir = tempfile::tempdir().expect("a directory");
    {
        let (mut wal, _, _) = Wal::open(dir.path()).expect("a new log");
        for (rv, name) in [(2, "a"), (3, "b"), (4, "c")] {
            wal.put(rv, &key(name), &object(name)).expect("a put");
        }
    }
    let path = log_path(dir.path());
    let mut bytes = std::fs::read(&path).expect("the log");
    let second = bytes.iter().position(|b| *b == b'\n').expect("a line") + 1;
    break_checksum(&mut bytes, second);
    std::fs::write(&path, &bytes).expect("corrupted");
    let error = Wal::open(dir.path()).err().expect("the start is refused");
    assert!(
        matches!(&error, WalError::Corrupt { line: 2, reason, .. } if reason == "its checksum does not match"),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .ends_with("line 2 is not a log record (its checksum does not match)"),
        "{error}"
    );
    assert_eq!(std::fs::read(&path).expect("the log"), bytes, "nothing cut");
}

#[test]
fn a_log_written_before_checksums_replays_and_takes_new_records() {
    let dir = tempfile::tempdir().expect("a directory");
    let mut text = String::new();
    for (rv, name) in [(2, "a"), (3, "b")] {
        let record = Record::Put {
            rv,
            key: key(name),
            object: object(name),
        };
        text.push_str(&serde_json::to_string(&record).expect("JSON"));
        text.push('\n');
    }
    std::fs::write(log_path(dir.path()), text).expect("an old log");
    {
        let (mut wal, live, rv) = Wal::open(dir.path()).expect("the old log opens");
        assert_eq!(names(&live), ["a", "b"]);
        assert_eq!(rv, 3);
        wal.delete(4, &key("a")).expect("a deleted");
    }
    let (_, live, rv) = Wal::open(dir.path()).expect("reopens");
    assert_eq!(names(&live), ["b"]);
    assert_eq!(rv, 4);
}

#[test]
fn a_last_record_torn_at_every_byte_offset_is_cut_away_and_later_writes_survive() {
    let whole = torn_log(|_| {});
    let bytes = std::fs::read(log_path(whole.path())).expect("the log");
    let start = last_line_start(&bytes);
    for cut in start..bytes.len() {
        let dir = tempfile::tempdir().expect("a directory");
        std::fs::write(log_path(dir.path()), &bytes[..cut]).expect("torn");
        {
            let (mut wal, live, rv) =
                Wal::open(dir.path()).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
            // Only the newline missing: the record may be whole; anything shorter is not.
            let expected: &[&str] = if cut + 1 == bytes.len() && rv == 3 {
                &["a", "b"]
            } else {
                &["a"]
            };
            assert_eq!(names(&live), expected, "cut at {cut}");
            wal.put(rv + 1, &key("c"), &object("c")).expect("c");
        }
        let (_, live, _) = Wal::open(dir.path()).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        assert!(
            names(&live).ends_with(&["c".to_owned()])
                && names(&live).starts_with(&["a".to_owned()]),
            "cut at {cut}: {:?}",
            names(&live)
        );
        assert_eq!(
            live.get(&key("c")),
            Some(&object("c")),
            "cut at {cut}: the write after the tear survives whole"
        );
    }
}

#[test]
fn the_log_is_0600_in_a_directory_created_0700_even_when_umask_would_open_them() {
    use std::os::unix::fs::PermissionsExt as _;
    let parent = tempfile::tempdir().expect("a directory");
    let dir = parent.path().join("data");
    let mode = |path: &Path| {
        std::fs::metadata(path)
            .expect("metadata")
            .permissions()
            .mode()
            & 0o777
    };
    {
        let (mut wal, _, _) = Wal::open(&dir).expect("a new log");
        wal.put(2, &key("a"), &object("a")).expect("a");
    }
    assert_eq!(mode(&dir), 0o700, "the directory it created");
    assert_eq!(mode(&log_path(&dir)), 0o600, "the log");
    // A log left readable by others is closed to them when it is opened again.
    std::fs::set_permissions(log_path(&dir), std::fs::Permissions::from_mode(0o644))
        .expect("chmod");
    let (_, live, _) = Wal::open(&dir).expect("the log again");
    assert_eq!(names(&live), ["a"]);
    assert_eq!(mode(&log_path(&dir)), 0o600);
}
