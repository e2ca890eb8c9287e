//! One process of the control plane: its binary, its log file, its exit, its stop.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::Error;

/// The binaries of a `controlplane/build.sh` output directory.
pub(crate) struct Binaries {
    pub(crate) etcd: PathBuf,
    pub(crate) apiserver: PathBuf,
    pub(crate) controller_manager: PathBuf,
    pub(crate) scheduler: PathBuf,
    pub(crate) kwok: PathBuf,
    /// KWOK's node and pod stages, taken from its module by the build.
    pub(crate) kwok_stages: PathBuf,
}

impl Binaries {
    /// The binaries under `dir`; the first one missing is named.
    pub(crate) fn find(dir: &Path) -> Result<Self, Error> {
        let file = |component: &'static str, name: &str| {
            let path = dir.join(name);
            if path.is_file() {
                Ok(path)
            } else {
                Err(Error::MissingBinary { component, path })
            }
        };
        Ok(Self {
            etcd: file("etcd", "etcd")?,
            apiserver: file("kube-apiserver", "kube-apiserver")?,
            controller_manager: file("kube-controller-manager", "kube-controller-manager")?,
            scheduler: file("kube-scheduler", "kube-scheduler")?,
            kwok: file("kwok", "kwok")?,
            kwok_stages: file("kwok", "kwok-stages.yaml")?,
        })
    }
}

/// A running component; [`Component::stop`] ends it.
pub(crate) struct Component {
    pub(crate) name: &'static str,
    pub(crate) log: PathBuf,
    child: Option<Child>,
}

/// How long a component has to exit after SIGTERM before it is killed.
const GRACE: Duration = Duration::from_secs(10);

impl Component {
    /// Starts `binary` with `args`, stdout and stderr to `logs/NAME.log`. The process is
    /// sent SIGTERM if the thread that started it ends (so a killed test leaves none).
    pub(crate) fn spawn(
        name: &'static str,
        binary: &Path,
        logs: &Path,
        args: &[String],
    ) -> Result<Self, Error> {
        let log = logs.join(format!("{name}.log"));
        let out = std::fs::File::create(&log).map_err(Error::io(format!(
            "{name}: cannot create {}",
            log.display()
        )))?;
        let err = out
            .try_clone()
            .map_err(Error::io(format!("{name}: {}", log.display())))?;
        let mut command = Command::new(binary);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        // SAFETY: prctl is async-signal-safe and touches no memory of this process.
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
        let child = command.spawn().map_err(|source| Error::Spawn {
            component: name,
            path: binary.to_owned(),
            source,
        })?;
        tracing::info!(component = name, pid = child.id(), log = %log.display(), "started");
        Ok(Self {
            name,
            log,
            child: Some(child),
        })
    }

    /// Fails if the process has exited.
    pub(crate) fn check(&mut self) -> Result<(), Error> {
        let Some(child) = self.child.as_mut() else {
            return Ok(());
        };
        match child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(Error::Exited {
                component: self.name,
                status: status.to_string(),
                log: self.log.clone(),
            }),
            Err(source) => Err(Error::Io {
                what: format!("{}: cannot read its state", self.name),
                source,
            }),
        }
    }

    /// SIGTERM, then SIGKILL after [`GRACE`]; waits for the exit.
    pub(crate) fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        if let Ok(pid) = libc::pid_t::try_from(child.id()) {
            // SAFETY: kill(2) on a child this value owns and has not reaped.
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
        let start = Instant::now();
        while start.elapsed() < GRACE {
            if matches!(child.try_wait(), Ok(Some(_)) | Err(_)) {
                tracing::info!(component = self.name, "stopped");
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        tracing::warn!(component = self.name, "did not stop on SIGTERM; killed");
        let _ = child.kill();
        let _ = child.wait();
    }
}
