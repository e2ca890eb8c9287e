//! A scenario directory, read and checked before anything runs.
//!
//! ```text
//! SCENARIO/
//!   scenario.yaml    optional: timeoutSeconds, actors, with (other plugin files), include,
//!                    secretBackend (what the External Secrets actor's backend holds)
//!   plugins.toml     optional: the plugin's configuration (else the one beside the plugin)
//!   given.yaml       the objects to start from          (or given/*.yaml)
//!   expect.yaml      objects expected after convergence (or expect/*.yaml)
//!   absent.yaml      objects that must not exist then   (or absent/*.yaml)
//!   steps/NAME/      run in name order, each with apply, delete, expect and absent
//! ```
//!
//! Every file may hold several YAML documents. An object to apply names its apiVersion,
//! kind and metadata.name; an expected object may leave out its name (then some object of
//! that kind, in its namespace when it names one, must match).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

/// The file of a scenario's settings.
pub(crate) const SETTINGS_FILE: &str = "scenario.yaml";

/// How long a stage may take to converge unless `timeoutSeconds` says otherwise.
pub(crate) const DEFAULT_TIMEOUT_SECONDS: u64 = 60;

/// Why a scenario cannot run.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// A file or directory could not be read.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file is not what a scenario holds.
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    /// One document of a file is not an object a scenario can use.
    #[error("{path}, document {document}: {message}")]
    Document {
        path: PathBuf,
        document: usize,
        message: String,
    },
    /// The scenario has nothing to check.
    #[error("{0}: no expect or absent file, at the top or in any step: nothing would be checked")]
    NothingExpected(PathBuf),
}

/// `scenario.yaml`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Settings {
    /// How long each stage may take to converge.
    #[serde(default)]
    pub(crate) timeout_seconds: Option<u64>,
    /// The cluster actors to run (names as `dev-cluster --actors` takes them); every one
    /// when left out, none for `[]`.
    #[serde(default)]
    pub(crate) actors: Option<Vec<String>>,
    /// Other plugin files the plugin runs with (a planner it imports), relative to the
    /// plugin file's directory.
    #[serde(default)]
    pub(crate) with: Vec<PathBuf>,
    /// More files of objects to start from (applied before `given`), relative to the
    /// scenario directory: a CRD kept elsewhere in the repository, say.
    #[serde(default)]
    pub(crate) include: Vec<PathBuf>,
    /// What the secret backend of the `external-secrets` actor holds at the start: remote
    /// key → property → value (what an operator would have written to OpenBao).
    #[serde(default)]
    pub(crate) secret_backend:
        std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
}

/// One object of a scenario file, with where it came from.
#[derive(Debug, Clone)]
pub(crate) struct Document {
    /// The file.
    pub(crate) path: PathBuf,
    /// Its place in the file, from 1.
    pub(crate) index: usize,
    /// The object.
    pub(crate) object: Value,
}

impl Document {
    /// `FILE, document N`, the file relative to `base` when it lies under it.
    pub(crate) fn origin(&self, base: &Path) -> String {
        let path = self.path.strip_prefix(base).unwrap_or(&self.path);
        format!("{}, document {}", path.display(), self.index)
    }

    pub(crate) fn api_version(&self) -> &str {
        self.object["apiVersion"].as_str().unwrap_or_default()
    }

    pub(crate) fn kind(&self) -> &str {
        self.object["kind"].as_str().unwrap_or_default()
    }

    pub(crate) fn name(&self) -> Option<&str> {
        self.object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
    }

    pub(crate) fn namespace(&self) -> Option<&str> {
        self.object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
    }
}

/// What one stage does and checks.
#[derive(Debug, Default)]
pub(crate) struct Stage {
    /// `given` for the first stage, the step's directory name after.
    pub(crate) name: String,
    pub(crate) apply: Vec<Document>,
    pub(crate) delete: Vec<Document>,
    pub(crate) expect: Vec<Document>,
    pub(crate) absent: Vec<Document>,
}

/// A scenario, read.
#[derive(Debug)]
pub(crate) struct Scenario {
    pub(crate) dir: PathBuf,
    pub(crate) settings: Settings,
    /// `plugins.toml` of the scenario, when it has one.
    pub(crate) plugins_toml: Option<PathBuf>,
    /// The first stage (`given`) and then each step.
    pub(crate) stages: Vec<Stage>,
}

impl Scenario {
    /// Reads `dir`; every file is parsed and every document checked here.
    pub(crate) fn read(dir: &Path) -> Result<Self, ScenarioError> {
        if !dir.is_dir() {
            return Err(ScenarioError::Invalid {
                path: dir.to_owned(),
                message: "not a scenario directory".into(),
            });
        }
        let settings = read_settings(&dir.join(SETTINGS_FILE))?;
        let mut given = Vec::new();
        for include in &settings.include {
            given.extend(read_documents(&dir.join(include))?);
        }
        given.extend(read_set(dir, "given")?);
        let mut stages = vec![Stage {
            name: "given".into(),
            apply: given,
            delete: Vec::new(),
            expect: read_set(dir, "expect")?,
            absent: read_set(dir, "absent")?,
        }];
        let steps = dir.join("steps");
        if steps.is_dir() {
            for step in sorted_entries(&steps)? {
                if !step.is_dir() {
                    continue;
                }
                let name = step
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                stages.push(Stage {
                    name,
                    apply: read_set(&step, "apply")?,
                    delete: read_set(&step, "delete")?,
                    expect: read_set(&step, "expect")?,
                    absent: read_set(&step, "absent")?,
                });
            }
        }
        for stage in &stages {
            for document in stage.apply.iter().chain(&stage.delete) {
                check(document, true)?;
            }
            for document in stage.expect.iter().chain(&stage.absent) {
                check(document, false)?;
            }
            for document in &stage.absent {
                if document.name().is_none() {
                    return Err(invalid(
                        document,
                        "an absent object names its metadata.name",
                    ));
                }
            }
        }
        if stages
            .iter()
            .all(|s| s.expect.is_empty() && s.absent.is_empty())
        {
            return Err(ScenarioError::NothingExpected(dir.to_owned()));
        }
        let plugins_toml = Some(dir.join("plugins.toml")).filter(|p| p.is_file());
        Ok(Self {
            dir: dir.to_owned(),
            settings,
            plugins_toml,
            stages,
        })
    }

    /// The timeout of each stage.
    pub(crate) fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(
            self.settings
                .timeout_seconds
                .unwrap_or(DEFAULT_TIMEOUT_SECONDS),
        )
    }
}

fn read_settings(path: &Path) -> Result<Settings, ScenarioError> {
    if !path.is_file() {
        return Ok(Settings::default());
    }
    let text = read(path)?;
    serde_yaml_ng::from_str(&text).map_err(|e| ScenarioError::Invalid {
        path: path.to_owned(),
        message: e.to_string(),
    })
}

/// The documents of `dir/NAME.yaml`, or of every `.yaml` file of `dir/NAME/` in name order;
/// none when neither is there.
fn read_set(dir: &Path, name: &str) -> Result<Vec<Document>, ScenarioError> {
    let file = dir.join(format!("{name}.yaml"));
    let directory = dir.join(name);
    if file.is_file() && directory.is_dir() {
        return Err(ScenarioError::Invalid {
            path: directory,
            message: format!("both {name}.yaml and {name}/ are here: keep one"),
        });
    }
    if file.is_file() {
        return read_documents(&file);
    }
    if directory.is_dir() {
        return read_documents(&directory);
    }
    Ok(Vec::new())
}

/// The documents of a file, or of every `.yaml`/`.yml` file of a directory in name order.
fn read_documents(path: &Path) -> Result<Vec<Document>, ScenarioError> {
    if path.is_dir() {
        let mut documents = Vec::new();
        for file in sorted_entries(path)? {
            let yaml = file.extension().is_some_and(|e| e == "yaml" || e == "yml");
            if yaml && file.is_file() {
                documents.extend(read_documents(&file)?);
            }
        }
        return Ok(documents);
    }
    let text = read(path)?;
    let mut documents = Vec::new();
    for (index, document) in serde_yaml_ng::Deserializer::from_str(&text).enumerate() {
        let value = Value::deserialize(document).map_err(|e| ScenarioError::Document {
            path: path.to_owned(),
            document: index + 1,
            message: e.to_string(),
        })?;
        // An empty document (a trailing `---`) is no object.
        if value.is_null() {
            continue;
        }
        documents.push(Document {
            path: path.to_owned(),
            index: index + 1,
            object: value,
        });
    }
    Ok(documents)
}

/// Checks that `document` is an object with apiVersion and kind (and metadata.name when
/// `named`).
fn check(document: &Document, named: bool) -> Result<(), ScenarioError> {
    if !document.object.is_object() {
        return Err(invalid(document, "not a YAML mapping"));
    }
    for field in ["apiVersion", "kind"] {
        if document.object[field].as_str().is_none_or(str::is_empty) {
            return Err(invalid(document, &format!("{field}: required (a string)")));
        }
    }
    if named && document.name().is_none() {
        return Err(invalid(
            document,
            &format!("{} without metadata.name", document.kind()),
        ));
    }
    Ok(())
}

fn invalid(document: &Document, message: &str) -> ScenarioError {
    ScenarioError::Document {
        path: document.path.clone(),
        document: document.index,
        message: message.to_owned(),
    }
}

fn read(path: &Path) -> Result<String, ScenarioError> {
    std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
        path: path.to_owned(),
        source,
    })
}

fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>, ScenarioError> {
    let io = |source| ScenarioError::Io {
        path: dir.to_owned(),
        source,
    };
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        entries.push(entry.map_err(io)?.path());
    }
    entries.sort();
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, file: &str, text: &str) {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    const CONFIG_MAP: &str =
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: ns}\n";

    #[test]
    fn a_scenario_reads_given_expect_and_steps_in_name_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(
            dir.path(),
            "given.yaml",
            &format!("{CONFIG_MAP}---\n{CONFIG_MAP}---\n"),
        );
        write(dir.path(), "expect/b.yaml", CONFIG_MAP);
        write(dir.path(), "expect/a.yml", CONFIG_MAP);
        write(dir.path(), "steps/02-later/delete.yaml", CONFIG_MAP);
        write(dir.path(), "steps/02-later/absent.yaml", CONFIG_MAP);
        write(dir.path(), "steps/01-first/apply.yaml", CONFIG_MAP);
        write(
            dir.path(),
            "scenario.yaml",
            "timeoutSeconds: 5\nactors: []\n",
        );
        let scenario = Scenario::read(dir.path()).expect("a scenario");
        let names: Vec<&str> = scenario.stages.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["given", "01-first", "02-later"]);
        assert_eq!(
            scenario.stages[0].apply.len(),
            2,
            "the trailing --- is no object"
        );
        let expect: Vec<String> = scenario.stages[0]
            .expect
            .iter()
            .map(|d| d.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(expect, ["a.yml", "b.yaml"]);
        assert_eq!(scenario.stages[2].delete.len(), 1);
        assert_eq!(scenario.timeout(), std::time::Duration::from_secs(5));
        assert_eq!(scenario.settings.actors, Some(vec![]));
    }

    #[test]
    fn a_bad_scenario_is_refused_naming_the_file_document_and_field() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            // The one valid row.
            (
                &[("given.yaml", CONFIG_MAP), ("expect.yaml", CONFIG_MAP)],
                "",
            ),
            (&[("given.yaml", CONFIG_MAP)], "nothing would be checked"),
            (
                &[
                    ("given.yaml", "apiVersion: v1\nkind: ConfigMap\n"),
                    ("expect.yaml", CONFIG_MAP),
                ],
                "given.yaml, document 1: ConfigMap without metadata.name",
            ),
            (
                &[("expect.yaml", &format!("{CONFIG_MAP}---\nkind: Secret\n"))],
                "expect.yaml, document 2: apiVersion: required",
            ),
            (
                &[
                    ("expect.yaml", CONFIG_MAP),
                    ("absent.yaml", "apiVersion: v1\nkind: Secret\n"),
                ],
                "absent.yaml, document 1: an absent object names its metadata.name",
            ),
            (
                &[("expect.yaml", "- 1\n")],
                "expect.yaml, document 1: not a YAML mapping",
            ),
            (
                &[("expect.yaml", CONFIG_MAP), ("expect/a.yaml", CONFIG_MAP)],
                "both expect.yaml and expect/ are here",
            ),
            (
                &[
                    ("expect.yaml", CONFIG_MAP),
                    ("scenario.yaml", "timeout: 5\n"),
                ],
                "unknown field `timeout`",
            ),
            (&[("expect.yaml", "a: [\n")], "expect.yaml, document 1:"),
        ];
        for (files, expected) in cases {
            let dir = tempfile::tempdir().expect("tempdir");
            for (file, text) in *files {
                write(dir.path(), file, text);
            }
            match Scenario::read(dir.path()) {
                Ok(_) => assert!(
                    expected.is_empty(),
                    "{files:?} should fail with {expected:?}"
                ),
                Err(error) => {
                    assert!(!expected.is_empty(), "{files:?}: {error}");
                    assert!(
                        error.to_string().contains(expected),
                        "{expected:?} in {error}"
                    );
                }
            }
        }
    }
}
