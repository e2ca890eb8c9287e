//! What can keep a control plane from starting, each naming the component, its log file and
//! what to do.

use std::path::PathBuf;

/// A control plane that could not start.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A binary `controlplane/build.sh` writes is missing.
    #[error(
        "{component}: no executable at {}; build the control plane with `controlplane/build.sh` \
         (or point ${} at its binaries)",
        path.display(),
        crate::BIN_DIR_ENV
    )]
    MissingBinary {
        component: &'static str,
        path: PathBuf,
    },
    /// A port the user asked for is taken.
    #[error(
        "{component}: port {port} on 127.0.0.1 is in use ({source}); stop what listens there \
         or pick another port (0 picks a free one)"
    )]
    PortInUse {
        component: &'static str,
        port: u16,
        source: std::io::Error,
    },
    /// A component could not be started.
    #[error("{component}: cannot start {}: {source}", path.display())]
    Spawn {
        component: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// A component exited.
    #[error(
        "{component} exited ({status}); its log is {}: the cause is near its end",
        log.display()
    )]
    Exited {
        component: &'static str,
        status: String,
        log: PathBuf,
    },
    /// A component did not become ready in time.
    #[error(
        "{component}: {condition} not reached within the start timeout (last: {last}); its log \
         is {}",
        log.display()
    )]
    NotReady {
        component: String,
        condition: String,
        last: String,
        log: PathBuf,
    },
    /// The certificates or keys could not be made.
    #[error("the control plane's certificates: {0}")]
    Certificates(#[from] rcgen::Error),
    /// A kubeconfig the control plane wrote could not be read.
    #[error("{what}: {source}")]
    Kubeconfig {
        what: String,
        source: kube::config::KubeconfigError,
    },
    /// A kube client for the control plane could not be made or used.
    #[error("{what}: {source}")]
    Client { what: String, source: kube::Error },
    /// A file of the control plane could not be written or read.
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

impl Error {
    /// `map_err` for I/O errors with what was being done.
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let what = what.into();
        move |source| Self::Io { what, source }
    }
}
